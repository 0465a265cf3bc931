"""The store's data beside the review queues, one small handle per group of tables (issue 38).

`store.blueprints`, `store.drafts`, `store.drift`, `store.episodes`, `store.evals`, `store.qa` and
`store.guidelines` read and write their tables through the store's transactions, as the store's
actor; deciding any of their items is the queue's (`store.queue(kind)`, `store.queue`), never a
method here. Each handle is made on access, so a store `acting_as` someone else hands out handles
acting as them.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from codesearch_core.access import Action
from codesearch_core.errors import InputFileError
from codesearch_core.models import Blueprint, Difficulty, Split
from codesearch_core.store import drafts as store_drafts
from codesearch_core.store import episodes as store_episodes
from codesearch_core.store import evals as store_evals
from codesearch_core.store import guidelines as store_guidelines
from codesearch_core.store import pinning
from codesearch_core.store import qa as store_qa
from codesearch_core.store import queries as store_queries
from codesearch_core.store import writes as store_writes
from codesearch_core.store.audit import Deed
from codesearch_core.store.base import StoreBase
from codesearch_core.store.drafts import Draft
from codesearch_core.store.episodes import StoredEpisode
from codesearch_core.store.evals import EvalRun
from codesearch_core.store.filters import DriftFilters
from codesearch_core.store.guidelines import Guidelines
from codesearch_core.store.pinning import DriftItem, StaleRun
from codesearch_core.store.qa import QADataset, QAImport, QAItem
from codesearch_core.store.queue_kinds import DRIFT, kind_of
from codesearch_core.store.rows import utc_now
from codesearch_core.store.types import (
    BlueprintFilters,
    BlueprintPage,
    BlueprintRevision,
    DecisionState,
    ImportReport,
)


class _Part:
    __slots__ = ("_store",)

    def __init__(self, store: StoreBase) -> None:
        self._store = store


class Blueprints(_Part):
    """Blueprints: add, create or replace, read, list, their revisions, the held-out split."""

    __slots__ = ()

    def add(
        self, blueprints: Sequence[Blueprint], *, source: str = "api", skip_bad: bool = False
    ) -> ImportReport:
        """Store new blueprints; identical ones already stored count as existing (idempotent).

        A blueprint whose id is stored with other content is a conflict: an InputFileError is raised
        and nothing stored, unless `skip_bad` (then it is left out and listed in the report). Edits
        go through `upsert`.
        """

        def add(deed: Deed) -> ImportReport:
            report = store_writes.add_blueprints(
                deed.cur, blueprints, source=source, skip_bad=skip_bad
            )
            if report.new:
                deed.log("blueprints.add", source, new=report.new, existing=report.existing)
            return report

        return self._store._act(add, action=Action.AUTHOR, what="add blueprints")

    def upsert(self, blueprint: Blueprint, *, source: str = "app") -> str:
        """Create or replace the blueprint with this id; returns "created", "updated" or "unchanged".

        Every change appends the new version to `blueprint_revisions`, so an edit never loses the
        old text. Another blueprint with the same intent, corpus and call is a StoreError. A change
        of expected findings grades the stored runs again against them (in the same transaction);
        a change of corpus drops the runs and grades of its proposals, so they are pending again.
        Decisions stay. Anyone who may author makes new blueprints; changing one takes a lead.
        """

        def upsert(deed: Deed) -> str:
            if store_queries.get_blueprint(deed.cur, blueprint.id) is not None:
                deed.require(Action.EDIT_BLUEPRINTS)
            outcome = store_writes.upsert_blueprint(deed.cur, blueprint, source=source)
            if outcome != "unchanged":
                deed.log(f"blueprint.{outcome[:-1]}", blueprint.id, intent=blueprint.intent)
            return outcome

        return self._store._act(upsert, action=Action.AUTHOR, what="save the blueprint")

    def get(self, blueprint_id: str) -> Blueprint | None:
        return self._store._read(lambda cur: store_queries.get_blueprint(cur, blueprint_id))

    def get_many(self, blueprint_ids: Sequence[str]) -> builtins.list[Blueprint]:
        """The stored ones among these ids, in the order given."""
        return self._store._read(lambda cur: store_queries.get_blueprints(cur, blueprint_ids))

    def list(
        self, filters: BlueprintFilters | None = None, *, offset: int = 0, limit: int = 50
    ) -> BlueprintPage:
        return self._store._read(
            lambda cur: store_queries.list_blueprints(
                cur, filters or BlueprintFilters(), offset=offset, limit=limit
            )
        )

    def revisions(self, blueprint_id: str) -> tuple[BlueprintRevision, ...]:
        return self._store._read(lambda cur: store_queries.blueprint_revisions(cur, blueprint_id))

    def set_split(self, blueprint_ids: Sequence[str], split: Split | str) -> int:
        """Put blueprints on a side of the held-out line (`Split`): each change is a blueprint
        edit (a new revision, audited), all in one transaction; returns how many changed. An
        unknown id refuses the whole change (InputFileError naming it)."""
        split = Split(split)
        ids = list(dict.fromkeys(blueprint_ids))

        def mark(deed: Deed) -> int:
            found = {bp.id: bp for bp in store_queries.get_blueprints(deed.cur, ids)}
            missing = [i for i in ids if i not in found]
            if missing:
                raise InputFileError(f"no blueprint with id {', '.join(map(repr, missing[:5]))}")
            changed = [bp for bp in found.values() if bp.split is not split]
            for bp in changed:
                store_writes.upsert_blueprint(deed.cur, replace(bp, split=split), source="split")
            if changed:
                deed.log("blueprints.split", split.value, blueprints=len(changed))
            return len(changed)

        return self._store._act(mark, action=Action.EDIT_BLUEPRINTS, what="change the split")


class Drafts(_Part):
    """Draft blueprints (`store.drafts`): add (one transaction each), read, list, edit. Leasing
    and deciding them is the queue's (`store.queue(DRAFT)`: an accept makes the blueprint)."""

    __slots__ = ()

    def add(self, draft: Draft) -> bool:
        """Store one draft in its own transaction (an interrupted run keeps every draft written
        before it, none half-written); False when the same draft or target is stored already."""

        def add(deed: Deed) -> bool:
            new = store_drafts.insert_draft(deed.cur, draft, now=deed.at)
            if new:
                deed.log("draft.add", draft.id, rule=draft.rule, engine=draft.engine)
            return new

        return self._store._act(add, action=Action.PROPOSE, what="add the draft")

    def get(self, draft_id: str) -> Draft | None:
        return self._store._read(lambda cur: store_drafts.get_draft(cur, draft_id))

    def for_blueprint(self, blueprint_id: str) -> Draft | None:
        """The draft a blueprint was accepted from: its provenance (None for authored ones)."""
        return self._store._read(lambda cur: store_drafts.draft_for_blueprint(cur, blueprint_id))

    def list(
        self,
        *,
        status: str | None = "pending",
        corpus: str | None = None,
        offset: int = 0,
        limit: int = 50,
    ) -> tuple[builtins.list[Draft], int]:
        """One page of drafts in the order they were made, and how many match in all."""
        return self._store._read(
            lambda cur: store_drafts.list_drafts(
                cur, status=status, corpus=corpus, offset=offset, limit=limit
            )
        )

    def edit(
        self,
        draft_id: str,
        *,
        intent: str,
        difficulty: Difficulty | str,
        seen_version: int | None = None,
    ) -> Draft:
        """Change a pending draft's intent and difficulty (it stays in the queue)."""

        def edit(deed: Deed) -> Draft:
            draft = store_drafts.edit_draft(
                deed.cur,
                draft_id,
                intent=intent,
                difficulty=Difficulty(difficulty),
                seen_version=seen_version,
            )
            deed.log("draft.edit", draft_id, intent=draft.intent[:200])
            return draft

        return self._store._act(edit, action=Action.AUTHOR, what="edit the draft")


