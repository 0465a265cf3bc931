"""The gym under the real TRL `GRPOTrainer` (`environment_factory=`), in the vLLM venv (torch).

Two GRPO steps of the tiny random Qwen2 (tests/vllm_support) on CPU over four seed blueprints:
the tools are rendered into the prompt, each rollout is an episode, and the reward TRL logs is the
episodes'. Then a scripted model (the reference's calls) in TRL's own tool loop: one message's
parallel calls are one turn, the reward is 1.0; and single-call GRPO's way to show its tools
(`tools=` with `max_tool_calling_iterations=0`). Skipped without the venv (`bash .ci/vllm_venv.sh`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.vllm_support.env import run_in_vllm_env, skip_reason, vllm_python

pytestmark = [
    pytest.mark.vllm,
    pytest.mark.skipif(vllm_python() is None, reason=skip_reason()),
]

MARK = "@@RESULT@@"
#: The four seed blueprints (fixture corpus `webshop`) whose reference scores 1.0.
BLUEPRINTS = (
    "webshop-useeffect-calls-tsx",
    "webshop-todo-fixme-comments",
    "webshop-password-equals-user-backreference",
    "webshop-async-functions-calling-db-query",
)

# Runs with `python -c` in the vLLM venv. The part between the markers is docs/gym_trl.md's.
SNIPPET = r"""
import json, os, sys, time
t0 = time.monotonic()
import codesearch_core.gym.trl_env  # before TRL: it must not need torch or trl
plain_import = not ({"torch", "trl"} & set(sys.modules))

# --- docs/gym_trl.md: begin
from datasets import Dataset
from transformers import AutoTokenizer
from trl import GRPOConfig, GRPOTrainer
from trl.chat_template_utils import qwen2_5_chat_template

from codesearch_core import gym
from codesearch_core.gym.trl_env import component_rewards, environment_factory, trl_dataset

settings = gym.DEFAULT_SETTINGS
found = gym.as_tasks(gym.seed_blueprints())
tasks = [t for t in found.tasks if t.blueprint.id in BLUEPRINTS]
episodes = []  # every finished episode's EpisodeResult, in the order TRL scored them
tokenizer = AutoTokenizer.from_pretrained(os.environ["TINY_MODEL"])
tokenizer.chat_template = qwen2_5_chat_template  # a template TRL knows how to parse tool calls of
components = component_rewards()  # logged as rewards/R_find/mean, ...; weight 0 (no double count)
trainer = GRPOTrainer(
    model=os.environ["TINY_MODEL"],
    processing_class=tokenizer,
    reward_funcs=components,
    train_dataset=Dataset.from_list(trl_dataset(tasks, settings)),
    environment_factory=environment_factory(tasks, settings, log=episodes),
    args=GRPOConfig(
        output_dir=os.environ["OUT_DIR"],
        max_steps=2,
        per_device_train_batch_size=4,  # 2 prompts x 2 generations a step
        num_generations=2,
        max_completion_length=48,
        max_tool_calling_iterations=settings.max_turns,  # the gym refuses a turn past it anyway
        reward_weights=[0.0] * len(components),
        use_cpu=True,
        bf16=False,
        report_to="none",
        save_strategy="no",
        logging_steps=1,
        seed=0,
    ),
)
# --- docs/gym_trl.md: end

def spy(tok, rendered):
    # Records every prompt TRL renders with tools, as the text the model is given.
    original = tok.apply_chat_template
    def apply_chat_template(*args, **kwargs):
        out = original(*args, **kwargs)
        if kwargs.get("tools") and kwargs.get("tokenize") and kwargs.get("add_generation_prompt"):
            ids = out["input_ids"]
            rendered.append(tok.decode(ids[0] if isinstance(ids[0], list) else ids))
        return out
    tok.apply_chat_template = apply_chat_template
rendered = []
spy(trainer.processing_class, rendered)
start = time.monotonic()
trainer.train()
train_s = time.monotonic() - start
history = [h for h in trainer.state.log_history if "rewards/CodeSearchToolEnv/mean" in h]

