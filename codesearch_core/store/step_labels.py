"""A reviewer's label of one call of a stored episode (table `step_labels`, schema v16).

An episode is reviewed whole in the Episodes queue; a step label says what one call of it was:
`useful`, `redundant` or `wrong`. Labels are events, kept like decisions (`store.decisions`): a new
label is appended and supersedes the same reviewer's earlier label of that call, an undo is an
event that cancels the reviewer's latest live label (so repeated undos walk back through their
history), and nothing is ever updated or deleted. A call is named by its episode, its turn and
its index in the turn, both counting from 1, as the trajectory view shows them.

Each function takes a cursor inside the caller's transaction; `Steps` (`store.steps`) supplies it,
checks the role and records the audit row.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

import duckdb

from codesearch_core.access import Action
from codesearch_core.errors import StoreError
from codesearch_core.store.audit import Deed
from codesearch_core.store.base import StoreBase
from codesearch_core.store.decisions import check_reviewer
from codesearch_core.store.episodes import (
    StoredEpisode,
    corrected_episodes,
    get_episode,
    insert_episodes,
)
from codesearch_core.store.rows import first_row

Cursor = duckdb.DuckDBPyConnection

#: The labels a call can get, in the order a summary lists them (and breaks a tie for the majority).
STEP_LABELS: Final = ("useful", "redundant", "wrong")
MAX_NOTE: Final = 2_000


@dataclass(frozen=True, slots=True)
class StepLabel:
    """One reviewer's label of one call, as it stands (their latest live label event)."""

    episode_id: str
    turn: int
    call: int
    label: str
    reviewer: str
    note: str
    at: datetime
    event_id: int


@dataclass(frozen=True, slots=True)
class StepSummary:
    """What the reviewers say of one call: how many gave each label, and the majority's label
    (None on a tie between the most given; ties are not settled by label order)."""

    turn: int
    call: int
    counts: Mapping[str, int]
    majority: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "turn": self.turn,
            "call": self.call,
            "counts": dict(self.counts),
            "label": self.majority,
        }


def check_label(label: str) -> str:
    """The label, lower-cased; a StoreError naming the labels for any other word."""
    word = label.strip().lower()
    if word not in STEP_LABELS:
        raise StoreError(f"unknown step label {label!r}: use one of {', '.join(STEP_LABELS)}")
    return word


def _calls_per_turn(cur: Cursor, episode_id: str) -> list[int]:
    """How many calls each turn of the stored episode holds; a StoreError when there is none."""
    row = first_row(
        cur.execute(
            "SELECT CAST(json_extract(trajectory, '$.turns') AS VARCHAR) FROM episodes "
            "WHERE episode_id = ?",
            [episode_id],
        )
    )
    if row is None:
        raise StoreError(f"no stored episode {episode_id!r}")
    return [len(turn) for turn in json.loads(row[0] or "[]")]


def check_call(cur: Cursor, episode_id: str, turn: int, call: int) -> None:
    """A StoreError unless the episode is stored and has call `call` in turn `turn`."""
    sizes = _calls_per_turn(cur, episode_id)
    if not 1 <= turn <= len(sizes):
        raise StoreError(f"episode {episode_id[:12]} has turns 1 to {len(sizes)}, not {turn}")
    if not 1 <= call <= sizes[turn - 1]:
        raise StoreError(
            f"turn {turn} of episode {episode_id[:12]} has calls 1 to {sizes[turn - 1]}, not {call}"
        )


def record_label(
    cur: Cursor,
    episode_id: str,
    turn: int,
    call: int,
    label: str,
    reviewer: str,
    *,
    note: str,
    ts: datetime,
) -> int:
    """Append `reviewer`'s label of the call; its event id. The label and the call are checked
    first (StoreError, nothing written)."""
    word = check_label(label)
    if len(note) > MAX_NOTE:
        raise StoreError(f"the note is too long ({len(note)} characters, at most {MAX_NOTE})")
    check_call(cur, episode_id, turn, call)
    row = first_row(
        cur.execute(
            "INSERT INTO step_labels (episode_id, turn, call, label, reviewer, note, ts) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING event_id",
            [episode_id, turn, call, word, reviewer, note, ts],
        )
    )
    assert row is not None
    return int(row[0])


_LIVE_LABELS: Final = """
    SELECT s.* FROM step_labels s
    WHERE s.label <> 'undo' AND s.event_id NOT IN
        (SELECT undoes FROM step_labels WHERE undoes IS NOT NULL)
"""


def undo_last(cur: Cursor, reviewer: str, *, episode_id: str | None, ts: datetime) -> StepLabel:
    """Cancel the reviewer's latest live label (of `episode_id`, when given); the label undone.
    The label they gave that call before, if any, stands again. StoreError when there is none."""
    where, params = ("AND episode_id = ?", [episode_id]) if episode_id else ("", [])
    row = first_row(
        cur.execute(
            "SELECT episode_id, turn, call, label, reviewer, note, ts, event_id "
            f"FROM ({_LIVE_LABELS}) WHERE reviewer = ? {where} ORDER BY event_id DESC LIMIT 1",
            [reviewer, *params],
        )
    )
    if row is None:
        of = f" of episode {episode_id[:12]}" if episode_id else ""
        raise StoreError(f"{reviewer} has no step label{of} to undo")
    undone = StepLabel(*row)
    cur.execute(
        "INSERT INTO step_labels (episode_id, turn, call, label, reviewer, note, ts, undoes) "
        "VALUES (?, ?, ?, 'undo', ?, '', ?, ?)",
        [undone.episode_id, undone.turn, undone.call, reviewer, ts, undone.event_id],
    )
    return undone


