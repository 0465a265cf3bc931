"""The vLLM engine on the REAL vLLM (CPU build), with a tiny random-weight Qwen2 built on the fly.

Each test runs a snippet inside the vLLM venv (`tests/vllm_support/env.py`) that imports this
repository's engine code, generates, and prints one JSON line of results that the test asserts on.
With random weights the grammar is the only thing that can make output a valid call, so valid calls
prove the structured-output wiring end to end. The tiny model's chat template is Qwen2.5's Hermes
tool template: the tools reach it through `tools=`, and it answers in `<tool_call>` syntax, which
vLLM's own `hermes` parser reads back to the same calls as ours.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from codesearch_core.corpora.blueprints import load_seed_blueprints
from codesearch_core.engines.base import SamplingSettings
from codesearch_core.engines.openai_engine import OpenAIEngine, OpenAISettings
from codesearch_core.engines.prompt import PromptConfig
from codesearch_core.engines.repair import LENGTH_ERROR
from codesearch_core.models import Proposal
from codesearch_core.tools.schemas import validate_tool_call
from tests.ctrl_c_support import mapped_shared_memory, session_processes, wait_for
from tests.vllm_support.env import (
    run_in_vllm_env,
    skip_reason,
    tiny_model_dir,
    vllm_python,
    vllm_tmpdir,
)

REPO = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.vllm,
    pytest.mark.skipif(vllm_python() is None, reason=skip_reason()),
]

MARK = "RESULT "

#: Shared by the snippets: a short prompt leaves most of the tiny model's 2048-token context for
#: output, since random weights fill strings up to their maxLength before closing them.
PRELUDE = """
import json, os
from codesearch_core.corpora.blueprints import load_seed_blueprints
from codesearch_core.engines.base import SamplingSettings, proposal_to_dict
from codesearch_core.engines.prompt import PromptConfig
from codesearch_core.engines.vllm_engine import VllmSettings, get_vllm_engine, shutdown_vllm_engine
MODEL = os.environ["TINY_MODEL"]
SHORT_PROMPT = PromptConfig(rules=(), schema="none")
def report(value):
    print("RESULT " + json.dumps(value), flush=True)
def finish():
    # vLLM makes a normal interpreter exit take seconds more; the result is already printed.
    shutdown_vllm_engine()
    os._exit(0)
"""


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_model_dir(tmp_path_factory)


def run_snippet(
    code: str, model: Path, *, tp: int = 1, in_process: bool = False, timeout: float = 400
) -> Any:
    proc = run_in_vllm_env(
        PRELUDE + code,
        env_extra={"TINY_MODEL": str(model)},
        tensor_parallel_size=tp,
        in_process=in_process,
        timeout=timeout,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith(MARK)]
    assert proc.returncode == 0 and lines, (
        f"snippet failed (rc={proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    )
    return json.loads(lines[-1][len(MARK) :])


STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
HERMES = re.compile(r"\A<tool_call>\n(.*)\n</tool_call>\Z", re.DOTALL)


def assert_valid_or_cut(
    proposals: list[dict[str, Any]],
    *,
    markers: bool | None = True,
    compact: bool = True,
    loose_schema: bool = False,
    require_valid: bool = True,
) -> None:
    """Guided decoding: every finished output is a valid call; the rest were cut at max_tokens.

    `markers`: the text is a Hermes `<tool_call>` block (the model's own syntax; None: it may be,
    when a server's parser gave up on it and handed it back as content); `compact`: the
    grammar allowed no whitespace outside strings. `loose_schema`: the server held the arguments
    to the exported tools' parameters, which leave out some of our schema (ast-grep's pattern or
    rule, string lengths): a parsed call our schema refuses is then allowed, with the reason.
    `require_valid`: at least one call must be valid (False: a context too short may cut them all).
    """
    for p in proposals:
        if p["valid"]:
            assert validate_tool_call(p["call"]) is None, p
            assert p["finish_reason"] in ("stop", "tool_calls"), p
            body = p["raw_text"]
            found = HERMES.match(body)
            if markers is not None:
                assert bool(found) == markers, body
            if found:
                body = found.group(1)
            elif markers is None:
                # read by the server's parser: the text is its re-serialised call, not the model's
                continue
            if compact:
                assert not re.search(r"\s", STRING.sub('""', body)), p["raw_text"]
            assert set(p["repairs"]) <= {
                "control characters in strings",
                "pcre2 set: the pattern uses a look-around or back-reference",
            }, p
        elif loose_schema and p["finish_reason"] != "length":
            assert p["error"].startswith("arguments"), p
        else:
            assert (p["error"], p["finish_reason"]) == (LENGTH_ERROR, "length"), p
            assert p["raw_text"], p
    assert any(p["valid"] for p in proposals) or not require_valid, proposals


def test_guided_decoding_batch_and_n(tiny_model: Path) -> None:
    result = run_snippet(
        """
