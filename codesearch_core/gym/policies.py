"""Policies that need no model: the reference (the blueprint's own calls, then their findings)
and the replay of recorded episodes (`codesearch eval --agent --engine import --from FILE`).

A policy plays an episode to its end through `Episode.step`, the only way in, so the environment
checks, runs and counts its calls as it does a model's. The model policies (an OpenAI-compatible
server, vLLM) are in `gym.chat`.

The import line (one JSON object a line):

    {"blueprint_id": ID, "turns": [[CALL, ...], ...], "submit": [{"path", "start_line", "end_line"}, ...]}

CALL is `{"name", "arguments"}`; each inner list is one turn. The submit is played as a turn of its
own after them; a line without `submit` never submitted.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol

from codesearch_core.corpora import bounded_lines, line_too_long, open_jsonl
from codesearch_core.errors import InputFileError
from codesearch_core.gym.actions import SUBMIT
from codesearch_core.gym.episode import Episode
from codesearch_core.models import Finding, ToolCall

#: `paths` takes at most this many files (the tools' schema): a narrowed step over more files is
#: split into calls of this many, which one turn runs in parallel.
_PATHS_PER_CALL: Final = 16


class Policy(Protocol):
    """Plays one episode to its end. `name` and `model` label the eval run."""

    name: str
    model: str

    def play(self, episode: Episode) -> None: ...


def _submit_call(spans: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    return {"name": SUBMIT, "arguments": {"locations": list(spans)}}


def _locations(findings: Sequence[Finding]) -> list[dict[str, Any]]:
    spans = sorted({(f.path, f.start_line, f.end_line) for f in findings})
    return [{"path": p, "start_line": s, "end_line": e} for p, s, e in spans]


def _narrowed(call: ToolCall, files: Sequence[str]) -> list[dict[str, Any]]:
    """`call` over `files` only, as calls of at most `_PATHS_PER_CALL` paths each."""
    return [
        {
            "name": call.name.value,
            "arguments": {**call.arguments, "paths": list(files[i : i + _PATHS_PER_CALL])},
        }
        for i in range(0, len(files), _PATHS_PER_CALL)
    ]


class ReferencePolicy:
    """The blueprint's reference call (or each step of its plan, a narrowed step over the files the
    step before found), then a submit of the last step's findings."""

    name = "reference"
    model = "reference"

    def play(self, episode: Episode) -> None:
        bp = episode.blueprint
        steps = bp.plan.steps if bp.plan is not None else ()
        plan = [(s.call, s.restrict_to_previous) for s in steps] or [(bp.reference_call, False)]
        findings: list[Finding] = []
        for i, (call, narrow) in enumerate(plan):
            if i and narrow:
                files = sorted({f.path for f in findings})
                if not files:  # nothing to narrow: the plan finds nothing (as `run_plan` does)
                    findings = []
                    break
                calls = _narrowed(call, files)
            else:
                calls = [call.to_dict()]
            step = episode.step(calls)
            if step.done:
                return
            findings = [f for run in step.runs if run is not None for f in run.findings]
        episode.step([_submit_call(_locations(findings))])


@dataclass(frozen=True, slots=True)
class Recorded:
    """One recorded episode of an import file (`source:line` says where it came from)."""

    blueprint_id: str
    turns: tuple[tuple[Any, ...], ...]
    submit: tuple[Any, ...] | None
    where: str


def recorded_episode(obj: Any, where: str) -> Recorded:
    """One recorded episode from its JSON object (an import line, a stored trajectory)."""
    if not isinstance(obj, Mapping):
        raise InputFileError(
            "a line must be a JSON object {blueprint_id, turns, submit}", source=where
        )
    bp = obj.get("blueprint_id")
    if not isinstance(bp, str) or not bp:
        raise InputFileError("blueprint_id must be a non-empty string", source=where)
    turns = obj.get("turns", [])
    if not isinstance(turns, list) or not all(isinstance(t, list) for t in turns):
        raise InputFileError("turns must be a list of turns, each a list of calls", source=where)
    submit = obj.get("submit")
    if submit is not None and not isinstance(submit, list):
        raise InputFileError("submit must be a list of locations", source=where)
    return Recorded(
        bp, tuple(tuple(t) for t in turns), None if submit is None else tuple(submit), where
    )


def read_recorded(path: Path) -> Iterator[Recorded]:
    """The recorded episodes of an import file, line by line; a line that is not one is an
    InputFileError naming it. What each call holds is checked by the environment when replayed
    (a malformed call is the recorded agent's mistake, scored as such, not the file's)."""
    with open_jsonl(path) as handle:
        for number, raw in bounded_lines(handle):
            where = f"{path}:{number}"
            if raw is None:
                raise line_too_long("recorded episode", source=str(path), line=number)
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
            except ValueError as err:
                raise InputFileError(f"not JSON: {err}", source=where) from None
            yield recorded_episode(obj, where)


class ReplayPolicy:
    """Replays recorded episodes: each blueprint's own line (the first one for it)."""

    name = "import"

    def __init__(self, recorded: Sequence[Recorded], model: str = "import") -> None:
        self.model = model
        self.by_blueprint: dict[str, Recorded] = {}
        for r in recorded:
            self.by_blueprint.setdefault(r.blueprint_id, r)

    def play(self, episode: Episode) -> None:
        recorded = self.by_blueprint.get(episode.blueprint.id)
        if recorded is None:
            episode.stop()
            return
        for turn in recorded.turns:
            if episode.step(list(turn)).done:
                return
        if recorded.submit is not None:
            episode.step([_submit_call(list(recorded.submit))])