def episode_labels(cur: Cursor, episode_ids: Sequence[str]) -> list[StepLabel]:
    """The labels as they stand on these episodes' calls: each reviewer's latest live label of
    each call, ordered by episode, turn, call and reviewer."""
    rows = cur.execute(
        "SELECT episode_id, turn, call, label, reviewer, note, ts, event_id FROM ("
        "SELECT *, row_number() OVER (PARTITION BY episode_id, turn, call, reviewer "
        f"ORDER BY event_id DESC) AS n FROM ({_LIVE_LABELS}) "
        "WHERE episode_id IN (SELECT unnest(?::VARCHAR[]))"
        ") WHERE n = 1 ORDER BY episode_id, turn, call, reviewer",
        [list(episode_ids)],
    ).fetchall()
    return [StepLabel(*r) for r in rows]


def summarize(labels: Sequence[StepLabel]) -> dict[str, list[StepSummary]]:
    """Per episode, each labelled call's counts per label and its majority label, in turn and
    call order."""
    counts: dict[str, dict[tuple[int, int], Counter[str]]] = {}
    for label in labels:
        per_call = counts.setdefault(label.episode_id, {})
        per_call.setdefault((label.turn, label.call), Counter())[label.label] += 1
    out: dict[str, list[StepSummary]] = {}
    for episode_id, per_call in counts.items():
        out[episode_id] = [
            StepSummary(turn, call, {w: c[w] for w in STEP_LABELS if c[w]}, _majority(c))
            for (turn, call), c in sorted(per_call.items())
        ]
    return out


def _majority(counts: Counter[str]) -> str | None:
    ranked = counts.most_common()
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return None
    return ranked[0][0]


class Steps:
    """A reviewer's labels of single calls and their corrected episodes (`store.steps`): one call
    per action, each one transaction by the store's actor, audited. Labelling and correcting take
    the review role, and someone logged in labels only as themselves."""

    __slots__ = ("_store",)

    def __init__(self, store: StoreBase) -> None:
        self._store = store

    def label(
        self, episode_id: str, turn: int, call: int, label: str, reviewer: str, note: str = ""
    ) -> int:
        """Record `reviewer`'s label (`STEP_LABELS`) of call `call` of turn `turn` (from 1); its
        event id. It supersedes their earlier label of that call; an unknown episode, turn, call
        or label is a StoreError and nothing is written."""
        who, word = check_reviewer(reviewer), check_label(label)

        def write(deed: Deed) -> int:
            deed.require_self(who, Action.REVIEW)
            event = record_label(deed.cur, episode_id, turn, call, word, who, note=note, ts=deed.at)
            deed.log("step.label", episode_id, turn=turn, call=call, label=word, reviewer=who,
                     event=event, note=note[:200])  # fmt: skip
            return event

        return self._store._act(write, action=Action.REVIEW, what="label the call")

    def undo(self, reviewer: str, episode_id: str | None = None) -> StepLabel:
        """Cancel `reviewer`'s latest label (of `episode_id`, when given); the label undone.
        Repeated undos walk back through their labels. StoreError when there is none."""
        who = check_reviewer(reviewer)

        def write(deed: Deed) -> StepLabel:
            deed.require_self(who, Action.REVIEW)
            undone = undo_last(deed.cur, who, episode_id=episode_id, ts=deed.at)
            deed.log("step.undo", undone.episode_id, turn=undone.turn, call=undone.call,
                     label=undone.label, reviewer=who, event=undone.event_id)  # fmt: skip
            return undone

        return self._store._act(write, action=Action.REVIEW, what="undo the step label")

    def labels(self, episode_id: str) -> list[StepLabel]:
        """The episode's labels as they stand: each reviewer's latest of each call."""
        return self._store._read(lambda cur: episode_labels(cur, [episode_id]))

    def summary(self, episode_id: str) -> list[StepSummary]:
        """Each labelled call of the episode: the count of each label and the majority label."""
        return self.summaries([episode_id]).get(episode_id, [])

    def summaries(self, episode_ids: Sequence[str]) -> dict[str, list[StepSummary]]:
        """`summary` of many episodes in one read (the exports' metadata)."""
        return summarize(self._store._read(lambda cur: episode_labels(cur, episode_ids)))

    def save_correction(self, corrected: StoredEpisode) -> bool:
        """Store a corrected episode (`gym.correct`: `corrected_from` and `corrected_turn` set)
        beside the original, which stays as it was; False when the same episode is stored
        already."""
        if corrected.corrected_from is None or corrected.corrected_turn is None:
            raise StoreError("a corrected episode names the episode and the turn it corrects")

        def write(deed: Deed) -> bool:
            if get_episode(deed.cur, corrected.corrected_from or "") is None:
                raise StoreError(f"no stored episode {corrected.corrected_from!r}")
            new = insert_episodes(deed.cur, [corrected], deed.at) == 1
            if new:
                deed.log("episode.correct", corrected.episode_id, turn=corrected.corrected_turn,
                         corrected_from=corrected.corrected_from)  # fmt: skip
            return new

        return self._store._act(write, action=Action.REVIEW, what="store the corrected episode")

    def corrections(self) -> list[StoredEpisode]:
        """The corrected episodes not rejected in review, oldest first (`dpo-steps`' rows)."""
        return self._store._read(corrected_episodes)
