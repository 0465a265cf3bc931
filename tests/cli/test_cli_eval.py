"""`codesearch eval` with every engine `propose` has: mutations, an OpenAI-compatible server (a
real HTTP server in this process that answers like `vllm serve`), answers imported from a file,
and vLLM (the CPU build, in its venv); the blueprint set from seeds, a tag or the store's eval
split; the run stored in the store. An engine that cannot start and an empty set are clear errors.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from codesearch_core.cli import main
from codesearch_core.corpora.blueprints import load_seed_blueprints
from codesearch_core.engines import proposal_to_json
from codesearch_core.ingest import ensure_seeded
from codesearch_core.models import Proposal
from codesearch_core.store import Store
from tests.vllm_support.env import skip_reason, tiny_model_dir, vllm_python

TAG = "adversarial:case"


def tagged() -> list[Any]:
    return [bp for bp in load_seed_blueprints() if TAG in bp.tags and bp.plan is None]


class OracleServer:
    """An OpenAI-compatible server that serves one model and answers each prompt with the
    reference call of the seed whose intent it holds, as `tool_calls` (vLLM's tool parser's
    layout)."""

    def __init__(self, model: str = "oracle-7b") -> None:
        by_intent = {bp.intent: bp for bp in load_seed_blueprints()}
        self.requests = 0

        class Handler(BaseHTTPRequestHandler):
            def _send(self, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._send({"object": "list", "data": [{"id": model, "object": "model"}]})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests += 1
                text = " ".join(str(m.get("content", "")) for m in body["messages"])
                bp = next(b for intent, b in by_intent.items() if intent in text)
                call = bp.reference_call
                message = {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_0",
                            "type": "function",
                            "function": {
                                "name": call.name.value,
                                "arguments": json.dumps(dict(call.arguments)),
                            },
                        }
                    ],
                }
                choices = [
                    {"index": i, "message": message, "finish_reason": "tool_calls"}
                    for i in range(body.get("n", 1))
                ]
                self._send({"choices": choices, "usage": {"prompt_tokens": 9}})

            def log_message(self, format: str, *args: Any) -> None:
                pass

        server = self
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def oracle() -> Iterator[OracleServer]:
    s = OracleServer()
    yield s
    s.close()


def stored_runs(db: Path) -> list[Any]:
    with Store(db) as store:
        return [store.evals.get(r.run_id) for r in store.evals.list()]


def test_mutations_on_the_seeds_print_per_tag_scores_and_store_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "s.duckdb"
    code = main(["eval", "--engine", "mutations", "--blueprints", "seeds", "--json",
                 "--db", str(db)])  # fmt: skip
    assert code == 0
    out, err = capsys.readouterr()
    printed = json.loads(out)
    seeds = [bp for bp in load_seed_blueprints() if bp.plan is None]
    assert printed["overall"]["blueprints"] == len(seeds)
    # The plans are left out, and said so: on stderr with the other progress lines, and in the JSON.
    plans = len(load_seed_blueprints()) - len(seeds)
    assert f"to each of {len(seeds)} blueprint(s) of seeds" in err
    assert f"{plans} plan blueprint(s) left out: a plan's reference is several calls" in err
    assert printed["left_out"]["plan"]["blueprints"] == plans
    assert TAG in printed["by_tag"] and "python" in printed["by_language"]
    (run,) = stored_runs(db)
    assert run.run_id == printed["run_id"] and run.engine == "mutations"
    assert len(run.items) == len(seeds)


def test_an_openai_compatible_server_is_evaluated_like_any_engine(
    oracle: OracleServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "s.duckdb"
    code = main(["eval", "--engine", "openai", "--base-url", oracle.url, "--model", "oracle-7b",
                 "--blueprints", f"tag:{TAG}", "--n", "2", "--json", "--db", str(db)])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    overall = json.loads(capsys.readouterr().out)["overall"]
    assert overall["blueprints"] == len(tagged()) == oracle.requests
    assert overall["answers"] == 2 * len(tagged())
    assert overall["mean_reward"] == pytest.approx(1.0) and overall["pass_at_k"] == 1.0
    (run,) = stored_runs(db)
    assert (run.engine, run.model, run.n) == ("openai", "oracle-7b", 2)
    assert run.blueprints == f"seeds tag:{TAG}"


def test_a_server_that_is_down_or_serves_another_model_is_a_clear_error(
    oracle: OracleServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "s.duckdb"
    with socket_closed() as dead:
        code = main(["eval", "--engine", "openai", "--base-url", dead, "--model", "m",
                     "--db", str(db)])  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: cannot reach {dead}/models") and "Is the server running" in err
    code = main(["eval", "--engine", "openai", "--base-url", oracle.url, "--model", "other",
                 "--db", str(db)])  # fmt: skip
    assert code == 2
    assert "serves oracle-7b, not 'other'" in capsys.readouterr().err
    assert oracle.requests == 0 and not db.exists()  # nothing ran, nothing was stored


class socket_closed:
    """A base URL where nothing listens."""

    def __enter__(self) -> str:
        import socket

        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        return f"http://127.0.0.1:{port}/v1"

    def __exit__(self, *_: object) -> None:
        pass


def test_imported_answers_and_the_eval_split_of_the_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "s.duckdb"
    with Store(db) as store:
        ensure_seeded(store)
    held = [bp.id for bp in tagged()]
    assert main(["db", "split", "eval", *held, "--db", str(db)]) == 0
    assert f"{len(held)} of {len(held)} blueprint(s) moved to eval" in capsys.readouterr().out
    answers = tmp_path / "answers.jsonl"
    lines = [
        proposal_to_json(Proposal(bp.id, "my-model", "m1", bp.reference_call.to_json(),
                                  bp.reference_call, True))
        for bp in tagged()
    ]  # fmt: skip
    answers.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code = main(["eval", "--engine", "import", "--from", str(answers), "--blueprints",
                 "split:eval", "--db", str(db), "--json"])  # fmt: skip
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["overall"]["blueprints"] == len(held)
    assert summary["overall"]["mean_reward"] == pytest.approx(1.0)


def test_an_empty_set_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "s.duckdb"
    with Store(db) as store:
        ensure_seeded(store)
    code = main(["eval", "--engine", "mutations", "--blueprints", "split:eval", "--db", str(db)])
    assert code == 2
    assert "nothing to evaluate: no blueprint in store split:eval" in capsys.readouterr().err
    assert main(["eval", "--engine", "mutations", "--blueprints", "tag:no-such-tag"]) == 2
    assert "nothing to evaluate" in capsys.readouterr().err
    with Store(db) as store:
        assert store.evals.list() == []


def test_stored_runs_are_listed_and_deleted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "s.duckdb"
    assert main(["eval", "--list", "--db", str(db)]) == 0
    assert "no eval runs stored yet" in capsys.readouterr().out
    assert (
        main(["eval", "--engine", "mutations", "--blueprints", f"tag:{TAG}", "--db", str(db)]) == 0
    )
    (run,) = stored_runs(db)
    capsys.readouterr()
    assert main(["eval", "--list", "--db", str(db)]) == 0
    listed = capsys.readouterr().out
    assert listed.startswith(f"{run.run_id}\t{run.label}\tmean reward 0.")
    assert main(["eval", "--delete", run.run_id, "--db", str(db)]) == 0
    assert stored_runs(db) == []
    assert main(["eval", "--delete", run.run_id, "--db", str(db)]) == 2
    assert f"no eval run {run.run_id!r}" in capsys.readouterr().err
    assert main(["eval", "--engine", "mutations", "--n", "65", "--db", str(db)]) == 2
    assert "--n must be 1 to 64" in capsys.readouterr().err


@pytest.mark.vllm
@pytest.mark.skipif(vllm_python() is None, reason=skip_reason())
def test_vllm_that_cannot_start_is_a_clear_error_and_a_tiny_model_is_evaluated(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    from tests.engines.test_engines_vllm import bare_env, readme_vpy_command, run_cli

    model = tiny_model_dir(tmp_path_factory)
    db = tmp_path / "s.duckdb"
    # The README's CPU-venv command, with PATH as a user has it (no project .venv/bin: the venv's
    # own rg and ast-grep run the calls) and vLLM's defaults for logging (INFO, on stderr).
    command = readme_vpy_command("-m codesearch_core eval --engine vllm --model /tmp/tiny")
    assert f"tag:{TAG}" in command and "--json" in command
    args = [str(model) if word == "/tmp/tiny" else word for word in command[1:]]
    args += ["--db", str(db)]
    # vLLM's `auto` thread binding wants one NUMA node per worker: the engine cannot start.
    proc = run_cli(args, bare_env(VLLM_CPU_OMP_THREADS_BIND="auto"))
    assert proc.returncode == 2
    assert "Not enough allowed NUMA nodes" in proc.stderr.strip().splitlines()[-1]
    assert not db.exists()
    proc = run_cli(args, bare_env())
    assert proc.returncode == 0, proc.stderr[-4000:]
    # stdout is exactly one JSON document: vLLM's log lines went to stderr
    summary = json.loads(proc.stdout)
    assert "INFO" in proc.stderr
    assert summary["overall"]["blueprints"] == len(tagged())
    assert summary["overall"]["answers"] == len(tagged())  # random weights: graded, not good
    (run,) = stored_runs(db)
    assert (run.engine, run.model) == ("vllm", str(model))
    # every answer with a call was run by the tools, not failed for the machine
    for item in run.items:
        for answer in item.answers:
            assert "not found on PATH" not in (answer.error or ""), answer.error


def test_a_missing_tool_or_corpus_stops_eval_before_any_call_and_stores_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from codesearch_core.tools import binaries

    db = tmp_path / "s.duckdb"
    args = ["eval", "--engine", "mutations", "--blueprints", f"tag:{TAG}", "--db", str(db)]
    # rg missing, as on a PATH without the project's venv
    monkeypatch.setenv("CODESEARCH_RG", str(tmp_path / "not-installed"))
    binaries.clear_caches()
    try:
        assert main(args) == 2
    finally:
        monkeypatch.delenv("CODESEARCH_RG")
        binaries.clear_caches()
    err = capsys.readouterr().err
    # the reason, said before the engine was asked (no "asking mutations:…" line)
    assert "CODESEARCH_RG=" in err and "asking" not in err
    assert not db.exists()
    monkeypatch.setenv("CODESEARCH_CORPORA", str(tmp_path / "no-corpora"))
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "not found in" in err and "codesearch corpus add" in err
    assert not db.exists()


def test_imported_answers_in_a_models_own_markers_score_and_an_empty_one_counts_unparsed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What a user met: a Hermes-style model's own `<tool_call>{...}</tool_call>` answers parsed
    0%, and one empty answer stopped the whole import."""
    db = tmp_path / "s.duckdb"
    seeds = tagged()
    empty, *called = seeds
    answers = tmp_path / "answers.jsonl"
    written = [
        # As SmolLM2 wrote them after SFT: markers, no newlines, no declared format.
        {"blueprint_id": bp.id, "raw_text": f"<tool_call>{bp.reference_call.to_json()}</tool_call>"}
        for bp in called
    ]
    written.append({"blueprint_id": empty.id, "raw_text": ""})
    answers.write_text("".join(json.dumps(w) + "\n" for w in written), encoding="utf-8")
    code = main(["eval", "--engine", "import", "--from", str(answers), "--blueprints",
                 f"tag:{TAG}", "--db", str(db), "--json"])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    overall = json.loads(capsys.readouterr().out)["overall"]
    assert (overall["blueprints"], overall["answers"]) == (len(seeds), len(seeds))
    assert overall["unparsed"] == 1
    assert overall["parse_rate"] == pytest.approx(len(called) / len(seeds))
    assert overall["mean_reward"] == pytest.approx(len(called) / len(seeds))
    (run,) = stored_runs(db)
    (kept,) = [i for i in run.items if i.blueprint_id == empty.id]
    assert kept.answers[0].reward == 0.0 and kept.answers[0].error.startswith("empty output")
