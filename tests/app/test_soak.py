"""Soak: several curators review at once against one store, for a while, and nothing is lost.

Two kinds of curator share the store the app caches (`st.cache_resource`: one Store per process and
file, which is the Streamlit server's situation):

* page curators: Streamlit sessions (`AppTest` of app.py on the Review page), each driven from its
  own thread by clicking Accept / Reject / Skip / Undo. AppTest cannot run two scripts at the same
  moment (every run installs and then removes one process-wide mock `Runtime`, and compiles the
  page again, which CPython 3.11 cannot do in two threads at once), so their script runs take turns
  under a lock; the sessions still interleave in any order and race for the same items.
* store curators: threads that follow the page's own flow (`studio.next_item_id`, then
  `queue(kind).decide`, undo of their own last decision) on the app's cached Store with no lock, so the
  store sees truly concurrent writers while the pages run.

Every curator keeps its own account of what it was told (recorded, or refused and why). Afterwards
the append-only decision log must hold exactly those events, curator by curator and in order, and
every item's current decision must be what replaying its log gives.
"""

from __future__ import annotations

import random
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from app_support import open_app, release_app_store, stored, texts
from store_helpers import blueprint, executed, proposal
from streamlit.testing.v1 import AppTest

from codesearch_core import studio
from codesearch_core.errors import StoreError
from codesearch_core.models import DecisionAction
from codesearch_core.store import PROPOSAL
from codesearch_core.store.core import Store
from codesearch_core.store.filters import QueueFilters
from codesearch_core.store.types import DecisionEvent, ReviewSettings
from pages import _shared

PAGE_CURATORS = 4
STORE_CURATORS = 2
SOAK_S = 30.0
MAX_ACTIONS = 2_000  # per curator: a bound on the work if the machine is very fast
#: Mostly decisions; enough undos that items come back and undos race with other curators.
ACTIONS = ("accept",) * 3 + ("reject",) * 2 + ("skip", "undo", "undo")
_CARD_ITEM = re.compile(r"^Proposal `([0-9a-f]{10})`")
_ONE_SCRIPT_AT_A_TIME = threading.Lock()


@dataclass
class Curator:
    """What one curator did, as the page (or the store) reported it."""

    reviewer: str
    recorded: list[tuple[str, str]] = field(default_factory=list)  # (action, item id or prefix)
    refused: list[tuple[str, str]] = field(default_factory=list)  # (action, message)
    failure: BaseException | None = None


def card_item(at: AppTest) -> str | None:
    """The id prefix of the proposal on the card (None when the queue is empty)."""
    for caption in texts(at, "caption"):
        if m := _CARD_ITEM.match(caption):
            return m.group(1)
    return None


def review_in_the_page(curator: Curator, rng: random.Random, deadline: float) -> None:
    with _ONE_SCRIPT_AT_A_TIME:
        at = open_app("pages/review.py", reviewer=curator.reviewer)
    for _ in range(MAX_ACTIONS):
        if time.monotonic() > deadline:
            return
        buttons = {b.key: b for b in at.button}
        usable = [k for k in ("accept", "reject", "skip", "undo", "undo_empty")
                  if k in buttons and not buttons[k].disabled]  # fmt: skip
        if not usable:
            return
        wanted = rng.choice(ACTIONS)
        key = wanted if wanted in usable else rng.choice(usable)
        before = card_item(at)
        with _ONE_SCRIPT_AT_A_TIME:
            buttons[key].click().run()
        assert not at.exception, at.exception
        action = "undo" if key.startswith("undo") else key
        if errors := texts(at, "error"):
            curator.refused.append((action, errors[0]))
            continue
        assert [t.value for t in at.toast], f"{key}: the page said nothing"
        # A decision is about the item that was on the card; an undo puts its item back on it.
        item = card_item(at) if action == "undo" else before
        assert item is not None
        curator.recorded.append((action, item))


def review_through_the_store(
    store: Store, curator: Curator, rng: random.Random, deadline: float
) -> None:
    """What the Review page does, without the page: lease the next item, decide, undo one's own."""
    to_do = QueueFilters(reviewer=curator.reviewer)
    for _ in range(MAX_ACTIONS):
        if time.monotonic() > deadline:
            return
        current = studio.next_item_id(store, to_do)
        action = rng.choice(ACTIONS)
        if action == "undo" or current is None:
            try:
                target, _ = store.queue(PROPOSAL).undo(curator.reviewer)
            except StoreError as err:
                curator.refused.append(("undo", str(err)))
                continue
            curator.recorded.append(("undo", target))
        else:
            store.queue(PROPOSAL).decide(current, action, curator.reviewer, seen=None)
            curator.recorded.append((action, current))


