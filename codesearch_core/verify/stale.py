"""Re-checking what a corpus edit or a tool upgrade may have changed (`codesearch verify --stale`).

Every blueprint whose expected spans were checked on another snapshot of its corpus (or by other
tool versions), and every accepted proposal whose run was, is run again now. Unchanged findings
record the current snapshot and tools (nothing to decide); changed ones go to the store's Drift
queue with the findings before and after, and an accepted item in drift is held out of exports
until a lead decides it (the Drift queue: `store.queue(DRIFT)`). The new run is stored either way, so grades
follow what the tools find now.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from codesearch_core.corpora import corpus_root, current_snapshot, list_corpora
from codesearch_core.errors import CorpusError
from codesearch_core.models import Blueprint, Span
from codesearch_core.tools import run_plan, run_tool_call, tool_versions_json
from codesearch_core.verify.tasks import VerifyTask, verify_one

if TYPE_CHECKING:  # workers import this package: the store (DuckDB, pandas) loads only here
    from codesearch_core.store import DriftItem, StaleRun, Store


@dataclass(slots=True)
class StaleReport:
    snapshots: dict[str, str | None] = field(default_factory=dict)
    references_checked: int = 0
    references_drifted: int = 0
    accepted_checked: int = 0
    accepted_drifted: int = 0
    drifted_ids: list[str] = field(default_factory=list)

    @property
    def drifted(self) -> int:
        return self.references_drifted + self.accepted_drifted


def _snapshots() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in list_corpora():
        try:
            out[name] = current_snapshot(name)
        except CorpusError:  # a damaged manifest: the folder is still searched as it is
            out[name] = None
    return out


def _reference_spans(bp: Blueprint, root: Path) -> tuple[Span, ...]:
    run = run_plan(bp.plan, root) if bp.plan else run_tool_call(bp.reference_call, root)
    if not run.ok:
        return ()
    return tuple(sorted({f.span for f in run.findings}))


def verify_stale(
    store: Store, *, progress: Callable[[int, int], None] | None = None
) -> StaleReport:
    """Re-run every stale reference and accepted proposal (see the module doc)."""
    snapshots = _snapshots()
    versions = tool_versions_json()
    report = StaleReport(snapshots=snapshots)
    references = store.drift.stale_references(snapshots, versions)
    accepted = store.drift.stale_accepted(snapshots, versions)
    total = len(references) + len(accepted)
    done = 0
    current: list[str] = []
    drift: list[DriftItem] = []
    for bp in references:
        found = _reference_spans(bp, corpus_root(bp.corpus))
        old = tuple(sorted(set(bp.expected)))
        if found == old:
            current.append(bp.id)
        else:
            drift.append(_item(bp.id, "reference", bp, old, found, bp.snapshot, None, versions))
        done += 1
        if progress:
            progress(done, total)
    report.references_checked = len(references)
    report.references_drifted = len(drift)
    store.drift.mark_references_current(
        current, {b.id: snapshots[b.corpus] for b in references}, versions
    )
    for stale in accepted:
        outcome = verify_one(_task(stale))
        store.record_executions_and_grades(
            [(stale.proposal_id, outcome.run, outcome.grade, outcome.reward)]
        )
        found = tuple(sorted({f.span for f in outcome.run.findings})) if outcome.run.ok else ()
        if found != stale.findings:
            drift.append(
                _item(
                    stale.proposal_id, "proposal", stale.blueprint, stale.findings, found,
                    stale.snapshot, stale.tool_versions, versions,
                )
            )  # fmt: skip
            report.accepted_drifted += 1
        done += 1
        if progress:
            progress(done, total)
    report.accepted_checked = len(accepted)
    store.drift.add(drift)
    report.drifted_ids = [d.item_id for d in drift]
    return report


def _task(stale: StaleRun) -> VerifyTask:
    bp = stale.blueprint
    return VerifyTask(
        proposal_id=stale.proposal_id,
        call_json=stale.call_json,
        corpus=bp.corpus,
        corpus_root=str(corpus_root(bp.corpus)),
        expected=bp.expected,
    )


def _item(
    item_id: str,
    kind: str,
    bp: Blueprint,
    old: tuple[Span, ...],
    new: tuple[Span, ...],
    old_snapshot: str | None,
    old_tools: str | None,
    versions: str,
) -> DriftItem:
    from codesearch_core.store import DriftItem, utc_now

    return DriftItem(
        item_id=item_id,
        kind=kind,
        blueprint_id=bp.id,
        old_findings=old,
        new_findings=new,
        old_snapshot=old_snapshot,
        new_snapshot=current_snapshot(bp.corpus),
        old_tools=old_tools,
        new_tools=versions,
        found_at=utc_now(),
    )
