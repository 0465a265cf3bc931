"""Blueprint authoring for the Blueprints and Corpus pages: drafts, the expected-findings table, an
uploaded blueprints file, and small parsers for what a curator types (line ranges, tags, ids)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

from codesearch_core import corpora
from codesearch_core.corpora import blueprint_from_dict, read_blueprints_jsonl
from codesearch_core.errors import CodesearchError, InputFileError
from codesearch_core.ingest import corpus_check_errors
from codesearch_core.models import (
    Blueprint,
    CounterCall,
    Difficulty,
    Finding,
    Plan,
    Span,
    Split,
    ToolName,
)
from codesearch_core.tools import resolve_in_corpus

_SLUG_WORD: Final = re.compile(r"[A-Za-z0-9]+")
# An en dash too: line ranges are often pasted from rendered docs.
_LINE_RANGE: Final = re.compile(r"^\s*(\d+)\s*(?:[-:\u2013]\s*(\d+))?\s*$")
_STOP_WORDS: Final = frozenset(
    ("a", "all", "an", "and", "any", "are", "as", "at", "be", "by", "each", "every", "find", "for",
     "from", "in", "is", "it", "of", "on", "or", "show", "that", "the", "this", "to", "where",
     "which", "with")
)  # fmt: skip


def parse_line_range(text: str) -> tuple[int, int]:
    """`"12"`, `"12-15"` or `"12:15"` as an inclusive 1-based range; InputFileError when it is not one."""
    m = _LINE_RANGE.match(text)
    if not m:
        raise InputFileError(f"{text!r} is not a line or a line range such as 12 or 12-15")
    start = int(m.group(1))
    end = int(m.group(2) or start)
    if start < 1 or end < start:
        raise InputFileError(f"{text!r}: lines start at 1 and the range must not run backwards")
    return start, end


def suggest_blueprint_id(corpus_name: str, intent: str, taken: Callable[[str], bool]) -> str:
    """A readable, unused slug such as `webshop-usefffect-calls`, numbered when already taken."""
    words = [w.lower() for w in _SLUG_WORD.findall(intent) if w.lower() not in _STOP_WORDS]
    base = "-".join([corpus_name, *words[:4]])[:100].strip("-") or "blueprint"
    candidate, n = base, 2
    while taken(candidate):
        candidate, n = f"{base}-{n}", n + 1
    return candidate


def infer_language(call: Mapping[str, Any], findings: Iterable[Finding | Span] = ()) -> str:
    """The blueprint language: ast-grep's `language`, else the most common language among the
    files the call found, else "text"."""
    arguments = call.get("arguments")
    if call.get("name") == ToolName.AST_GREP.value and isinstance(arguments, Mapping):
        language = arguments.get("language")
        if isinstance(language, str) and language:
            return language
    counts = Counter(
        lang for f in findings if (lang := corpora.language_for_path(f.path)) is not None
    )
    return counts.most_common(1)[0][0] if counts else "text"


# --- blueprint drafts ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BlueprintDraft:
    """A blueprint being authored: every field as the editor holds it, valid or not.

    `editing` is the id of the stored blueprint this draft edits (None for a new one); `found` are the
    findings of the last run of the call, offered as candidates for the expected set.
    """

    corpus: str
    call: Mapping[str, Any]
    intent: str = ""
    id: str = ""
    language: str = ""
    expected: tuple[Span, ...] = ()
    tags: tuple[str, ...] = ()
    difficulty: Difficulty = Difficulty.MEDIUM
    notes: str = ""
    editing: str | None = None
    found: tuple[Finding, ...] = field(default=())
    #: Kept through an edit: the form does not edit them, and saving must not drop them.
    counter_calls: tuple[CounterCall, ...] = ()
    #: A plan seed's plan: `call` is its last step (what the editor edits); earlier steps are kept.
    plan: Plan | None = None
    #: `eval`: held out of every export (the held-out set `codesearch eval` scores models on).
    split: Split = Split.TRAIN


def draft_from_blueprint(bp: Blueprint) -> BlueprintDraft:
    return BlueprintDraft(
        corpus=bp.corpus,
        call=bp.reference_call.to_dict(),
        intent=bp.intent,
        id=bp.id,
        language=bp.language,
        expected=bp.expected,
        tags=bp.tags,
        difficulty=bp.difficulty,
        notes=bp.notes,
        editing=bp.id,
        counter_calls=bp.counter_calls,
        plan=bp.plan,
        split=bp.split,
    )


def draft_from_run(
    corpus_name: str, call: Mapping[str, Any], found: Sequence[Finding]
) -> BlueprintDraft:
    """A new draft from an ad-hoc call: everything it found is expected until the author unticks it."""
    spans = tuple(dict.fromkeys(f.span for f in found))
    return BlueprintDraft(
        corpus=corpus_name,
        call=dict(call),
        language=infer_language(call, found),
        expected=spans,
        found=tuple(found),
    )


def blueprint_from_draft(draft: BlueprintDraft) -> Blueprint:
    """Validate a draft into a Blueprint; the error names the field (InputFileError/ToolCallError)."""
    return blueprint_from_dict(
        {
            "id": draft.id.strip(),
            "intent": draft.intent.strip(),
            "corpus": draft.corpus,
            "language": draft.language.strip(),
            "reference_call": _reference(draft),
            "expected": [s.to_dict() for s in sorted(set(draft.expected))],
            "tags": [t.strip() for t in draft.tags if t.strip()],
            "difficulty": draft.difficulty.value,
            "notes": draft.notes,
            "counter_calls": [
                {"call": c.call.to_dict(), "why": c.why} for c in draft.counter_calls
            ],
            "split": draft.split.value,
        }
    )


def _reference(draft: BlueprintDraft) -> dict[str, Any]:
    """The draft's call, or its plan with the (possibly edited) call as the last step."""
    if draft.plan is None:
        return dict(draft.call)
    *earlier, last = draft.plan.steps
    steps = [{"call": s.call.to_dict(), "restrict_to_previous": s.restrict_to_previous}
             for s in earlier]  # fmt: skip
    steps.append({"call": dict(draft.call), "restrict_to_previous": last.restrict_to_previous})
    return {"steps": steps}


