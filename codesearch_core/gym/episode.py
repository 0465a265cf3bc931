"""One episode: an agent searching one blueprint's corpus in turns of parallel calls, ended by its
submit (or by the turn limit), rewarded once at the end.

    episode = Episode(blueprint, corpus_root)
    episode.messages()                       # system + user turn
    step = episode.step([{"name": "ripgrep_search", "arguments": {...}}, ...])   # one turn
    step.observations[0].text                # what the model is shown for the first call
    episode.step([{"name": "submit", "arguments": {"locations": [...]}}])
    episode.result().reward

A turn is one assistant message: `step` takes all its calls. The first `max_parallel` run (the
searches in parallel, each a child process of the real `rg` / `ast-grep`), the rest are refused;
a turn past `max_turns` is refused whole. Every call is checked (`actions.check`) and what is wrong
comes back as an error observation that counts as a call; `step` never raises on what an agent
wrote. Observations are the exports' (`tools.observation_text`), so a model sees in training what
it sees here. Given the blueprint and the calls, an episode is deterministic (a search that times
out aside): results are sorted and observations come back in the order of the calls.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from codesearch_core.errors import ErrorKind
from codesearch_core.grading import breaks_pcre2_rule, touched
from codesearch_core.gym.actions import (
    ActionError,
    RawCall,
    ReadRequest,
    Refusal,
    Submission,
    check,
    gym_tools,
)
from codesearch_core.gym.files import read_lines
from codesearch_core.gym.prompt import prompt_messages
from codesearch_core.gym.reward import episode_metrics, episode_reward
from codesearch_core.gym.settings import DEFAULT_SETTINGS, SUCCESS_REWARD, GymSettings
from codesearch_core.models import Blueprint, Grade, RunResult, Span, ToolCall
from codesearch_core.tools import observation_text, run_tool_call

#: Tool processes of all episodes in this process at once: 64 sessions of 8 parallel calls must
#: not start 512 of them on a 2-core machine; a search waits for a free slot.
MAX_TOOL_PROCESSES: Final = 16
_slots = threading.BoundedSemaphore(MAX_TOOL_PROCESSES)
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _search_pool() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(MAX_TOOL_PROCESSES, thread_name_prefix="gym-search")
        return _pool


class EndReason:
    SUBMITTED = "submitted"
    TURN_LIMIT = "turn_limit"
    NO_CALL = "no_call"  # the agent answered without a call (and so never submits)
    STOPPED = "stopped"  # the caller ended it (a client gone, a server stopping)


@dataclass(frozen=True, slots=True)
class Observation:
    """What the environment answered to one call. `error` is the refusal's kind (or the failed
    run's), empty when the call did what it asked."""

    call: RawCall
    text: str
    error: str = ""
    findings: int = 0  # a search's matches (its run's, before the observation cut them)

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.call.to_dict(),
            "observation": self.text,
            "error": self.error,
            "findings": self.findings,
        }


@dataclass(frozen=True, slots=True)
class StepResult:
    """A turn's observations, in the order of its calls, and whether the episode is over.
    `runs` holds each search's whole run (None for other calls) for policies in this process (the
    reference policy submits every finding, not the 20 an observation shows); no model sees it."""

    observations: tuple[Observation, ...]
    done: bool
    runs: tuple[RunResult | None, ...] = ()