from codesearch_core.engines.prompt import build_messages
from codesearch_core.tools import OPENAI_TOOLS
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
from vllm.tool_parsers import ToolParserManager
bps = load_seed_blueprints()[:6]
settings = VllmSettings(model=MODEL, tensor_parallel_size=1, max_model_len=2048, enforce_eager=True)
engine = get_vllm_engine(settings)
seen = []
proposals = engine.propose(bps, n=2, prompt=SHORT_PROMPT, on_progress=lambda d, t: seen.append([d, t]),
                           settings=SamplingSettings(temperature=1.0, max_tokens=1536, seed=11))
# What the model saw: its own template, rendered with the tools.
tok = engine._llm.get_tokenizer()
messages = build_messages(bps[0].intent, SHORT_PROMPT, template_tools=True)
rendered = tok.apply_chat_template(messages, tools=OPENAI_TOOLS, tokenize=False, add_generation_prompt=True)
# vLLM's own reader of the format, as `vllm serve --tool-call-parser hermes` uses it.
request = ChatCompletionRequest(model="tiny", messages=[{"role": "user", "content": "."}], tools=OPENAI_TOOLS)
theirs = []
for p in proposals:
    info = ToolParserManager.get_tool_parser("hermes")(tok).extract_tool_calls(p.raw_text, request)
    theirs.append([[c.function.name, json.loads(c.function.arguments)] for c in info.tool_calls]
                  if info.tools_called else None)
# A prompt the context cannot hold fails its blueprint only: found by counting its tokens first,
# or, with no count, when vLLM refuses the batch (then each is asked again alone).
from dataclasses import replace
mixed = [bps[0], replace(bps[2], id="too-long", intent="find the code " * 800), bps[1]]
brief = SamplingSettings(temperature=1.0, max_tokens=16, seed=1)
counted = engine.propose(mixed, n=2, prompt=SHORT_PROMPT, settings=brief)
limit, engine.max_model_len = engine.max_model_len, None
refused = engine.propose(mixed, n=2, prompt=SHORT_PROMPT, settings=brief)
report({"limit": limit, "counted": [proposal_to_dict(p) for p in counted],
        "refused": [proposal_to_dict(p) for p in refused],"ids": [b.id for b in bps], "same": get_vllm_engine(settings) is engine, "progress": seen,
        "notices": list(engine.notices), "dtype": str(engine._llm.llm_engine.model_config.dtype),
        "rendered": rendered, "rendered_tokens": len(tok(rendered, add_special_tokens=False)["input_ids"]),
        "theirs": theirs, "proposals": [proposal_to_dict(p) for p in proposals]})