def parse_tags(text: str) -> tuple[str, ...]:
    """Comma- or newline-separated tags, trimmed, empty ones and repeats dropped."""
    return tuple(dict.fromkeys(t.strip() for t in re.split(r"[,\n]", text) if t.strip()))


# --- the expected-findings table ----------------------------------------------------------------

EXPECTED_COLUMNS: Final = ("expected", "supporting", "path", "lines", "text", "source")


def expected_table(
    found: Sequence[Finding], expected: Sequence[Span], corpus: str | None = None
) -> list[dict[str, Any]]:
    """One row per distinct span the call found or the draft expects, in file order.

    `expected` is the checkbox the author ticks, `supporting` marks an expected span as context, not
    the answer (graded as neither required nor penalised: `grading.spans`); `source` says where the row comes from ("found" by
    the last run, or "added" by hand and not found), so a hand-added span that the call misses shows.
    With `corpus`, a span no run found (a blueprint reopened before any run) shows its first line
    from the file: an empty text column left the author ticking line numbers blind (issue 29).
    """
    text_of: dict[Span, str] = {}
    for f in found:
        text_of.setdefault(f.span, f.text.strip().splitlines()[0][:200] if f.text.strip() else "")
    wanted = set(expected)
    supporting = {s for s in expected if s.supporting}  # Span equality ignores the mark
    file_lines: dict[str, list[str]] = {}

    def text(span: Span) -> str:
        if span in text_of or corpus is None:
            return text_of.get(span, "")
        if span.path not in file_lines:
            try:
                file_lines[span.path] = corpora.read_file_lines(corpus, span.path)
            except CodesearchError:
                file_lines[span.path] = []
        lines = file_lines[span.path]
        return lines[span.start_line - 1].strip()[:200] if 0 < span.start_line <= len(lines) else ""

    rows = [
        {
            "expected": span in wanted,
            "supporting": span in supporting,
            "path": span.path,
            "lines": _lines_label(span),
            "text": text(span),
            "source": "found" if span in text_of else "added",
        }
        for span in sorted(set(text_of) | wanted)
    ]
    return rows


def _lines_label(span: Span) -> str:
    if span.start_line == span.end_line:
        return str(span.start_line)
    return f"{span.start_line}-{span.end_line}"


def spans_from_table(rows: Iterable[Mapping[Any, Any]]) -> tuple[Span, ...]:
    """The ticked rows of an `expected_table` (possibly edited) as spans, sorted and distinct; a
    row ticked `supporting` is an expected span marked supporting (ticked expected or not)."""
    spans: set[Span] = set()
    for row in rows:
        marked = bool(row.get("supporting"))
        if not row.get("expected") and not marked:
            continue
        start, end = parse_line_range(str(row["lines"]))
        spans.add(Span(str(row["path"]), start, end, marked))
    return tuple(sorted(spans))


def add_expected_span(draft: BlueprintDraft, path: str, lines: str) -> BlueprintDraft:
    """The draft with one more expected span (a finding the call misses), checked against the corpus."""
    path = path.strip()
    if not path:
        raise InputFileError("name the file of the span, relative to the corpus root")
    target = resolve_in_corpus(corpora.corpus_root(draft.corpus), path)
    if not target.is_file():
        raise InputFileError(f"{path!r} is not a file in corpus {draft.corpus!r}")
    start, end = parse_line_range(lines)
    data = target.read_bytes()
    # As rg numbers lines: at `\n` only (bytes.splitlines also ends a line at a lone `\r`).
    n_lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    if end > n_lines:
        raise InputFileError(f"{path!r} has {n_lines} lines; {lines.strip()!r} runs past its end")
    return replace(draft, expected=tuple(sorted({*draft.expected, Span(path, start, end)})))


def check_upload(data: bytes, name: str) -> tuple[list[Blueprint], list[InputFileError]]:
    """Every blueprint of an uploaded JSONL and every bad line (all of them, not only the first).

    The caller stores nothing unless the error list is empty: a half-imported file is worse than
    none. A blueprint is refused here as in `codesearch db import`: its corpus must be here, hold
    its expected files, and be able to run its reference call.
    """
    lines = _NamedLines(data, name)
    blueprints, errors = read_blueprints_jsonl(lines, skip_bad=True)
    unusable = corpus_check_errors(blueprints, lines, source=name)
    return blueprints, sorted([*errors, *unusable], key=lambda e: e.line)


class _NamedLines:
    """Uploaded bytes as an iterable of lines that carries the upload's name into error messages."""

    def __init__(self, data: bytes, name: str) -> None:
        self._data = data
        self.name = name

    def __iter__(self) -> Any:
        return iter(self._data.splitlines(keepends=True))
