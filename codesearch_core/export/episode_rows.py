"""The record streams of the formats written with the gym's `EpisodeFrame` (`records.GYM_FORMATS`):
the agent layouts (one stored episode a record) and `dpo-steps` (one corrected step a record), the
export's filters applied to episodes, and the tallies every export keeps while its records stream
out (`ExportCounts`). `records.records` picks the stream by format.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from codesearch_core.errors import InputFileError
from codesearch_core.export import episodes
from codesearch_core.models import Blueprint
from codesearch_core.store import QueueFilters, Store, StoredEpisode


class ExportCounts:
    """Tallies kept while records stream out; they end up in the manifest's `counts`."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        #: The corpora the written rows search (the dataset card names them).
        self.corpora: set[str] = set()
        #: The episodes written, in order (the agent formats: the card counts them, the gym's
        #: replay check names them).
        self.episodes: list[episodes.EpisodeShape] = []

    def add(self, key: str) -> None:
        self.counts[key] = self.counts.get(key, 0) + 1


def episode_filter(filters: QueueFilters) -> Callable[[StoredEpisode, Blueprint], str | None]:
    """Why an episode is left out by the export's filters (None: kept). The blueprint's filters
    apply to its blueprint, `engine` / `model` to who played it, `min_f1` / `max_f1` to its span F1."""

    def keep(e: StoredEpisode, bp: Blueprint) -> str | None:
        if filters.split is not None and bp.split.value != filters.split:
            return "held_out_eval"
        mismatched = (
            (filters.blueprint_id, e.blueprint_id),
            (filters.engine, e.engine),
            (filters.model, e.model),
            (filters.language, bp.language),
            (filters.tool, None if bp.plan is not None else bp.reference_call.name.value),
        )
        if any(want is not None and want != have for want, have in mismatched):
            return "filtered_out"
        if filters.tag is not None and filters.tag not in bp.tags:
            return "filtered_out"
        if filters.min_f1 is not None and e.span_f1 < filters.min_f1:
            return "filtered_out"
        if filters.max_f1 is not None and e.span_f1 > filters.max_f1:
            return "filtered_out"
        return None

    return keep


def episode_records(
    store: Store,
    fmt: str,
    filters: QueueFilters,
    with_meta: bool,
    counter: ExportCounts,
    frame: episodes.EpisodeFrame | None,
    stored: Sequence[StoredEpisode] | None,
) -> Iterator[dict[str, Any]]:
    if frame is None:
        raise InputFileError(
            f"{fmt} exports the gym's episodes: it is written through the gym "
            "(`codesearch export`, the Export page, or gym.export_episodes)"
        )
    chosen = store.episodes.accepted() if stored is None else stored
    # The reviewers' labels of single calls go in the metadata (read once for the export).
    steps = store.steps.summaries([e.episode_id for e in chosen]) if with_meta else {}
    for found in episodes.agent_rows(store, chosen, frame, episode_filter(filters)):
        if isinstance(found, str):
            counter.add(found)
            continue
        episode, bp, turns = found
        count_episode(counter, episode, turns)
        opening = frame.messages(bp, episode.settings)
        yield episodes.agent_record(
            fmt, episode, turns, opening, frame.tools, with_meta=with_meta,
            steps=steps.get(episode.episode_id, ()),
        )  # fmt: skip


def count_episode(
    counter: ExportCounts, episode: StoredEpisode, turns: Sequence[episodes.Turn]
) -> episodes.EpisodeShape:
    shape = episodes.shape(episode, turns)
    counter.add("episodes")
    counter.counts["turns"] = counter.counts.get("turns", 0) + shape.turns
    counter.counts["calls"] = counter.counts.get("calls", 0) + shape.calls
    for name, n in shape.tools.items():
        counter.counts[f"tool:{name}"] = counter.counts.get(f"tool:{name}", 0) + n
    counter.corpora.add(episode.corpus)
    counter.episodes.append(shape)
    return shape


def step_pair_records(
    store: Store,
    filters: QueueFilters,
    with_meta: bool,
    counter: ExportCounts,
    frame: episodes.EpisodeFrame | None,
) -> Iterator[dict[str, Any]]:
    """`dpo-steps`: one pair per corrected episode not rejected in review (`store.steps.
    corrections`), its original read from the store; the export's filters apply to it as to an
    episode."""
    if frame is None:
        raise InputFileError(
            "dpo-steps pairs the gym's corrected episodes: it is written through the gym "
            "(`codesearch export dpo-steps`, or gym.export_step_pairs)"
        )
    counter.counts["pairs"] = 0
    corrections = store.steps.corrections()
    originals = {e.corrected_from: store.episodes.get(e.corrected_from or "") for e in corrections}
    steps = store.steps.summaries([i for i in originals if i]) if with_meta else {}
    for found in episodes.agent_rows(store, corrections, frame, episode_filter(filters)):
        if isinstance(found, str):
            counter.add(found)
            continue
        corrected, bp, turns = found
        original = originals.get(corrected.corrected_from)
        if original is None:
            counter.add("skipped_original_gone")
            continue
        record = episodes.step_pair(
            corrected, original, frame.messages(bp, original.settings), frame.tools,
            with_meta=with_meta, steps=steps.get(original.episode_id, ()),
        )  # fmt: skip
        if record is None:
            counter.add("skipped_unreadable_call")
            continue
        count_episode(counter, corrected, turns)
        counter.add("pairs")
        yield record