print(MARK + json.dumps({
    "plain_import": plain_import,
    "train_s": train_s,
    "total_s": time.monotonic() - t0,
    "rendered": rendered,
    "history": history,
    "episodes": [r.info() for r in episodes],
}), flush=True)
os._exit(0)
""".replace("MARK", repr(MARK)).replace("BLUEPRINTS", repr(BLUEPRINTS))


# A scripted model in the real tool loop: TRL's generation is replaced by the reference's calls,
# so the tool-call parsing, the gather of one message's calls and the reward are TRL's own.
SCRIPTED = r"""
import json, os, time
t0 = time.monotonic()
from datasets import Dataset
from transformers import AutoTokenizer
from trl import GRPOConfig, GRPOTrainer
from trl.chat_template_utils import qwen2_5_chat_template

from codesearch_core import gym
from codesearch_core.gym.trl_env import environment_factory, trl_dataset

found = gym.as_tasks(gym.seed_blueprints())
tasks = [t for t in found.tasks if t.blueprint.id in BLUEPRINTS][:2]
script = {}  # intent -> the assistant messages: the reference search and a read in one, then submit
for t in tasks:
    reference = gym.play(gym.ReferencePolicy(), t)
    (search,), (submit,) = reference.turns
    span = t.blueprint.expected[0]
    read = {"name": "read_file", "arguments": {"path": span.path, "start_line": span.start_line,
                                               "end_line": span.end_line}}
    script[t.blueprint.intent] = [[search.call.to_dict(), read], [submit.call.to_dict()]]

tokenizer = AutoTokenizer.from_pretrained(os.environ["TINY_MODEL"])
tokenizer.chat_template = qwen2_5_chat_template
episodes = []
trainer = GRPOTrainer(
    model=os.environ["TINY_MODEL"], processing_class=tokenizer,
    train_dataset=Dataset.from_list(trl_dataset(tasks)),
    environment_factory=environment_factory(tasks, log=episodes),
    args=GRPOConfig(output_dir=os.environ["OUT_DIR"], max_steps=1, per_device_train_batch_size=4,
                    num_generations=2, max_completion_length=2048, max_tool_calling_iterations=4,
                    use_cpu=True, bf16=False, report_to="none", save_strategy="no",
                    logging_steps=1, seed=0),
)

def message(calls):
    blocks = [json.dumps({"name": c["name"], "arguments": c["arguments"]}) for c in calls]
    return "".join(f"<tool_call>\n{b}\n</tool_call>\n" for b in blocks).rstrip("\n") + "<|im_end|>"

def scripted(prompt_ids, images, multimodal_fields, num_generations, has_tool_images=False):
    out = []
    for ids in prompt_ids:
        text = tokenizer.decode(ids)
        (turns,) = [v for k, v in script.items() if k in text]
        done = text.count("<|im_start|>assistant") - 1  # the messages this rollout has written
        reply = message(turns[done]) if done < len(turns) else "Done.<|im_end|>"
        out.append(tokenizer(reply, add_special_tokens=False)["input_ids"])
    return out, None

trainer._generate_single_turn = scripted
trainer.train()
history = [h for h in trainer.state.log_history if "rewards/CodeSearchToolEnv/mean" in h]

# Single-call GRPO (the hf-prompts export, CodeSearchReward): TRL 1.16 renders `tools=` (callables)
# into the prompt; with max_tool_calling_iterations=0 it never runs them, and the completion's
# parsed call is the reward's to run and grade. The scripted completion is the reference call.
from codesearch_core.export import CodeSearchReward
from codesearch_core.export.formats import prompt_messages
from codesearch_core.gym.trl_env import search_tools

calls = {t.blueprint.intent: t.blueprint.reference_call.to_dict() for t in tasks}
def scripted_single(prompt_ids, images, multimodal_fields, num_generations, has_tool_images=False):
    texts = [tokenizer.decode(ids) for ids in prompt_ids]
    replies = [message([v for k, v in calls.items() if k in text]) for text in texts]
    return [tokenizer(r, add_special_tokens=False)["input_ids"] for r in replies], None

