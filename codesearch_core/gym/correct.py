"""Correct one step of a stored episode: edit a turn's calls, play the episode again in the gym
from that turn, and keep the corrected episode beside the original (issue 39, item 2).

The rule, the simplest one that stays sound: the turns before the corrected one are the original's
calls, played again in the real gym under the episode's stored settings (their observations are
the gym's now, as `gym.replay` checks them); the corrected turn is the edited calls; after it the
episode stops, except that when the original ended with a submit in a later turn, that submit is
played as the next turn. The original's turns in between are not played: what they did was
chosen after the original call's observation, which the corrected call changed, so they may no
longer make sense. A corrected turn that holds a submit ends the episode there.

The corrected episode is stored as a new episode (`store.steps.save_correction`; engine
`correction`, the original's model, settings and sampling) with `corrected_from` and
`corrected_turn`, in the Episodes queue like any other; the original is not touched. An edited
call the gym refuses, or whose search fails, is an `InputFileError` naming it, and nothing is
stored. The step-level preference export (`dpo-steps`) pairs each corrected call with the
original's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from codesearch_core.corpora import corpus_root
from codesearch_core.errors import InputFileError
from codesearch_core.export import ExportFormat, Manifest, export
from codesearch_core.gym.actions import SUBMIT, ActionError, RawCall, check
from codesearch_core.gym.episode import Episode
from codesearch_core.gym.replay import episode_frame
from codesearch_core.gym.rollout import stored_episode
from codesearch_core.gym.settings import GymSettings
from codesearch_core.store import Store, StoredEpisode, corpus_snapshot
from codesearch_core.tools import tool_versions

#: The engine a corrected episode is stored under: a reviewer's edit, not a policy's sample.
CORRECTION_ENGINE: Final = "correction"


@dataclass(frozen=True, slots=True)
class Correction:
    """What `correct_step` did: the original, the corrected episode (stored unless `stored` is
    False: the same correction was stored before), the turn corrected, and whether the
    original's submit was played after it."""

    original: StoredEpisode
    corrected: StoredEpisode
    turn: int
    stored: bool
    submit_replayed: bool


def edited_calls(calls: Any) -> list[dict[str, Any]]:
    """The edited calls as `{"name", "arguments"}` (arguments as an object; an OpenAI tool call
    or JSON-text arguments are accepted), each checked as the gym checks a call; an
    InputFileError naming the first the gym would refuse."""
    if isinstance(calls, Mapping):
        calls = [calls]
    if not isinstance(calls, Sequence) or isinstance(calls, str) or not calls:
        raise InputFileError("an edited turn is a call or a list of calls, and holds one at least")
    out = []
    for i, call in enumerate(calls, start=1):
        raw = RawCall.of(call)
        arguments = raw.arguments
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except ValueError as err:
                raise InputFileError(
                    f"edited call {i}: its arguments are not JSON: {err}"
                ) from None
        action = check(RawCall(raw.name, arguments))
        if isinstance(action, ActionError):
            raise InputFileError(f"edited call {i}: {action.kind}: {action.message}")
        out.append({"name": raw.name, "arguments": arguments})
    return out


def _turn_calls(turn: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [{"name": c.get("name"), "arguments": c.get("arguments")} for c in turn]


def correct_step(store: Store, episode_id: str, turn: int, calls: Any) -> Correction:
    """Replace turn `turn`'s calls (from 1) of the stored episode by `calls`, play it again in
    the gym (module docstring) and store the corrected episode beside the original."""
    original = store.episodes.get(episode_id)
    if original is None:
        raise InputFileError(f"no stored episode {episode_id!r}")
    turns = [_turn_calls(t) for t in original.trajectory.get("turns", [])]
    if not 1 <= turn <= len(turns):
        raise InputFileError(f"episode {episode_id[:12]} has turns 1 to {len(turns)}, not {turn}")
    edited = edited_calls(calls)
    if edited == turns[turn - 1]:
        raise InputFileError(f"the edited calls are turn {turn}'s own: nothing to correct")
    blueprint = (
        episode_frame().blueprints(store, [original.blueprint_id]).get(original.blueprint_id)
    )
    if blueprint is None:
        raise InputFileError(f"episode {episode_id[:12]}'s blueprint is neither stored nor a seed")
    episode = Episode(blueprint, corpus_root(blueprint.corpus), GymSettings.from_dict(
        original.settings))  # fmt: skip
    for t, earlier in enumerate(turns[: turn - 1], start=1):
        if episode.done:
            raise InputFileError(f"the gym ends episode {episode_id[:12]} before turn {t}")
        episode.step(earlier)
    if episode.done:
        raise InputFileError(f"the gym ends episode {episode_id[:12]} before turn {turn}")
    step = episode.step(edited)
    failed = [(i, o) for i, o in enumerate(step.observations, start=1) if o.error]
    if failed:
        i, o = failed[0]
        raise InputFileError(f"edited call {i} fails in the gym: {o.text[:300]}")
    submit = [c for t in turns[turn:] for c in t if c.get("name") == SUBMIT][-1:]
    replayed = bool(submit) and not episode.done
    if replayed:
        episode.step(submit)
    result = episode.stop()
    corrected = stored_episode(
        result,
        corpus=original.corpus,
        engine=CORRECTION_ENGINE,
        model=original.model,
        sampling=original.sampling,
        settings=original.settings,
        snapshot=corpus_snapshot(original.corpus),
        tool_versions=tool_versions(),
        corrected_from=original.episode_id,
        corrected_turn=turn,
    )
    stored = store.steps.save_correction(corrected)
    return Correction(original, corrected, turn, stored, replayed)


def export_step_pairs(store: Store, out_path: Path, **options: Any) -> Manifest:
    """Write the `dpo-steps` export (every stored correction not rejected in review, with the
    gym's opening and tools); `options` are `export.export`'s (filters, with_meta, include_eval,
    license)."""
    return export(store, ExportFormat.DPO_STEPS, out_path, frame=episode_frame(), **options)
