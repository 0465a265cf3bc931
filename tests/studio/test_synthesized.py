"""The Drafts queue's card and a blueprint's provenance, from a real synthesized draft."""

from __future__ import annotations

from pathlib import Path

from codesearch_core import studio
from codesearch_core.store import DRAFT, Store


def test_the_card_and_the_provenance_of_a_synthesized_draft(tmp_path: Path) -> None:
    with Store(tmp_path / "s.duckdb") as store:
        report = studio.synthesize_into_store(store, "webshop", limit=1, seed=3)
        assert report.counts.kept == 1
        draft = store.drafts.get(report.draft_ids[0])
        assert draft is not None
        card = studio.draft_card(draft)
        assert len(card.spans) == len(draft.expected) and card.files >= 1
        # each span shows the code of its first line, read from the corpus
        assert all(s.text for s in card.spans)
        assert card.provenance["Mined rule"] == draft.rule
        assert card.provenance["Engine"] == "templates"
        assert "scored" in card.provenance["Text baseline"]
        assert studio.blueprint_provenance(store, draft.id) is None  # not accepted yet
        store.queue(DRAFT).decide(draft.id, "accept", "ann")
        made = store.drafts.get(draft.id).blueprint_id  # type: ignore[union-attr]
        assert made is not None
        shown = studio.blueprint_provenance(store, made)
        assert shown is not None and shown["Decided by"] == "ann (accepted)"
        assert shown["Prompt"] == draft.prompt
