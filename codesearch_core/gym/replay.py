"""The gym's side of the agent exports (`hf-agent`, `openai-sft-agent`, `sharegpt-agent`): what an
episode shows (`episode_frame`: the gym's prompt, its tools, the blueprints), and the replay check.

The replay check reads every episode back from the file written (`export.read_turns`), plays its
calls again in the gym, turn by turn, under the episode's stored settings, and requires the
observations the file holds (one for each call of every turn but the last), the stored episode's
calls, and a submitted episode to end submitted again: the SFT data and the RL environment must
agree. A corpus edited since the episode was played, a tool that answers
otherwise, or an export that wrote a call or an observation wrong all fail it. `export_episodes`
writes an agent export with the check run on the complete file before it replaces anything: a
failure is a `ReplayMismatch` naming the episode, and the previous export stays as it was.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from codesearch_core import config
from codesearch_core.corpora import corpus_root
from codesearch_core.errors import CodesearchError, CorpusError
from codesearch_core.export import (
    EPISODE_FORMATS,
    EpisodeFrame,
    ExportFormat,
    Manifest,
    episode_counts,
    episode_turns,
    export,
    read_turns,
)
from codesearch_core.gym.actions import gym_tools
from codesearch_core.gym.episode import EndReason, Episode
from codesearch_core.gym.prompt import prompt_messages
from codesearch_core.gym.settings import GymSettings
from codesearch_core.gym.tasks import seed_blueprints
from codesearch_core.models import Blueprint
from codesearch_core.store import QueueFilters, Store, StoredEpisode

#: How much of each side a mismatch shows (an observation can be kilobytes).
_SHOWN: Final = 160


class ReplayMismatch(CodesearchError):
    """An exported episode the gym does not play the same way again."""


@dataclass(frozen=True, slots=True)
class ReplayReport:
    episodes: int = 0
    turns: int = 0
    calls: int = 0


def _opening(blueprint: Blueprint, settings: Mapping[str, Any]) -> list[dict[str, Any]]:
    return prompt_messages(blueprint, GymSettings.from_dict(settings))


def _blueprints(store: Store, ids: Sequence[str]) -> dict[str, Blueprint]:
    """The store's blueprints (as they are now), then the seed files' for the rest."""
    found = {bp.id: bp for bp in store.blueprints.get_many(list(ids))}
    missing = set(ids) - set(found)
    if missing:
        found.update({bp.id: bp for bp in seed_blueprints() if bp.id in missing})
    return found


def episode_frame() -> EpisodeFrame:
    """What the gym shows in an episode, for the exports (a layer below) to write."""
    return EpisodeFrame(tools=gym_tools(), messages=_opening, blueprints=_blueprints)


class Replay:
    """The replay check of one export of `episodes` (their blueprints looked up once)."""

    def __init__(self, store: Store, fmt: ExportFormat | str, episodes: Sequence[StoredEpisode],
                 frame: EpisodeFrame | None = None) -> None:  # fmt: skip
        self.fmt = ExportFormat(fmt)
        if self.fmt not in EPISODE_FORMATS:
            raise ValueError(f"{self.fmt.value} holds no episodes to replay")
        self.by_id = {e.episode_id: e for e in episodes}
        frame = frame or episode_frame()
        self.blueprints = frame.blueprints(store, sorted({e.blueprint_id for e in episodes}))
        self.report = ReplayReport()

    def check(self, path: Path, episode_ids: Sequence[str]) -> None:
        """Replay every row of the file at `path` (row i is episode `episode_ids[i]`); raises
        ReplayMismatch for the first row that differs."""
        with path.open(encoding="utf-8") as fh:
            records = [json.loads(line) for line in fh if line.strip()]
        if len(records) != len(episode_ids):
            raise ReplayMismatch(
                f"the export holds {len(records)} rows for {len(episode_ids)} episodes"
            )
        jobs = list(enumerate(zip(episode_ids, records, strict=True), start=1))
        with ThreadPoolExecutor(max_workers=2 * config.usable_cores()) as pool:
            outcomes = list(pool.map(lambda job: self._one(job[0], *job[1]), jobs))
        done: list[tuple[int, int]] = []
        for outcome in outcomes:
            if isinstance(outcome, str):
                raise ReplayMismatch(f"the export does not replay in the gym: {outcome}")
            done.append(outcome)
        self.report = ReplayReport(len(records), sum(t for t, _ in done), sum(c for _, c in done))

    def _one(self, row: int, episode_id: str, record: Mapping[str, Any]) -> tuple[int, int] | str:
        """(turns, calls) replayed, or what differs."""
        stored = self.by_id.get(episode_id)
        where = f"episode {episode_id[:12]} (row {row}"
        if stored is None:
            return f"{where}): not among the episodes exported"
        where += f", blueprint {stored.blueprint_id})"
        blueprint = self.blueprints.get(stored.blueprint_id)
        if blueprint is None:
            return f"{where}: its blueprint is neither in the store nor a seed"
        try:
            root = corpus_root(blueprint.corpus)
        except CorpusError as err:
            return f"{where}: {err}"
        episode = Episode(blueprint, root, GymSettings.from_dict(stored.settings))
        turns = read_turns(self.fmt.value, record)
        played = [
            [c.to_dict() for c in turn.calls] for turn in episode_turns(stored.trajectory) or []
        ]
        calls = 0
        for t, (turn_calls, shown) in enumerate(turns, start=1):
            if episode.done:
                return f"{where}: the gym ended the episode before turn {t}"
            # The calls must be the episode's own: a wrong submit would replay without an error.
            if turn_calls != (played[t - 1] if t <= len(played) else []):
                return f"{where}: turn {t}: the export's calls are not the stored episode's"
            if t < len(turns) and len(shown) != len(turn_calls):
                return (
                    f"{where}: turn {t} shows {len(shown)} observations for {len(turn_calls)} calls"
                )
            step = episode.step(turn_calls)
            calls += len(turn_calls)
            for i, (text, observation) in enumerate(zip(shown, step.observations, strict=False)):
                if text != observation.text:
                    name = turn_calls[i].get("name")
                    return (
                        f"{where}: turn {t}, call {i + 1} ({name}): the gym answers "
                        f"{observation.text[:_SHOWN]!r} but the export holds {text[:_SHOWN]!r}"
                    )
            if len(shown) > len(step.observations):
                return f"{where}: turn {t} shows more observations than it has calls"
        if len(turns) != len(played):
            return f"{where}: the export holds {len(turns)} turns, the episode {len(played)}"
        result = episode.stop()
        if stored.end_reason == EndReason.SUBMITTED and result.end_reason != EndReason.SUBMITTED:
            return f"{where}: it was submitted, but replayed it ends {result.end_reason}"
        return len(turns), calls


def export_episodes(
    store: Store,
    fmt: ExportFormat | str,
    out_path: Path,
    *,
    episodes: Sequence[StoredEpisode] | None = None,
    **options: Any,
) -> tuple[Manifest, ReplayReport]:
    """Write an agent export of `episodes` (default: the store's accepted ones, `Store.
    accepted_episodes`, and those whose corpus is gone counted in the manifest) and replay it
    before it is put in place (module docstring). `options` are `export.export`'s (filters,
    with_meta, include_eval, license)."""
    if episodes is None:
        chosen, gone = store.episodes.accepted(), store.episodes.accepted_corpus_gone()
    else:
        chosen, gone = list(episodes), {}
    frame = episode_frame()
    replay = Replay(store, fmt, chosen, frame)
    manifest = export(store, fmt, out_path, frame=frame, episodes=chosen, check=replay.check,
                      corpora_gone=gone, **options)  # fmt: skip
    return manifest, replay.report


def episode_export_counts(
    store: Store, filters: QueueFilters | None = None, *, include_eval: bool = False
) -> dict[str, int]:
    """What `export_episodes` would write now, without writing it: `episodes` (going out) and
    what is left out, by reason (`corpus_gone`: accepted episodes whose corpus is gone)."""
    counts = episode_counts(store, filters, episode_frame(), include_eval=include_eval)
    gone = sum(store.episodes.accepted_corpus_gone().values())
    return {**counts, **({"corpus_gone": gone} if gone else {})}
