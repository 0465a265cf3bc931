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
        done = store.import_qa_sample(DATASET, _items("a", "b", "c", "d"))
        assert (done.added, done.removed, done.kept) == (4, 0, 0)
        decided = []
        for action in ("accept", "reject", "skip"):
            qa_id = store.lease_next(None, "ann", kind=QA)
            assert qa_id is not None
            store.record_decision(qa_id, action, "ann", note="off by a line", kind=QA)
            decided.append(qa_id)
        assert decided == ["d5e7.a", "d5e7.b", "d5e7.c"]
        assert store.queue_progress("ann", kind=QA) == (3, 4)
        assert store.undo_last("ann", kind=QA)[0] == "d5e7.c"
        item = store.get_qa_item("d5e7.b")
        assert item is not None and item.decision == "reject" and item.item["intent"] == "Find b"
        assert store.queue_history("d5e7.b", kind=QA)[0].note == "off by a line"
        assert settled_verdicts(store.qa_items("d5e7")) == {"a": True, "b": False}
        assert store.qa_counts() == {"open": 2, "accept": 1, "reject": 1, "conflict": 0}


def test_reviewers_who_disagree_leave_no_verdict_until_a_lead_decides(tmp_path: Path) -> None:
    with Store(tmp_path / "s.duckdb") as store:
        store.set_review_settings(ReviewSettings(reviews_per_item=2))
        store.import_qa_sample(DATASET, _items("a"))
        store.record_decision("d5e7.a", "accept", "ann", kind=QA)
        assert settled_verdicts(store.qa_items("d5e7")) == {}  # one review of two: open
        store.record_decision("d5e7.a", "reject", "bob", kind=QA)
        assert store.first_in_state("conflict", kind=QA) == "d5e7.a"
        assert settled_verdicts(store.qa_items("d5e7")) == {}
        store.record_decision("d5e7.a", "reject", "lead", final=True, kind=QA)
        assert settled_verdicts(store.qa_items("d5e7")) == {"a": False}


def test_sampling_again_replaces_open_items_and_keeps_decided_ones(tmp_path: Path) -> None:
    with Store(tmp_path / "s.duckdb") as store:
        store.import_qa_sample(DATASET, _items("a", "b", "c"))
        store.record_decision("d5e7.a", "accept", "ann", kind=QA)
        store.record_decision("d5e7.b", "skip", "ann", kind=QA)
        store.import_qa_sample(QADataset("other", "x", "/x", "0"), _items("a"))  # another data set
        again = [("language-c", {"id": "c"}), ("language-e", {"id": "e"})]
        done = store.import_qa_sample(QADataset("d5e7", "small", "/moved/ds", "f00d"), again)
        # a decided (kept), b skipped: has history (kept), c sampled again, d was never there.
        assert (done.added, done.removed, done.unchanged, done.kept) == (1, 0, 1, 2)
        items = {i.item_id: i for i in store.qa_items("d5e7")}
        assert sorted(items) == ["a", "b", "c", "e"]
        assert items["c"].stratum == "language-c" and items["a"].stratum == "stratum-a"
        assert {i.dataset.folder for i in items.values()} == {"/moved/ds"}
        done = store.import_qa_sample(DATASET, _items("f"))
        assert (done.added, done.removed, done.kept) == (1, 2, 2)  # c and e were undecided
        assert [i.item_id for i in store.qa_items("d5e7")] == ["a", "b", "f"]
        assert [i.item_id for i in store.qa_items("other")] == ["a"]
