"""The `Store`'s draft methods (`store.drafts`: the table's reads and writes), kept apart from
`store.core` so that neither file grows past what one concern needs."""

from __future__ import annotations

from codesearch_core.access import Action
from codesearch_core.models import Difficulty
from codesearch_core.store import drafts as store_drafts
from codesearch_core.store import writes as store_writes
from codesearch_core.store.audit import Deed
from codesearch_core.store.base import StoreBase
from codesearch_core.store.decisions import check_reviewer
from codesearch_core.store.drafts import DRAFT_SOURCE_PREFIX, Draft
from codesearch_core.store.rows import utc_now


class DraftStore(StoreBase):
    """Drafts: add (one transaction each), list, lease, edit, accept into a blueprint, reject."""

    def add_draft(self, draft: Draft) -> bool:
        """Store one draft in its own transaction (an interrupted run keeps every draft written
        before it, none half-written); False when the same draft or target is stored already."""

        def add(deed: Deed) -> bool:
            new = store_drafts.insert_draft(deed.cur, draft, now=deed.at)
            if new:
                deed.log("draft.add", draft.id, rule=draft.rule, engine=draft.engine)
            return new

        return self._act(add, action=Action.PROPOSE, what="add the draft")

    def get_draft(self, draft_id: str) -> Draft | None:
        return self._read(lambda cur: store_drafts.get_draft(cur, draft_id))

    def draft_for_blueprint(self, blueprint_id: str) -> Draft | None:
        """The draft a blueprint was accepted from: its provenance (None for authored ones)."""
        return self._read(lambda cur: store_drafts.draft_for_blueprint(cur, blueprint_id))

    def list_drafts(
        self,
        *,
        status: str | None = "pending",
        corpus: str | None = None,
        offset: int = 0,
        limit: int = 50,
    ) -> tuple[list[Draft], int]:
        """One page of drafts in the order they were made, and how many match in all."""
        return self._read(
            lambda cur: store_drafts.list_drafts(
                cur, status=status, corpus=corpus, offset=offset, limit=limit
            )
        )

    def draft_counts(self) -> dict[str, int]:
        """Drafts by status: pending, accepted, rejected."""
        return self._read(store_drafts.draft_counts)

    def lease_next_draft(self, reviewer: str) -> str | None:
        who = check_reviewer(reviewer)
        now = utc_now()

        def lease(deed: Deed) -> str | None:
            deed.require_self(who, Action.REVIEW)
            return store_drafts.lease_next_draft(deed.cur, who, now=now)

        return self._act(lease, action=Action.REVIEW, what="pick the next draft")

    def edit_draft(
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

        return self._act(edit, action=Action.AUTHOR, what="edit the draft")

    def accept_draft(
        self, draft_id: str, reviewer: str, *, note: str = "", seen_version: int | None = None
    ) -> str:
        """Make the draft a blueprint (source `draft:<id>`) and mark it accepted, in one
        transaction; returns the blueprint's id."""
        who = check_reviewer(reviewer)

        def accept(deed: Deed) -> str:
            deed.require_self(who, Action.REVIEW)
            draft = store_drafts.decide_draft(
                deed.cur, draft_id, accept=True, reviewer=who, note=note, now=deed.at,
                seen_version=seen_version,
            )  # fmt: skip
            blueprint = draft.to_blueprint()
            report = store_writes.add_blueprints(
                deed.cur, [blueprint], source=DRAFT_SOURCE_PREFIX + draft.id, skip_bad=False
            )
            # The same blueprint authored before: the draft names that one.
            made = report.ids[0] if report.ids else blueprint.id
            if made != blueprint.id:
                deed.cur.execute(
                    "UPDATE drafts SET blueprint_id = ? WHERE id = ?", [made, draft_id]
                )
            deed.log("draft.accept", draft_id, blueprint=made, reviewer=who)
            return made

        return self._act(accept, action=Action.AUTHOR, what="accept the draft")

    def reject_draft(
        self, draft_id: str, reviewer: str, *, note: str = "", seen_version: int | None = None
    ) -> None:
        who = check_reviewer(reviewer)

        def reject(deed: Deed) -> None:
            deed.require_self(who, Action.REVIEW)
            store_drafts.decide_draft(
                deed.cur, draft_id, accept=False, reviewer=who, note=note, now=deed.at,
                seen_version=seen_version,
            )  # fmt: skip
            deed.log("draft.reject", draft_id, reviewer=who, note=note[:200])

        self._act(reject, action=Action.REVIEW, what="reject the draft")