@dataclass(frozen=True, slots=True)
class EpisodeResult:
    """The end of an episode: the reward, its components and everything the agent did."""

    blueprint_id: str
    reward: float
    components: dict[str, float]
    grade: Grade | None
    submitted: tuple[Span, ...] | None
    end_reason: str
    turns: tuple[tuple[Observation, ...], ...]
    calls: int
    invalid_calls: int
    #: Recorded, never summed into the reward (`reward.episode_metrics`): precision, recall,
    #: calls_per_turn, evidence_seen, evidence_drop.
    metrics: dict[str, float] = field(default_factory=dict)

    @property
    def success(self) -> bool:
        return self.reward >= SUCCESS_REWARD

    def info(self) -> dict[str, Any]:
        """The scalar facts a trainer logs: reward, components, counts, why it ended."""
        return {
            "blueprint_id": self.blueprint_id,
            "reward": self.reward,
            "components": dict(self.components),
            "span_f1": self.grade.span_f1 if self.grade is not None else 0.0,
            "file_iou": self.grade.file_iou if self.grade is not None else 0.0,
            "end_reason": self.end_reason,
            "turns": len(self.turns),
            "calls": self.calls,
            "invalid_calls": self.invalid_calls,
            "metrics": dict(self.metrics),
        }

    def to_dict(self) -> dict[str, Any]:
        """The trajectory in the import line's shape (`{"blueprint_id", "turns", "submit"}`, each
        call with its observation), plus `info`: replaying its calls gives the same episode."""
        d: dict[str, Any] = {
            "blueprint_id": self.blueprint_id,
            "turns": [[o.to_dict() for o in turn] for turn in self.turns],
        }
        if self.submitted is not None:
            d["submit"] = [s.to_dict() for s in self.submitted]
        d["info"] = self.info()
        return d


