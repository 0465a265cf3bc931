"""View-models for synthesized drafts: the Drafts queue's card, a blueprint's provenance, and the
Synthesize page's run (any intent writer: templates, vLLM, an OpenAI-compatible server; with
progress and a stop)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from codesearch_core.corpora import read_file_lines
from codesearch_core.errors import CodesearchError
from codesearch_core.store import Draft, Store
from codesearch_core.studio.qa import QA_REJECT_REASONS
from codesearch_core.synthesis import (
    STAGES,
    IntentWriter,
    SynthesisCounts,
    SynthesisReport,
    TemplateWriter,
    stored_draft_ids,
    stored_intents,
    synthesize,
)

SHOWN_SPANS: Final = 12
#: Why a draft is rejected (the Reject button's reason; the note says more): a draft is a
#: blueprint to be, so what makes a QA item wrong makes it wrong, and what makes it not worth one.
DRAFT_REJECT_REASONS: Final[tuple[str, ...]] = (
    *QA_REJECT_REASONS[:-1],
    "repeats another blueprint",
    "too trivial to teach anything",
    "other",
)
#: The stages a run reports, in order (candidates, mined, verified, deduplicated, kept).
SYNTHESIS_STAGES: Final = STAGES


@dataclass(frozen=True, slots=True)
class SpanLine:
    path: str
    lines: str  # "12" or "12-18"
    text: str  # the span's first line


@dataclass(frozen=True, slots=True)
class DraftCard:
    draft: Draft
    spans: tuple[SpanLine, ...]
    files: int
    provenance: dict[str, str]


def provenance(draft: Draft) -> dict[str, str]:
    """Where a draft (or the blueprint accepted from it) came from, as label -> text."""
    sample = dict(draft.sample)
    baseline = (
        f"{sample.get('baseline') or 'none'} scored {draft.baseline_reward:.2f}"
        if draft.baseline_reward is not None
        else "none"
    )
    out = {
        "Mined rule": draft.rule,
        "Subject": str(sample.get("subject", "")) or "-",
        "Engine": draft.engine + (f" ({draft.model})" if draft.model else ""),
        "Prompt": draft.prompt or "-",
        "Sample": " | ".join(str(s) for s in sample.get("samples", [])) or "-",
        "Text baseline": f"{baseline}; reference {draft.reference_reward:.2f}",
        "Draft": draft.id,
    }
    if draft.decided_by:
        out["Decided by"] = f"{draft.decided_by} ({draft.status})"
    return out


def _first_line(corpus: str, path: str, line: int) -> str:
    try:
        lines = read_file_lines(corpus, path)
        return lines[line - 1].strip()[:160] if 0 < line <= len(lines) else ""
    except CodesearchError:
        return ""


def draft_card(draft: Draft) -> DraftCard:
    spans = tuple(
        SpanLine(
            s.path,
            str(s.start_line) if s.end_line == s.start_line else f"{s.start_line}-{s.end_line}",
            _first_line(draft.corpus, s.path, s.start_line),
        )
        for s in draft.expected[:SHOWN_SPANS]
    )
    return DraftCard(draft, spans, len({s.path for s in draft.expected}), provenance(draft))


def blueprint_provenance(store: Store, blueprint_id: str) -> dict[str, str] | None:
    """The provenance of a blueprint accepted from a draft; None for an authored one."""
    draft = store.drafts.for_blueprint(blueprint_id)
    return None if draft is None else provenance(draft)


def synthesize_into_store(
    store: Store,
    corpus: str,
    *,
    limit: int | None,
    seed: int,
    writer: IntentWriter | None = None,
    on_progress: Callable[[SynthesisCounts], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> SynthesisReport:
    """Synthesis of a corpus into the store (the Synthesize page's run); `writer` None: the
    templates. Batches of 16 candidates: a progress update (and a chance to stop) every second or
    so on a small corpus, where the CLI's 128 would finish before the first."""
    return synthesize(
        corpus,
        writer=writer or TemplateWriter(),
        sink=store.drafts,
        limit=limit,
        seed=seed,
        known_intents=stored_intents(store, corpus),
        known_drafts=stored_draft_ids(store, corpus),
        on_progress=on_progress,
        should_stop=should_stop,
        batch_size=16,
    )
