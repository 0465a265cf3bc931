"""Search across blueprints and proposals: the text of the intent, the pattern or a note finds
them, in the review queue and in the blueprint list alike."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from store_helpers import blueprint, proposal

from codesearch_core.models import DecisionAction
from codesearch_core.store import PROPOSAL, BlueprintFilters, DecisionState, QueueFilters, Store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "studio.duckdb") as s:
        bps = [
            blueprint(1, intent="Find the retry loops"),
            replace(blueprint(2), notes="Counts the 100% of cases"),
            blueprint(3),
        ]
        s.blueprints.add(bps)
        ids = s.add_proposals([proposal(bps[2], "open_file_"), proposal(bps[2], "close")])
        s.queue(PROPOSAL).decide(ids[1], DecisionAction.SKIP, "ann", note="Ask about Windows paths")
        yield s


def _blueprints(store: Store, text: str) -> list[str]:
    return [b.id for b in store.blueprints.list(BlueprintFilters(text=text)).items]


def test_a_blueprint_is_found_by_its_intent_id_notes_or_pattern(store: Store) -> None:
    assert _blueprints(store, "RETRY") == ["bp-001"]
    assert _blueprints(store, "bp-002") == ["bp-002"]
    assert _blueprints(store, "100%") == ["bp-002"]  # the % is a character, not a wildcard
    assert _blueprints(store, "handler_3(") == ["bp-003"]  # its reference call's pattern


def test_a_blueprint_is_found_by_its_proposals_pattern_or_note(store: Store) -> None:
    assert _blueprints(store, "open_file_") == ["bp-003"]
    assert _blueprints(store, "windows PATHS") == ["bp-003"]
    assert _blueprints(store, "open_filex") == []  # _ is a character too


def test_the_review_queue_finds_proposals_by_pattern_note_or_intent(store: Store) -> None:
    def found(text: str) -> list[str]:
        page = store.review_queue(QueueFilters(text=text, decision=DecisionState.ANY))
        return sorted(i.proposal_id for i in page.items)

    by_pattern, by_note = found("open_file_"), found("windows paths")
    assert len(by_pattern) == 1 and len(by_note) == 1 and by_pattern != by_note
    assert len(found("handler_3")) == 2  # both, by their blueprint's pattern
    assert found("retry loops") == []  # that blueprint has no proposals
