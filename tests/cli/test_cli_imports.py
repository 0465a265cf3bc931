"""The CLI starts without the heavy libraries: each command loads what it uses when it runs.

`codesearch run` is what scripts call in loops; pandas, DuckDB and httpx cost seconds to import
and none of them is needed to parse the arguments or run a search.
"""

from __future__ import annotations

import json
import subprocess
import sys

from codesearch_core.cli.data_cmds import EXPORT_FORMATS
from codesearch_core.export.writers import ExportFormat

HEAVY = (
    "pandas", "altair", "streamlit", "duckdb", "httpx", "ray", "torch", "vllm",
    # the gym's OpenEnv server (`codesearch gym serve`) loads these when it starts, not before
    "openenv", "fastapi", "uvicorn", "gradio",
)  # fmt: skip


def loaded_after(code: str) -> list[str]:
    probe = (
        f"{code}\nimport sys, json\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    return list(json.loads(done.stdout.strip().splitlines()[-1]))


def test_importing_the_cli_and_building_its_parser_loads_none_of_them() -> None:
    assert loaded_after("import codesearch_core.cli as c\nc.build_parser()") == []


def test_a_search_from_the_cli_loads_none_of_them() -> None:
    code = (
        "from codesearch_core.cli import main\n"
        'main(["run", "--corpus", "ledger", '
        '\'{"name": "ripgrep_search", "arguments": {"pattern": "datasource"}}\'])'
    )
    assert loaded_after(code) == []


def test_the_export_formats_the_parser_offers_are_the_exporters() -> None:
    assert tuple(f.value for f in ExportFormat) == EXPORT_FORMATS


def test_the_matching_choices_the_parser_offers_are_the_graders() -> None:
    # The parser names them itself so that `codesearch run` does not load the grader (numpy).
    from codesearch_core.cli.tool_cmds import DEFAULT_MATCHING_NAME, MATCHINGS
    from codesearch_core.grading import DEFAULT_MATCHING, Matching

    assert sorted(MATCHINGS) == sorted(m.value for m in Matching)
    assert DEFAULT_MATCHING.value == DEFAULT_MATCHING_NAME


def test_the_gym_limits_the_parser_offers_are_the_gyms_defaults() -> None:
    # The parser names them itself so that `codesearch --help` does not load the gym (DuckDB).
    from codesearch_core.cli import gym_cmds, rollout_cmds
    from codesearch_core.gym import DEFAULT_MIN_REWARD, DEFAULT_SETTINGS, ServerSettings

    assert DEFAULT_SETTINGS.max_turns == gym_cmds.DEFAULT_MAX_TURNS
    assert DEFAULT_SETTINGS.max_parallel == gym_cmds.DEFAULT_PARALLEL
    assert DEFAULT_SETTINGS.beta == gym_cmds.DEFAULT_BETA
    assert ServerSettings().max_sessions == gym_cmds.DEFAULT_MAX_SESSIONS
    assert ServerSettings().session_idle_s == gym_cmds.DEFAULT_SESSION_IDLE_S
    assert DEFAULT_MIN_REWARD == rollout_cmds.DEFAULT_MIN_REWARD