finish()
""",
        tiny_model,
        in_process=True,
    )
    proposals = result["proposals"]
    # (b) one batch: every blueprint, n=2 each, in blueprint order, with its own prompt
    assert [p["blueprint_id"] for p in proposals] == [i for i in result["ids"] for _ in range(2)]
    assert result["progress"] == [[6, 6]]
    for p in proposals:
        assert (p["engine"], p["model"]) == ("vllm", str(tiny_model))
        assert p["sampling"] == {
            "n": 2,
            "temperature": 1.0,
            "top_p": 0.95,
            "max_tokens": 1536,
            "seed": 11,
            "batch_size": 6,
            "tool_format": "hermes",
        }
        assert p["prompt_tokens"] > 0 and p["completion_tokens"] > 0
    intents = {b.id: b.intent for b in load_seed_blueprints()}
    for p in proposals:
        assert json.loads(p["prompt"])[-1]["content"] == intents[p["blueprint_id"]]
    # (a) the tools went through the model's chat template: the prompt the engine counted is
    # the template's rendering with the tools, not a home-made paragraph
    rendered = result["rendered"]
    assert "<tools>" in rendered and '"name": "ripgrep_search"' in rendered
    assert rendered.endswith("<|im_start|>assistant\n")
    assert proposals[0]["prompt_tokens"] == result["rendered_tokens"]
    # (b) the answer is in the model's own syntax, held to the schema by the grammar
    assert_valid_or_cut(proposals)
    # (c) vLLM's hermes parser reads the same calls (it is strict JSON: it gives up on the raw
    # control characters random weights write, which our reader repairs)
    compared = 0
    for p, theirs in zip(proposals, result["theirs"], strict=True):
        if p["valid"] and not p["repairs"]:
            assert theirs == [[p["call"]["name"], p["call"]["arguments"]]], (p, theirs)
            compared += 1
    assert compared >= 1, result["theirs"]
    # (d) dtype auto kept the stored float32 (vLLM's CPU default would have run bfloat16)
    assert result["dtype"] == "torch.float32"
    assert result["same"] is True
    # (e) a prompt too long for the context: one invalid proposal for it, the others generated
    assert result["limit"] == 2048
    for key, error in (
        ("counted", "prompt too long for the model: "),
        ("refused", "vLLM refused the prompt: "),
    ):
        rows = result[key]
        assert [r["blueprint_id"] for r in rows] == [
            result["ids"][0], result["ids"][0], "too-long", result["ids"][1], result["ids"][1]
        ], key  # fmt: skip
        long = rows[2]
        assert (long["valid"], long["raw_text"], long["call"]) == (False, "", None), long
        assert long["error"].startswith(error), long
        assert "2048" in long["error"], long
        if key == "counted":
            assert long["prompt_tokens"] > 2048, long
        for r in rows[:2] + rows[3:]:
            assert r["finish_reason"] in ("stop", "length") and r["completion_tokens"] > 0, r


def test_default_tensor_parallel_2_runs_and_switching_settings_frees_the_old_engine(
    tiny_model: Path,
) -> None:
    result = run_snippet(
        """
import psutil
from dataclasses import replace
def vllm_children():
    return {p.pid: p.name() for p in psutil.Process().children(recursive=True)
            if "VLLM" in p.name() or "Worker" in p.name()}
def alive(pids):
    out = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                out.append(pid)
        except psutil.NoSuchProcess:
            pass
    return out
bps = load_seed_blueprints()[:2]
sampling = SamplingSettings(temperature=1.0, max_tokens=64, seed=3)
settings = VllmSettings(model=MODEL, max_model_len=2048, dtype="float32", enforce_eager=True)
first = get_vllm_engine(settings)
tp = first._llm.llm_engine.vllm_config.parallel_config.tensor_parallel_size
before = vllm_children()
out1 = first.propose(bps, n=1, prompt=SHORT_PROMPT, settings=sampling)
second = get_vllm_engine(replace(settings, tensor_parallel_size=1))
old_still_alive = alive(before)
out2 = second.propose(bps, n=1, prompt=SHORT_PROMPT, settings=sampling)
try:
    first.propose(bps, n=1)
    reuse_error = ""
except Exception as err:
    reuse_error = str(err)
report({"default_tp": settings.tensor_parallel_size, "tp": tp, "workers": sorted(before.values()),
        "first_shut_down": first.is_shut_down, "old_still_alive": old_still_alive,
        "second_is_new": second is not first, "reuse_error": reuse_error,
        "out1": [proposal_to_dict(p) for p in out1], "out2": [proposal_to_dict(p) for p in out2]})
