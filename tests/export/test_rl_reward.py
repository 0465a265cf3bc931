"""The RL reward, called the way TRL's GRPOTrainer calls its reward functions: keyword arguments,
a batch of completions (several per prompt), and every other dataset column as a keyword list."""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from export_support import Loader, seed_blueprints

from codesearch_core.corpora.corpus import corpus_root
from codesearch_core.export import PARSE_FAILURE_REWARD, CodeSearchReward, completion_text
from codesearch_core.grading.rewards import score
from codesearch_core.models import Blueprint, ToolCall
from codesearch_core.tools.runner import run_tool_call

GENERATIONS = 4


def _hermes(call: ToolCall) -> str:
    body = {"name": call.name.value, "arguments": dict(call.arguments)}
    return f"<tool_call>\n{json.dumps(body)}\n</tool_call>"


def _graded(call: ToolCall, bp: Blueprint) -> float:
    return score(run_tool_call(call, corpus_root(bp.corpus)), call, bp.expected)[1].total


@pytest.fixture(scope="module")
def reward() -> Any:
    with CodeSearchReward(seed_blueprints(), workers=2) as fn:
        yield fn


def _trl_batch(
    prompts_ds: Any, completions: list[Any], per_prompt: int = GENERATIONS
) -> dict[str, Any]:
    """What GRPOTrainer passes: each prompt repeated once per generation, the extra columns with
    it, plus `completion_ids` and `trainer_state`."""
    rows = [row for row in prompts_ds for _ in range(per_prompt)][: len(completions)]
    extra = {key: [row[key] for row in rows] for key in rows[0] if key != "prompt"}
    return {
        "prompts": [row["prompt"] for row in rows],
        "completions": completions,
        "completion_ids": [[1, 2, 3]] * len(completions),
        "trainer_state": None,
        **extra,
    }


def test_a_trl_batch_over_the_hf_prompts_export_gets_the_graded_rewards(
    seed_exports: Path, hf_load: Loader, reward: CodeSearchReward
) -> None:
    prompts = hf_load(seed_exports / "hf-prompts.jsonl")
    blueprints = {bp.id: bp for bp in seed_blueprints()}
    completions: list[Any] = []
    wanted: list[float] = []
    for row in prompts:
        bp = blueprints[row["blueprint_id"]]
        wrong = bp.counter_calls[0].call if bp.counter_calls else None
        # Conversational completions, as TRL gives them for a conversational dataset.
        completions.append([{"role": "assistant", "content": _hermes(bp.reference_call)}])
        completions.append([{"role": "assistant", "content": "I would grep for it."}])
        completions.append([{"role": "assistant", "content": _hermes(wrong or bp.reference_call)}])
        # A bare JSON call with a model's usual slips (tool alias, `lang`): repaired, as engines do.
        args = dict(bp.reference_call.arguments)
        if "language" in args:
            args["lang"] = args.pop("language")
        name = "sg" if bp.reference_call.name.value == "ast_grep_search" else "rg"
        completions.append(json.dumps({"name": name, "arguments": args}))
        wanted += [_graded(bp.reference_call, bp), PARSE_FAILURE_REWARD]
        wanted += [_graded(wrong or bp.reference_call, bp), _graded(bp.reference_call, bp)]
    got = reward(**_trl_batch(prompts, completions))
    assert got == pytest.approx(wanted)
    assert got[0::GENERATIONS] == pytest.approx([1.0] * prompts.num_rows)
    assert reward.stats["cache_hits"] > 0  # the reference call is run once per blueprint