rendered = []
def spy(tok):
    original = tok.apply_chat_template
    def apply_chat_template(*args, **kwargs):
        out = original(*args, **kwargs)
        if kwargs.get("tools") and kwargs.get("tokenize") and kwargs.get("add_generation_prompt"):
            rendered.extend(tok.decode(ids) for ids in out["input_ids"])
        return out
    tok.apply_chat_template = apply_chat_template

# The hf-prompts export's rows, less its `tools` column (GRPOTrainer does not render it).
rows = [{"prompt": prompt_messages(t.blueprint.intent), "blueprint_id": t.blueprint.id} for t in tasks]
single_tokenizer = AutoTokenizer.from_pretrained(os.environ["TINY_MODEL"])
single_tokenizer.chat_template = qwen2_5_chat_template
with CodeSearchReward.from_seeds() as reward:
    single = GRPOTrainer(
        model=os.environ["TINY_MODEL"], processing_class=single_tokenizer, reward_funcs=reward,
        tools=search_tools(), train_dataset=Dataset.from_list(rows),
        args=GRPOConfig(output_dir=os.environ["OUT_DIR"] + "-single", max_steps=1,
                        per_device_train_batch_size=4, num_generations=2,
                        max_completion_length=512, max_tool_calling_iterations=0, use_cpu=True,
                        bf16=False, report_to="none", save_strategy="no", logging_steps=1, seed=0),
    )
    spy(single.processing_class)
    single._generate_single_turn = scripted_single
    single.train()
    # What the reward gives the same calls outside TRL, as parsed tool calls.
    direct = reward(
        prompts=[r["prompt"] for r in rows],
        completions=[[{"role": "assistant", "content": "", "tool_calls": [
            {"type": "function", "function": calls[t.blueprint.intent]}]}] for t in tasks],
        blueprint_id=[t.blueprint.id for t in tasks],
    )
single_history = [h for h in single.state.log_history if "rewards/codesearch_reward/mean" in h]
print(MARK + json.dumps({"total_s": time.monotonic() - t0, "history": history,
                         "episodes": [r.to_dict() for r in episodes],
                         "single_history": single_history, "single_rendered": rendered[:1],
                         "direct": direct}), flush=True)
os._exit(0)
""".replace("MARK", repr(MARK)).replace("BLUEPRINTS", repr(BLUEPRINTS))


# Two routed environments (TRL's dict `environment_factory`, the `environment` column), a scripted
# model in TRL's own tool loop (the reference's turns, one message each), no `reward_funcs`: the
# reward is each environment's `get_reward`, logged per route.
ROUTED = (
    r"""
import json, os, time
t0 = time.monotonic()
from codesearch_core import gym

found = {t.blueprint.id: t for t in gym.as_tasks(gym.seed_blueprints()).tasks}
routes = {"search": [found[SEARCH]], "plan": [found[PLAN]]}
expected = {b: gym.play(gym.ReferencePolicy(), found[b]) for b in (SEARCH, PLAN)}
script = {found[b].blueprint.intent: [[o.call.to_dict() for o in turn] for turn in r.turns]
          for b, r in expected.items()}

# --- docs/gym_trl.md routed: begin
from datasets import Dataset
from transformers import AutoTokenizer
from trl import GRPOConfig, GRPOTrainer
from trl.chat_template_utils import qwen2_5_chat_template

from codesearch_core.gym.trl_env import routed_environments

episodes = []  # every route's finished episodes
factories, rows = routed_environments(routes, log=episodes)
tokenizer = AutoTokenizer.from_pretrained(os.environ["TINY_MODEL"])
tokenizer.chat_template = qwen2_5_chat_template
trainer = GRPOTrainer(
    model=os.environ["TINY_MODEL"],
    processing_class=tokenizer,  # no reward_funcs: each environment's get_reward is the reward
    train_dataset=Dataset.from_list(rows),  # each row names its route in `environment`
    environment_factory=factories,
    args=GRPOConfig(
        output_dir=os.environ["OUT_DIR"],
        max_steps=2,
        per_device_train_batch_size=4,
        num_generations=2,
        max_completion_length=2048,
        max_tool_calling_iterations=gym.DEFAULT_SETTINGS.max_turns,
        use_cpu=True,
        bf16=False,
        report_to="none",
        save_strategy="no",
        logging_steps=1,
        seed=0,
    ),
)
# --- docs/gym_trl.md routed: end