finish()
""",
        tiny_model,
        tp=2,
    )
    # (c) the default really is tp=2, and two tensor-parallel workers ran it
    assert result["default_tp"] == 2 and result["tp"] == 2
    assert sum("Worker" in name for name in result["workers"]) == 2, result["workers"]
    assert len(result["out1"]) == 2
    # (d) asking for other settings shut the old engine down: its processes are gone
    assert result["first_shut_down"] is True
    assert result["old_still_alive"] == []
    assert result["second_is_new"] is True
    assert len(result["out2"]) == 2
    assert "shut down" in result["reuse_error"]
    for p in result["out1"] + result["out2"]:
        assert p["valid"] or p["error"] == LENGTH_ERROR


# --- (e) `vllm serve` driven by the OpenAI-compatible engine --------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def vllm_server(tiny_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    python = vllm_python()
    assert python is not None
    port = free_port()
    log = tmp_path_factory.mktemp("vllm-serve") / "server.log"
    # The README's server recipe as a user runs it: tp=2 on a CPU machine with no variables set
    # (vLLM's own defaults do not start there: NUMA binding, then the memory check).
    command = readme_vpy_command("-m codesearch_core serve-model --model /tmp/tiny")
    assert command[:2] == ["codesearch_core", "serve-model"] and "--tp" in command
    swap = {"/tmp/tiny": str(tiny_model), "8000": str(port)}
    args = [str(python), "-m", *[swap.get(word, word) for word in command]]
    # for the tests only: the name the engine asks for, and no torch.compile (minutes on a CPU)
    args += ["--", "--served-model-name", "tiny", "--enforce-eager"]
    with log.open("w") as out:
        proc = subprocess.Popen(
            args,
            env=bare_env(),
            cwd=str(REPO),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 300
        while True:
            if proc.poll() is not None:
                pytest.fail(f"vllm serve exited with {proc.returncode}:\n{log.read_text()[-6000:]}")
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"vllm serve not healthy after 300 s:\n{log.read_text()[-6000:]}")
            time.sleep(1)
        yield base_url
    finally:
        if proc.poll() is None:
            # The API server only: it drains and stops its engine; signalling the whole group
            # races that shutdown (and leaks shared memory).
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        served = log.read_text(errors="replace")
        assert "leaked shared_memory" not in served, served[-3000:]


@pytest.mark.parametrize(
    ("schema_mode", "markers", "compact"),
    [
        # tools + tool_choice required: the server's parser answers in `tool_calls`
        ("tools", False, False),
        # tools + a structural tag for compact JSON between the model's markers; where vLLM's
        # strict parser gives up on the random model's control characters, the text comes back
        ("tools_compact", None, True),
        # the json fallback: the schema on the whole answer
        ("response_format", False, True),
    ],
)
def test_openai_engine_against_vllm_serve_with_the_schema_enforced(
    vllm_server: str, schema_mode: str, markers: bool | None, compact: bool
) -> None:
    engine = OpenAIEngine(
        OpenAISettings(
            base_urls=(vllm_server,), model="tiny", schema_mode=schema_mode, max_concurrency=4
        )
    )
    blueprints = load_seed_blueprints()[:4]
    proposals: list[Proposal] = engine.propose(
        blueprints,
        n=2,
        prompt=PromptConfig(rules=(), schema="none"),
        settings=SamplingSettings(temperature=1.0, max_tokens=1536, seed=5),
    )
    assert [p.blueprint_id for p in proposals] == [b.id for b in blueprints for _ in range(2)]
    rows = [
        {
            "valid": p.valid,
            "call": p.call.to_dict() if p.call else None,
            "finish_reason": p.finish_reason,
            "repairs": list(p.repairs),
            "error": p.error,
            "raw_text": p.raw_text,
        }
        for p in proposals
    ]
    assert_valid_or_cut(rows, markers=markers, compact=compact, loose_schema=schema_mode == "tools")
    assert all(p.prompt_tokens and p.prompt_tokens > 0 for p in proposals)
    if schema_mode != "response_format":
        # the server's hermes parser read the calls: the text we keep is the call itself
        assert all(p.repairs == () or "control" in " ".join(p.repairs) for p in proposals)


def user_path() -> str:
    """PATH as a user's shell has it: without the project's .venv/bin, which `uv run pytest` puts
    first (and which holds rg and ast-grep: a command that needs them must find its own)."""
    venv_bins = {str(Path(sys.executable).parent), str(REPO / ".venv" / "bin")}
    entries = os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep)
    return os.pathsep.join(e for e in entries if e.rstrip("/") not in venv_bins)


def _in_own_session(
    python: Path, args: list[str], stdout: Any, stderr: Any
) -> subprocess.Popen[bytes]:
    """`codesearch ARGS` in the vLLM venv, in its own session and process group, as a
    terminal's foreground job or a service manager starts it: what a signal to the group reaches,
    and what must be gone after (`session_processes`)."""
    return subprocess.Popen(
        [str(python), "-m", "codesearch_core", *args],
        env=bare_env(),
        cwd=str(REPO),
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=stderr,
        start_new_session=True,
    )


def bare_env(**extra: str) -> dict[str, str]:
    """What a user's shell has: no vLLM variables, the repository on PYTHONPATH (as the README
    says), the user's PATH; TMPDIR only so that vLLM's rendezvous files (`vllm_dist_*`, which it
    never removes) land in a folder the test session removes."""
    return {
        "PATH": user_path(),
        "HOME": os.environ.get("HOME", "/root"),
        "PYTHONPATH": str(REPO),
        "TMPDIR": vllm_tmpdir(),
        **extra,
    }


def run_cli(
    args: list[str], env: dict[str, str], timeout: float = 500
) -> subprocess.CompletedProcess[str]:
    python = vllm_python()
    assert python is not None
    return subprocess.run(
        [str(python), "-m", "codesearch_core", *args],
        env=env,
        cwd=str(Path(__file__).resolve().parents[2]),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


#: What vLLM logs (on stdout or stderr) when its processes are not shut down in time.
UNCLEAN = ("force kill", "SIGKILL", "leaked shared_memory", "Traceback")


def readme_vpy_command(marker: str) -> list[str]:
    """The models page's one command (in the vLLM venv) holding `marker`, as arguments after `-m`
    (docs/vllm.md, where the README sends a user who runs a model)."""
    readme = (REPO / "docs" / "vllm.md").read_text(encoding="utf-8")
    lines = [line.strip() for line in readme.splitlines() if marker in line]
    assert len(lines) == 1, lines
    words = lines[0].split("#")[0].split()
    assert words[:3] == ["PYTHONPATH=.", "$VPY", "-m"], words  # no other variables
    return words[3:]


def readme_cpu_command() -> list[str]:
    """The README's command for the tiny model on a CPU machine, as arguments after `-m`."""
    return readme_vpy_command("-m codesearch_core propose --engine vllm --model /tmp/tiny")


