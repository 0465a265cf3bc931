"""The annotation guidelines: versioned in the store, written by a lead, and the version in force
kept with every decision."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from store_helpers import blueprint, executed, proposal

from codesearch_core.access import AccessDenied, Actor, Mode, load_settings
from codesearch_core.errors import StoreError
from codesearch_core.models import DecisionAction
from codesearch_core.store import PROPOSAL, AuditFilters, Store

SETTINGS = load_settings({}, {"auth": "oidc", "leads": ["lee@x"]})


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "studio.duckdb") as s:
        yield s


def test_each_save_is_a_new_version_with_who_and_when(store: Store) -> None:
    assert store.guidelines.get() is None
    first = store.guidelines.save("# Accept\nOnly calls that find every expected span.\r\n")
    second = store.guidelines.save("# Accept\nEvery expected span, nothing else.")
    assert first is not None and second is not None
    assert (first.version, second.version) == (1, 2)
    assert first.text == "# Accept\nOnly calls that find every expected span.\n"
    assert store.guidelines.get() == second
    assert store.guidelines.get(1) == first
    assert [g.version for g in store.guidelines.versions()] == [2, 1]
    assert second.author and second.saved_at >= first.saved_at
    (entry, _) = store.audit_log(AuditFilters(action="guidelines"))
    assert (entry.action, entry.target) == ("guidelines.save", "v2")


def test_saving_the_text_in_force_writes_nothing(store: Store) -> None:
    store.guidelines.save("Be strict.")
    assert store.guidelines.save("Be strict.\n") is None
    assert len(store.guidelines.versions()) == 1


@pytest.mark.parametrize(
    ("text", "says"),
    [("  \n", "empty"), ("x" * 100_001, "more than"), ("a\x00b", "binary")],
)
def test_text_that_cannot_be_guidelines_is_refused_and_nothing_is_lost(
    store: Store, text: str, says: str
) -> None:
    store.guidelines.save("Be strict.")
    with pytest.raises(StoreError, match=says):
        store.guidelines.save(text)
    assert [g.text for g in store.guidelines.versions()] == ["Be strict.\n"]


def test_only_a_lead_edits_the_guidelines(store: Store) -> None:
    annotator = store.acting_as(Actor("ann@x", Mode.OIDC))
    annotator.sign_in(SETTINGS)
    with pytest.raises(AccessDenied, match="lead"):
        annotator.guidelines.save("My own rules")
    lead = store.acting_as(Actor("lee@x", Mode.OIDC))
    lead.sign_in(SETTINGS)
    saved = lead.guidelines.save("The lead's rules")
    assert saved is not None and saved.author == "lee@x"


def test_a_decision_keeps_the_guideline_version_it_was_made_under(store: Store) -> None:
    bp = blueprint(1)
    store.blueprints.add([bp])
    a, b, c = store.add_proposals([proposal(bp, p) for p in ("a", "b", "c")])
    executed(store, [a, b, c])
    store.queue(PROPOSAL).decide(a, DecisionAction.ACCEPT, "ann")  # before any guidelines
    store.guidelines.save("v1")
    store.queue(PROPOSAL).decide(b, DecisionAction.REJECT, "ann")
    store.guidelines.save("v2")
    store.queue(PROPOSAL).decide(c, DecisionAction.SKIP, "ann")
    store.queue(PROPOSAL).undo("ann")
    versions = [
        [(e.action, e.guideline_version) for e in store.queue(PROPOSAL).history(item)]
        for item in (a, b, c)
    ]
    assert versions == [
        [(DecisionAction.ACCEPT, None)],
        [(DecisionAction.REJECT, 1)],
        [(DecisionAction.SKIP, 2), (DecisionAction.UNDO, None)],  # an undo decides nothing
    ]
