"""Hostile model output: whatever a model writes becomes a Proposal (valid, or invalid with the
reason), and a valid one can be stored, hashed and executed without a traceback.

Held elsewhere (see docs/reliability.md): invalid JSON with its position, output cut at max_tokens,
raw control characters, schema errors kept after repairs (tests/engines/test_engines_repair.py).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from store_helpers import blueprint

from codesearch_core.cli import main
from codesearch_core.engines.base import check_n, proposal_from_text
from codesearch_core.engines.mutations import MutationEngine, MutationKind
from codesearch_core.engines.repair import validate_and_repair
from codesearch_core.errors import EngineError
from codesearch_core.models import Proposal
from codesearch_core.store.core import Store
from codesearch_core.verify.tasks import VerifyTask, verify_one

CALL = {"name": "ripgrep_search", "arguments": {"pattern": "foo", "paths": ["src"]}}


def propose(raw: str) -> Proposal:
    return proposal_from_text("bp-001", raw, engine="test", model="m", finish_reason="stop")


def run_in(root: Path, proposal: Proposal) -> VerifyTask:
    assert proposal.call is not None
    return VerifyTask(proposal.blueprint_id, proposal.call.to_json(), "c", str(root), ())


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("foo = 1\n")
    return tmp_path


def test_every_truncation_of_a_call_is_an_invalid_proposal_with_the_position() -> None:
    text = json.dumps(CALL)
    for cut in range(len(text)):
        proposal = propose(text[:cut])
        assert not proposal.valid and proposal.call is None
        assert proposal.raw_text == text[:cut]
        assert proposal.error.startswith(("invalid JSON: ", "empty output")), proposal.error
    assert propose(text).valid


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        (
            '{"name": "find_files", "arguments": {"pattern": "x"}}',
            "name: 'find_files' is not one of: ast_grep_search, ripgrep_search",
        ),
        (
            '{"name": "ripgrep_search", "arguments": {"pattern": 5}}',
            "arguments.pattern: 5 is not of type 'string'",
        ),
        ('{"name": "ripgrep_search", "arguments": []}', "arguments: must be a JSON object"),
        (
            '{"name": "ripgrep_search", "arguments": {"pattern": "x", "context_lines": NaN}}',
            "arguments.context_lines: nan is not of type 'integer'",
        ),
        ('"ripgrep_search TODO"', "call: a tool call must be a JSON object, got str"),
        ("null", "call: a tool call must be a JSON object, got NoneType"),
    ],
)
def test_valid_json_that_is_not_a_call_is_invalid_with_the_field(raw: str, error: str) -> None:
    proposal = propose(raw)
    assert not proposal.valid and proposal.error == error


def test_a_10_mb_output_is_an_invalid_proposal_not_a_crash() -> None:
    raw = json.dumps({"name": "ripgrep_search", "arguments": {"pattern": "x" * 10_000_000}})
    proposal = propose(raw)
    assert not proposal.valid
    assert proposal.error == "arguments.pattern: too long (10000000 characters, at most 1000)"


def test_every_change_the_repair_makes_is_recorded() -> None:
    call = {"name": "ripgrep_search", "arguments": {"pattern": "x", "file_types": ["py", "py"]}}
    result = validate_and_repair(call)
    assert result.call is not None
    assert result.call.to_dict() == call or result.repairs
    assert result.call.arguments["file_types"] == ["py"]
    assert result.repairs == ("repeated file type 'py' dropped",)


def test_deeply_nested_output_is_an_invalid_proposal() -> None:
    raw = "[" * 100_000 + "]" * 100_000
    proposal = propose(raw)
    assert not proposal.valid and "JSON" in proposal.error
    assert proposal.error.startswith("invalid JSON: nesting too deep")
    assert proposal.raw_text == raw


@pytest.mark.parametrize("nul", ["\\u0000", "\x00"])
def test_a_nul_in_the_pattern_is_recorded_as_a_failure_not_raised(corpus: Path, nul: str) -> None:
    proposal = propose('{"name": "ripgrep_search", "arguments": {"pattern": "fo' + nul + 'o"}}')
    if not proposal.valid:
        assert "NUL" in proposal.error
        return
    outcome = verify_one(run_in(corpus, proposal))
    assert not outcome.run.ok and "NUL" in outcome.run.error


def test_a_lone_surrogate_in_a_call_is_invalid_or_works_everywhere(
    corpus: Path, tmp_path: Path
) -> None:
    proposal = propose('{"name": "ripgrep_search", "arguments": {"pattern": "a\\ud800"}}')
    if not proposal.valid:
        assert "surrogate" in proposal.error or "Unicode" in proposal.error
        return
    assert proposal.call is not None
    assert proposal.call.call_hash
    with Store(tmp_path / "studio.duckdb") as store:
        store.blueprints.add([blueprint(1)])
        store.add_proposals([proposal])
    verify_one(run_in(corpus, proposal))


def test_a_huge_n_gives_the_mutation_engine_at_most_one_proposal_per_kind() -> None:
    proposals = MutationEngine().propose([blueprint(1)], n=10**9)
    assert 0 < len(proposals) <= len(MutationKind)


def test_a_huge_n_is_refused_with_a_message_naming_the_limit() -> None:
    with pytest.raises(EngineError, match="at most"):
        check_n(10**9)


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="would load a model")
def test_the_cli_refuses_a_huge_n_before_building_the_engine(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["propose", "--engine", "vllm", "--n", str(10**9), "--out", str(tmp_path / "p.jsonl")]
    assert main(argv) == 2
    assert "--n" in capsys.readouterr().err