class Drift(_Part):
    """What was made on another snapshot or by other tools (`store.pinning`), and the items of
    the Drift queue. Resolving one is the queue's (`store.queue(DRIFT)`: A and X resolve it as
    `queue_kinds.DRIFT_RESOLUTIONS` says)."""

    __slots__ = ()

    def stale_references(
        self, snapshots: Mapping[str, str | None], versions: str
    ) -> builtins.list[Blueprint]:
        """Blueprints whose spans were checked on another snapshot or by other tool versions."""
        return self._store._read(lambda cur: pinning.stale_references(cur, snapshots, versions))

    def stale_accepted(
        self, snapshots: Mapping[str, str | None], versions: str
    ) -> builtins.list[StaleRun]:
        """Accepted proposals whose run was made on another snapshot or by other tool versions."""
        return self._store._read(lambda cur: pinning.stale_accepted(cur, snapshots, versions))

    def mark_references_current(
        self, blueprint_ids: Sequence[str], snapshot_of: Mapping[str, str | None], versions: str
    ) -> None:
        """These references still find their expected spans now: record the snapshot and tools
        (`snapshot_of` maps each blueprint id to its corpus's snapshot)."""

        def mark(deed: Deed) -> None:
            for bp_id in blueprint_ids:
                pinning.mark_reference_current(deed.cur, bp_id, snapshot_of[bp_id], versions)
            if blueprint_ids:
                deed.log("pinning.current", "", blueprints=len(blueprint_ids))

        self._store._act(mark, action=Action.PROPOSE, what="record the re-checked references")

    def add(self, items: Sequence[DriftItem]) -> None:
        """Put items whose findings changed in the Drift queue (one transaction)."""

        def add(deed: Deed) -> None:
            for item in items:
                pinning.add_drift(deed.cur, item)
            if items:
                deed.log("drift.add", "", items=len(items))

        self._store._act(add, action=Action.PROPOSE, what="record the drift")

    def open(self, filters: DriftFilters | None = None) -> builtins.list[DriftItem]:
        """Items in drift nobody decided yet, oldest first; `filters` narrow them (the queue's
        typed filter: what drifted, words of the ids)."""
        k = kind_of(DRIFT)
        where, params = k.where(replace(k.check_filters(filters), decision=DecisionState.ANY))
        return self._store._read(lambda cur: pinning.open_drift(cur, where, params))

    def get(self, item_id: str) -> DriftItem | None:
        return self._store._read(lambda cur: pinning.get_drift(cur, item_id))

    def held_out(self) -> int:
        """Accepted proposals held out of exports while in open drift."""
        return self._store._read(pinning.drift_held_out)