def test_the_readmes_cpu_command_runs_every_seed_with_tp_2_on_2_cores_and_exits_cleanly(
    tiny_model: Path, tmp_path: Path
) -> None:
    out = tmp_path / "proposals.jsonl"
    command = readme_cpu_command()
    assert command[:5] == ["codesearch_core", "propose", "--engine", "vllm", "--model"]
    assert "--max-model-len" not in command and "--ids" not in command
    args = [
        str(tiny_model) if word == "/tmp/tiny" else str(out) if word == "/tmp/p.jsonl" else word
        for word in command[1:]
    ]
    proc = run_cli(args, bare_env())
    assert proc.returncode == 0, proc.stderr[-6000:]
    seeds = [b.id for b in load_seed_blueprints()]
    # JSON Lines end at "\n" only: str.splitlines also splits at U+2028, U+0085 and the like,
    # which a random model's text holds raw inside its JSON strings (seen in CI).
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").split("\n") if line]
    # every seed, one proposal each (n=1), in order: a prompt too long for the context failed
    # only its own blueprint
    assert [r["blueprint_id"] for r in rows] == seeds
    assert {(r["engine"], r["model"]) for r in rows} == {("vllm", str(tiny_model))}
    too_long = [r for r in rows if not r["raw_text"]]
    for r in too_long:
        assert r["error"].startswith("prompt too long for the model: "), r
        assert r["prompt_tokens"] >= 2048, r
    generated = [r for r in rows if r["raw_text"]]
    assert generated and all(r["prompt_tokens"] < 2048 for r in generated)
    assert_valid_or_cut(generated, require_valid=False)
    # stdout is the summary alone: vLLM's log lines go to stderr
    assert proc.stdout.strip().startswith(f"{len(seeds)} proposals ("), proc.stdout[:2000]
    assert len(proc.stdout.strip().splitlines()) == 1, proc.stdout[:2000]
    if too_long:
        assert f"{len(too_long)} of them got no answer from the model" in proc.stderr
    # stderr is a pipe here: no progress line (it is drawn on a terminal only)
    assert f"{len(seeds)}/{len(seeds)} blueprints" not in proc.stderr
    # the machine's defaults and the model's own context length were chosen, and said
    assert "note: CPU: 2 workers bound to cores" in proc.stderr
    assert "note: CPU: KV cache" in proc.stderr
    assert "note: max model length 2048, the model's own limit" in proc.stderr
    # a clean exit: the engine was shut down in time, nothing force-killed, no shared memory
    # leaked
    assert "[shutdown] MPClient: complete" in proc.stdout + proc.stderr
    for stream in (proc.stdout, proc.stderr):
        for bad in UNCLEAN:
            assert bad.lower() not in stream.lower(), (bad, stream[-6000:])


