"""The seed audit: does any natural wrong call score near a seed's reference call?

For each seed the audit runs, with the real tools, and scores like any proposal:

- its **counter-calls**, written by the seed's author as the strongest wrong calls they found;
- **keyword** baselines (ast-grep seeds): each literal piece of the pattern(s) (`DB.query`,
  `useEffect`), of a rule's `regex` literals (`contextmanager` in `contextmanager$`) and the
  keyword a rule's `kind` names (`unsafe` for `unsafe_block`, `class` for `class_declaration`) as a
  fixed-string `rg` call with the language's type filter: the text search a model falls back on;
- **drop-flag** baselines (ripgrep seeds): the reference without each of its options in turn
  (pcre2, type filter, globs, paths, case, word, multiline, fixed strings); a variant that still
  scores 1.0 means that option does not matter on this corpus;
- **sibling-language** baselines (ast-grep seeds): the call with ts↔tsx, js↔ts or c↔cpp;
- **step** baselines (plan seeds): each step of the plan alone, unnarrowed;
- **first-line**: not a call, the expected spans cut to their first lines (the grade must see
  constructs covered, not lines touched), on seeds whose spans are mostly constructs of three lines
  or more.

The audit also runs each seed's **second opinion** (`Blueprint.second_opinion`, run by
`verify.second_opinion`): the searches a reader would also count (`covers`: every line one finds
lies in an expected span) or leave out (`excludes`: no expected span holds a line one finds), on
the whole corpus. A seed *disagrees* when one of them does not hold (`missed:<why>`,
`included:<why>`) or cannot run (`second_opinion_failed:...`, `bad_check:...`).

A seed is *weak* when a counter-call's reward (or for a plan seed, a step's on its own) is above
`WEAK_ABOVE`. The set-level checks (`AuditSummary`): no weak seed; no seed whose second opinion
disagrees; a keyword call reaches `KEYWORD_HIT` on at most `KEYWORD_SHARE` of the ast-grep seeds;
first-line scores at most `FIRST_LINE_MAX` on the seeds whose expected spans are mostly
multi-line.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Final

from codesearch_core.corpora import (
    CATEGORY_TAGS,
    FIRST_LINE_MAX,
    KEYWORD_HIT,
    KEYWORD_SHARE,
    WEAK_ABOVE,
    corpus_root,
)
from codesearch_core.grading import DEFAULT_MATCHING, Matching, grade, reward, score
from codesearch_core.models import Blueprint, Span, ToolCall, ToolName
from codesearch_core.tools import parse_tool_call, rg_type_names, run_plan, run_tool_call
from codesearch_core.verify.second_opinion import Judge, Subject

#: ast-grep language -> rg type of the same files.
RG_TYPE_OF: Final[Mapping[str, str]] = {
    "bash": "sh", "c": "c", "cpp": "cpp", "csharp": "csharp", "css": "css", "dart": "dart",
    "elixir": "elixir", "go": "go", "haskell": "haskell", "html": "html", "java": "java",
    "javascript": "js", "json": "json", "kotlin": "kotlin", "lua": "lua", "nix": "nix",
    "php": "php", "python": "py", "ruby": "ruby", "rust": "rust", "scala": "scala",
    "swift": "swift", "tsx": "ts", "typescript": "ts", "yaml": "yaml",
}  # fmt: skip
SIBLING_LANGUAGES: Final[Mapping[str, tuple[str, ...]]] = {
    "typescript": ("tsx", "javascript"),
    "tsx": ("typescript",),
    "javascript": ("typescript",),
    "c": ("cpp",),
    "cpp": ("c",),
}
#: The options a drop-flag baseline removes, one at a time.
_DROPPABLE: Final = (
    "pcre2", "file_types", "globs", "paths", "case_sensitive", "smart_case", "word", "multiline",
    "fixed_strings",
)  # fmt: skip
_METAVARIABLE: Final = re.compile(r"\$\$?\$?[A-Z_][A-Z0-9_]*|\$\$\$")
_PIECE: Final = re.compile(r"[A-Za-z_@#][\w]*(?:(?:\.|::|->|\?\.)[A-Za-z_]\w*)*")
_KEYWORDS_SKIPPED: Final = frozenset(
    {"if", "for", "while", "return", "def", "function", "fn", "let", "const", "var", "new",
     "func", "class", "public", "private", "static", "void", "int", "await", "async", "try",
     "catch", "except", "else", "end", "do", "in", "of", "is", "not", "and", "or", "self", "this"}
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Baseline:
    kind: str  # counter | keyword | drop-flag | sibling | step | first-line
    label: str
    reward: float
    call: ToolCall | None  # None for first-line (not a call)
    why: str = ""


@dataclass(frozen=True, slots=True)
class SeedAudit:
    seed: Blueprint
    reference: float
    baselines: tuple[Baseline, ...]
    #: The seed's second opinion: None when it declares no check, "" when every check agrees,
    #: else why not (`missed:<why>`, `included:<why>`, `second_opinion_failed:...`).
    second_opinion: str | None = None

    @property
    def disagrees(self) -> bool:
        return bool(self.second_opinion)

    @property
    def counter_best(self) -> float | None:
        """The best natural wrong answer: a counter-call, or for a plan seed a step on its own."""
        rewards = [b.reward for b in self.baselines if b.kind in ("counter", "step")]
        return max(rewards) if rewards else None

    @property
    def weak(self) -> bool:
        best = self.counter_best
        return best is not None and best > WEAK_ABOVE

    @property
    def keyword_best(self) -> float | None:
        rewards = [b.reward for b in self.baselines if b.kind == "keyword"]
        return max(rewards) if rewards else None

    @property
    def first_line(self) -> float | None:
        return next((b.reward for b in self.baselines if b.kind == "first-line"), None)

    @property
    def flags_not_needed(self) -> tuple[str, ...]:
        return tuple(b.label for b in self.baselines if b.kind == "drop-flag" and b.reward >= 1.0)


@dataclass(frozen=True, slots=True)
class AuditSummary:
    seeds: int
    languages: int
    ast_grep_seeds: int
    keyword_reaching: int
    weak: tuple[str, ...]
    first_line_over: tuple[str, ...]
    categories: Mapping[str, int] = field(default_factory=dict)
    #: Seeds whose second opinion ran, those of them it disagrees with, seeds that declare none.
    second_opinion_checked: int = 0
    second_opinion_disagree: tuple[str, ...] = ()
    second_opinion_none: int = 0

    @property
    def keyword_share(self) -> float:
        return self.keyword_reaching / self.ast_grep_seeds if self.ast_grep_seeds else 0.0

    @property
    def passed(self) -> bool:
        return (
            not self.weak
            and not self.second_opinion_disagree
            and not self.first_line_over
            and self.keyword_share <= KEYWORD_SHARE
        )


def keyword_pieces(bp: Blueprint) -> list[str]:
    """The literal words of an ast-grep call: of its patterns (metavariables and bare keywords left
    out), of its rule's `regex` literals, and the keyword each rule `kind` is named after."""
    args = bp.reference_call.arguments
    texts = [_METAVARIABLE.sub(" ", text) for text in _patterns(args)]
    texts += [_regex_literals(text) for text in _rule_values(args, "regex")]
    pieces: dict[str, None] = {}
    for text in texts:
        for piece in _PIECE.findall(text):
            if piece not in _KEYWORDS_SKIPPED and len(piece) > 1:
                pieces[piece] = None
    # A kind's keyword is the construct itself (`class`, `unsafe`, `catch`): what a text search
    # for it types, so it is kept even when it is a bare keyword.
    for kind in _rule_values(args, "kind"):
        word = _kind_keyword(kind)
        if word:
            pieces[word] = None
    return list(pieces)


