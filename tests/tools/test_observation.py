"""A tool's answer as a model is shown it (`tools.observation`), from real `rg` runs on a small
corpus: one clipped line per match (its matched text), a count past the first 20, the tool's error as an error, and a
closing sentence that counts what the observation shows."""

from __future__ import annotations

from pathlib import Path

from codesearch_core.tools import (
    OBSERVATION_MAX_LINE,
    OBSERVATION_MAX_MATCHES,
    observation_text,
    parse_tool_call,
    run_tool_call,
    summary_text,
)


def _rg(root: Path, pattern: str) -> str:
    call = parse_tool_call({"name": "ripgrep_search", "arguments": {"pattern": pattern}})
    return observation_text(run_tool_call(call, root))


def test_matches_past_the_first_twenty_are_counted_and_a_long_line_is_clipped(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.py").write_text("".join(f"hit_{i} = 1\n" for i in range(25)), encoding="utf-8")
    (tmp_path / "b.py").write_text("long = '" + "x" * 500 + "'\n", encoding="utf-8")
    lines = _rg(tmp_path, r"hit_\d+").splitlines()
    assert len(lines) == OBSERVATION_MAX_MATCHES + 1
    assert lines[0] == "a.py:1: hit_0"  # the match, not its line
    assert lines[-1] == f"... {25 - OBSERVATION_MAX_MATCHES} more matches"
    [long] = _rg(tmp_path, "long = .*").splitlines()
    assert long.startswith("b.py:1: long = 'xxx") and long.endswith("…")
    assert len(long) == len("b.py:1: ") + OBSERVATION_MAX_LINE


def test_no_match_and_a_failed_search_say_so(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")
    assert _rg(tmp_path, "nowhere") == "no matches"
    failed = _rg(tmp_path, "(unclosed")
    assert failed.startswith("error (") and "unclosed" in failed


def test_the_closing_sentence_counts_matches_and_names_distinct_locations(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("key = key\nother\nkey\n", encoding="utf-8")
    call = parse_tool_call({"name": "ripgrep_search", "arguments": {"pattern": "key"}})
    run = run_tool_call(call, tmp_path)
    assert summary_text(run) == "Found 3 matches at 2 locations in 1 file: a.py:1, a.py:3."