class Episode:
    """One blueprint, one agent, turns until a submit or the turn limit (module docstring)."""

    def __init__(
        self,
        blueprint: Blueprint,
        corpus_root: Path,
        settings: GymSettings = DEFAULT_SETTINGS,
    ) -> None:
        self.blueprint = blueprint
        self.corpus_root = corpus_root
        self.settings = settings
        self._turns: list[tuple[Observation, ...]] = []
        self._calls = 0
        self._invalid = 0
        self._pcre2 = 0
        self._essential = blueprint.essential
        self._seen: set[int] = set()  # the essential spans the searches showed (evidence drop)
        self._submitted: tuple[Span, ...] | None = None
        self._end: str | None = None
        self._result: EpisodeResult | None = None
        self._lock = threading.Lock()  # one turn at a time, even from a server's threads

    # --- what the agent is shown ------------------------------------------------------------------

    def messages(self) -> list[dict[str, Any]]:
        return prompt_messages(self.blueprint, self.settings)

    @staticmethod
    def tools() -> list[dict[str, Any]]:
        return gym_tools()

    @property
    def done(self) -> bool:
        return self._end is not None

    @property
    def turns_used(self) -> int:
        return len(self._turns)

    # --- acting -----------------------------------------------------------------------------------

    def step(self, calls: Sequence[Any]) -> StepResult:
        """Play one turn: every call of one assistant message, in order (module docstring)."""
        with self._lock:
            raws = [RawCall.of(c) for c in calls]
            if self._end is not None:
                over = f"the episode is over ({self._end}): no more calls"
                refused = tuple(Observation(r, _error_text(Refusal.EPISODE_OVER, over),
                                            Refusal.EPISODE_OVER) for r in raws)  # fmt: skip
                return StepResult(refused, True)
            if not raws:
                self._turns.append(())
                self._finish(EndReason.NO_CALL)
                return StepResult((), True)
            observations, runs = self._play(raws)
            self._turns.append(observations)
            if self._submitted is not None:
                self._finish(EndReason.SUBMITTED)
            elif len(self._turns) >= self.settings.max_turns:
                self._finish(EndReason.TURN_LIMIT)
            return StepResult(observations, self._end is not None, runs)

    def stop(self) -> EpisodeResult:
        """End the episode now (a client gone, a server stopping): unsubmitted, it scores 0."""
        with self._lock:
            if self._end is None:
                self._finish(EndReason.STOPPED)
        return self.result()

    def result(self) -> EpisodeResult:
        """The reward and the trajectory; only once the episode is done."""
        if self._result is None:
            raise RuntimeError("the episode is not over: submit, or stop() it")
        return self._result

    # --- inside -----------------------------------------------------------------------------------

    def _refuse(self, raw: RawCall, kind: str, message: str) -> Observation:
        self._invalid += 1
        return Observation(raw, _error_text(kind, message), kind)

    def _play(
        self, raws: list[RawCall]
    ) -> tuple[tuple[Observation, ...], tuple[RunResult | None, ...]]:
        observations: list[Observation | None] = [None] * len(raws)
        runs: list[RunResult | None] = [None] * len(raws)
        searches: list[tuple[int, ToolCall]] = []
        limit = self.settings.max_parallel
        for i, raw in enumerate(raws):
            self._calls += 1  # every call counts but the accepted submit (taken back below)
            if self._submitted is not None:
                observations[i] = self._refuse(
                    raw, Refusal.EPISODE_OVER, "a call after submit in the same turn is not run"
                )
                continue
            if i >= limit:
                observations[i] = self._refuse(
                    raw,
                    Refusal.TOO_MANY_CALLS,
                    f"a turn holds at most {limit} calls: call {i + 1} of {len(raws)} was not run",
                )
                continue
            action = check(raw)
            if isinstance(action, ActionError):
                observations[i] = self._refuse(raw, action.kind, action.message)
            elif isinstance(action, Submission):
                self._calls -= 1
                self._submitted = action.locations
                where = "location" if len(action.locations) == 1 else "locations"
                observations[i] = Observation(raw, f"submitted {len(action.locations)} {where}")
            elif isinstance(action, ReadRequest):
                read = read_lines(self.corpus_root, action)
                if isinstance(read, ActionError):
                    observations[i] = self._refuse(raw, read.kind, read.message)
                else:
                    observations[i] = Observation(raw, read)
            else:
                if breaks_pcre2_rule(action):
                    self._pcre2 += 1
                searches.append((i, action))
        # The turn's searches run in parallel: all but the last on the pool, the last in this
        # thread (a turn of one search, the most common, pays no hand-over to another thread).
        futures = [(i, c, _search_pool().submit(self._search, c)) for i, c in searches[:-1]]
        ran = [(i, c, f.result()) for i, c, f in futures]
        if searches:
            i, c = searches[-1]
            ran.append((i, c, self._search(c)))
        for i, call, run in ran:
            runs[i] = run
            if run.findings:
                self._seen |= touched(self._essential, run.findings)
            if run.error_kind is ErrorKind.PCRE2_REQUIRED and not breaks_pcre2_rule(call):
                self._pcre2 += 1
            error = "" if run.ok else (run.error_kind or ErrorKind.TOOL_ERROR).value
            if error:
                self._invalid += 1
            observations[i] = Observation(raws[i], observation_text(run), error, len(run.findings))
        return tuple(o for o in observations if o is not None), tuple(runs)

    def _search(self, call: ToolCall) -> RunResult:
        with _slots:
            return run_tool_call(
                call,
                self.corpus_root,
                timeout_s=self.settings.timeout_s,
                max_findings=self.settings.max_findings,
            )

    def _finish(self, reason: str) -> None:
        self._end = reason
        r = episode_reward(
            self._submitted,
            self.blueprint.expected,
            turns=len(self._turns),
            calls=self._calls,
            pcre2_offences=self._pcre2,
            settings=self.settings,
        )
        self._result = EpisodeResult(
            blueprint_id=self.blueprint.id,
            reward=r.total,
            components=r.components,
            grade=r.grade,
            submitted=self._submitted,
            end_reason=reason,
            turns=tuple(self._turns),
            calls=self._calls,
            invalid_calls=self._invalid,
            metrics=episode_metrics(
                r.grade,
                self._essential,
                self._seen,
                self._submitted,
                turns=len(self._turns),
                calls=self._calls,
            ),
        )


def _error_text(kind: str, message: str) -> str:
    return f"error ({kind}): {message}"
