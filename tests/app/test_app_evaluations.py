"""The Evaluations page lists the saved eval runs side by side and compares two of them."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_support import open_app, studio_db_fixture  # noqa: F401 (a fixture)

from codesearch_core.cli import main


def test_two_eval_runs_show_side_by_side_with_charts_and_a_comparison(
    studio_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODESEARCH_EVALS", str(tmp_path / "evals"))
    for n in ("1", "2"):
        assert main(["eval", "--engine", "mutations", "--blueprints", "tag:adversarial:case",
                     "--n", n, "--out-dir", str(tmp_path / "evals")]) == 0  # fmt: skip
    at = open_app("pages/evaluations.py")
    assert not at.exception
    assert len(at.multiselect(key="ev:runs").value) == 2  # the newest two, side by side
    assert len(at.dataframe) >= 2  # the overall table and the item-by-item comparison
    assert [m.label for m in at.metric] == ["Better", "Worse", "Same"]
    assert sum(int(m.value) for m in at.metric) == len(at.selectbox(key="ev:item").options)


def test_without_runs_the_page_says_how_to_make_one(
    studio_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODESEARCH_EVALS", str(tmp_path / "none"))
    at = open_app("pages/evaluations.py")
    assert not at.exception
    assert any("codesearch eval" in i.value for i in at.info)