class Episodes(_Part):
    """Episodes kept from the gym (`store.episodes`): save, read, list. Reviewing them is the
    queue's (`store.queue(EPISODE)`)."""

    __slots__ = ()

    def save(self, kept: Sequence[StoredEpisode]) -> int:
        """Store the episodes in one transaction (all or none: a rollout stopped mid-write leaves
        nothing half-stored); how many were new. Anyone who may propose may roll out."""

        def save(deed: Deed) -> int:
            new = store_episodes.insert_episodes(deed.cur, kept, utc_now())
            if new:
                blueprints = len({e.blueprint_id for e in kept})
                deed.log("episodes.add", kept[0].engine, model=kept[0].model, count=new,
                         blueprints=blueprints)  # fmt: skip
            return new

        if not kept:
            return 0
        return self._store._act(save, action=Action.PROPOSE, what="store the episodes")

    def blueprints(self, engine: str, model: str) -> set[str]:
        """The blueprints with stored episodes of this engine and model."""
        return self._store._read(lambda cur: store_episodes.stored_blueprints(cur, engine, model))

    def list(
        self,
        *,
        blueprint_id: str | None = None,
        decision: str | None = None,
        limit: int = 1000,
        offset: int = 0,
    ) -> builtins.list[StoredEpisode]:
        """Stored episodes, oldest first; of one blueprint, in one review state when given."""
        return self._store._read(
            lambda cur: store_episodes.list_episodes(
                cur, blueprint_id=blueprint_id, decision=decision, limit=limit, offset=offset
            )
        )

    def get(self, episode_id: str) -> StoredEpisode | None:
        return self._store._read(lambda cur: store_episodes.get_episode(cur, episode_id))

    def accepted(self) -> builtins.list[StoredEpisode]:
        """Episodes whose review resolved them accepted, whose corpus is present and that are not
        in open drift, in the order they were stored: what may leave the studio."""
        return self._store._read(store_episodes.accepted_episodes)

    def accepted_corpus_gone(self) -> dict[str, int]:
        """The accepted episodes an export leaves out because their corpus is gone (no longer in
        the corpora folder), counted by corpus: they stay in the store, and the export says so."""
        return self._store._read(store_episodes.accepted_corpus_gone)


