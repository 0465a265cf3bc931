"""The replay check of the agent exports: every exported episode is played again in the gym and
must show the observations the file holds. A tampered export fails it, naming the episode, the
turn and the call, and nothing is put in place."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from export_support import review_episodes

from codesearch_core.export import EPISODE_FORMATS, ExportFormat
from codesearch_core.gym import (
    ReferencePolicy,
    Replay,
    ReplayMismatch,
    Task,
    export_episodes,
    rollouts,
)
from codesearch_core.store import Store, StoredEpisode


def _played(store: Store, task: Task) -> StoredEpisode:
    assert rollouts(ReferencePolicy(), [task], store).kept == 1
    review_episodes(store)
    [episode] = store.episodes.list()
    return episode


def _tampered(episode: StoredEpisode) -> StoredEpisode:
    """The episode with its first observation edited, as a hand-edited export would hold it."""
    turns = [[dict(c) for c in turn] for turn in episode.trajectory["turns"]]
    turns[0][0]["observation"] = "src/nowhere.ts:1: not what the tool answered"
    return replace(episode, trajectory={**episode.trajectory, "turns": turns})


@pytest.mark.parametrize("fmt", sorted(EPISODE_FORMATS), ids=lambda f: f.value)
def test_an_edited_observation_fails_the_replay_and_leaves_no_file(
    plan_task: Task, tmp_path: Path, fmt: ExportFormat
) -> None:
    out = tmp_path / "out" / f"{fmt.value}.jsonl"
    with Store(tmp_path / "s.duckdb") as store:
        episode = _played(store, plan_task)
        with pytest.raises(ReplayMismatch) as caught:
            export_episodes(store, fmt, out, episodes=[_tampered(episode)])
        message = str(caught.value)
        first = episode.trajectory["turns"][0][0]["name"]
        where = f"episode {episode.episode_id[:12]} (row 1, blueprint {plan_task.blueprint.id})"
        assert where in message and f"turn 1, call 1 ({first}): the gym answers" in message
        assert "not what the tool answered" in message
        # Nothing in place, and no temporary file left behind.
        assert not out.exists() and not any(out.parent.glob("*.jsonl*"))
        # The same episode as stored writes, and a tampered one does not replace it.
        manifest, report = export_episodes(store, fmt, out)
        assert manifest.rows == 1 and report.episodes == 1 and report.turns >= 2
        before = out.read_bytes()
        with pytest.raises(ReplayMismatch):
            export_episodes(store, fmt, out, episodes=[_tampered(episode)])
        assert out.read_bytes() == before


def test_the_check_reads_the_file_written_not_the_store(plan_task: Task, tmp_path: Path) -> None:
    # An export edited after it was written is caught by checking the file on its own: an
    # observation, a call, a row too many.
    out = tmp_path / "hf-agent.jsonl"
    with Store(tmp_path / "s.duckdb") as store:
        episode = _played(store, plan_task)
        export_episodes(store, ExportFormat.HF_AGENT, out)
        record = json.loads(out.read_text(encoding="utf-8"))
        tool = next(m for m in record["messages"] if m["role"] == "tool")
        tool["content"] += "\nsrc/extra.ts:9: one line more"
        edited = tmp_path / "edited.jsonl"
        edited.write_text(json.dumps(record) + "\n", encoding="utf-8")
        replay = Replay(store, ExportFormat.HF_AGENT, [episode])
        replay.check(out, [episode.episode_id])  # the written file replays
        first = episode.trajectory["turns"][0][0]["name"]
        with pytest.raises(ReplayMismatch, match=rf"turn 1, call 1 \({first}\)"):
            replay.check(edited, [episode.episode_id])
        # A submit edited in the file: every observation still replays, the calls do not.
        record = json.loads(out.read_text(encoding="utf-8"))
        submit = record["messages"][-1]["tool_calls"][-1]["function"]
        assert submit["name"] == "submit"
        submit["arguments"]["locations"] = submit["arguments"]["locations"][:1]
        edited.write_text(json.dumps(record) + "\n", encoding="utf-8")
        turns = len([t for t in episode.trajectory["turns"] if t])
        with pytest.raises(ReplayMismatch, match=f"turn {turns}: the export's calls are not the"):
            replay.check(edited, [episode.episode_id])
        with pytest.raises(ReplayMismatch, match="holds 1 rows for 2 episodes"):
            replay.check(out, [episode.episode_id, episode.episode_id])
