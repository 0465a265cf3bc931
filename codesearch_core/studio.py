"""The studio's view logic that is not about one widget: first-start seeding, blueprint drafts and
their expected-findings table, and small parsers for what a curator types.

Pure (or store-only) functions on top of the library's public API, tested without Streamlit; the
pages call these instead of holding logic themselves.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

import httpx

from codesearch_core import config, corpus
from codesearch_core.blueprints import blueprint_from_dict, read_blueprints_jsonl
from codesearch_core.engines.base import Engine, SamplingSettings
from codesearch_core.engines.prompt import Example, PromptConfig
from codesearch_core.errors import EngineError, InputFileError
from codesearch_core.grader import diff_findings
from codesearch_core.models import (
    Blueprint,
    Difficulty,
    Finding,
    Proposal,
    Span,
    ToolCall,
    ToolName,
)
from codesearch_core.paths import resolve_in_corpus
from codesearch_core.schemas import parse_tool_call
from codesearch_core.store import Store
from codesearch_core.store_types import (
    BlueprintFilters,
    DecisionState,
    ImportReport,
    QueueFilters,
    ReviewItem,
)
from codesearch_core.studio_diff import FindingRow, finding_rows
from codesearch_core.verify import VerifyTask, verify_one

_SLUG_WORD: Final = re.compile(r"[A-Za-z0-9]+")
# An en dash too: line ranges are often pasted from rendered docs.
_LINE_RANGE: Final = re.compile(r"^\s*(\d+)\s*(?:[-:\u2013]\s*(\d+))?\s*$")
_STOP_WORDS: Final = frozenset(
    ("a", "all", "an", "and", "any", "are", "as", "at", "be", "by", "each", "every", "find", "for",
     "from", "in", "is", "it", "of", "on", "or", "show", "that", "the", "this", "to", "where",
     "which", "with")
)  # fmt: skip


def file_mtime_ns(corpus_name: str, rel: str) -> int:
    """The modification time of a corpus file (a cache key for its text); CorpusError if outside."""
    path = resolve_in_corpus(corpus.corpus_root(corpus_name), rel)
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0


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
        lang for f in findings if (lang := corpus.language_for_path(f.path)) is not None
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
            "reference_call": dict(draft.call),
            "expected": [s.to_dict() for s in sorted(set(draft.expected))],
            "tags": [t.strip() for t in draft.tags if t.strip()],
            "difficulty": draft.difficulty.value,
            "notes": draft.notes,
        }
    )


def parse_tags(text: str) -> tuple[str, ...]:
    """Comma- or newline-separated tags, trimmed, empty ones and repeats dropped."""
    return tuple(dict.fromkeys(t.strip() for t in re.split(r"[,\n]", text) if t.strip()))


# --- the expected-findings table ----------------------------------------------------------------

EXPECTED_COLUMNS: Final = ("expected", "path", "lines", "text", "source")


def expected_table(found: Sequence[Finding], expected: Sequence[Span]) -> list[dict[str, Any]]:
    """One row per distinct span the call found or the draft expects, in file order.

    `expected` is the checkbox the author ticks; `source` says where the row comes from ("found" by
    the last run, or "added" by hand and not found), so a hand-added span that the call misses shows.
    """
    text_of: dict[Span, str] = {}
    for f in found:
        text_of.setdefault(f.span, f.text.strip().splitlines()[0][:200] if f.text.strip() else "")
    wanted = set(expected)
    rows = [
        {
            "expected": span in wanted,
            "path": span.path,
            "lines": _lines_label(span),
            "text": text_of.get(span, ""),
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
    """The ticked rows of an `expected_table` (possibly edited) as spans, sorted and distinct."""
    spans: set[Span] = set()
    for row in rows:
        if not row.get("expected"):
            continue
        start, end = parse_line_range(str(row["lines"]))
        spans.add(Span(str(row["path"]), start, end))
    return tuple(sorted(spans))


def add_expected_span(draft: BlueprintDraft, path: str, lines: str) -> BlueprintDraft:
    """The draft with one more expected span (a finding the call misses), checked against the corpus."""
    path = path.strip()
    if not path:
        raise InputFileError("name the file of the span, relative to the corpus root")
    target = resolve_in_corpus(corpus.corpus_root(draft.corpus), path)
    if not target.is_file():
        raise InputFileError(f"{path!r} is not a file in corpus {draft.corpus!r}")
    start, end = parse_line_range(lines)
    n_lines = len(target.read_bytes().splitlines())
    if end > n_lines:
        raise InputFileError(f"{path!r} has {n_lines} lines; {lines.strip()!r} runs past its end")
    return replace(draft, expected=tuple(sorted({*draft.expected, Span(path, start, end)})))


# --- first start --------------------------------------------------------------------------------


def seed_blueprints() -> list[Blueprint]:
    """The shipped seeds, or none when the seeds file is absent (a trimmed install)."""
    path = config.seeds_file()
    if not path.is_file():
        return []
    blueprints, _ = read_blueprints_jsonl(path)
    return blueprints


def check_upload(data: bytes, name: str) -> tuple[list[Blueprint], list[InputFileError]]:
    """Every blueprint of an uploaded JSONL and every bad line (all of them, not only the first).

    The caller stores nothing unless the error list is empty: a half-imported file is worse than
    none.
    """
    return read_blueprints_jsonl(_NamedLines(data, name), skip_bad=True)


class _NamedLines:
    """Uploaded bytes as an iterable of lines that carries the upload's name into error messages."""

    def __init__(self, data: bytes, name: str) -> None:
        self._data = data
        self.name = name

    def __iter__(self) -> Any:
        return iter(self._data.splitlines(keepends=True))