#: Words of tree-sitter kind names that name no text (`function_definition` -> `function`,
#: `decorated_definition` -> none).
_GENERIC_KIND_WORDS: Final = frozenset(
    {"declaration", "definition", "statement", "expression", "item", "clause", "block",
     "annotation", "list", "literal", "identifier", "specifier", "signature", "decorated",
     "redirected", "lexical", "variable", "type", "predicate", "call", "arguments", "body",
     "field", "member", "formal", "parameters", "parameter", "string", "comment", "program",
     "method"}
)  # fmt: skip
#: Regex syntax that is not literal text: escapes of a class (\s, \w, \b...), character classes.
_REGEX_CLASS: Final = re.compile(r"\\[A-Za-z]|\[[^\]]*\]")


def _kind_keyword(kind: str) -> str:
    """The keyword a kind is named after: its first word unless generic (`unsafe_block` ->
    `unsafe`, `impl_item` -> `impl`, `decorated_definition` -> "")."""
    first = kind.split("_", 1)[0]
    return "" if first in _GENERIC_KIND_WORDS or len(first) < 2 else first


def _regex_literals(regex: str) -> str:
    """The text of a regex with its classes and escapes of classes blanked and escaped
    punctuation unescaped: what is left are the literal words."""
    return re.sub(r"\\(.)", r"\1", _REGEX_CLASS.sub(" ", regex))


