"""The agent export formats: the gym's stored episodes (`store.StoredEpisode`) as multi-turn
training conversations, one layout per reader, and the same conversations read back (the gym's
replay check, `gym.replay`, reads what was written, not what was meant to be written).

* `hf-agent`: `messages` + `tools`, one assistant message per turn whose `tool_calls` carry their
  `arguments` as a *dict* (what `apply_chat_template(messages, tools=...)` renders once, not
  twice-encoded), then one `tool` message per call with the observation the gym returned.
* `openai-sft-agent`: OpenAI's chat fine-tuning layout: `arguments` a JSON *string*, each tool
  message answering its call's `tool_call_id`, `parallel_tool_calls` on (a turn may hold several).
* `sharegpt-agent`: LLaMA-Factory's `conversations`: a `function_call` turn per assistant turn (one
  call as a JSON object, parallel calls as a JSON list, as its tool formatters read them) and an
  `observation` turn after it (one text, or a JSON list of texts in the order of the calls).
* `dpo-steps`: a corrected step (`gym.correct`) in TRL's conversational preference layout, with
  `hf-agent`'s messages: the conversation before the corrected turn as `prompt`, the corrected
  turn's calls as `chosen`, the original's as `rejected` (`step_pair`).

With the metadata, every layout carries the reviewers' labels of the episode's calls
(`store.steps.summaries`: per labelled call, the count of each label and the majority's).

A conversation ends with the agent's last turn (its submit): the observations of that turn are
left out, as the agent never saw them (the episode was over). The opening messages and the tools
are the gym's (`EpisodeFrame`, handed down by the gym, which is a layer above). An episode with a
call that no layout can hold (a name that is not text, arguments that are not a JSON object) is
skipped and counted: it was refused by the environment and teaches nothing a reader can parse.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import msgspec

from codesearch_core.models import Blueprint
from codesearch_core.store import StepSummary, Store, StoredEpisode

_encode = msgspec.json.Encoder().encode

HF_AGENT: Final = "hf-agent"
OPENAI_SFT_AGENT: Final = "openai-sft-agent"
SHAREGPT_AGENT: Final = "sharegpt-agent"
DPO_STEPS: Final = "dpo-steps"


@dataclass(frozen=True, slots=True)
class EpisodeFrame:
    """What the gym shows an agent, given by the gym: the tools an episode offers, its opening
    messages (system, user) for a blueprint under the episode's stored settings, and where an
    episode's blueprint is found (the store, then the seed files: `rollouts --blueprints seeds`
    plays blueprints the store need not hold)."""

    tools: Sequence[Mapping[str, Any]]
    messages: Callable[[Blueprint, Mapping[str, Any]], list[dict[str, Any]]]
    blueprints: Callable[[Store, Sequence[str]], dict[str, Blueprint]]


@dataclass(frozen=True, slots=True)
class Call:
    name: str
    arguments: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "arguments": self.arguments}


@dataclass(frozen=True, slots=True)
class Turn:
    """One assistant turn: its calls and, unless it is the last, what the gym answered to each."""

    calls: tuple[Call, ...]
    observations: tuple[str, ...] | None


@dataclass(frozen=True, slots=True)
class EpisodeShape:
    """What the dataset card counts of one exported episode."""

    episode_id: str
    turns: int
    calls: int
    tools: Mapping[str, int] = field(default_factory=dict)


def _text(value: Any) -> str:
    return _encode(value).decode("utf-8")


def _call(raw: Mapping[str, Any]) -> Call | None:
    name, arguments = raw.get("name"), raw.get("arguments")
    if arguments is None:
        arguments = {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except (ValueError, RecursionError):
            return None
    if not isinstance(name, str) or not name or not isinstance(arguments, dict):
        return None
    return Call(name, arguments)


def episode_turns(trajectory: Mapping[str, Any]) -> list[Turn] | None:
    """The turns a conversation holds (module docstring), or None when a call cannot be written."""
    stored = [t for t in trajectory.get("turns", []) if t]  # a turn without a call ended it
    turns: list[Turn] = []
    for index, turn in enumerate(stored):
        calls = tuple(_call(c) for c in turn)
        if any(c is None for c in calls):
            return None
        last = index == len(stored) - 1
        observations = None if last else tuple(str(c.get("observation", "")) for c in turn)
        turns.append(Turn(tuple(c for c in calls if c is not None), observations))
    return turns


def shape(episode: StoredEpisode, turns: Sequence[Turn]) -> EpisodeShape:
    tools = Counter(c.name for t in turns for c in t.calls)
    return EpisodeShape(episode.episode_id, len(turns), sum(tools.values()), dict(tools))


def call_id(turn: int, index: int) -> str:
    # Nine alphanumerics, as the single-call exports write them (Mistral's templates need that).
    return f"call{turn:02d}{index:03d}"


def _assistant(t: int, calls: Sequence[Call], *, string_arguments: bool) -> dict[str, Any]:
    """The assistant message of turn `t` (from 0): its calls as `tool_calls`."""
    tool_calls = [
        {
            "id": call_id(t, i),
            "type": "function",
            "function": {
                "name": c.name,
                "arguments": _text(c.arguments) if string_arguments else c.arguments,
            },
        }
        for i, c in enumerate(calls)
    ]
    return {"role": "assistant", "content": "", "tool_calls": tool_calls}


def _agent_messages(turns: Sequence[Turn], *, string_arguments: bool) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for t, turn in enumerate(turns):
        messages.append(_assistant(t, turn.calls, string_arguments=string_arguments))
        for i, (c, text) in enumerate(zip(turn.calls, turn.observations or (), strict=False)):
            message = {"role": "tool", "tool_call_id": call_id(t, i), "content": text}
            if not string_arguments:
                message["name"] = c.name  # templates that label a result by its tool read it
            messages.append(message)
    return messages


def agent_conversation(
    turns: Sequence[Turn], opening: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """An episode played now (not stored) as an `hf-agent` row without provenance: what a trainer
    learns from a kept rollout (`codesearch train rft`), the same messages `agent_record` writes."""
    messages = [dict(m) for m in opening] + _agent_messages(turns, string_arguments=False)
    return {"messages": messages, "tools": [dict(t) for t in tools]}


def episode_meta(episode: StoredEpisode, steps: Sequence[StepSummary] = ()) -> dict[str, Any]:
    """Where an exported episode came from, its reward, its recorded metrics, and the reviewers'
    labels of its calls (`steps`: each labelled call's counts per label and majority label)."""
    correction = (
        {"corrected_from": episode.corrected_from, "corrected_turn": episode.corrected_turn}
        if episode.corrected_from is not None
        else {}
    )
    return {
        "episode_id": episode.episode_id,
        "blueprint_id": episode.blueprint_id,
        "corpus": episode.corpus,
        "engine": episode.engine,
        "model": episode.model,
        "sampling": dict(episode.sampling),
        "snapshot": episode.snapshot,
        "tool_versions": dict(episode.tool_versions),
        "reward": episode.reward,
        "components": dict(episode.components),
        "span_f1": episode.span_f1,
        # Recorded with the episode, never summed into its reward (the gym's `episode_metrics`);
        # an episode kept before they were recorded has none.
        "metrics": dict((episode.trajectory.get("info") or {}).get("metrics") or {}),
        "end_reason": episode.end_reason,
        "decision": episode.decision,
        "steps": [s.to_dict() for s in steps],
        **correction,
    }


def agent_record(
    fmt: str,
    episode: StoredEpisode,
    turns: Sequence[Turn],
    opening: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]],
    *,
    with_meta: bool,
    steps: Sequence[StepSummary] = (),
) -> dict[str, Any]:
    """One episode in `fmt`'s layout; `opening` is the gym's system and user messages, `steps`
    the reviewers' labels of its calls (in the metadata)."""
    record: dict[str, Any]
    if fmt == SHAREGPT_AGENT:
        system = next((str(m["content"]) for m in opening if m["role"] == "system"), "")
        conversations = [
            {"from": "human", "value": str(m["content"])} for m in opening if m["role"] == "user"
        ]
        for turn in turns:
            calls = [c.to_dict() for c in turn.calls]
            conversations.append(
                {"from": "function_call", "value": _text(calls[0] if len(calls) == 1 else calls)}
            )
            if turn.observations is not None:
                texts = list(turn.observations)
                value = texts[0] if len(texts) == 1 else _text(texts)
                conversations.append({"from": "observation", "value": value})
        functions = [t["function"] for t in tools]
        record = {"conversations": conversations, "system": system, "tools": _text(functions)}
    else:
        string_arguments = fmt == OPENAI_SFT_AGENT
        messages = [dict(m) for m in opening]
        messages += _agent_messages(turns, string_arguments=string_arguments)
        record = {"messages": messages, "tools": [dict(t) for t in tools]}
        if string_arguments:
            record["parallel_tool_calls"] = True
    if with_meta:
        record["meta"] = episode_meta(episode, steps)
    return record


