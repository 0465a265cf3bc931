"""The agent exports (`hf-agent`, `openai-sft-agent`, `sharegpt-agent`), each read by its
consumer's own code: `datasets` through the dataset card and Qwen2.5's chat template (a copy in
data/), the OpenAI fine-tuning schema the single-call exports are checked against, LLaMA-Factory's
ShareGPT reader. Every call read back must be the stored episode's call, in its turn and order.
The episodes are the reference policy's, and one recorded with two calls in a turn."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import llamafactory_support
import pytest
from export_support import (
    TOOL_CALL,
    TOOL_RESPONSE,
    EpisodeExports,
    Loader,
    openai_validator,
    review_episodes,
    turns_text,
)

from codesearch_core.export.records import EPISODE_FORMATS, ExportFormat
from codesearch_core.gym import export_episodes
from codesearch_core.store import Store, StoredEpisode

Calls = list[list[dict[str, Any]]]

# Qwen2.5's template puts each turn's observations in one user turn, one <tool_response> each.
TURN = re.compile(r"<\|im_start\|>assistant\n(.*?)<\|im_end\|>", re.DOTALL)
TOOLS = re.compile(r"<tools>\n(.*?)\n</tools>", re.DOTALL)


def _rows(exports: EpisodeExports, fmt: str) -> list[tuple[StoredEpisode, dict[str, Any]]]:
    """Each row of the export with the stored episode it was written from (the manifest names
    them in order)."""
    folder = exports.folder
    manifest = json.loads((folder / f"{fmt}.jsonl.manifest.json").read_text(encoding="utf-8"))
    lines = (folder / f"{fmt}.jsonl").read_text(encoding="utf-8").splitlines()
    ids = manifest["extra"]["episode_ids"]
    assert len(ids) == len(lines) == len(exports.episodes)
    return [(exports.episodes[i], json.loads(line)) for i, line in zip(ids, lines, strict=True)]


def _stored_calls(episode: StoredEpisode) -> Calls:
    return [
        [{"name": c["name"], "arguments": c["arguments"]} for c in turn]
        for turn in episode.trajectory["turns"]
        if turn
    ]


def _stored_observations(episode: StoredEpisode) -> list[str]:
    """What the agent was shown, in order: every turn's observations but the last (its submit)."""
    turns = [t for t in episode.trajectory["turns"] if t]
    return [c["observation"] for turn in turns[:-1] for c in turn]


def test_the_episodes_have_several_turns_and_a_parallel_turn(
    episode_exports: EpisodeExports,
) -> None:
    # What the reader checks below must cover: a plan's several search turns, and two calls in
    # one turn (JSON lists in sharegpt's function_call and observation turns).
    calls = [_stored_calls(e) for e in episode_exports.episodes.values()]
    assert max(len(c) for c in calls) >= 3
    assert any(len(turn) == 2 for c in calls for turn in c)
    assert all(c[-1][-1]["name"] == "submit" for c in calls)
    for fmt in EPISODE_FORMATS:
        report = episode_exports.replays[fmt.value]
        assert report.episodes == len(calls) and report.calls == sum(
            len(t) for c in calls for t in c
        )


@pytest.mark.parametrize("fmt", sorted(EPISODE_FORMATS), ids=lambda f: f.value)
def test_every_agent_export_loads_with_datasets(
    episode_exports: EpisodeExports, hf_load: Loader, fmt: ExportFormat
) -> None:
    # `load_dataset("json", data_files=F)`, as every export is read (docs/exports.md).
    ds = hf_load(episode_exports.folder / f"{fmt.value}.jsonl")
    assert ds.num_rows == len(episode_exports.episodes)
    if fmt is not ExportFormat.HF_AGENT:
        return
    # Each call's arguments stay its own keys: none added from another call, none nulled.
    for row, (episode, _) in zip(ds, _rows(episode_exports, fmt.value), strict=True):
        read = [c["function"] for m in row["messages"] for c in m.get("tool_calls") or []]
        assert [{"name": f["name"], "arguments": f["arguments"]} for f in read] == [
            c for turn in _stored_calls(episode) for c in turn
        ]