def test_a_failing_engine_start_shows_the_engine_processs_own_error(
    tiny_model: Path, tmp_path: Path
) -> None:
    # The first failure: vLLM's `auto` thread binding wants one NUMA node per worker.
    proc = run_cli(
        ["propose", "--engine", "vllm", "--model", str(tiny_model), "--max-model-len", "2048",
         "--ids", load_seed_blueprints()[0].id, "--out", str(tmp_path / "p.jsonl")],
        bare_env(VLLM_CPU_OMP_THREADS_BIND="auto"),
    )  # fmt: skip
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert "Not enough allowed NUMA nodes" in last, proc.stderr[-4000:]
    assert "set VLLM_CPU_OMP_THREADS_BIND to one core list per worker" in last
    assert "usual suspects" not in last


# --- Ctrl-C during start-up ----------------------------------------------------------------------


#: When the Ctrl-C comes: the engine process importing vLLM (the window where vLLM 0.32 swallowed
#: the KeyboardInterrupt and then waited 600 s for it), and the tensor-parallel workers loading
#: and warming up the model (or generating, on a fast machine). SIGTERM, and the other moments:
#: `test_a_signal_at_any_moment_stops_the_run_and_its_engine_within_the_grace`.
CTRL_C_MOMENTS = (("engine", 1.0), ("workers", 12.0))


@pytest.mark.parametrize(("stage", "after_s"), CTRL_C_MOMENTS)
def test_ctrl_c_at_any_moment_of_start_up_exits_130_and_leaves_nothing(
    tiny_model: Path, tmp_path: Path, stage: str, after_s: float
) -> None:
    python = vllm_python()
    assert python is not None
    err = tmp_path / "stderr.txt"
    args = ["propose", "--engine", "vllm", "--model", str(tiny_model), "--tp", "2",
            "--ids", *[b.id for b in load_seed_blueprints()[:2]], "--out", str(tmp_path / "p.jsonl")]  # fmt: skip
    with err.open("w") as stderr:
        proc = _in_own_session(python, args, subprocess.DEVNULL, stderr)
    try:
        # vLLM's processes besides the command (they rename themselves VLLM::EngineCore,
        # VLLM::Worker_TP0…) and multiprocessing's resource tracker
        def spawned() -> dict[int, str]:
            return {
                pid: cmd
                for pid, cmd in session_processes(proc.pid).items()
                if "resource_tracker" not in cmd and pid != proc.pid
            }

        shm: set[str] = set()

        def reached() -> bool:
            shm.update(mapped_shared_memory(iter(session_processes(proc.pid))))
            return len(spawned()) >= (1 if stage == "engine" else 3) or proc.poll() is not None

        assert wait_for(reached, 400), err.read_text()[-3000:]
        assert proc.poll() is None, f"ended before the Ctrl-C:\n{err.read_text()[-3000:]}"
        wait_for(lambda: bool(shm.update(mapped_shared_memory(iter(spawned())))), after_s)
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
        sent = time.monotonic()
        # A hang check, not a speed one: before the fix it waited 600 s (VLLM_ENGINE_READY_TIMEOUT_S).
        rc = proc.wait(timeout=90)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    log = err.read_text(errors="replace")
    assert rc == 130, (rc, took, log[-4000:])
    assert log.rstrip().endswith("interrupted"), log[-2000:]
    # no process of the command's session is left, and none of its shared memory (the resource
    # tracker, the last to go, unlinks what the engine processes did not)
    assert wait_for(lambda: not session_processes(proc.pid), 20), session_processes(proc.pid)
    # 60 s: on a loaded machine the tracker took over 20 s to unlink them (a CI run saw them
    # still there at 20 s, and gone a little later); a leak stays for good.
    assert wait_for(lambda: not any(Path(name).exists() for name in shm), 60), shm
    print(f"Ctrl-C at {stage}+{after_s}s: exit 130 after {took:.1f}s, shm seen {len(shm)}")


# --- SIGINT / SIGTERM at any moment: the engine's stop path ---------------------------------------


#: What vLLM logs when it force-kills: the engine core after its shutdown timeout, the workers
#: 5 s (VLLM_WORKER_SHUTDOWN_TIMEOUT_SECONDS) + 4 s after they were asked to stop.
VLLM_FORCE_KILLS = ("force killing", "sending SIGKILL", "sending SIGTERM")