def message(calls):
    blocks = [json.dumps({"name": c["name"], "arguments": c["arguments"]}) for c in calls]
    return "".join(f"<tool_call>\n{b}\n</tool_call>\n" for b in blocks).rstrip("\n") + "<|im_end|>"

def scripted(prompt_ids, images, multimodal_fields, num_generations, has_tool_images=False):
    out = []
    for ids in prompt_ids:
        text = tokenizer.decode(ids)
        (turns,) = [v for k, v in script.items() if k in text]
        done = text.count("<|im_start|>assistant") - 1  # the messages this rollout has written
        reply = message(turns[done]) if done < len(turns) else "Done.<|im_end|>"
        out.append(tokenizer(reply, add_special_tokens=False)["input_ids"])
    return out, None

trainer._generate_single_turn = scripted
trainer.train()
print(MARK + json.dumps({
    "total_s": time.monotonic() - t0,
    "reward_funcs": trainer.reward_func_names,
    "history": [h for h in trainer.state.log_history if "reward" in h],
    "episodes": [r.info() for r in episodes],
    "expected": {b: r.reward for b, r in expected.items()},
}), flush=True)
os._exit(0)
""".replace("MARK", repr(MARK))
    .replace("SEARCH", repr(BLUEPRINTS[1]))
    .replace("PLAN", repr("datapipe-plan-users-sql-select-star"))
)


def _train(snippet: str, model: Path, tmp_path: Path, *, timeout: int) -> dict[str, Any]:
    """Run a training snippet in the torch venv on `model`; the result line it printed."""
    proc = run_in_vllm_env(
        snippet,
        timeout=timeout,
        env_extra={
            "TINY_MODEL": str(model),
            "OUT_DIR": str(tmp_path / "grpo"),
            "TRL_EXPERIMENTAL_SILENCE": "1",
        },
    )
    assert proc.returncode == 0, f"stdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-6000:]}"
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(MARK)]
    assert lines, f"no result line; stderr:\n{proc.stderr[-3000:]}"
    result: dict[str, Any] = json.loads(lines[-1][len(MARK) :])
    return result


@pytest.mark.timeout(900)
def test_two_grpo_steps_play_episodes_and_log_their_rewards(
    long_tiny_model: Path, tmp_path: Path
) -> None:
    result = _train(SNIPPET, long_tiny_model, tmp_path, timeout=850)
    calls = [h.get("tools/call_frequency") for h in result["history"]]
    print(
        f"GRPO: 2 steps in {result['train_s']:.1f} s, snippet {result['total_s']:.1f} s; "
        f"tool calls a rollout {calls}; episodes {[(e['end_reason'], e['calls']) for e in result['episodes']]}"
    )
    assert result["plain_import"], "gym.trl_env imported torch or trl"

    # The tools are in the prompt the model is given, each with its schema.
    prompt = result["rendered"][0]
    assert "<tools>" in prompt
    for name in ("ripgrep_search", "ast_grep_search", "read_file", "submit"):
        assert f'"name": "{name}"' in prompt
    assert '"required": ["locations"]' in prompt
    assert len(result["rendered"]) == 8  # each rollout's prompt (2 steps x 4), tools with each
    assert all("Task: " in p and "<tools>" in p for p in result["rendered"])

    # Every rollout was an episode of one of the four blueprints, and the reward TRL logged for
    # each step is the mean of that step's four episodes (2 prompts x 2 generations).
    episodes, history = result["episodes"], result["history"]
    assert len(history) == 2 and len(episodes) == 8
    assert {e["blueprint_id"] for e in episodes} <= set(BLUEPRINTS)
    for step, logged in enumerate(history):
        mine = [e["reward"] for e in episodes[4 * step : 4 * step + 4]]
        assert logged["rewards/CodeSearchToolEnv/mean"] == pytest.approx(sum(mine) / 4)
        assert logged["reward"] == pytest.approx(sum(mine) / 4)  # the components weigh 0
        submits = [e["components"]["R_submit"] for e in episodes[4 * step : 4 * step + 4]]
        assert logged["rewards/R_submit/mean"] == pytest.approx(sum(submits) / 4)
    for e in episodes:  # a random model rarely submits: then the episode scores 0
        assert e["end_reason"] in {"submitted", "stopped", "turn_limit"}
        assert e["reward"] == 0.0 or e["end_reason"] == "submitted"


@pytest.mark.timeout(600)
def test_a_scripted_model_in_trls_tool_loop_plays_turns_and_single_calls(
    long_tiny_model: Path, tmp_path: Path
) -> None:
    result = _train(SCRIPTED, long_tiny_model, tmp_path, timeout=550)
    print(f"scripted GRPO step: snippet {result['total_s']:.1f} s")
    (logged,) = result["history"]
    episodes = result["episodes"]
    assert len(episodes) == 4  # 2 prompts x 2 generations
    for episode in episodes:
        # The search and the read of one message were one turn; the submit the second.
        assert [[c["name"] for c in turn] for turn in episode["turns"]] == [
            [episode["turns"][0][0]["name"], "read_file"],
            ["submit"],
        ]
        assert not any(c["error"] for turn in episode["turns"] for c in turn)
        assert episode["info"]["end_reason"] == "submitted"
        assert episode["info"]["reward"] == 1.0
    assert logged["rewards/CodeSearchToolEnv/mean"] == 1.0 and logged["reward"] == 1.0
    assert logged["tools/call_frequency"] == 3.0 and logged["tools/failure_frequency"] == 0.0

    # Single-call GRPO: the two search tools are rendered, TRL runs none of them, and the reward
    # TRL logs is CodeSearchReward's for the reference calls it parsed (as outside TRL).
    (single,) = result["single_history"]
    assert single["tools/call_frequency"] == 0.0
    assert single["rewards/codesearch_reward/mean"] == pytest.approx(sum(result["direct"]) / 2)
    assert all(r > 0.9 for r in result["direct"])
    single_prompt = result["single_rendered"][0]
    assert '"name": "ripgrep_search"' in single_prompt
    assert '"name": "ast_grep_search"' in single_prompt
    assert '"name": "submit"' not in single_prompt


@pytest.mark.timeout(600)
def test_two_routed_environments_train_two_steps_on_their_own_get_reward(
    long_tiny_model: Path, tmp_path: Path
) -> None:
    result = _train(ROUTED, long_tiny_model, tmp_path, timeout=550)
    print(f"routed GRPO, 2 steps: snippet {result['total_s']:.1f} s")
    # No reward function was given: TRL's only reward sources are the two routes' get_reward.
    assert result["reward_funcs"] == ["search", "plan"]
    history, episodes = result["history"], result["episodes"]
    assert len(history) == 2 and len(episodes) == 8  # 2 steps x 2 prompts x 2 generations
    expected = result["expected"]
    assert (
        expected[BLUEPRINTS[1]] == 1.0 and 0 < expected["datapipe-plan-users-sql-select-star"] < 1
    )
    # Both environments were played each step, each episode earned its reference's reward, and
    # TRL logged each route's mean and their sum as the step's reward.
    for step, logged in enumerate(history):
        mine = episodes[4 * step : 4 * step + 4]
        by_route = {
            route: [e["reward"] for e in mine if e["blueprint_id"] == blueprint]
            for route, blueprint in (
                ("search", BLUEPRINTS[1]),
                ("plan", "datapipe-plan-users-sql-select-star"),
            )
        }
        assert all(len(rewards) == 2 for rewards in by_route.values())
        for e in mine:
            assert e["end_reason"] == "submitted" and e["reward"] == expected[e["blueprint_id"]]
        for route, rewards in by_route.items():
            assert logged[f"rewards/{route}/mean"] == pytest.approx(sum(rewards) / 2)
        assert logged["reward"] == pytest.approx(sum(e["reward"] for e in mine) / 4)