def test_hf_agent_renders_with_qwens_template_and_every_call_parses_back(
    episode_exports: EpisodeExports, qwen: Any, tmp_path: Path
) -> None:
    import datasets

    # Loaded through the folder's dataset card, as `load_dataset(repo, "hf-agent")` reads it: the
    # card's features keep each call's arguments a dict of its own keys.
    # A cache of its own: a shared one can hand back another run's rows for the same path.
    ds = datasets.load_dataset(str(episode_exports.folder), name="hf-agent", split="train",
                               cache_dir=str(tmp_path / "hf"))  # fmt: skip
    by_row = _rows(episode_exports, "hf-agent")
    assert ds.num_rows == len(by_row)
    for row, (episode, written) in zip(ds, by_row, strict=True):
        assert row["messages"] == written["messages"]
        messages, stored = row["messages"], _stored_calls(episode)
        assert [m["role"] for m in messages[:2]] == ["system", "user"]
        text = qwen.apply_chat_template(messages, tools=row["tools"], tokenize=False)
        turns = TURN.findall(turns_text(text))
        assert len(turns) == len(stored)
        for rendered, calls in zip(turns, stored, strict=True):
            # Arguments as a dict: rendered once as JSON, so each parses back to the stored call.
            assert [json.loads(c) for c in TOOL_CALL.findall(rendered)] == calls
        assert TOOL_RESPONSE.findall(text) == _stored_observations(episode)
        # The tools column rendered, one function per line.
        tools = TOOLS.search(text)
        assert tools is not None
        rendered_tools = [json.loads(line)["function"]["name"] for line in tools[1].splitlines()]
        assert rendered_tools == [t["function"]["name"] for t in written["tools"]]
        assert "submit" in rendered_tools


def test_openai_sft_agent_matches_the_fine_tuning_schema(episode_exports: EpisodeExports) -> None:
    validator = openai_validator("openai-sft.schema.json")
    for episode, row in _rows(episode_exports, "openai-sft-agent"):
        validator.validate(row)
        calls: Calls = []
        answered: list[str] = []
        pending: dict[str, str] = {}
        for m in row["messages"]:
            if m["role"] == "assistant":
                assert not pending, "a turn's calls are all answered before the next turn"
                calls.append([])
                for c in m["tool_calls"]:
                    assert isinstance(c["function"]["arguments"], str)
                    calls[-1].append({"name": c["function"]["name"],
                                      "arguments": json.loads(c["function"]["arguments"])})  # fmt: skip
                    pending[c["id"]] = c["function"]["name"]
            elif m["role"] == "tool":
                assert m["tool_call_id"] in pending  # answers a call of its own turn, once
                del pending[m["tool_call_id"]]
                answered.append(m["content"])
        assert calls == _stored_calls(episode)
        assert answered == _stored_observations(episode)
        assert set(pending.values()) == {"submit"}  # the last turn is not answered


@pytest.mark.skipif(
    not llamafactory_support.WHEEL.is_file(), reason=llamafactory_support.skip_reason()
)
def test_llama_factory_reads_the_sharegpt_agent_export_with_its_own_code(
    episode_exports: EpisodeExports, hf_load: Loader
) -> None:
    lf = llamafactory_support.load()
    assert lf is not None
    folder = episode_exports.folder
    (attr,) = lf.parser.get_dataset_list(["sharegpt-agent"], str(folder))
    assert (attr.load_from, attr.formatting, attr.dataset_name) == ("file", "sharegpt",
                                                                   "sharegpt-agent.jsonl")  # fmt: skip
    convert = lf.converter.SharegptDatasetConverter(attr, SimpleNamespace(media_dir=""))
    tools_text = lf.formatter.ToolFormatter(tool_format="qwen")
    calls_text = lf.formatter.FunctionFormatter(slots=["{{content}}"], tool_format="qwen")
    lf.logger.warnings.clear()
    rows = list(hf_load(folder / attr.dataset_name))
    by_row = _rows(episode_exports, "sharegpt-agent")
    for row, (episode, _) in zip(rows, by_row, strict=True):
        example = convert(row)
        assert example["_response"] and example["_prompt"], lf.logger.warnings
        messages = example["_prompt"] + example["_response"]
        stored = _stored_calls(episode)
        roles = ["user"] + ["function", "observation"] * (len(stored) - 1) + ["function"]
        assert [m["role"] for m in messages] == roles
        assert example["_system"] == row["system"]
        (tools,) = tools_text.apply(content=example["_tools"])
        assert all(f'"name": "{n}"' in tools for n in ("ripgrep_search", "read_file", "submit"))
        functions = [m for m in messages if m["role"] == "function"]
        for function, calls in zip(functions, stored, strict=True):
            # Qwen's <tool_call> blocks, one per call of the turn, parse back to the stored calls.
            rendered = "".join(
                s for s in calls_text.apply(content=function["content"]) if isinstance(s, str)
            )
            parsed = tools_text.extract(rendered)
            assert [{"name": p.name, "arguments": json.loads(p.arguments)} for p in parsed] == calls
        observations = [m["content"] for m in messages if m["role"] == "observation"]
        shown = _stored_observations(episode)
        # One call's observation is its text; a parallel turn's is a JSON list, in call order.
        flat = [t for o in observations for t in (json.loads(o) if o.startswith('["') else [o])]
        assert flat == shown
    assert lf.logger.warnings == []