#: (command, when, signal, to whom): the evidence of issue 42. `start-up`: the engine core
#: process is starting (what a service manager's SIGTERM met, and ignored while compiling);
#: `generating`: the model loaded and asked (Ctrl-C in `eval` took 76 s); `serving`: a healthy
#: `serve-model` (Ctrl-C gave exit 0). "pid": `kill PID`, "group": Ctrl-C at a terminal.
STOP_MOMENTS = (
    ("propose", "start-up", signal.SIGTERM, "pid"),
    ("eval", "generating", signal.SIGINT, "pid"),
    ("eval", "generating", signal.SIGTERM, "pid"),
    ("serve-model", "serving", signal.SIGTERM, "pid"),
    ("serve-model", "serving", signal.SIGINT, "group"),
)


@pytest.mark.parametrize(("command", "moment", "signum", "to"), STOP_MOMENTS)
def test_a_signal_at_any_moment_stops_the_run_and_its_engine_within_the_grace(
    tiny_model: Path, tmp_path: Path, command: str, moment: str, signum: int, to: str
) -> None:
    from codesearch_core.engines.stopping import STOP_GRACE_S

    python = vllm_python()
    assert python is not None
    port = free_port()
    ids = [b.id for b in load_seed_blueprints()[:24]]
    args = {
        "propose": ["propose", "--engine", "vllm", "--model", str(tiny_model), "--tp", "1",
                    "--ids", *ids[:2], "--out", str(tmp_path / "p.jsonl")],
        "eval": ["eval", "--engine", "vllm", "--model", str(tiny_model), "--tp", "1",
                 "--max-tokens", "1024", "--db", str(tmp_path / "store.duckdb")],
        "serve-model": ["serve-model", "--model", str(tiny_model), "--port", str(port)],
    }[command]  # fmt: skip
    err = tmp_path / "stderr.txt"
    with err.open("w") as stderr:
        proc = _in_own_session(python, args, stderr, stderr)  # the server logs to stdout
    shm: set[str] = set()

    def engine() -> list[int]:
        return [
            pid
            for pid, cmd in session_processes(proc.pid).items()
            if pid != proc.pid and "resource_tracker" not in cmd
        ]

    def reached() -> bool:
        shm.update(mapped_shared_memory(engine()))
        if proc.poll() is not None:
            return True
        if moment == "start-up":
            return bool(engine())
        if moment == "generating":
            return "asking vllm:" in err.read_text(errors="replace")
        try:
            return httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200
        except httpx.TransportError:
            return False

    try:
        assert wait_for(reached, 400), err.read_text()[-3000:]
        assert proc.poll() is None, f"ended before the signal:\n{err.read_text()[-3000:]}"
        # into the moment: the engine core importing vLLM, the batch generating
        wait_for(lambda: bool(shm.update(mapped_shared_memory(engine()))), 2.0)
        shm.update(mapped_shared_memory(engine()))
        if to == "group":
            os.killpg(proc.pid, signum)  # what Ctrl-C in a terminal does
        else:
            proc.send_signal(signum)  # `kill PID`: the command alone
        sent = time.monotonic()
        rc = proc.wait(timeout=STOP_GRACE_S + 30)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    log = err.read_text(errors="replace")
    assert rc == 128 + signum, (rc, took, log[-4000:])
    assert took <= STOP_GRACE_S + 2, (took, log[-4000:])  # the grace docs/vllm.md states
    assert log.rstrip().endswith("interrupted"), log[-2000:]
    # nothing of the run's process group is left, the resource tracker included (the last to go:
    # it unlinks what the engine processes did not), and none of its shared memory
    assert wait_for(lambda: not session_processes(proc.pid), 5), session_processes(proc.pid)
    assert not [name for name in shm if Path(name).exists()], shm
    if command == "serve-model":
        # one SIGTERM to the server alone: vLLM shuts its engine down without force-killing it
        # (a terminal's Ctrl-C used to reach the engine processes too, and vLLM killed them)
        assert not [bad for bad in VLLM_FORCE_KILLS if bad in log], log[-4000:]
    print(f"{command} {moment} {signal.Signals(signum).name} to {to}: exit {rc} after "
          f"{took:.1f}s; shm seen {len(shm)}; force-killed: "
          f"{[line for line in log.splitlines() if 'kill' in line.lower()][-3:]}")  # fmt: skip
