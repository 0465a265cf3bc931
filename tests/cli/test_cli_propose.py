"""`codesearch propose`: engines driven from the command line, proposals written as JSONL."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from codesearch_core.cli import main
from codesearch_core.corpora.blueprints import load_seed_blueprints
from codesearch_core.engines.base import failed_proposal
from codesearch_core.errors import EngineError
from codesearch_core.models import Blueprint, Proposal
from codesearch_core.tools.schemas import validate_tool_call

SEED_IDS = ["telemetry-c-printf-text-type-filter", "webshop-password-equals-user-backreference"]


def read_jsonl(path: Path) -> list[dict[str, object]]:
    # JSON Lines end at "\n" only (str.splitlines would also split at U+2028 inside a string).
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line]


def test_propose_mutations_writes_labelled_valid_proposals(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "proposals.jsonl"
    code = main(
        ["propose", "--engine", "mutations", "--ids", *SEED_IDS, "--n", "2", "--out", str(out)]
    )
    assert code == 0
    rows = read_jsonl(out)
    assert [(r["blueprint_id"], r["mutation_kind"]) for r in rows] == [
        ("telemetry-c-printf-text-type-filter", "swap_type_filter"),
        ("telemetry-c-printf-text-type-filter", "overmatch_regex"),
        ("webshop-password-equals-user-backreference", "drop_pcre2"),
        ("webshop-password-equals-user-backreference", "overmatch_regex"),
    ]
    assert all(r["valid"] and validate_tool_call(r["call"]) is None for r in rows)
    captured = capsys.readouterr()
    assert (
        "4 proposals (4 valid, 0 invalid) for 2 blueprints from mutations:mutations-v1"
        in captured.out
    )
    assert captured.err == ""  # no progress line: stderr is not a terminal here


def test_propose_covers_every_seed_by_default(tmp_path: Path) -> None:
    out = tmp_path / "all.jsonl"
    assert main(["propose", "--out", str(out)]) == 0
    ids = {r["blueprint_id"] for r in read_jsonl(out)}
    assert ids == {b.id for b in load_seed_blueprints()}


def test_import_reads_back_what_propose_wrote(tmp_path: Path) -> None:
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert main(["propose", "--ids", *SEED_IDS, "--n", "3", "--out", str(first)]) == 0
    code = main(["propose", "--engine", "import", "--from", str(first), "--out", str(second)])
    assert code == 0
    assert read_jsonl(second) == read_jsonl(first)


def test_import_skip_bad_reports_lines_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text(
        json.dumps(
            {
                "blueprint_id": SEED_IDS[0],
                "raw_text": '{"name": "rg", "arguments": {"pattern": "x"}}',
            }
        )
        + "\n{broken\n",
        encoding="utf-8",
    )
    out = tmp_path / "out.jsonl"
    code = main(
        ["propose", "--engine", "import", "--from", str(source), "--skip-bad", "--out", str(out)]
    )
    assert code == 1
    assert len(read_jsonl(out)) == 1
    assert f"skipped: {source}:2: not JSON" in capsys.readouterr().err


def test_existing_out_file_is_not_overwritten(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "p.jsonl"
    out.write_text("keep me\n", encoding="utf-8")
    assert main(["propose", "--ids", SEED_IDS[0], "--out", str(out)]) == 2
    assert out.read_text(encoding="utf-8") == "keep me\n"
    assert "exists: pass --append" in capsys.readouterr().err
    assert main(["propose", "--ids", SEED_IDS[0], "--out", str(out), "--append"]) == 0
    assert out.read_text(encoding="utf-8").startswith("keep me\n{")


def test_unknown_ids_are_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["propose", "--ids", "nope", SEED_IDS[0], "--out", str(tmp_path / "p.jsonl")])
    assert code == 2
    assert "error: unknown blueprint id(s): nope" in capsys.readouterr().err
    assert not (tmp_path / "p.jsonl").exists()


def test_blueprints_from_a_jsonl_file(tmp_path: Path) -> None:
    seeds = Path(__file__).resolve().parents[2] / "data" / "seeds" / "blueprints.jsonl"
    one = tmp_path / "one.jsonl"
    one.write_text(seeds.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    out = tmp_path / "p.jsonl"
    assert main(["propose", "--blueprints", str(one), "--out", str(out)]) == 0
    assert {r["blueprint_id"] for r in read_jsonl(out)} == {load_seed_blueprints()[0].id}


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--engine", "openai"], "--engine openai needs --base-url"),
        (["--engine", "import"], "--engine import needs --from FILE.jsonl"),
        (["--n", "0"], "--n must be at least 1"),
        (["--n", "65"], "--n must be at most 64 (samples per blueprint), got 65"),
        (
            ["--engine", "openai", "--base-url", "http://127.0.0.1:9/v1", "--temperature", "9"],
            "temperature must be between 0 and 2",
        ),
    ],
)
def test_bad_options_are_clear_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    assert main(["propose", *extra, "--out", str(tmp_path / "p.jsonl")]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "p.jsonl").exists()


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vLLM is installed here")
def test_vllm_engine_without_vllm_says_how_to_get_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "propose",
            "--engine",
            "vllm",
            "--model",
            "Qwen/Qwen2.5-Coder-7B-Instruct",
            "--out",
            str(tmp_path / "p.jsonl"),
        ]
    )
    assert code == 2
    assert "vLLM is not installed in this environment" in capsys.readouterr().err


def test_propose_into_the_store_stores_blueprints_then_proposals(tmp_path: Path) -> None:
    from codesearch_core.store.core import Store

    db = tmp_path / "studio.duckdb"
    assert main(["propose", "--ids", *SEED_IDS, "--n", "2", "--db", str(db)]) == 0
    # Proposing again for the store's own blueprints adds nothing new: same calls, same ids.
    assert main(["propose", "--blueprints", "store", "--n", "2", "--db", str(db)]) == 0
    with Store(db) as store:
        assert store.blueprints.list().total == 2
        stored = [store.proposals_for_blueprint(i) for i in SEED_IDS]
    assert [len(s) for s in stored] == [2, 2]
    assert sorted(p.proposal.mutation_kind or "" for p in stored[1]) == [
        "drop_pcre2",
        "overmatch_regex",
    ]


class _Interrupted:
    """A model engine whose generation is interrupted (Ctrl-C), or fails."""

    name = "vllm"
    model = "fake"
    notices = ()

    def __init__(self, error: BaseException | None) -> None:
        self.error = error

    def propose(self, blueprints: list[Blueprint], **_: object) -> list[Proposal]:
        if self.error is not None:
            raise self.error
        return [
            failed_proposal(
                b.id, "prompt too long for the model: 9 tokens", engine="vllm", model="m"
            )
            for b in blueprints
        ]


@pytest.mark.parametrize(
    ("error", "code"),
    [(None, 0), (KeyboardInterrupt(), 130), (EngineError("vLLM generation failed: boom"), 2)],
)
def test_the_vllm_engine_is_shut_down_however_the_command_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: BaseException | None, code: int
) -> None:
    import codesearch_core.engines as engines
    from codesearch_core.cli import propose_cmds

    shut_down: list[bool] = []
    monkeypatch.setattr(propose_cmds, "build_engine", lambda args: _Interrupted(error))
    monkeypatch.setattr(engines, "shutdown_vllm_engine", lambda: shut_down.append(True))
    out = tmp_path / "p.jsonl"
    argv = ["propose", "--engine", "vllm", "--model", "m", "--ids", SEED_IDS[0], "--out", str(out)]
    assert main(argv) == code
    assert shut_down == [True]


def test_requests_that_got_no_answer_are_counted_and_the_first_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from codesearch_core.cli import propose_cmds

    monkeypatch.setattr(propose_cmds, "build_engine", lambda args: _Interrupted(None))
    out = tmp_path / "p.jsonl"
    argv = ["propose", "--engine", "vllm", "--ids", *SEED_IDS, "--out", str(out)]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "2 proposals (0 valid, 2 invalid) for 2 blueprints" in captured.out
    assert (
        f"2 of them got no answer from the model; the first, for {SEED_IDS[0]}: prompt too long "
        "for the model: 9 tokens"
    ) in captured.err
    assert [r["error"] for r in read_jsonl(out)] == ["prompt too long for the model: 9 tokens"] * 2


def test_an_existing_out_file_is_refused_before_a_model_is_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from codesearch_core.cli import propose_cmds

    def no_engine(args: object) -> None:
        raise AssertionError("the engine was built")

    monkeypatch.setattr(propose_cmds, "build_engine", no_engine)
    out = tmp_path / "p.jsonl"
    out.write_text("keep me\n", encoding="utf-8")
    assert main(["propose", "--engine", "vllm", "--model", "m", "--out", str(out)]) == 2
    assert "exists: pass --append" in capsys.readouterr().err
