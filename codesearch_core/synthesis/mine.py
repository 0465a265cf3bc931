"""Mining targets from a corpus: one text pass per (rule, language) finds every candidate, the
reference call of each runs on the files that pass named, and the facts that make good tasks are
kept and proven.

A *target* is a reference call and the spans it finds. One is kept when:

- its size is in bounds: at least `MIN_SPANS` spans (one finding in one file is trivia), at most
  `MAX_SPANS` spans and `MAX_FILES` files (a task nobody can check by eye is not a task);
- the right tool matters: the best *text baseline* (`synthesis.baselines`) scores at most
  `reference - MIN_MARGIN`, so a model that falls back on plain text search does measurably worse;
- it reproduces: the reference call, run again, finds the same spans (`verify_target`).

Why the reference may run on the pass's files only: the pass's regex matches the text of every
place the reference can match (a call of `DB.query` holds `DB.query(`, the whitespace around the
dot and before the parenthesis allowed, line breaks too), so a file without a hit holds no
finding. Each finding must also lie on a hit (`not_in_pass` otherwise): a reference that matches
what its pass did not foresee may match in files it never ran on, and is dropped rather than
trusted. On a 20k-file corpus this is what makes synthesis fast: a whole-corpus ast-grep run costs
seconds, one on a subject's few files milliseconds.

What the scoped runs cannot show is whether the reference finishes where users run it, on the
whole corpus within the default timeout: that cost is about a parse of every file of the language,
whatever the rule or subject, so the pipeline runs `whole_corpus_check` on one target per tool and
language.
"""

from __future__ import annotations

import contextlib
import random
import re
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Final

from codesearch_core.corpora import corpus_root, language_for_path, list_files
from codesearch_core.errors import CorpusError, ErrorKind
from codesearch_core.grading import score
from codesearch_core.models import Blueprint, RunResult, Span, ToolCall, ToolName
from codesearch_core.synthesis.rule_kinds import LANGUAGE_LABELS, Mining, RuleTemplate
from codesearch_core.synthesis.rules import templates_for
from codesearch_core.tools import (
    DEFAULT_TIMEOUT_S,
    parse_tool_call,
    rg_occurrences,
    run_tool_call,
)

MIN_SPANS: Final = 2
MAX_SPANS: Final = 40
MAX_FILES: Final = 20
#: How far below the reference the best text baseline must stay for the target to be kept.
MIN_MARGIN: Final = 0.25
#: A subject whose mined text shows up more often than this (or in more files) is not tried: the
#: text over-counts (comments, definitions), but not by this much, so its targets would be far
#: over the size bounds and their reference runs wasted.
MAX_HITS: Final = 4 * MAX_SPANS
MAX_HIT_FILES: Final = 3 * MAX_FILES
#: A candidate whose files add up to more than this is not run (dropped as "too_large"): that is
#: bundled, minified or generated code (a 3 MB `index.js`) more often than code a developer
#: searches, and parsing it costs ast-grep a second per run, 20-50x a usual candidate.
MAX_SCOPE_BYTES: Final = 1_000_000
#: The Go imports of a corpus (`"net/http"`, `h "net/http"`): a `pkg.Func` call whose `pkg` is
#: none of them is a method called on a variable, not a package function.
_GO_IMPORT: Final = (
    r'^[ \t]*(?:import[ \t]+)?(?:([A-Za-z_]\w*)[ \t]+)?"(?:[^"\s]*/)?([A-Za-z_]\w*)"'
)
#: The statements that bind a module (or what a module exports) to a name, for
#: `Mining.named_receivers`: Python `import a.b`, `import a as b`, `from a import b, c as d`;
#: JavaScript `const x = require(...)`, `import x, {a, b as c} from`, `import * as x from`; Lua
#: `local x = require`. Each is read whole and split into its names below.
_IMPORTS: Final = (
    r"^[ \t]*import[ \t]+[\w., \t]+",
    r"^[ \t]*from[ \t]+[\w.]+[ \t]+import[ \t]+[\w, \t]+",
    r"^[ \t]*from[ \t]+[\w.]+[ \t]+import[ \t]*\([\w, \t\r\n]+\)",
    r"\b(?:const|let|var|local)[ \t]+[\w$]+[ \t]*=[ \t]*require\b",
    r"\bimport[ \t]+(?:type[ \t]+)?[\w$]*[ \t]*,?[ \t]*(?:\*[ \t]*as[ \t]+[\w$]+|\{[^}]*\})?[ \t\r\n]*from\b",
)
_IMPORT_NOISE: Final = frozenset({"import", "from", "as", "const", "let", "var", "local", "require",
                                  "type", "typeof"})  # fmt: skip


