"""The episode reward's options (F-beta, supporting spans) and its recorded metrics, on real
episodes: a corpus written here, searched by the real `rg`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from codesearch_core.gym import Episode, EpisodeResult, GymSettings
from codesearch_core.models import Blueprint, Span
from codesearch_core.tools import parse_tool_call

# Two files, each with two `db.query(` calls (the answer) and a `db.query_log` line a greedy
# search for `db\.query` also finds.
SOURCE = """def load_users(db):
    return db.query("SELECT * FROM users")


def load_orders(db):
    return db.query("SELECT * FROM orders")


def log(db):
    db.query_log.append("loaded")
"""
ANSWER = (Span("a.py", 2, 2), Span("a.py", 6, 6), Span("b.py", 2, 2), Span("b.py", 6, 6))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("queries")
    for name in ("a.py", "b.py"):
        (root / name).write_text(SOURCE, encoding="utf-8")
    return root


def blueprint(expected: tuple[Span, ...] = ANSWER) -> Blueprint:
    call = parse_tool_call({"name": "ripgrep_search", "arguments": {"pattern": r"db\.query\("}})
    return Blueprint(
        id="queries",
        intent="find the calls of db.query",
        reference_call=call,
        corpus="queries",
        expected=expected,
        language="python",
    )


def search(pattern: str, **arguments: Any) -> dict[str, Any]:
    return {"name": "ripgrep_search", "arguments": {"pattern": pattern, **arguments}}


def submit(spans: list[Span]) -> dict[str, Any]:
    return {"name": "submit", "arguments": {"locations": [s.to_dict() for s in spans]}}


def play(
    corpus: Path,
    call: dict[str, Any],
    choose: Any,
    settings: GymSettings,
    bp: Blueprint | None = None,
) -> EpisodeResult:
    """One search turn, then a submit of what `choose` picks of the search's findings."""
    episode = Episode(bp or blueprint(), corpus, settings)
    step = episode.step([call])
    (run,) = step.runs
    assert run is not None and run.ok, run
    episode.step([submit(choose(sorted({f.span for f in run.findings})))])
    return episode.result()


def precise(corpus: Path, settings: GymSettings) -> EpisodeResult:
    """Searches exactly, submits one answer per file: a subset, all of it right."""
    return play(corpus, search(r"db\.query\("), lambda spans: [spans[0], spans[2]], settings)


def greedy(corpus: Path, settings: GymSettings) -> EpisodeResult:
    """Searches wide and submits everything it found: the whole answer and two extras."""
    return play(corpus, search(r"db\.query"), lambda spans: spans, settings)


def test_f_beta_half_ranks_a_precise_episode_above_a_greedy_one_that_f1_prefers(
    corpus: Path,
) -> None:
    f1 = GymSettings()
    p1, g1 = precise(corpus, f1), greedy(corpus, f1)
    assert p1.grade is not None and g1.grade is not None
    assert (p1.grade.span_precision, p1.grade.span_recall) == (1.0, 0.5)
    assert (g1.grade.span_precision, g1.grade.span_recall) == (4 / 6, 1.0)
    # Both point at both files (R_scope 1) within the free budget: R_find decides.
    assert p1.components["R_scope"] == g1.components["R_scope"] == 1.0
    assert p1.components["R_find"] == p1.grade.span_f1  # beta 1 is today's F1, exactly
    assert p1.reward < g1.reward

    half = GymSettings(beta=0.5)
    p, g = precise(corpus, half), greedy(corpus, half)
    assert p.components["R_find"] == pytest.approx(1.25 * 0.5 / (0.25 + 0.5))
    assert g.components["R_find"] == pytest.approx(1.25 * (4 / 6) / (0.25 * (4 / 6) + 1))
    assert p.reward > g.reward
    # The grade itself does not depend on beta; only the reward's R_find does.
    assert p.grade == p1.grade and g.grade == g1.grade


