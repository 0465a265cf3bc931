"""Drafts in the store: one transaction each, leased like proposals, accepted into blueprints that
keep their provenance."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from codesearch_core.errors import StoreError
from codesearch_core.models import Span
from codesearch_core.store import Draft, Store
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
        assert store.add_draft(draft(0))
        assert not store.add_draft(draft(0))
        # another id, same corpus and spans: the same target
        assert not store.add_draft(draft(0, id="syn-other"))
        stored = store.get_draft("syn-fixtures-call-handler-0")
        assert stored is not None and stored.status == "pending"
        assert stored.reference_call == draft(0).reference_call
        assert stored.expected == draft(0).expected and stored.sample == draft(0).sample
        assert store.draft_counts() == {"pending": 1, "accepted": 0, "rejected": 0}


def test_accepting_a_draft_makes_a_blueprint_with_provenance(tmp_path: Path) -> None:
    with Store(tmp_path / "s.duckdb") as store:
        store.add_draft(draft(1))
        edited = store.edit_draft(draft(1).id, intent="Where is handler_1 called?",
                                  difficulty="easy")  # fmt: skip
        made = store.accept_draft(edited.id, "ann", seen_version=edited.version)
        blueprint = store.get_blueprint(made)
        assert blueprint is not None and blueprint.intent == "Where is handler_1 called?"
        assert blueprint.expected == draft(1).expected and "synthesized" in blueprint.tags
        origin = store.draft_for_blueprint(made)
        assert origin is not None and origin.status == "accepted" and origin.decided_by == "ann"
        assert (origin.rule, origin.engine, origin.prompt) == ("call", "templates", "template:call")
        with pytest.raises(StoreError, match="accepted by ann already"):
            store.reject_draft(made, "bob")


def test_a_stale_card_cannot_decide(tmp_path: Path) -> None:
    with Store(tmp_path / "s.duckdb") as store:
        store.add_draft(draft(2))
        shown = store.get_draft(draft(2).id)
        assert shown is not None
        store.edit_draft(shown.id, intent="Calls of handler_2, please", difficulty="medium")
        with pytest.raises(StoreError, match="changed since it was shown"):
            store.reject_draft(shown.id, "ann", seen_version=shown.version)
        store.reject_draft(shown.id, "ann", note="too easy")
        assert store.draft_counts()["rejected"] == 1


def test_leases_keep_a_draft_to_one_reviewer(tmp_path: Path) -> None:
    with Store(tmp_path / "s.duckdb") as store:
        store.add_draft(draft(3))
        store.add_draft(draft(4))
        first = store.lease_next_draft("ann")
        assert first == draft(3).id
        assert store.lease_next_draft("ann") == first  # a reload resumes it
        assert store.lease_next_draft("bob") == draft(4).id
        store.accept_draft(first, "ann")
        assert store.lease_next_draft("ann") is None  # bob holds the other one


def test_a_draft_decision_keeps_the_guideline_version_like_every_kind(tmp_path: Path) -> None:
    """The one decision path of the queue model records the guidelines in force for every kind."""
    with Store(tmp_path / "s.duckdb") as store:
        store.add_draft(draft(0))
        store.save_guidelines("Reject drafts whose intent names the pattern.")
        store.reject_draft(draft(0).id, "ann", note="names the pattern")
        (event,) = store.queue_history(draft(0).id, kind="draft")
        assert (event.reviewer, event.guideline_version, event.batch_id) == ("ann", 1, None)