def run_all(curators: list[tuple[Curator, Callable[..., None]]]) -> None:
    deadline = time.monotonic() + SOAK_S

    def target(i: int) -> None:
        curator, work = curators[i]
        try:
            work(curator, random.Random(i), deadline)
        except BaseException as err:  # re-raised by the main thread, not lost in this one
            curator.failure = err

    threads = [threading.Thread(target=target, args=(i,)) for i in range(len(curators))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=SOAK_S + 600)
    assert not any(t.is_alive() for t in threads), "a curator hung"
    for curator, _ in curators:
        if curator.failure is not None:
            raise curator.failure


@pytest.fixture
def review_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """A store with 600 undecided proposals (300 blueprints, two calls each); their ids."""
    db = tmp_path / "studio.duckdb"
    monkeypatch.setenv("CODESEARCH_DB", str(db))
    release_app_store()
    with Store(db) as store:
        bps = [blueprint(i) for i in range(300)]
        store.blueprints.add(bps)
        ids = store.add_proposals([proposal(bp, p) for bp in bps for p in ("first", "second")])
        executed(store, ids)
        store.set_review_settings(ReviewSettings(reviews_per_item=2))
    yield ids
    release_app_store()


@pytest.mark.slow
def test_concurrent_curators_lose_no_decision_and_the_state_is_the_replay(
    review_db: list[str], tmp_path: Path
) -> None:
    db = tmp_path / "studio.duckdb"
    with _ONE_SCRIPT_AT_A_TIME:
        open_app("pages/review.py")  # the app opens (and caches) the store first
    app_store = _shared._open_store(str(db))  # the same Store object the sessions use
    page = [Curator(f"page-{i}") for i in range(PAGE_CURATORS)]
    direct = [Curator(f"store-{i}") for i in range(STORE_CURATORS)]
    run_all(
        [(c, review_in_the_page) for c in page]
        + [(c, lambda c, rng, d: review_through_the_store(app_store, c, rng, d)) for c in direct]
    )

    full_id = {item[:10]: item for item in review_db} | {item: item for item in review_db}
    assert len(full_id) == 2 * len(review_db)
    for c in page + direct:
        assert c.recorded, f"{c.reviewer} recorded nothing"
        # The only refusal allowed: an undo with nothing of one's own left to undo.
        assert all(a == "undo" and "no decision left to undo" in m for a, m in c.refused), c.refused

    with stored(db) as store:
        history = {item: store.queue(PROPOSAL).history(item) for item in review_db}
        events = sorted((e for h in history.values() for e in h), key=lambda e: e.event_id)
        done = sum(len(c.recorded) for c in page + direct)
        assert store.counts().decision_events == len(events) == done
        for c in page + direct:
            logged = [(e.action.value, e.item_id) for e in events if e.reviewer == c.reviewer]
            assert logged == [(a, full_id[i]) for a, i in c.recorded], c.reviewer
        assert Counter((e.reviewer, e.action.value) for e in events) == Counter(
            (c.reviewer, a) for c in page + direct for a, _ in c.recorded
        )

        # Every vote and item state is what the log says (check_caches recomputes them), and each
        # undo cancelled an earlier decision of the same curator, once.
        assert store.check_caches() == []
        for h in history.values():
            earlier = {e.event_id: e for e in h}
            undone = [e for e in h if e.action is DecisionAction.UNDO]
            assert len({e.undoes for e in undone}) == len(undone)
            for e in undone:
                assert e.undoes is not None and earlier[e.undoes].reviewer == e.reviewer
                assert earlier[e.undoes].action is not DecisionAction.UNDO
        # No item was decided twice by one curator while it stood undecided for them.
        for item, h in history.items():
            live = [e for e in h if e.action is not DecisionAction.UNDO and not e.undone]
            per_reviewer = Counter(e.reviewer for e in live)
            assert all(n == 1 for n in per_reviewer.values()), (item, per_reviewer)
        # The state is the replay of the log, by a rule written here again in plain Python (not
        # the store's SQL, which check_caches uses): votes, then two agreeing reviews resolve.
        for item, h in history.items():
            votes = replay_votes(h)
            found = store.review_item(item)
            assert found is not None
            assert {r: a for r, (a, _) in found.votes.items()} == votes, item
            assert found.state == replay_state(votes, reviews=2), item


def replay_votes(history: Sequence[DecisionEvent]) -> dict[str, str]:
    """Each reviewer's vote: their latest decision on the item that no undo cancelled."""
    undone = {e.undoes for e in history if e.action is DecisionAction.UNDO}
    votes: dict[str, str] = {}
    for e in sorted(history, key=lambda e: e.event_id):
        if e.action is not DecisionAction.UNDO and not e.final and e.event_id not in undone:
            votes[e.reviewer] = e.action.value
    return votes


def replay_state(votes: dict[str, str], *, reviews: int) -> str | None:
    """Resolved when enough accept/reject votes agree, a conflict when they do not, else open."""
    cast = [a for a in votes.values() if a in ("accept", "reject")]
    if len(cast) < reviews:
        return None
    return cast[0] if len(set(cast)) == 1 else "conflict"