def test_supporting_spans_are_neither_required_nor_penalised_in_an_episode(
    corpus: Path,
) -> None:
    # The `db.query_log` lines become supporting context; the four calls stay the answer.
    marked = (*ANSWER, Span("a.py", 10, 10, supporting=True), Span("b.py", 10, 10, True))
    settings = GymSettings()
    everything = play(corpus, search(r"db\.query"), lambda s: s, settings, blueprint(marked))
    assert everything.reward == pytest.approx(1.0)  # the context submitted costs nothing
    answer_only = play(corpus, search(r"db\.query\("), lambda s: s, settings, blueprint(marked))
    assert answer_only.reward == pytest.approx(1.0)  # and leaving it out costs nothing
    context_only = play(corpus, search(r"query_log"), lambda s: s, settings, blueprint(marked))
    assert context_only.grade is not None and context_only.grade.span_recall == 0.0
    assert context_only.components["R_find"] == 0.0
    # Unmarked, the same spans are all required: the answer alone misses two of six.
    plain = (*ANSWER, Span("a.py", 10, 10), Span("b.py", 10, 10))
    unmarked = play(corpus, search(r"db\.query\("), lambda s: s, settings, blueprint(plain))
    assert unmarked.grade is not None and unmarked.grade.span_recall == pytest.approx(4 / 6)
    assert unmarked.reward < answer_only.reward


def test_the_recorded_metrics_are_in_the_info_and_not_in_the_reward(corpus: Path) -> None:
    settings = GymSettings()
    saw_all = precise(corpus, settings)  # saw the four answers, submitted two
    assert saw_all.metrics == {
        "precision": 1.0,
        "recall": 0.5,
        "calls_per_turn": 0.5,
        "evidence_seen": 4.0,
        "evidence_drop": 0.5,
    }
    assert saw_all.info()["metrics"] == saw_all.metrics
    assert saw_all.to_dict()["info"]["metrics"] == saw_all.metrics
    # The same submit after a search that showed nothing of the answer: another evidence drop
    # (nothing seen, so nothing dropped), the very same reward.
    dropped = play(corpus, search("SELECT", paths=["a.py"]), lambda s: [], settings)
    blind_episode = Episode(blueprint(), corpus, settings)
    blind_episode.step([search("no_such_text_here")])
    blind_episode.step([submit([ANSWER[0], ANSWER[2]])])
    guessed = blind_episode.result()
    assert guessed.metrics["evidence_seen"] == 0.0 and guessed.metrics["evidence_drop"] == 0.0
    assert guessed.reward == saw_all.reward and guessed.components == saw_all.components
    # A search of one file shows its two answers; submitting none of them drops both.
    assert dropped.metrics["evidence_seen"] == 2.0 and dropped.metrics["evidence_drop"] == 1.0
    assert dropped.metrics["precision"] == dropped.metrics["recall"] == 0.0


def test_an_episode_that_never_submits_records_zero_precision_and_recall(corpus: Path) -> None:
    episode = Episode(blueprint(), corpus, GymSettings(max_turns=1))
    episode.step([search(r"db\.query\("), search("orders")])
    result = episode.result()
    assert result.reward == 0.0 and result.grade is None
    assert result.metrics["precision"] == result.metrics["recall"] == 0.0
    assert result.metrics["calls_per_turn"] == 2.0
    assert result.metrics["evidence_seen"] == 4.0 and result.metrics["evidence_drop"] == 1.0


@pytest.mark.parametrize("beta", [0.0, -1.0, float("nan"), 1000.0])
def test_a_beta_out_of_range_is_refused(beta: float) -> None:
    with pytest.raises(ValueError, match="beta"):
        GymSettings(beta=beta)


def test_beta_is_kept_with_the_settings_and_an_old_record_reads_as_f1() -> None:
    assert GymSettings.from_dict(GymSettings(beta=0.5).to_dict()).beta == 0.5
    old = GymSettings().to_dict()
    del old["beta"]
    assert GymSettings.from_dict(old) == GymSettings()
