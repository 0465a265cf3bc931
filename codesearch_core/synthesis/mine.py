"""Mining targets from a corpus: run the rule templates with the real tools, keep the facts that
make good tasks, and prove each one.

A *target* is a reference call and the spans it finds. One is kept when:

- its size is in bounds: at least `MIN_SPANS` spans (one finding in one file is trivia), at most
  `MAX_SPANS` spans and `MAX_FILES` files (a task nobody can check by eye is not a task);
- the right tool matters: the best *text baseline* (for ast-grep targets the seed audit's keyword
  searches, for text targets the template's naive searches) scores at most
  `reference - MIN_MARGIN`, so a model that falls back on plain text search does measurably worse;
- it reproduces: the reference call, run again, finds the same spans (`verify_target`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from codesearch_core.corpora import corpus_root, language_for_path, list_files
from codesearch_core.errors import CorpusError
from codesearch_core.grading import score
from codesearch_core.models import Blueprint, RunResult, Span, ToolCall, ToolName
from codesearch_core.synthesis.rules import LANGUAGE_LABELS, RuleTemplate, templates_for
from codesearch_core.tools import parse_tool_call, run_tool_call
from codesearch_core.verify import baseline_calls

MIN_SPANS: Final = 2
MAX_SPANS: Final = 40
MAX_FILES: Final = 20
#: How far below the reference the best text baseline must stay for the target to be kept.
MIN_MARGIN: Final = 0.25
#: Subjects tried per (template, language): the most frequent first, so a huge corpus does not
#: turn every one-off helper into a target.
MAX_SUBJECTS: Final = 40


class NothingToMineError(CorpusError):
    """The corpus has no file in a language the rule templates know."""


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
    counts = Counter(lang for rel in list_files(corpus) if (lang := language_for_path(rel)))
    if not counts:
        raise NothingToMineError(
            f"nothing to mine in corpus {corpus!r}: it has no file in a language the rule "
            "templates know (JavaScript, TypeScript, Python, Java, Go, ...)"
        )
    return frozenset(counts), counts.most_common(1)[0][0]


def _run(call: ToolCall, corpus: str) -> tuple[RunResult, tuple[Span, ...] | None]:
    """The run and its distinct spans (None for a failed or truncated run: no target)."""
    run = run_tool_call(call, corpus_root(corpus))
    if not run.ok or run.truncated:
        return run, None
    return run, tuple(sorted({f.span for f in run.findings}))


def _call(tool: str, arguments: Mapping[str, Any]) -> ToolCall | None:
    try:
        return parse_tool_call({"name": tool, "arguments": dict(arguments)})
    except Exception:  # a template that makes a call the schema refuses mines nothing
        return None


Candidate = tuple[RuleTemplate, str, str, ToolCall]
"""(template, language, subject, reference call): what `measure` takes."""


def candidates(corpus: str) -> Iterator[Candidate]:
    """Every (template, language, subject, reference call) the templates give on this corpus,
    discovery runs included. Raises NothingToMineError first when nothing can be mined."""
    languages, main = corpus_languages(corpus)
    for template, language in templates_for(languages):
        subjects: list[str]
        if template.discover is None or template.subject_of is None:
            subjects = [str(template.extra.get("subject", ""))]
        else:
            discovery = _call(template.tool, template.discover(language))
            run = None if discovery is None else run_tool_call(discovery, corpus_root(corpus))
            if run is None or not run.ok:
                continue
            found = Counter(s for f in run.findings if (s := template.subject_of(f.text)))
            subjects = [s for s, n in found.most_common(MAX_SUBJECTS) if n >= MIN_SPANS]
        for subject in subjects:
            call = _call(template.tool, template.reference(language, subject))
            if call is not None:
                yield template, language or main, subject, call


def measure(
    corpus: str, template: RuleTemplate, language: str, subject: str, call: ToolCall
) -> tuple[Target | None, str]:
    """Run one candidate's reference call and its baselines: (the target, "") when it is kept,
    (None, why) when not: "failed", "too_small", "too_large" or "baseline_close"."""
    ref_run, expected = _run(call, corpus)
    if expected is None:
        return None, "failed"
    files = len({s.path for s in expected})
    if len(expected) < MIN_SPANS:
        return None, "too_small"
    if len(expected) > MAX_SPANS or files > MAX_FILES:
        return None, "too_large"
    target = Target(corpus, template.id, language, subject, call, expected, template)
    root = corpus_root(corpus)
    reference = score(ref_run, call, expected)[1].total
    best, label = None, ""
    for kind, name, baseline in _baselines(target):
        del kind
        total = score(run_tool_call(baseline, root), baseline, expected)[1].total
        if best is None or total > best:
            best, label = total, name
    if best is not None and best > reference - MIN_MARGIN:
        return None, "baseline_close"
    return (
        Target(
            corpus, template.id, language, subject, call, expected, template, reference, best, label
        ),
        "",
    )


def _baselines(target: Target) -> list[tuple[str, str, ToolCall]]:
    out: list[tuple[str, str, ToolCall]] = []
    if target.call.name is ToolName.AST_GREP:
        # The seed audit's keyword baselines: each literal piece of the pattern as `rg -F`.
        out += [(k, label, c) for k, label, c, _ in baseline_calls(target.as_blueprint())
                if k == "keyword"]  # fmt: skip
    for arguments in target.template.naive(target.subject):
        call = _call(ToolName.RIPGREP.value, arguments)
        if call is not None:
            out.append(("naive", f"rg {arguments['pattern']!r}", call))
    return out


def verify_target(target: Target) -> bool:
    """The reference call, run once more, finds exactly the target's spans."""
    return _run(target.call, target.corpus)[1] == target.expected
