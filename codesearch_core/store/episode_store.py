"""The `Store`'s episode methods (`store.episodes`: the table's reads and writes), kept apart from
`store.core` so that neither file grows past what one concern needs."""

from __future__ import annotations

from collections.abc import Sequence

from codesearch_core.access import Action
from codesearch_core.store import decisions as store_decisions
from codesearch_core.store import episodes
from codesearch_core.store.audit import Deed
from codesearch_core.store.base import StoreBase
from codesearch_core.store.episodes import StoredEpisode
from codesearch_core.store.queue_kinds import EPISODE
from codesearch_core.store.rows import utc_now


class EpisodeStore(StoreBase):
    """Episodes kept from the gym (save, list, count)."""

    def save_episodes(self, kept: Sequence[StoredEpisode]) -> int:
        """Store the episodes in one transaction (all or none: a rollout stopped mid-write leaves
        nothing half-stored); how many were new. Anyone who may propose may roll out."""

        def save(deed: Deed) -> int:
            new = episodes.insert_episodes(deed.cur, kept, utc_now())
            if new:
                blueprints = len({e.blueprint_id for e in kept})
                deed.log("episodes.add", kept[0].engine, model=kept[0].model, count=new,
                         blueprints=blueprints)  # fmt: skip
            return new

        if not kept:
            return 0
        return self._act(save, action=Action.PROPOSE, what="store the episodes")

    def episode_blueprints(self, engine: str, model: str) -> set[str]:
        """The blueprints with stored episodes of this engine and model."""
        return self._read(lambda cur: episodes.stored_blueprints(cur, engine, model))

    def episodes(
        self,
        *,
        blueprint_id: str | None = None,
        decision: str | None = None,
        limit: int = 1000,
        offset: int = 0,
    ) -> list[StoredEpisode]:
        """Stored episodes, oldest first; of one blueprint, in one review state when given."""
        return self._read(
            lambda cur: episodes.list_episodes(
                cur, blueprint_id=blueprint_id, decision=decision, limit=limit, offset=offset
            )
        )

    def episode_counts(self) -> dict[str, int]:
        """Episodes by review state: open, accept, reject, conflict (the Episodes queue's line)."""
        return self._read(lambda cur: store_decisions.state_counts(cur, EPISODE))

    def accepted_episodes_corpus_gone(self) -> dict[str, int]:
        """The accepted episodes an export leaves out because their corpus is gone (no longer in
        the corpora folder), counted by corpus: they stay in the store, and the export says so."""
        return self._read(episodes.accepted_corpus_gone)