def _rule_values(value: Any, key: str) -> Iterator[str]:
    """Every string under `key` anywhere in a call's arguments (a rule and its sub-rules)."""
    if isinstance(value, Mapping):
        for k, inner in value.items():
            if k == key and isinstance(inner, str):
                yield inner
            else:
                yield from _rule_values(inner, key)
    elif isinstance(value, list):
        for inner in value:
            yield from _rule_values(inner, key)


def _patterns(value: Any) -> Iterator[str]:
    if isinstance(value, Mapping):
        for key, inner in value.items():
            if key == "pattern" and isinstance(inner, str):
                yield inner
            elif key == "pattern" and isinstance(inner, Mapping) and "context" in inner:
                yield str(inner["context"])
            else:
                yield from _patterns(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _patterns(inner)


def _call(name: ToolName, arguments: Mapping[str, Any]) -> ToolCall | None:
    try:
        return parse_tool_call({"name": name.value, "arguments": dict(arguments)})
    except Exception:  # a baseline the schema refuses is simply not run
        return None


def baseline_calls(bp: Blueprint) -> list[tuple[str, str, ToolCall, str]]:
    """(kind, label, call, why) of every call-shaped baseline of a seed."""
    out = [("counter", f"counter {i + 1}", c.call, c.why) for i, c in enumerate(bp.counter_calls)]
    if bp.plan is not None:
        # The natural wrong answer to a plan seed is one of its steps on its own, unnarrowed.
        out += [("step", f"step {i + 1} alone", c, "") for i, c in enumerate(bp.reference_calls)]
    # The other baselines vary the call whose findings count (a plan's last step).
    args = bp.reference_call.arguments
    if bp.tool is ToolName.AST_GREP:
        rg_type = RG_TYPE_OF.get(str(args.get("language", "")))
        types = [rg_type] if rg_type and rg_type in rg_type_names() else []
        for piece in keyword_pieces(bp):
            arguments: dict[str, Any] = {"pattern": piece, "fixed_strings": True}
            if types:
                arguments["file_types"] = types
            call = _call(ToolName.RIPGREP, arguments)
            if call is not None:
                out.append(("keyword", f"rg -F {piece!r}" + (f" -t {types[0]}" if types else ""),
                            call, ""))  # fmt: skip
        for sibling in SIBLING_LANGUAGES.get(str(args.get("language", "")), ()):
            call = _call(ToolName.AST_GREP, {**args, "language": sibling})
            if call is not None:
                out.append(("sibling", f"as {sibling}", call, ""))
        if "paths" in args:
            call = _call(ToolName.AST_GREP, {k: v for k, v in args.items() if k != "paths"})
            if call is not None:
                out.append(("drop-flag", "paths", call, ""))
    else:
        for key in _DROPPABLE:
            if key in args and key != "pattern":
                call = _call(ToolName.RIPGREP, {k: v for k, v in args.items() if k != key})
                if call is not None:
                    out.append(("drop-flag", key, call, ""))
    return out


def first_line_spans(expected: Sequence[Span]) -> list[Span]:
    return [Span(s.path, s.start_line, s.start_line) for s in expected]


def mostly_multiline(expected: Sequence[Span]) -> bool:
    """More than half the spans are constructs of three lines or more. (On two-line spans, such as
    a doubled word across a line break, the first line alone is half the match: it earns half.)"""
    long_spans = sum(s.end_line - s.start_line >= 2 for s in expected)
    return bool(expected) and long_spans * 2 > len(expected)


def second_opinion_of(bp: Blueprint, judge: Judge) -> str | None:
    """The seed's own checks run on its corpus against its expected spans: None when it declares
    none, "" when they all agree, else why not."""
    if not bp.second_opinion:
        return None
    item = Subject(bp.corpus, bp.id, bp.language, "", bp.expected)
    return judge.judge_by(item, bp.second_opinion)


def audit_seed(
    bp: Blueprint, matching: Matching = DEFAULT_MATCHING, judge: Judge | None = None
) -> SeedAudit:
    root = corpus_root(bp.corpus)
    ref_run = run_plan(bp.plan, root) if bp.plan else run_tool_call(bp.reference_call, root)
    reference = score(ref_run, bp.reference, bp.expected, matching=matching)[1].total
    baselines: list[Baseline] = []
    for kind, label, call, why in baseline_calls(bp):
        run = run_tool_call(call, root)
        total = score(run, call, bp.expected, matching=matching)[1].total
        baselines.append(Baseline(kind, label, total, call, why))
    if mostly_multiline(bp.expected):
        g = grade(first_line_spans(bp.expected), bp.expected, matching=matching)
        total = reward(g, bp.reference, ref_run).total
        baselines.append(Baseline("first-line", "first line of each span", total, None))
    second = second_opinion_of(bp, judge if judge is not None else Judge())
    return SeedAudit(bp, reference, tuple(baselines), second)


def audit_seeds(
    seeds: Sequence[Blueprint], *, matching: Matching = DEFAULT_MATCHING, workers: int = 4
) -> list[SeedAudit]:
    """Audit every seed (threads: the work is in the tools' processes), in the seeds' order; one
    `Judge` for all, so seeds that share a check run it once."""
    judge = Judge()
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return list(pool.map(lambda bp: audit_seed(bp, matching, judge), seeds))


def summarize(audits: Sequence[SeedAudit]) -> AuditSummary:
    ast_grep = [a for a in audits if a.seed.tool is ToolName.AST_GREP]
    categories = Counter(t for a in audits for t in a.seed.tags if t in CATEGORY_TAGS)
    return AuditSummary(
        seeds=len(audits),
        languages=len({a.seed.language for a in audits}),
        ast_grep_seeds=len(ast_grep),
        keyword_reaching=sum((a.keyword_best or 0.0) >= KEYWORD_HIT for a in ast_grep),
        weak=tuple(a.seed.id for a in audits if a.weak),
        first_line_over=tuple(
            a.seed.id for a in audits if a.first_line is not None and a.first_line > FIRST_LINE_MAX
        ),
        categories={tag: categories.get(tag, 0) for tag in CATEGORY_TAGS},
        second_opinion_checked=sum(a.second_opinion is not None for a in audits),
        second_opinion_disagree=tuple(a.seed.id for a in audits if a.disagrees),
        second_opinion_none=sum(a.second_opinion is None for a in audits),
    )