def test_the_card_counts_turns_calls_and_tools_per_episode(episode_exports: EpisodeExports) -> None:
    card = (episode_exports.folder / "README.md").read_text(encoding="utf-8")
    turns = [len(_stored_calls(e)) for e in episode_exports.episodes.values()]
    for fmt in EPISODE_FORMATS:
        section = card.split(f"## {fmt.value}\n", 1)[1].split("\n## ", 1)[0]
        line = f"per episode ({len(turns)} episodes), mean (min-max): turns "
        assert f"{line}{sum(turns) / len(turns):g} ({min(turns)}-{max(turns)})" in section
        assert "submit 1 (1-1)" in section  # every episode submits once
    info = json.loads((episode_exports.folder / "dataset_info.json").read_text(encoding="utf-8"))
    assert info["sharegpt-agent"]["file_name"] == "sharegpt-agent.jsonl"


def test_the_meta_of_an_exported_episode_holds_its_recorded_metrics(
    episode_exports: EpisodeExports, tmp_path: Path
) -> None:
    folder = episode_exports.folder
    out = tmp_path / "hf-agent.jsonl"
    with Store(folder.parent / f"{folder.name}.duckdb") as store:
        export_episodes(store, ExportFormat.HF_AGENT, out, with_meta=True)
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == len(episode_exports.episodes)
    for row in rows:
        meta = row["meta"]
        stored = episode_exports.episodes[meta["episode_id"]]
        assert meta["metrics"] == stored.trajectory["info"]["metrics"]
        assert set(meta["metrics"]) == {
            "precision", "recall", "calls_per_turn", "evidence_seen", "evidence_drop",
        }  # fmt: skip
        # Recorded beside the reward, not summed into it: the reference found and kept it all.
        assert meta["metrics"]["recall"] == 1.0 and meta["metrics"]["evidence_drop"] == 0.0


def test_the_reviewers_step_labels_are_in_every_agent_layouts_metadata(tmp_path: Path) -> None:
    from codesearch_core.gym import ReferencePolicy, as_tasks, correct_step, rollouts
    from codesearch_core.gym import seed_blueprints as gym_seeds

    plan = next(t for t in as_tasks(gym_seeds()).tasks if t.blueprint.plan is not None)
    with Store(tmp_path / "s.duckdb") as store:
        assert rollouts(ReferencePolicy(), [plan], store, k=1).kept == 1
        (episode,) = store.episodes.list()
        ep = episode.episode_id
        for reviewer, label in (("ann", "useful"), ("bob", "redundant"), ("cy", "useful")):
            store.steps.label(ep, 1, 1, label, reviewer)
        store.steps.label(ep, 2, 1, "wrong", "ann")
        edit = {"name": "ripgrep_search", "arguments": {"pattern": "users"}}
        fixed = correct_step(store, ep, 2, edit).corrected
        review_episodes(store)
        for fmt in sorted(EPISODE_FORMATS):
            out = tmp_path / f"{fmt.value}.jsonl"
            export_episodes(store, fmt, out, with_meta=True)
            metas = {
                m["episode_id"]: m
                for m in (json.loads(line)["meta"] for line in out.read_text().splitlines())
            }
            assert metas[ep]["steps"] == [
                {"turn": 1, "call": 1, "counts": {"useful": 2, "redundant": 1}, "label": "useful"},
                {"turn": 2, "call": 1, "counts": {"wrong": 1}, "label": "wrong"},
            ], fmt.value
            assert "corrected_from" not in metas[ep]
            corrected = metas[fixed.episode_id]
            assert (corrected["corrected_from"], corrected["corrected_turn"]) == (ep, 2)
            assert corrected["steps"] == []
