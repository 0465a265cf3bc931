"""The `Store`'s eval-run and split methods (`store.evals`: the tables' reads and writes), kept
apart from `store.core` so that neither file grows past what one concern needs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from codesearch_core.access import Action
from codesearch_core.errors import InputFileError
from codesearch_core.models import Split
from codesearch_core.store import evals
from codesearch_core.store import queries as store_queries
from codesearch_core.store import writes as store_writes
from codesearch_core.store.audit import Deed
from codesearch_core.store.base import StoreBase
from codesearch_core.store.evals import EvalRun


class EvalStore(StoreBase):
    """Eval runs (save, list, read, delete) and the held-out split of blueprints."""

    def save_eval_run(self, run: EvalRun) -> bool:
        """Store an eval run in one transaction; False when a run with its id is stored already
        (importing the same run twice is a no-op). Anyone who may propose may evaluate."""

        def save(deed: Deed) -> bool:
            new = evals.insert_run(deed.cur, run, created_by=deed.actor.name)
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

        return self._act(save, action=Action.PROPOSE, what="save the eval run")

    def eval_runs(self) -> list[EvalRun]:
        """Every eval run, newest first, without items (`get_eval_run` reads them)."""
        return self._read(evals.list_runs)

    def get_eval_run(self, run_id: str) -> EvalRun | None:
        return self._read(lambda cur: evals.get_run(cur, run_id))

    def delete_eval_run(self, run_id: str) -> bool:
        """Remove a run (a lead's call: it is shared evidence); False when there was none."""

        def delete(deed: Deed) -> bool:
            gone = evals.delete_run(deed.cur, run_id)
            if gone:
                deed.log("eval.delete", run_id)
            return gone

        return self._act(delete, action=Action.EDIT_BLUEPRINTS, what="delete the eval run")

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

        return self._act(mark, action=Action.EDIT_BLUEPRINTS, what="change the split")
