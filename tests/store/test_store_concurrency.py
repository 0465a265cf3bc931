"""Many threads, one Store (the Streamlit server's situation): nothing lost, nothing inconsistent."""

from __future__ import annotations

import random
import shutil
import tempfile
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from store_helpers import blueprint, executed, proposal

from codesearch_core.errors import StoreError
from codesearch_core.models import DecisionAction
from codesearch_core.store import PROPOSAL
from codesearch_core.store.core import Store
from codesearch_core.store.types import ReviewSettings

THREADS = 8
DECISIONS_PER_THREAD = 400
ITEMS = 64


@pytest.fixture
def fast_dir(tmp_path: Path) -> Iterator[Path]:
    """A tmpfs folder where there is one: 8,000 commits each fsync the WAL, and the disk's sync
    latency is not what these tests are about."""
    shm = Path("/dev/shm")
    if not shm.is_dir():
        yield tmp_path
        return
    folder = Path(tempfile.mkdtemp(dir=shm, prefix="codesearch-store-test-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _run_threads(target: object, n: int) -> list[BaseException]:
    errors: list[BaseException] = []
    barrier = threading.Barrier(n)

    def run(i: int) -> None:
        barrier.wait()
        try:
            target(i)  # type: ignore[operator]
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


@pytest.mark.slow
def test_concurrent_reviewers_lose_no_decision(fast_dir: Path) -> None:
    with Store(fast_dir / "studio.duckdb") as store:
        bps = [blueprint(i) for i in range(ITEMS // 2)]
        store.blueprints.add(bps)
        items = store.add_proposals(
            [proposal(bp, pattern) for bp in bps for pattern in ("first", "second")]
        )
        executed(store, items)
        store.set_review_settings(ReviewSettings(reviews_per_item=3))
        recorded: list[Counter[str]] = [Counter() for _ in range(THREADS)]
        refused = [0] * THREADS

        def review(worker: int) -> None:
            rng = random.Random(worker)
            for _ in range(DECISIONS_PER_THREAD):
                # Few items, many reviewers: the same item is often decided by two threads at once.
                item = rng.choice(items)
                action = rng.choice(["accept", "reject", "skip", "undo"])
                try:
                    store.queue(PROPOSAL).decide(item, action, f"reviewer-{worker}")
                except StoreError as err:
                    assert "no decision left to undo" in str(err)
                    refused[worker] += 1
                    continue
                recorded[worker][item] += 1

        assert _run_threads(review, THREADS) == []
        total = sum(sum(c.values()) for c in recorded)
        assert total + sum(refused) == THREADS * DECISIONS_PER_THREAD
        assert store.counts().decision_events == total
        # Every reviewer's vote, every item's state and vote count agree with the log.
        assert store.check_caches() == []
        per_item: Counter[str] = sum(recorded, Counter())
        for item in items:
            history = store.queue(PROPOSAL).history(item)
            assert len(history) == per_item[item]
            # Each undo cancels a distinct, earlier, non-undo event of the same reviewer.
            ids = {e.event_id: e for e in history}
            undone = [e for e in history if e.action is DecisionAction.UNDO]
            assert len({e.undoes for e in undone}) == len(undone)
            for e in undone:
                assert e.undoes is not None and e.undoes < e.event_id
                target = ids[e.undoes]
                assert target.action is not DecisionAction.UNDO
                assert target.reviewer == e.reviewer


def test_concurrent_imports_of_the_same_proposals_store_them_once(tmp_path: Path) -> None:
    with Store(tmp_path / "studio.duckdb") as store:
        bps = [blueprint(i) for i in range(10)]
        store.blueprints.add(bps)
        batch = [proposal(bp, p) for bp in bps for p in ("a", "b", "c")]
        results: list[list[str]] = [[] for _ in range(4)]

        def add(worker: int) -> None:
            results[worker] = store.add_proposals(batch)

        assert _run_threads(add, 4) == []
        assert all(r == results[0] for r in results)
        assert store.counts().proposals == len(batch)
        stored = store.get_proposal(results[0][0])
        assert stored is not None and stored.sightings == 4


def test_readers_run_while_writers_write(tmp_path: Path) -> None:
    with Store(tmp_path / "studio.duckdb") as store:
        bps = [blueprint(i) for i in range(20)]
        store.blueprints.add(bps)
        items = store.add_proposals([proposal(bp) for bp in bps])
        executed(store, items)

        def work(worker: int) -> None:
            for i, item in enumerate(items):
                if worker % 2:
                    store.queue(PROPOSAL).decide(
                        item, "accept" if i % 2 else "reject", f"w{worker}"
                    )
                else:
                    page = store.review_queue()
                    assert page.total == len(page.items) or page.total > len(page.items)
                    store.dashboard_stats()

        assert _run_threads(work, 4) == []
        assert store.counts().decision_events == 2 * len(items)
        assert store.check_caches() == []
