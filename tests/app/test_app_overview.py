"""The Overview per queue (issue 39, item 4), drawn by Streamlit (AppTest) over a real store: the
queue selector (Proposals first, the choice in the address), another queue's progress, agreement
and reviewers, the QA queue's measured error rate per data set, and the button that opens the
queue on the Review page."""

from __future__ import annotations

from pathlib import Path

from app_support import open_app, stored, texts
from streamlit.testing.v1 import AppTest

from codesearch_core import ingest, studio
from codesearch_core.dataset.items import item_from_blueprint
from codesearch_core.store import (
    EPISODE,
    QA,
    BlueprintFilters,
    QADataset,
    ReviewSettings,
    Store,
)
from tests.store.test_episodes import episode

SMALL = QADataset("0123456789abcdef", "small", "/data/small", "cafe" * 16)
OTHER = QADataset("fedcba9876543210", "other", "/data/other", "beef" * 16)


def seed_queues(db: Path) -> None:
    """Three episodes (agreed, in conflict, open) and five QA items of two data sets, each decided
    by two reviewers who agree or not."""
    with Store(db) as store:
        ingest.ensure_seeded(store)
        ledger = studio.all_blueprints(store, BlueprintFilters(corpus="ledger"), limit=1000)
        items = [{**item_from_blueprint(b), "split": "eval"} for b in ledger if b.plan is None]
        store.set_review_settings(ReviewSettings(reviews_per_item=2))
        store.episodes.save([episode(pattern=p) for p in "abc"])
        episodes = [e.episode_id for e in store.episodes.list()]
        store.qa.import_sample(SMALL, [("ledger", i) for i in items[:3]])
        store.qa.import_sample(OTHER, [("ledger", i) for i in items[3:5]])
        votes = [
            (EPISODE, episodes[0], "accept", "accept"),
            (EPISODE, episodes[1], "accept", "reject"),
            (QA, f"{SMALL.dataset_id}.{items[0]['id']}", "accept", "accept"),
            (QA, f"{SMALL.dataset_id}.{items[1]['id']}", "reject", "reject"),
            (QA, f"{OTHER.dataset_id}.{items[3]['id']}", "reject", "reject"),
        ]
        for kind, item, ann, bob in votes:
            store.queue(kind).decide(item, ann, "ann")
            store.queue(kind).decide(item, bob, "bob")


def _metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_the_selector_shows_another_queues_figures_and_opens_it(studio_db: Path) -> None:
    seed_queues(studio_db)
    # The Review page first: its picker's choice (Proposals) must not outlive the page.
    at = open_app("pages/review.py", reviewer="lee")
    at.switch_page("pages/overview.py").run()
    picker = at.segmented_control(key="overview:queue")
    assert picker.value == "proposals" and picker.options[:1] == ["Proposals"]
    assert "Blueprints" in _metrics(at) and "queue" not in at.query_params  # the page as it was

    picker.set_value("episodes").run()
    assert not at.exception, at.exception
    assert at.query_params.get("queue") == "episodes"
    metrics = _metrics(at)
    assert [metrics[k] for k in ("Episodes", "Open", "Accepted", "Rejected", "In conflict")] == [
        "3", "1", "1", "0", "1"]  # fmt: skip
    assert (metrics["Items with 2+ reviews"], metrics["Percent agreement"]) == ("2", "50%")
    assert any("Over blind votes" in c and "1 in conflict now" in c for c in texts(at, "caption"))
    reviewers = at.dataframe[0].value
    assert reviewers.to_dict("records") == [
        {"reviewer": "ann", "accepted": 2, "rejected": 0, "skipped": 0},
        {"reviewer": "bob", "accepted": 1, "rejected": 1, "skipped": 0},
    ]
    assert "Blueprints" not in metrics  # the proposals' figures are not this queue's

    at.segmented_control(key="overview:queue").set_value("qa").run()
    assert not at.exception, at.exception
    with stored(studio_db) as store:
        overall, _ = studio.error_rates(store.queue(QA).stats())
    assert "2 incorrect of 3 judged" in overall.interval
    assert f"**Measured error rate** · {overall.interval}" in texts(at, "markdown")
    per_set = at.dataframe[0].value
    assert list(per_set["data set"]) == ["small", "other"]
    assert list(per_set["judged"]) == [2, 1] and list(per_set["incorrect"]) == [1, 1]
    assert all("%-" in i for i in per_set["95% interval"])

    next(b for b in at.button if b.label == "Review QA").click().run()
    assert not at.exception, at.exception
    assert at.session_state["review:queue"] == "QA"
    assert at.query_params.get("queue") == "qa"
    # The QA card, on the two items nobody settled yet.
    assert "#### QA item 1 of 2 · 2 left" in texts(at, "markdown")


def test_a_link_to_a_queue_opens_the_overview_on_it_and_an_empty_one_says_so(
    studio_db: Path,
) -> None:
    seed_queues(studio_db)
    at = open_app()
    at.query_params["queue"] = "qa"  # a link, or a reload of the page on QA
    at.run()
    assert not at.exception, at.exception
    assert at.segmented_control(key="overview:queue").value == "qa"
    assert _metrics(at)["QA"] == "5"
    at.query_params["queue"] = "nonsense"  # a link to no queue: the selector stays where it is
    at.run()
    assert at.segmented_control(key="overview:queue").value == "qa"
    at.segmented_control(key="overview:queue").set_value("drafts").run()
    assert "No drafts in the queue yet." in texts(at, "info")
    assert next(b for b in at.button if b.label == "Review Drafts").disabled