class Evals(_Part):
    """Eval runs (`store.evals`): save, list, read, delete."""

    __slots__ = ()

    def save(self, run: EvalRun) -> bool:
        """Store an eval run in one transaction; False when a run with its id is stored already
        (importing the same run twice is a no-op). Anyone who may propose may evaluate."""

        def save(deed: Deed) -> bool:
            new = store_evals.insert_run(deed.cur, run, created_by=deed.actor.name)
            if new:
                overall = run.summary.get("overall", {})
                deed.log(
                    "eval.run",
                    run.run_id,
                    engine=run.engine,
                    model=run.model,
                    blueprints=run.blueprints,
                    mean_reward=overall.get("mean_reward"),
                )
            return new

        return self._store._act(save, action=Action.PROPOSE, what="save the eval run")

    def checkpoint(self, run: EvalRun) -> None:
        """Store a run being made, or its end, in place of its unfinished self
        (`evals.checkpoint_run`); an error when the stored run of its id is finished."""

        def save(deed: Deed) -> None:
            store_evals.checkpoint_run(deed.cur, run, created_by=deed.actor.name)
            if store_evals.UNFINISHED not in run.summary:
                overall = run.summary.get("overall", {})
                deed.log("eval.run", run.run_id, engine=run.engine, model=run.model,
                         blueprints=run.blueprints, mean_reward=overall.get("mean_reward"))  # fmt: skip

        self._store._act(save, action=Action.PROPOSE, what="save the eval run")

    def list(self) -> builtins.list[EvalRun]:
        """Every eval run, newest first, without items (`get` reads them)."""
        return self._store._read(store_evals.list_runs)

    def get(self, run_id: str) -> EvalRun | None:
        return self._store._read(lambda cur: store_evals.get_run(cur, run_id))

    def delete(self, run_id: str) -> bool:
        """Remove a run (a lead's call: it is shared evidence); False when there was none."""

        def delete(deed: Deed) -> bool:
            gone = store_evals.delete_run(deed.cur, run_id)
            if gone:
                deed.log("eval.delete", run_id)
            return gone

        return self._store._act(delete, action=Action.EDIT_BLUEPRINTS, what="delete the eval run")


class QASamples(_Part):
    """A data set's QA sample (`store.qa`): queue it, read its items. Their verdicts are the
    queue's (`store.queue(QA)`)."""

    __slots__ = ()

    def import_sample(
        self, dataset: QADataset, items: Sequence[tuple[str, Mapping[str, Any]]]
    ) -> QAImport:
        """Queue a data set's QA sample, (stratum, item) pairs, in one transaction: sampling the
        same data set again replaces its open, undecided items and keeps the decided ones."""

        def put(deed: Deed) -> QAImport:
            done = store_qa.import_sample(deed.cur, dataset, items, at=deed.at)
            deed.log("qa.sample", dataset.dataset_id, name=dataset.name, folder=dataset.folder,
                     added=done.added, removed=done.removed, kept=done.kept)  # fmt: skip
            return done

        return self._store._act(put, action=Action.PROPOSE, what="queue the QA sample")

    def get(self, qa_id: str) -> QAItem | None:
        return self._store._read(lambda cur: store_qa.get_item(cur, qa_id))

    def items(self, dataset_id: str) -> builtins.list[QAItem]:
        """The queued QA items of a data set (its id: `dataset.sample.dataset_of`), oldest first."""
        return self._store._read(lambda cur: store_qa.dataset_items(cur, dataset_id))


class GuidelineVersions(_Part):
    """The annotation guidelines (`store.guidelines`), versioned: every card shows the version
    in force, and every decision keeps it."""

    __slots__ = ()

    def get(self, version: int | None = None) -> Guidelines | None:
        """The guidelines in force (or the saved `version`); None when there are none."""
        if version is None:
            return self._store._read(store_guidelines.current)
        return self._store._read(lambda cur: store_guidelines.get(cur, version))

    def versions(self) -> builtins.list[Guidelines]:
        """Every saved version, newest first."""
        return self._store._read(store_guidelines.versions)

    def save(self, text: str) -> Guidelines | None:
        """Save `text` (Markdown) as a new version of the guidelines, by the store's actor (a
        lead); None when it is the text in force already (nothing is written). Decisions recorded
        from now on keep the new version."""
        at = utc_now()

        def save(deed: Deed) -> Guidelines | None:
            saved = store_guidelines.save(deed.cur, text, deed.actor.name, at=at)
            if saved is not None:
                deed.log("guidelines.save", f"v{saved.version}", chars=len(saved.text))
            return saved

        return self._store._act(save, action=Action.EDIT_GUIDELINES, what="save the guidelines")
