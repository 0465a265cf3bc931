"""The trajectory view (`pages/_trajectory.show`) drawn by Streamlit (AppTest) for a stored episode,
as the Episodes queue calls it: a 50-turn episode paged ten turns a page, a 10 MB observation cut
with a word that says so, a corpus that is gone named with the reason, the reward's components."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from codesearch_core.corpora import load_seed_blueprints


def _draw() -> None:
    import json as json_
    import os as os_
    from pathlib import Path as Path_

    from codesearch_core.corpora import load_seed_blueprints as seeds
    from codesearch_core.store import StoredEpisode
    from pages import _trajectory

    data = json_.loads(Path_(os_.environ["TRAJECTORY_FILE"]).read_text(encoding="utf-8"))
    bp = next(b for b in seeds() if b.id == data["blueprint_id"])
    episode = StoredEpisode(bp.id, data["corpus"], "import", "recorded", 0.0, {}, 0.0, 50, 50, 49,
                            "turn_limit", data)  # fmt: skip
    _trajectory.show(episode, blueprint=bp, key="t")


def test_a_stored_50_turn_episode_is_paged_cut_and_says_its_corpus_is_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bp = next(b for b in load_seed_blueprints() if b.plan is None)
    refused = {"name": "read_file", "arguments": {"path": "gone.txt"}, "findings": 0,
               "observation": "error (file_not_found): no file gone.txt", "error": "file_not_found"}  # fmt: skip
    first = bp.expected[0]
    huge = f"{first.path}:{first.start_line}: x\n" * 400_000  # about 10 MB
    search = {"name": "ripgrep_search", "arguments": {"pattern": "x"}, "observation": huge,
              "error": "", "findings": 400_000}  # fmt: skip
    trajectory = {
        "blueprint_id": bp.id,
        "corpus": "deleted-corpus",
        "turns": [[search]] + [[refused]] * 49,
        "info": {
            "reward": 0.0,
            "components": {"R_submit": 0.0, "R_find": 0.0},
            "end_reason": "turn_limit",
            "calls": 50,
            "invalid_calls": 49,
        },
    }
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps(trajectory), encoding="utf-8")
    monkeypatch.setenv("TRAJECTORY_FILE", str(path))
    at = AppTest.from_function(_draw, default_timeout=60).run()
    assert not at.exception
    markdown = [m.value for m in at.markdown]
    turns = [m for m in markdown if m.startswith("**Turn ")]
    assert turns == [f"**Turn {n}**" for n in range(1, 11)]  # ten turns a page
    assert any("The corpus cannot be read" in w.value and "deleted-corpus" in w.value
               for w in at.warning)  # fmt: skip
    assert any("The observation is cut here" in c.value for c in at.caption)
    assert any("file_not_found" in m for m in markdown)  # the refusals, said
    assert any(e.value.startswith("**No locations submitted**") for e in at.error)
    assert list(at.dataframe[0].value["component"]) == ["R_submit", "R_find"]
    # The last page: turns 41 to 50.
    at.segmented_control(key="t:page").set_value("5").run()
    turns = [m.value for m in at.markdown if m.value.startswith("**Turn ")]
    assert turns == [f"**Turn {n}**" for n in range(41, 51)]
