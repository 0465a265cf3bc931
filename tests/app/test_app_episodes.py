"""The Episodes queue on the Review page and the Propose page's rollouts, drawn by Streamlit
(AppTest) over a real store: no episodes says what makes them; an episode whose corpus is gone shows
the reason, cannot be accepted and says why next to the greyed button; the Propose page stores the
reference's episodes as `codesearch rollouts --engine reference` does."""

from __future__ import annotations

from pathlib import Path

from app_support import (
    open_app,
    stored,
    texts,
)
from streamlit.testing.v1 import AppTest

from codesearch_core import ingest, studio
from codesearch_core.gym import ReferencePolicy, as_tasks, play, rollouts
from codesearch_core.models import DecisionAction
from codesearch_core.store import EPISODE, BlueprintFilters, ReviewSettings, Store, StoredEpisode

REVIEW = "pages/review.py"
PROPOSE = "pages/propose.py"


def _episodes_queue(reviewer: str = "ann") -> AppTest:
    at = open_app(REVIEW, reviewer=reviewer)
    at.segmented_control(key="review:queue").set_value("Episodes").run()
    assert not at.exception, at.exception
    return at


def test_no_episodes_says_the_command_that_makes_them(studio_db: Path) -> None:
    at = _episodes_queue()
    assert any(
        "No episodes left to review" in i and studio.ROLLOUTS_COMMAND in i
        for i in texts(at, "info")
    ), texts(at, "info")
    assert at.query_params.get("queue") == "episodes"


def test_an_episode_whose_corpus_is_gone_cannot_be_accepted_and_says_why(studio_db: Path) -> None:
    with Store(studio_db) as store:
        ingest.ensure_seeded(store)
        webshop = studio.all_blueprints(store, BlueprintFilters(corpus="webshop"), limit=1000)
        bp = next(b for b in webshop if b.plan is None)
        (task,) = as_tasks([bp]).tasks
        result = play(ReferencePolicy(), task)
        # The episode as stored from a corpus that was removed since.
        gone = StoredEpisode(
            bp.id, "deleted-corpus", "reference", "", result.reward, result.components, 1.0,
            len(result.turns), result.calls, result.invalid_calls, result.end_reason,
            {**result.to_dict(), "corpus": "deleted-corpus"},
        )  # fmt: skip
        assert store.episodes.save([gone]) == 1
    at = _episodes_queue()
    accept = next(b for b in at.button if b.key == "ep:accept")
    assert accept.disabled
    blocked = [m for m in texts(at, "markdown") if "Cannot be accepted." in m]
    assert blocked and "deleted-corpus" in blocked[0] and "is gone" in blocked[0]
    assert any("The corpus cannot be read" in w for w in texts(at, "warning"))
    assert any(bp.intent in s for s in texts(at, "subheader"))

    # It can still be rejected, with a reason that fits a trajectory and a note: the message
    # says both and the queue is empty after.
    reason = at.selectbox(key=f"ep:reason:{gone.episode_id}")
    assert tuple(reason.options) == studio.reject_reasons(EPISODE)
    reason.set_value("gave up or ran out of turns")
    at.text_input(key=f"ep:note:{gone.episode_id}").input("corpus removed").run()
    next(b for b in at.button if b.key == "ep:reject").click().run()
    assert not at.exception, at.exception
    assert any(
        "Rejected episode" in s and "(gave up or ran out of turns)" in s and "corpus removed" in s
        for s in texts(at, "success")
    ), texts(at, "success")
    assert any("No episodes left to review" in i for i in texts(at, "info"))
    with stored(studio_db) as store:
        (history,) = [store.queue("episode").history(gone.episode_id)]
        assert [(e.action.value, e.reviewer, e.reason, e.note) for e in history] == [
            ("reject", "ann", "gave up or ran out of turns", "corpus removed")
        ]
        assert store.episodes.accepted() == []


def test_the_propose_page_rolls_out_reference_episodes_into_the_store(studio_db: Path) -> None:
    at = open_app(PROPOSE, reviewer="ann")
    at.selectbox(key="pf:corpus").set_value("webshop").run()
    assert not at.exception, at.exception
    at.button(key="pr:start").click().run()
    assert not at.exception, at.exception
    assert not texts(at, "error"), texts(at, "error")
    done = [s for s in texts(at, "success") if s.startswith("Episodes: **")]
    assert done, texts(at, "success")
    with stored(studio_db) as store:
        episodes = store.episodes.list()
    assert episodes and {e.corpus for e in episodes} == {"webshop"}
    assert {e.engine for e in episodes} == {"reference"}
    assert f"**{len(episodes)}** stored" in done[0]
    solved = len({e.blueprint_id for e in episodes})

    # A second run skips what is stored, as the command does.
    at.button(key="pr:start").click().run()
    again = next(s for s in texts(at, "success") if s.startswith("Episodes: **"))
    assert again.startswith("Episodes: **0** stored") and f"{solved} skipped" in again


def test_a_lead_settles_an_episode_in_conflict(studio_db: Path) -> None:
    with Store(studio_db) as store:
        ingest.ensure_seeded(store)
        store.set_review_settings(ReviewSettings(reviews_per_item=2))
        bp = studio.all_blueprints(store, BlueprintFilters(corpus="webshop"), limit=1)[0]
        rollouts(ReferencePolicy(), as_tasks([bp]).tasks, store, k=1)
        (episode,) = store.episodes.list()
        store.queue(EPISODE).decide(episode.episode_id, DecisionAction.ACCEPT, "ann")
        store.queue(EPISODE).decide(episode.episode_id, DecisionAction.REJECT, "bea")
    at = _episodes_queue("lee")
    assert any("No episodes left to review" in i for i in texts(at, "info"))  # nothing leased
    at.button(key="ep:conflicts").click().run()
    assert any("Reviewers disagree on this episode" in w for w in texts(at, "warning"))
    assert any("ann **accept** · bea **reject**" in c for c in texts(at, "caption"))
    at.button(key="ep:final_accept").click().run()
    assert not at.exception, at.exception
    assert any("Final: Accepted episode" in s for s in texts(at, "success"))
    with stored(studio_db) as store:
        assert [e.episode_id for e in store.episodes.accepted()] == [episode.episode_id]