class NothingToMineError(CorpusError):
    """The corpus has no file in a language the rule templates know."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """A subject found by a rule's text pass: its reference call, the files the reference can
    match in (None: the whole corpus) and the lines the pass found it on.

    A large corpus names 100k+ candidates, so the call is built unchecked here (checking it costs
    more than the pass); `measure` checks it against the schema before it runs."""

    template: RuleTemplate = field(repr=False)
    language: str
    subject: str
    arguments: Mapping[str, Any] = field(repr=False)
    files: tuple[str, ...] | None = None
    hits: frozenset[tuple[str, int]] = field(default=frozenset(), repr=False)

    @property
    def call(self) -> ToolCall:
        return ToolCall(ToolName(self.template.tool), self.arguments)


@dataclass(frozen=True, slots=True)
class Target:
    """A mined fact: the rule, the subject, the reference call and what it finds."""

    corpus: str
    rule: str
    language: str  # ast-grep language, or the corpus's main one for text rules
    subject: str
    call: ToolCall
    expected: tuple[Span, ...]
    template: RuleTemplate = field(compare=False, repr=False)
    reference_reward: float = 1.0
    baseline_reward: float | None = None
    baseline_label: str = ""
    #: The files the reference runs on (None: the whole corpus); see the module docstring.
    scope: tuple[str, ...] | None = field(default=None, compare=False, repr=False)

    @property
    def key(self) -> str:
        return f"{self.rule}:{self.language}:{self.subject}"

    @property
    def files(self) -> int:
        return len({s.path for s in self.expected})

    @property
    def wording(self) -> Mapping[str, str]:
        """What the intent templates (and a model's prompt) fill in."""
        label = LANGUAGE_LABELS.get(self.language, self.language)
        return {"subject": self.subject, "lang": label, "what": self.template.what}

    def as_blueprint(self, intent: str = "-") -> Blueprint:
        return Blueprint(
            id="synth-target", intent=intent, reference_call=self.call, corpus=self.corpus,
            expected=self.expected, language=self.language,
        )  # fmt: skip


def corpus_languages(corpus: str) -> tuple[frozenset[str], str]:
    """(ast-grep languages with files in the corpus, the most common); NothingToMineError if none."""
    files = list_files(corpus)
    counts = Counter(lang for rel in files if (lang := language_for_path(rel)))
    if "cpp" in counts and not any(rel.endswith(".c") for rel in files):
        # A C++ project's `.h` files are C++ headers that ast-grep reads as C: items "in the C
        # code" would be about C++ (QA review, issue 36: a constructor read as a C call).
        counts.pop("c", None)
    if not counts:
        raise NothingToMineError(
            f"nothing to mine in corpus {corpus!r}: it has no file in a language the rule "
            "templates know (JavaScript, TypeScript, Python, Java, Go, ...)"
        )
    return frozenset(counts), counts.most_common(1)[0][0]


def _call(tool: str, arguments: Mapping[str, Any]) -> ToolCall | None:
    try:
        return parse_tool_call({"name": tool, "arguments": dict(arguments)})
    except Exception:  # a template that makes a call the schema refuses mines nothing
        return None


Hits = dict[str, set[tuple[str, int]]]


def mining_pass(corpus: str, mining: Mining) -> Hits:
    """One rg run of a rule's pass: subject -> the (path, line) it was found on."""
    found = rg_occurrences(
        [mining.regex], corpus_root(corpus), replace="$1", multiline=mining.multiline,
        file_types=mining.file_types, globs=mining.globs,
    )  # fmt: skip
    subjects_of = mining.subjects
    named: dict[str, tuple[str, ...]] = {}
    hits: Hits = defaultdict(set)
    for path, line, text in found:
        subjects = named.get(text)
        if subjects is None:
            subjects = named[text] = subjects_of(text) if subjects_of else (text,)
        for subject in subjects:
            hits[subject].add((path, line))
    return hits


def _go_imports(corpus: str) -> set[str]:
    found = rg_occurrences([_GO_IMPORT], corpus_root(corpus), replace="$1 $2", file_types=("go",))
    return {text.split()[0] for _, _, text in found if text.strip()}


def imported_names(corpus: str) -> frozenset[str]:
    """Every name an import binds in the corpus (Python, JavaScript/TypeScript, Lua): a dotted
    callee whose receiver is one (`click.echo`, `fs.readFile`) names a module's function."""
    found = rg_occurrences(list(_IMPORTS), corpus_root(corpus), multiline=True,
                           file_types=("py", "js", "ts", "lua"))  # fmt: skip
    names: set[str] = set()
    for _, _, text in found:
        # `import a.b as c`: `c` is bound (and `a` by `import a.b`): the first part of each name.
        words = re.findall(r"[A-Za-z_$][\w$]*(?:\.[\w$]+)*", text)
        names.update(w.split(".")[0] for w in words if w not in _IMPORT_NOISE)
    return frozenset(names)


def named_receiver(subject: str, imported: frozenset[str]) -> bool:
    """A bare subject, or a dotted one whose receiver is capitalized (`DB.query`, `Math.max`: a
    class, a namespace) or imported (`click.echo`); not a variable's method (`key.exchange`)."""
    head = subject.split(".")[0]
    return "." not in subject or head[:1].isupper() or head in imported


def _in_bounds(lines: set[tuple[str, int]]) -> bool:
    if not MIN_SPANS <= len(lines) <= MAX_HITS:
        return False
    return len(lines) <= MAX_HIT_FILES or len({p for p, _ in lines}) <= MAX_HIT_FILES


@dataclass(frozen=True, slots=True)
class Group:
    """One (template, language) of a corpus and the subjects its pass found in bounds (one ""
    for a template without a pass)."""

    template: RuleTemplate
    language: str  # the ast-grep language; "" for text templates
    label: str  # the language drafts name: `language`, or the corpus's main one
    subjects: tuple[str, ...]
    hits: Hits | None = field(default=None, repr=False)
    scoped: bool = True  # the pass's lines are where the reference can match (`Mining.scoped`)

    def candidate(self, subject: str) -> Candidate:
        t = self.template
        arguments = t.reference(self.language, subject)
        if self.hits is None or not self.scoped:
            return Candidate(t, self.label, subject, arguments)
        lines = self.hits[subject]
        files = tuple(sorted({p for p, _ in lines}))
        return Candidate(t, self.label, subject, arguments, files, frozenset(lines))


def candidate_groups(corpus: str) -> list[Group]:
    """The candidates the templates give on this corpus, by (template, language): one text pass
    per distinct pass (templates sharing one, as call and function-calling do, share its run).
    Raises NothingToMineError first when nothing can be mined."""
    languages, main = corpus_languages(corpus)
    pairs = templates_for(languages)
    minings = {m.key: m for t, lang in pairs if t.mining is not None for m in [t.mining(lang)]}
    # Two at a time: one pass's rg runs while the other's output is read in Python.
    with ThreadPoolExecutor(max_workers=2) as pool:
        passes = dict(
            zip(minings, pool.map(partial(mining_pass, corpus), minings.values()), strict=True)
        )
    out: list[Group] = []
    modules: frozenset[str] | None = None  # the corpus's imported names, read once when needed
    for template, language in pairs:
        label = language or main
        if template.mining is None:
            out.append(Group(template, language, label, (str(template.extra.get("subject", "")),)))
            continue
        mining = template.mining(language)
        found = passes[mining.key]
        imported = _go_imports(corpus) if template.id == "go-package-call" else None
        if mining.named_receivers and modules is None:
            modules = imported_names(corpus)
        subjects = tuple(
            s for s in sorted(found)
            if _in_bounds(found[s]) and (imported is None or s.split(".")[0] in imported)
            and (not mining.named_receivers or named_receiver(s, modules or frozenset()))
        )  # fmt: skip
        if subjects:
            out.append(Group(template, language, label, subjects, found, mining.scoped))
    return out


def ordered(groups: list[Group], seed: int) -> Iterator[Candidate]:
    """Every candidate of the groups, built as it is reached: each group's subjects in a seeded
    order, the groups taken in turn, so that a `--limit` run samples every rule, not the first
    rule's subjects only (a large corpus has 100k call subjects and 50 catch blocks)."""
    rng = random.Random(seed)
    queues: list[tuple[Group, Iterator[str]]] = []
    for group in groups:
        order = list(group.subjects)
        rng.shuffle(order)
        queues.append((group, iter(order)))
    rng.shuffle(queues)
    while queues:
        left = []
        for group, subjects in queues:
            subject = next(subjects, None)
            if subject is not None:
                yield group.candidate(subject)
                left.append((group, subjects))
        queues = left


def candidates(corpus: str) -> list[Candidate]:
    """Every candidate of the corpus, group by group, subjects sorted (tests, small corpora)."""
    return [g.candidate(s) for g in candidate_groups(corpus) for s in g.subjects]


def _run(
    call: ToolCall,
    corpus: str,
    files: tuple[str, ...] | None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> tuple[RunResult, tuple[Span, ...] | None]:
    """The run and its distinct spans (None for a failed or truncated run: no target)."""
    run = run_tool_call(call, corpus_root(corpus), restrict_files=files, timeout_s=timeout_s)
    if not run.ok or run.truncated:
        return run, None
    return run, tuple(sorted({f.span for f in run.findings}))


def _bytes(corpus: str, files: tuple[str, ...]) -> int:
    root = corpus_root(corpus)
    total = 0
    for rel in files:
        with contextlib.suppress(OSError):  # gone since the pass: the run says so
            total += (root / rel).stat().st_size
    return total


def _on_a_hit(span: Span, hits: frozenset[tuple[str, int]]) -> bool:
    return any((span.path, line) in hits for line in range(span.start_line, span.end_line + 1))


def measure(corpus: str, candidate: Candidate) -> tuple[Target | None, str]:
    """Run one candidate's reference call (on its pass's files): (the target, "") when it is in
    bounds and every finding lies on a hit of the pass, (None, why) when not: "failed",
    "too_small", "too_large" or "not_in_pass". The text baselines are measured after, a batch at
    a time (`synthesis.baselines`)."""
    c = candidate
    call = _call(c.template.tool, c.arguments)
    if call is None:
        return None, "failed"
    if c.files is not None and _bytes(corpus, c.files) > MAX_SCOPE_BYTES:
        return None, "too_large"
    ref_run, expected = _run(call, corpus, c.files)
    if expected is None:
        return None, "failed"
    if len(expected) < MIN_SPANS:
        return None, "too_small"
    if len(expected) > MAX_SPANS or len({s.path for s in expected}) > MAX_FILES:
        return None, "too_large"
    if c.files is not None and not all(_on_a_hit(s, c.hits) for s in expected):
        return None, "not_in_pass"
    reference = score(ref_run, call, expected)[1].total
    target = Target(corpus, c.template.id, c.language, c.subject, call, expected, c.template,
                    reference, scope=c.files)  # fmt: skip
    return target, ""


def verify_target(target: Target) -> bool:
    """The reference call, run once more (on the same files), finds exactly the target's spans."""
    return _run(target.call, target.corpus, target.scope)[1] == target.expected


def whole_corpus_check(target: Target, timeout_s: float = DEFAULT_TIMEOUT_S) -> str:
    """Run the reference as users run it (`codesearch run`: the whole corpus, `timeout_s`): "" when
    it finds exactly the target's spans, else why not: "too_slow_whole_corpus" (timed out) or
    "whole_corpus_differs" (failed, truncated or found other spans: the pass missed a file)."""
    run, spans = _run(target.call, target.corpus, None, timeout_s)
    if run.error_kind is ErrorKind.TIMEOUT:
        return "too_slow_whole_corpus"
    return "" if spans == target.expected else "whole_corpus_differs"
