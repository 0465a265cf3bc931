"""Soak: several curators review at once against one store, for a while, and nothing is lost.

Two kinds of curator share the store the app caches (`st.cache_resource`: one Store per process and
file, which is the Streamlit server's situation):

* page curators: Streamlit sessions (`AppTest` of app.py on the Review page), each driven from its
  own thread by clicking Accept / Reject / Skip / Undo. AppTest cannot run two scripts at the same
  moment (every run installs and then removes one process-wide mock `Runtime`, and compiles the
  page again, which CPython 3.11 cannot do in two threads at once), so their script runs take turns
  under a lock; the sessions still interleave in any order and race for the same items.
* store curators: threads that follow the page's own flow (`studio.next_item_id`, then
  `record_decision`, undo of their own last decision) on the app's cached Store with no lock, so the
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
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from app_support import open_app, release_app_store, stored, texts
from store_helpers import blueprint, proposal
from streamlit.testing.v1 import AppTest

from codesearch_core import studio
from codesearch_core.errors import StoreError
from codesearch_core.models import DecisionAction
from codesearch_core.store.core import Store
from codesearch_core.store.queries import active_events
from codesearch_core.store.types import QueueFilters
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
    mine: list[str] = []  # the page's undo stack
    current: str | None = None
    for _ in range(MAX_ACTIONS):
        if time.monotonic() > deadline:
            return
        current = studio.next_item_id(store, QueueFilters(), after_id=current)
        action = rng.choice(ACTIONS)
        if action == "undo" or current is None:
            if not mine:
                continue
            target = mine[-1]
            try:
                store.record_decision(target, DecisionAction.UNDO, curator.reviewer)
            except StoreError as err:
                curator.refused.append(("undo", str(err)))
                continue
            mine.pop()
            curator.recorded.append(("undo", target))
            current = target
        else:
            store.record_decision(current, action, curator.reviewer)
            mine.append(current)
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
        store.add_blueprints(bps)
        ids = store.add_proposals([proposal(bp, p) for bp in bps for p in ("first", "second")])
    yield ids
    release_app_store()


def replay(events: list[tuple[int, str, int | None]]) -> int | None:
    active = active_events(events)
    return active[-1][0] if active else None


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
        # The only refusal allowed: an undo whose decision another curator undid first.
        assert all(a == "undo" and "nothing to undo" in m for a, m in c.refused), c.refused

    with stored(db) as store:
        history = {item: store.item_history(item) for item in review_db}
        events = sorted((e for h in history.values() for e in h), key=lambda e: e.event_id)
        done = sum(len(c.recorded) for c in page + direct)
        assert store.counts().decision_events == len(events) == done
        for c in page + direct:
            logged = [(e.action.value, e.item_id) for e in events if e.reviewer == c.reviewer]
            assert logged == [(a, full_id[i]) for a, i in c.recorded], c.reviewer
        assert Counter((e.reviewer, e.action.value) for e in events) == Counter(
            (c.reviewer, a) for c in page + direct for a, _ in c.recorded
        )

        # The derived state is the replay of the log, item by item.
        assert store.check_caches() == []
        undecided = 0
        for item, h in history.items():
            state = replay([(e.event_id, e.action.value, e.undoes) for e in h])
            current = store.current_decision(item)
            assert (current.event_id if current else None) == state
            undecided += state is None
            undone = [e.undoes for e in h if e.action is DecisionAction.UNDO]
            assert None not in undone and len(undone) == len(set(undone))  # each undone once
            earlier = {e.event_id: e for e in h}
            assert all(
                earlier[u].action is not DecisionAction.UNDO for u in undone if u is not None
            )
        assert store.counts().undecided == undecided