def ensure_seeded(store: Store) -> ImportReport | None:
    """Load the shipped seeds into an empty store (first start); None when it already has blueprints.

    Idempotent: a second call, or a second process, adds nothing (blueprints are stored once by id
    and content hash).
    """
    if store.counts().blueprints:
        return None
    return store.add_blueprints(seed_blueprints(), source="seeds")


# --- review -------------------------------------------------------------------------------------

#: Reasons a curator picks from when rejecting; free text goes in the note.
REJECT_REASONS: Final[tuple[str, ...]] = (
    "misses expected findings",
    "finds too much",
    "wrong tool",
    "wrong scope (paths, file types, language)",
    "needs pcre2",
    "invalid call",
    "other",
)
#: The engine name recorded for a proposal a curator edited by hand in the Review page.
EDIT_ENGINE: Final = "edit"


def next_item_id(store: Store, filters: QueueFilters, after_id: str | None = None) -> str | None:
    """The item to show next: the first match after `after_id` in queue order, wrapping round to the
    start (an edited proposal arrives at the end, and its parent still waits near the start)."""
    item = store.next_review_item(filters, after_id) if after_id else None
    if item is None:
        item = store.next_review_item(filters)
    return item.proposal_id if item else None


def finding_rows_for(item: ReviewItem) -> tuple[FindingRow, ...] | None:
    """The findings diff of a review item; None when it was never executed."""
    if item.execution is None:
        return None
    return finding_rows(diff_findings(item.execution.findings, item.blueprint.expected))


def rerun_edited(store: Store, item: ReviewItem, call: ToolCall, reviewer: str) -> str:
    """Store `call` as a new proposal whose parent is the item's proposal, execute and grade it,
    and return its id. The same call proposed before for this blueprint is that proposal again."""
    parent = item.proposal
    proposal = Proposal(
        blueprint_id=item.blueprint.id,
        engine=EDIT_ENGINE,
        model=reviewer.strip() or "curator",
        raw_text=call.to_json(),
        call=call,
        valid=True,
        prompt=parent.proposal.prompt,
        mutation_kind=parent.proposal.mutation_kind,
        parent_id=parent.id,
    )
    (proposal_id,) = store.add_proposals([proposal])
    bp = item.blueprint
    outcome = verify_one(
        VerifyTask(
            proposal_id=proposal_id,
            call_json=call.to_json(),
            corpus=bp.corpus,
            corpus_root=str(corpus.corpus_root(bp.corpus)),
            expected=bp.expected,
        )
    )
    store.record_execution_and_grade(proposal_id, outcome.run, outcome.grade, outcome.reward)
    return proposal_id


