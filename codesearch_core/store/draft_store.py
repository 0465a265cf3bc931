"""The `Store`'s draft methods (`store.drafts`: the table's reads and writes), kept apart from
`store.core` so that neither file grows past what one concern needs."""

from __future__ import annotations

from codesearch_core.access import Action
from codesearch_core.models import DecisionAction, Difficulty
from codesearch_core.store import drafts as store_drafts
from codesearch_core.store.audit import Deed
from codesearch_core.store.decisions import check_reviewer, record_decision
from codesearch_core.store.drafts import Draft
from codesearch_core.store.queue_kinds import DRAFT
from codesearch_core.store.queue_store import QueueStore


class DraftStore(QueueStore):
    """Drafts: add (one transaction each), list, lease, edit, accept into a blueprint, reject.
    Leasing and deciding are the queue model's (`QueueStore`, kind "draft")."""

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
        """The next pending draft for `reviewer`, leased to them (the queue model's lease)."""
        return self.lease_next(None, reviewer, kind=DRAFT)

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
        """Accept a pending draft (the queue model's accept: the draft becomes a blueprint, source
        `draft:<id>`, in the same transaction); returns the blueprint's id. `seen_version`: the
        draft's version on the reviewer's card (StoreError when it changed since)."""
        self._decide_draft(draft_id, reviewer, DecisionAction.ACCEPT, note, seen_version)
        found = self.get_draft(draft_id)
        assert found is not None and found.blueprint_id is not None
        return found.blueprint_id

    def reject_draft(
        self, draft_id: str, reviewer: str, *, note: str = "", seen_version: int | None = None
    ) -> None:
        self._decide_draft(draft_id, reviewer, DecisionAction.REJECT, note, seen_version)

    def _decide_draft(
        self,
        draft_id: str,
        reviewer: str,
        action: DecisionAction,
        note: str,
        seen_version: int | None,
    ) -> None:
        who = check_reviewer(reviewer)
        need = Action.AUTHOR if action is DecisionAction.ACCEPT else Action.REVIEW

        def decide(deed: Deed) -> None:
            deed.require_self(who, need)
            store_drafts.check_pending(deed.cur, draft_id, seen_version)
            event = record_decision(
                deed.cur, draft_id, action, who, note=note, reason="", ts=deed.at, kind=DRAFT
            )
            deed.log(f"draft.{action}", draft_id, reviewer=who, event=event, note=note[:200])

        self._act(decide, action=need, what=f"{action} the draft")