def step_pair(
    corrected: StoredEpisode,
    original: StoredEpisode,
    opening: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]],
    *,
    with_meta: bool,
    steps: Sequence[StepSummary] = (),
) -> dict[str, Any] | None:
    """A `dpo-steps` row (TRL's conversational preference layout, `hf-agent`'s messages): the
    `prompt` is the conversation up to the corrected turn (the gym's opening, then the earlier
    turns' calls and observations as the corrected episode played them), `chosen` the corrected
    turn's calls, `rejected` the original's calls of that turn. None when either turn cannot be
    written (a call no layout holds)."""
    t = corrected.corrected_turn
    fixed, before = episode_turns(corrected.trajectory), episode_turns(original.trajectory)
    if t is None or fixed is None or before is None or min(len(fixed), len(before)) < t:
        return None
    prompt = [dict(m) for m in opening] + _agent_messages(fixed[: t - 1], string_arguments=False)
    record: dict[str, Any] = {
        "prompt": prompt,
        "chosen": [_assistant(t - 1, fixed[t - 1].calls, string_arguments=False)],
        "rejected": [_assistant(t - 1, before[t - 1].calls, string_arguments=False)],
        "tools": [dict(tool) for tool in tools],
    }
    if with_meta:
        record["meta"] = {
            "episode_id": corrected.episode_id,
            "corrected_from": original.episode_id,
            "turn": t,
            "blueprint_id": corrected.blueprint_id,
            "corpus": corrected.corpus,
            "model": original.model,
            "chosen_reward": corrected.reward,
            "rejected_reward": original.reward,
            # The reviewers' labels of the original's calls in that turn.
            "rejected_steps": [s.to_dict() for s in steps if s.turn == t],
        }
    return record