# --- proposing ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ProposeProgress:
    """Running totals of a proposing run, reported after each chunk of blueprints."""

    blueprints_done: int
    blueprints_total: int
    proposals: int
    new: int
    invalid: int


def propose_into_store(
    store: Store,
    engine: Engine,
    blueprints: Sequence[Blueprint],
    *,
    n: int = 1,
    settings: SamplingSettings | None = None,
    chunk_size: int = 32,
    prompt: PromptConfig | None = None,
    examples: Sequence[Example] = (),
    on_chunk: Callable[[ProposeProgress], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> ProposeProgress:
    """Ask `engine` for proposals `chunk_size` blueprints at a time and store each chunk at once.

    A chunk is the unit of stopping: `should_stop` is checked between chunks, and whatever was
    proposed before the stop (or before an engine error) is already in the store.
    """
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be at least 1, got {chunk_size}")
    progress = ProposeProgress(0, len(blueprints), 0, 0, 0)
    for start in range(0, len(blueprints), chunk_size):
        if should_stop is not None and should_stop():
            break
        chunk = blueprints[start : start + chunk_size]
        proposals = engine.propose(chunk, n=n, settings=settings, prompt=prompt, examples=examples)
        report = store.add_proposals_report(proposals, source=f"{engine.name}:{engine.model}")
        progress = ProposeProgress(
            blueprints_done=progress.blueprints_done + len(chunk),
            blueprints_total=len(blueprints),
            proposals=progress.proposals + len(proposals),
            new=progress.new + report.new,
            invalid=progress.invalid + sum(not p.valid for p in proposals),
        )
        if on_chunk is not None:
            on_chunk(progress)
    return progress


def accepted_examples(store: Store, limit: int) -> list[Example]:
    """Few-shot examples for a prompt: the first `limit` accepted proposals (intent and call)."""
    examples: list[Example] = []
    if limit < 1:
        return examples
    rows = store.export_rows(QueueFilters(decision=DecisionState.ACCEPTED), kind="accepted")
    for row in rows:
        if row.call_json is not None:
            examples.append(Example(row.intent, parse_tool_call(json.loads(row.call_json))))
        if len(examples) >= limit:
            break
    return examples


def all_blueprints(store: Store, filters: BlueprintFilters, *, limit: int) -> list[Blueprint]:
    """Up to `limit` blueprints matching `filters`, in the store's order, fetched page by page."""
    out: list[Blueprint] = []
    page = 1000
    while len(out) < limit:
        batch = store.list_blueprints(filters, offset=len(out), limit=min(page, limit - len(out)))
        out.extend(batch.items)
        if len(batch.items) < page or len(out) >= batch.total:
            break
    return out


def probe_openai_server(base_url: str, api_key: str | None, *, timeout_s: float = 5.0) -> list[str]:
    """The model ids an OpenAI-compatible server serves; EngineError saying how to fix it when the
    server cannot be reached or refuses (so a run does not turn into a pile of failed proposals)."""
    url = base_url.rstrip("/") + "/models"
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        response = httpx.get(url, headers=headers, timeout=timeout_s)
    except httpx.HTTPError as err:
        raise EngineError(
            f"cannot reach {url}: {err or type(err).__name__}. Is the server running "
            "(e.g. `vllm serve MODEL --port 8000`) and does the URL end in /v1?"
        ) from None
    if response.status_code in (401, 403):
        raise EngineError(f"{url} refused the API key (HTTP {response.status_code})")
    if response.status_code != 200:
        raise EngineError(
            f"{url} answered HTTP {response.status_code}; the base URL should end in /v1"
        )
    try:
        data = response.json().get("data", [])
        return [str(m["id"]) for m in data if isinstance(m, Mapping) and "id" in m]
    except (ValueError, AttributeError):
        raise EngineError(f"{url} did not answer like an OpenAI-compatible server") from None
