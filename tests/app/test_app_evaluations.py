"""The Evaluations page lists the stored eval runs side by side, compares two of them blueprint by
blueprint, and opens any answer in the review card's diff view."""

from __future__ import annotations

from pathlib import Path

from app_support import open_app, stored

from codesearch_core.cli import main
from codesearch_core.ingest import ensure_seeded


def test_two_eval_runs_show_side_by_side_compared_and_open_in_the_diff_view(
    studio_db: Path,
) -> None:
    with stored(studio_db) as store:
        ensure_seeded(store)
    for n in ("1", "2"):
        assert main(["eval", "--engine", "mutations", "--blueprints", "tag:adversarial:case",
                     "--n", n, "--db", str(studio_db)]) == 0  # fmt: skip
    at = open_app("pages/evaluations.py")
    chosen = at.multiselect(key="ev:runs").value
    with stored(studio_db) as store:
        newest_first = [r.run_id for r in store.evals.list()]
    assert chosen == newest_first  # the newest two, newest first, compared against the older
    assert "n=2" in at.multiselect(key="ev:runs").format_func(chosen[0])
    assert len(at.dataframe) == 1  # the item-by-item comparison
    # The overall table is a table (read whole at 900 px), a row per run, the reward first; then
    # the two runs side by side on the blueprint opened: a row per run, a row per expected span
    # with a column per run.
    overall, side, spans = (t.value for t in at.table)
    assert list(overall.index) == list(side.index)
    assert list(overall.columns)[:2] == ["kind", "mean reward"]
    assert list(side.index) == [at.multiselect(key="ev:runs").format_func(c) for c in chosen]
    assert {"reward", "turns", "calls", "found"} <= set(side.columns)
    assert set(spans.columns) == set(side.index)
    labels = [m.label for m in at.metric]
    assert labels == ["Better", "Worse", "Same", "In one run only"]
    blueprints = at.selectbox(key="ev:item").options
    assert sum(int(m.value) for m in at.metric[:3]) == len(blueprints)
    # The first answer is open in the review card's diff view: both calls, the changed fields,
    # the findings marked in the corpus files (or the error that stopped the call).
    assert any("**Proposed call**" in m.value for m in at.markdown)
    assert any("**Reference call**" in m.value for m in at.markdown)
    shown = [m.value for m in at.markdown] + [e.value for e in at.error]
    assert any("**Findings**" in v or "Invalid" in v or "run failed" in v for v in shown)
    # Another blueprint, another run: still the diff view, no exception.
    at.selectbox(key="ev:answer_run").select(chosen[1]).run()
    at.selectbox(key="ev:item").select(blueprints[-1]).run()
    assert not at.exception
    assert any("**Reference call**" in m.value for m in at.markdown)
    # Per language instead of per tag: the chart follows.
    at.segmented_control(key="ev:cat").set_value("by_language").run()
    assert not at.exception


def test_without_runs_the_page_says_how_to_make_one(studio_db: Path) -> None:
    at = open_app("pages/evaluations.py")
    assert not at.exception
    assert any("codesearch eval" in i.value for i in at.info)


def test_an_agent_run_opens_as_an_episode_turn_by_turn_with_its_submit_diffed(
    studio_db: Path,
) -> None:
    with stored(studio_db) as store:
        ensure_seeded(store)
    assert main(["eval", "--agent", "--engine", "reference", "--blueprints", "tag:plan",
                 "--db", str(studio_db)]) == 0  # fmt: skip
    at = open_app("pages/evaluations.py")
    assert not at.exception
    markdown = [m.value for m in at.markdown]
    # a plan seed: its steps as turns, then the submit turn, each call with the tool's answer
    assert "**Turn 1**" in markdown and "**Turn 2**" in markdown
    codes = [c.value for c in at.code]
    assert any(c.startswith("submit(") for c in codes)
    assert any(c.startswith("ripgrep_search(") or c.startswith("ast_grep_search(") for c in codes)
    assert any(v.startswith("**Submitted locations**") for v in markdown)  # diffed
    assert any(v.startswith("**Reward") for v in markdown)
    components = at.dataframe[-1].value
    assert "R_find" in list(components["component"])
    assert not any("**Proposed call**" in v for v in markdown)
    # The address names the run, the blueprint and the answer: a link opens the same episode.
    assert {"run", "blueprint", "answer"} <= set(at.query_params)


def test_an_agent_runs_success_rate_is_a_chart_metric(studio_db: Path) -> None:
    with stored(studio_db) as store:
        ensure_seeded(store)
    assert main(["eval", "--agent", "--engine", "reference", "--blueprints", "tag:plan",
                 "--db", str(studio_db)]) == 0  # fmt: skip
    at = open_app("pages/evaluations.py")
    assert "success (reward >= 0.9)" in at.selectbox(key="ev:metric").options
    at.selectbox(key="ev:metric").select("success_rate").run()
    assert not at.exception
    # An agent run is charted as one, apart from one-call runs.
    assert "**Agent runs**" in [m.value for m in at.markdown]
    assert "**One-call runs**" not in [m.value for m in at.markdown]
