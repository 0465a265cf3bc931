"""The QA queue in the store (kind "qa", table qa_items, schema v15): a data set's sample is
leased, voted, undone and settled like any queue; sampling again keeps what reviewers decided."""

from __future__ import annotations

from pathlib import Path

from codesearch_core.store import QA, QADataset, ReviewSettings, Store, settled_verdicts

DATASET = QADataset("d5e7", "small", "/data/ds", "f00d")


def _items(*ids: str) -> list[tuple[str, dict[str, object]]]:
    return [(f"stratum-{i}", {"id": i, "intent": f"Find {i}"}) for i in ids]


def test_a_sample_is_reviewed_like_any_queue_and_settles_into_verdicts(tmp_path: Path) -> None:
    with Store(tmp_path / "s.duckdb") as store:
        done = store.qa.import_sample(DATASET, _items("a", "b", "c", "d"))
        assert (done.added, done.removed, done.kept) == (4, 0, 0)
        decided = []
        for action in ("accept", "reject", "skip"):
            qa_id = store.queue(QA).lease_next(None, "ann")
            assert qa_id is not None
            store.queue(QA).decide(qa_id, action, "ann", note="off by a line")
            decided.append(qa_id)
        assert decided == ["d5e7.a", "d5e7.b", "d5e7.c"]
        assert store.queue(QA).progress("ann") == (3, 4)
        assert store.queue(QA).undo("ann")[0] == "d5e7.c"
        item = store.qa.get("d5e7.b")
        assert item is not None and item.decision == "reject" and item.item["intent"] == "Find b"
        assert store.queue(QA).history("d5e7.b")[0].note == "off by a line"
        assert settled_verdicts(store.qa.items("d5e7")) == {"a": True, "b": False}
        assert store.queue(QA).counts() == {"open": 2, "accept": 1, "reject": 1, "conflict": 0}


def test_reviewers_who_disagree_leave_no_verdict_until_a_lead_decides(tmp_path: Path) -> None:
    with Store(tmp_path / "s.duckdb") as store:
        store.set_review_settings(ReviewSettings(reviews_per_item=2))
        store.qa.import_sample(DATASET, _items("a"))
        store.queue(QA).decide("d5e7.a", "accept", "ann")
        assert settled_verdicts(store.qa.items("d5e7")) == {}  # one review of two: open
        store.queue(QA).decide("d5e7.a", "reject", "bob")
        assert store.queue(QA).first_in_state("conflict") == "d5e7.a"
        assert settled_verdicts(store.qa.items("d5e7")) == {}
        store.queue(QA).decide("d5e7.a", "reject", "lead", final=True)
        assert settled_verdicts(store.qa.items("d5e7")) == {"a": False}


def test_sampling_again_replaces_open_items_and_keeps_decided_ones(tmp_path: Path) -> None:
    with Store(tmp_path / "s.duckdb") as store:
        store.qa.import_sample(DATASET, _items("a", "b", "c"))
        store.queue(QA).decide("d5e7.a", "accept", "ann")
        store.queue(QA).decide("d5e7.b", "skip", "ann")
        store.qa.import_sample(QADataset("other", "x", "/x", "0"), _items("a"))  # another data set
        again = [("language-c", {"id": "c"}), ("language-e", {"id": "e"})]
        done = store.qa.import_sample(QADataset("d5e7", "small", "/moved/ds", "f00d"), again)
        # a decided (kept), b skipped: has history (kept), c sampled again, d was never there.
        assert (done.added, done.removed, done.unchanged, done.kept) == (1, 0, 1, 2)
        items = {i.item_id: i for i in store.qa.items("d5e7")}
        assert sorted(items) == ["a", "b", "c", "e"]
        assert items["c"].stratum == "language-c" and items["a"].stratum == "stratum-a"
        assert {i.dataset.folder for i in items.values()} == {"/moved/ds"}
        done = store.qa.import_sample(DATASET, _items("f"))
        assert (done.added, done.removed, done.kept) == (1, 2, 2)  # c and e were undecided
        assert [i.item_id for i in store.qa.items("d5e7")] == ["a", "b", "f"]
        assert [i.item_id for i in store.qa.items("other")] == ["a"]
