"""Drafts in the store: one transaction each, leased like proposals, accepted into blueprints that
keep their provenance."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from codesearch_core.errors import StoreError
from codesearch_core.models import Span
from codesearch_core.store import DRAFT, Draft, Store
from tests.store_helpers import sg_call


def draft(n: int = 0, **extra: object) -> Draft:
    base = Draft(
        id=f"syn-fixtures-call-handler-{n}",
        corpus="fixtures",
        language="python",
        intent=f"Find every call to handler_{n}",
        reference_call=sg_call(f"handler_{n}($$$ARGS)"),
        expected=(Span("src/app.py", n + 1, n + 1), Span("src/app.py", n + 2, n + 2)),
        rule="call",
        engine="templates",
        prompt="template:call",
        sample={"samples": ["Find every call to {subject}"], "subject": f"handler_{n}"},
        tags=("synth:call",),
        baseline_reward=0.4,
    )
    return replace(base, **extra)  # type: ignore[arg-type]


def test_a_draft_is_stored_once_by_id_and_by_findings(tmp_path: Path) -> None:
    with Store(tmp_path / "s.duckdb") as store:
        assert store.drafts.add(draft(0))
        assert not store.drafts.add(draft(0))
        # another id, same corpus and spans: the same target
        assert not store.drafts.add(draft(0, id="syn-other"))
        stored = store.drafts.get("syn-fixtures-call-handler-0")
        assert stored is not None and stored.status == "pending"
        assert stored.reference_call == draft(0).reference_call
        assert stored.expected == draft(0).expected and stored.sample == draft(0).sample
        assert store.queue(DRAFT).counts() == {"open": 1, "accept": 0, "reject": 0, "conflict": 0}


def test_accepting_a_draft_makes_a_blueprint_with_provenance(tmp_path: Path) -> None:
    with Store(tmp_path / "s.duckdb") as store:
        store.drafts.add(draft(1))
        edited = store.drafts.edit(draft(1).id, intent="Where is handler_1 called?",
                                  difficulty="easy")  # fmt: skip
        store.queue(DRAFT).decide(edited.id, "accept", "ann", version=edited.version)
        made = store.drafts.get(edited.id).blueprint_id  # type: ignore[union-attr]
        assert made is not None
        blueprint = store.blueprints.get(made)
        assert blueprint is not None and blueprint.intent == "Where is handler_1 called?"
        assert blueprint.expected == draft(1).expected and "synthesized" in blueprint.tags
        origin = store.drafts.for_blueprint(made)
        assert origin is not None and origin.status == "accepted" and origin.decided_by == "ann"
        assert (origin.rule, origin.engine, origin.prompt) == ("call", "templates", "template:call")
        with pytest.raises(StoreError, match="accepted by ann already"):
            store.queue(DRAFT).decide(edited.id, "reject", "bob")


def test_a_stale_card_cannot_decide(tmp_path: Path) -> None:
    with Store(tmp_path / "s.duckdb") as store:
        store.drafts.add(draft(2))
        shown = store.drafts.get(draft(2).id)
        assert shown is not None
        store.drafts.edit(shown.id, intent="Calls of handler_2, please", difficulty="medium")
        with pytest.raises(StoreError, match="changed since it was shown"):
            store.queue(DRAFT).decide(shown.id, "reject", "ann", version=shown.version)
        store.queue(DRAFT).decide(shown.id, "reject", "ann", "too easy")
        assert store.queue(DRAFT).counts()["reject"] == 1
        assert store.drafts.get(shown.id).status == "rejected"  # type: ignore[union-attr]


def test_leases_keep_a_draft_to_one_reviewer(tmp_path: Path) -> None:
    with Store(tmp_path / "s.duckdb") as store:
        store.drafts.add(draft(3))
        store.drafts.add(draft(4))
        first = store.queue(DRAFT).lease_next(None, "ann")
        assert first == draft(3).id
        assert store.queue(DRAFT).lease_next(None, "ann") == first  # a reload resumes it
        assert store.queue(DRAFT).lease_next(None, "bob") == draft(4).id
        store.queue(DRAFT).decide(first, "accept", "ann")
        assert store.queue(DRAFT).lease_next(None, "ann") is None  # bob holds the other one


def test_a_draft_decision_keeps_the_guideline_version_like_every_kind(tmp_path: Path) -> None:
    """The one decision path of the queue model records the guidelines in force for every kind."""
    with Store(tmp_path / "s.duckdb") as store:
        store.drafts.add(draft(0))
        store.guidelines.save("Reject drafts whose intent names the pattern.")
        store.queue(DRAFT).decide(draft(0).id, "reject", "ann", "names the pattern")
        (event,) = store.queue("draft").history(draft(0).id)
        assert (event.reviewer, event.guideline_version, event.batch_id) == ("ann", 1, None)


def test_a_drafts_status_is_its_queue_state(tmp_path: Path) -> None:
    """No second state kept beside the queue's: a decision, a lead's final one and an undo each
    show in the draft's status, its list and the queue's counts alike."""
    with Store(tmp_path / "s.duckdb") as store:
        store.drafts.add(draft(5))
        queue = store.queue(DRAFT)
        queue.decide(draft(5).id, "reject", "ann")
        assert [d.id for d in store.drafts.list(status="rejected")[0]] == [draft(5).id]
        queue.undo("ann")
        shown = store.drafts.get(draft(5).id)
        assert shown is not None and (shown.status, shown.decided_by) == ("pending", None)
        queue.decide(draft(5).id, "accept", "lee", final=True)
        shown = store.drafts.get(draft(5).id)
        assert shown is not None and shown.status == "accepted" and shown.blueprint_id
        assert queue.counts()["accept"] == 1 and store.drafts.list()[1] == 0