# --- reading back --------------------------------------------------------------------------------


def _arguments(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def read_turns(fmt: str, record: Mapping[str, Any]) -> list[tuple[list[dict[str, Any]], list[str]]]:
    """The turns a written record holds: each turn's calls (`{"name", "arguments"}`) and the
    observations it shows for them (empty for the last turn). The inverse of `agent_record`."""
    turns: list[tuple[list[dict[str, Any]], list[str]]] = []
    if fmt == SHAREGPT_AGENT:
        for turn in record["conversations"]:
            if turn["from"] == "function_call":
                calls = json.loads(turn["value"])
                turns.append((calls if isinstance(calls, list) else [calls], []))
            elif turn["from"] == "observation":
                n = len(turns[-1][0])
                texts = json.loads(turn["value"]) if n > 1 else [turn["value"]]
                turns[-1][1].extend(texts)
        return turns
    for message in record["messages"]:
        if message["role"] == "assistant" and message.get("tool_calls"):
            calls = [
                {"name": c["function"]["name"], "arguments": _arguments(c["function"]["arguments"])}
                for c in message["tool_calls"]
            ]
            turns.append((calls, []))
        elif message["role"] == "tool":
            turns[-1][1].append(message["content"])
    return turns


def agent_rows(
    store: Store,
    episodes: Sequence[StoredEpisode],
    frame: EpisodeFrame,
    keep: Callable[[StoredEpisode, Blueprint], str | None],
) -> Iterator[tuple[StoredEpisode, Blueprint, list[Turn]] | str]:
    """Each episode with its blueprint and turns, or the reason it is left out (a count's key):
    `keep` says why an episode is filtered out (None: it is kept)."""
    blueprints = frame.blueprints(store, sorted({e.blueprint_id for e in episodes}))
    for episode in episodes:
        bp = blueprints.get(episode.blueprint_id)
        if bp is None:
            yield "skipped_no_blueprint"
            continue
        why = keep(episode, bp)
        if why is not None:
            yield why
            continue
        turns = episode_turns(episode.trajectory)
        if turns is None:
            yield "skipped_unreadable_call"
            continue
        if not turns:
            yield "skipped_no_call"
            continue
        yield episode, bp, turns