def test_tool_calls_parsed_by_the_trainer_are_read_too(reward: CodeSearchReward) -> None:
    bp = seed_blueprints()[0]
    function = {"name": bp.reference_call.name.value, "arguments": json.dumps(dict(bp.reference_call.arguments))}  # fmt: skip
    message = {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": function}]}  # fmt: skip
    assert json.loads(completion_text([message]))["arguments"] == dict(bp.reference_call.arguments)
    assert reward(prompts=[None], completions=[[message]], blueprint_id=[bp.id]) == [1.0]


def test_every_call_beyond_the_first_costs_effort_so_a_policy_gets_no_free_tries(
    reward: CodeSearchReward,
) -> None:
    # Only the first call runs: without a charge for the others, a policy could write the right
    # call and a wrong one (or the same call 20,000 times) and keep the full reward.
    bp = next(b for b in seed_blueprints() if b.counter_calls)
    right, wrong = _hermes(bp.reference_call), _hermes(bp.counter_calls[0].call)
    effort = 0.05  # grading.rewards.DEFAULT_WEIGHTS.effort
    got = reward(
        prompts=[None] * 4,
        completions=[
            right,
            right + "\n" + wrong,
            wrong + "\n" + right,
            "\n".join([right] * 20_000),
        ],
        blueprint_id=[bp.id] * 4,
    )
    assert got[0] == pytest.approx(1.0)
    assert got[1] == pytest.approx(1.0 - effort)
    assert got[2] == pytest.approx(_graded(bp.counter_calls[0].call, bp) - effort)
    assert got[3] == pytest.approx(max(-1.0, 1.0 - effort * 19_999))
    # Calls the trainer parsed into `tool_calls` count the same way.
    function = {
        "name": bp.reference_call.name.value,
        "arguments": dict(bp.reference_call.arguments),
    }
    message = {"role": "assistant", "tool_calls": [{"type": "function", "function": function}] * 3}
    assert reward(prompts=[None], completions=[[message]], blueprint_id=[bp.id]) == pytest.approx(
        [1.0 - 2 * effort]
    )


@pytest.mark.parametrize(
    "completion",
    [
        "",
        "not a call at all",
        "<tool_call>\n{broken\n</tool_call>",
        '{"name": "ripgrep_search", "arguments": {"pattern": "("}}',
        '{"name": "rm", "arguments": {"path": "/"}}',
        '{"name": "ripgrep_search", "arguments": {"pattern": "x", "paths": ["../../etc"]}}',
        "[" * 5000,
        None,
        42,
        [],
        [{"role": "user"}],
        {"content": None},
    ],
)
def test_any_completion_gets_a_reward_and_nothing_raises(
    reward: CodeSearchReward, completion: Any
) -> None:
    bp = seed_blueprints()[0]
    [value] = reward(prompts=["p"], completions=[completion], blueprint_id=[bp.id])
    assert isinstance(value, float) and -1.0 <= value <= 1.0
    assert value <= 0.1  # a call that runs nothing right earns at most the parse reward


def test_an_unknown_blueprint_or_a_missing_column_scores_the_parse_failure_reward(
    reward: CodeSearchReward,
) -> None:
    call = _hermes(seed_blueprints()[0].reference_call)
    assert reward(prompts=["p"], completions=[call], blueprint_id=["nope"]) == [
        PARSE_FAILURE_REWARD
    ]
    assert reward(prompts=["p"], completions=[call]) == [PARSE_FAILURE_REWARD]
    assert reward(completions=[call, call], blueprint_id=["a"]) == [PARSE_FAILURE_REWARD] * 2


def test_threads_calling_at_once_get_the_same_rewards_and_each_call_runs_once() -> None:
    blueprints = seed_blueprints()[:4]
    completions = [_hermes(bp.reference_call) for bp in blueprints] * 8
    ids = [bp.id for bp in blueprints] * 8
    results: list[list[float]] = []
    with CodeSearchReward(blueprints, workers=4) as fn:
        threads = [
            threading.Thread(
                target=lambda: results.append(fn(completions=completions, blueprint_id=ids))
            )
            for _ in range(4)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert fn.stats["runs"] == len(blueprints)
        assert fn.stats["completions"] == 4 * len(completions)
    assert results == [[1.0] * len(completions)] * 4


def test_a_reward_over_a_stores_blueprints(tmp_path: Path) -> None:
    from codesearch_core.store.core import Store

    blueprints = seed_blueprints()[:2]
    with Store(tmp_path / "studio.duckdb") as store:
        store.blueprints.add(blueprints)
        fn = CodeSearchReward.from_store(store, [bp.id for bp in blueprints] * 3)
    with fn:
        texts = [_hermes(bp.reference_call) for bp in blueprints]
        assert fn(completions=texts, blueprint_id=[bp.id for bp in blueprints]) == [1.0, 1.0]


def test_runs_are_cached_by_the_corpus_snapshot_so_edited_bytes_are_run_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from codesearch_core.models import Span
    from codesearch_core.tools.schemas import parse_tool_call

    corpora = tmp_path / "corpora"
    (corpora / "mini").mkdir(parents=True)
    source = corpora / "mini" / "app.py"
    source.write_text("x = 1  # TODO: one\n", encoding="utf-8")
    monkeypatch.setenv("CODESEARCH_CORPORA", str(corpora))
    call = parse_tool_call({"name": "ripgrep_search", "arguments": {"pattern": "TODO"}})
    bp = Blueprint("mini-todo", "Find the TODO notes", call, "mini", (Span("app.py", 1, 1),),
                   "python")  # fmt: skip
    text = _hermes(call)
    # A snapshot checked on every batch, and one trusted for an hour.
    with (
        CodeSearchReward([bp], snapshot_ttl_s=0) as fresh,
        CodeSearchReward([bp], snapshot_ttl_s=3600) as trusting,
    ):
        assert fresh(completions=[text], blueprint_id=[bp.id]) == [1.0]
        assert trusting(completions=[text], blueprint_id=[bp.id]) == [1.0]
        assert fresh(completions=[text], blueprint_id=[bp.id]) == [1.0]
        assert (fresh.stats["runs"], fresh.stats["cache_hits"]) == (1, 1)
        # New bytes, a new snapshot id: the call runs again and finds the second note.
        source.write_text("x = 1  # TODO: one\ny = 2  # TODO: two\n", encoding="utf-8")
        assert fresh(completions=[text], blueprint_id=[bp.id])[0] < 1.0
        assert fresh.stats["runs"] == 2
        # Within its time-to-live the snapshot is not looked at again.
        assert trusting(completions=[text], blueprint_id=[bp.id]) == [1.0]
        assert trusting.stats["runs"] == 1


def test_a_machine_that_cannot_run_calls_raises_instead_of_scoring(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from codesearch_core.errors import CorpusError, EnvironmentFault
    from codesearch_core.tools import ToolNotFoundError, binaries

    bp = seed_blueprints()[0]
    # Built without a tool: refused before any training step.
    monkeypatch.setenv("CODESEARCH_RG", str(tmp_path / "not-installed"))
    binaries.clear_caches()
    try:
        with pytest.raises(ToolNotFoundError, match="CODESEARCH_RG"):
            CodeSearchReward([bp])
    finally:
        monkeypatch.delenv("CODESEARCH_RG")
        binaries.clear_caches()
    # A blueprint whose corpus is not on this machine: refused too.
    with pytest.raises(CorpusError, match="nowhere"):
        CodeSearchReward([replace(bp, corpus="nowhere")])
    # The tools gone after it was built (mid-training): the call raises, no 0.0 is handed back.
    with CodeSearchReward([bp], workers=1) as fn:
        for variable in ("CODESEARCH_RG", "CODESEARCH_AST_GREP"):
            monkeypatch.setenv(variable, str(tmp_path / "not-installed"))
        binaries.clear_caches()
        try:
            with pytest.raises(EnvironmentFault, match="not-installed"):
                fn(prompts=["p"], completions=[_hermes(bp.reference_call)], blueprint_id=[bp.id])
        finally:
            for variable in ("CODESEARCH_RG", "CODESEARCH_AST_GREP"):
                monkeypatch.delenv(variable)
            binaries.clear_caches()
        # nothing of the failed run was cached: with the tools back, the call scores
        assert fn(completions=[_hermes(bp.reference_call)], blueprint_id=[bp.id]) == [1.0]
