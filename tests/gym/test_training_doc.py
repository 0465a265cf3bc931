"""docs/training.md's episode snippet runs as written and ends as it says (reward 1.0)."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "training.md"


def test_the_episode_snippet_runs_and_scores_one(tmp_path: Path) -> None:
    text = DOC.read_text(encoding="utf-8")
    block = re.search(r"```python\n(from codesearch_core.gym import Episode.*?)```", text, re.S)
    assert block is not None
    script = tmp_path / "snippet.py"
    script.write_text(block.group(1), encoding="utf-8")
    names = runpy.run_path(str(script))
    assert names["result"].reward == 1.0
