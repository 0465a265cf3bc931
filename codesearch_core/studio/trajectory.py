"""The trajectory view's model: one gym episode turn by turn, each call with its arguments and what
the environment answered, a search's shown findings and a `read_file`'s range against the expected
spans, the refusals, then the submitted locations diffed and the reward with its components; and
two episodes of one task side by side, turn against turn (`paired_turns`).

One builder (`trajectory_view`) over the gym's trajectory dict (`EpisodeResult.to_dict()`), fed
from the two places episodes are kept: an agent eval run's answer (`answer_trajectory`) and the
episodes table (`episode_trajectory`). The Evaluations page and the Episodes review card draw the
result with `pages/_trajectory.show`; nothing here needs Streamlit.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from codesearch_core.corpora import corpus_root
from codesearch_core.errors import CodesearchError
from codesearch_core.grading import diff_findings
from codesearch_core.gym import (
    AGENT_ENGINE_PREFIX,
    DEFAULT_SETTINGS,
    READ_FILE,
    SEARCH_TOOLS,
    SUBMIT,
    WEIGHT_OF,
    GymSettings,
    RewardWeights,
    weighted_terms,
)
from codesearch_core.models import Blueprint, Finding, Span
from codesearch_core.store import EvalAnswer, EvalItem, EvalRun, StoredEpisode
from codesearch_core.studio.diff import FindingRow, FindingStatus, finding_rows

#: Turns on one page of the view: a 50-turn episode is five pages, not one endless column.
TURNS_PER_PAGE: Final = 10
#: The characters of one observation the view shows: an imported trajectory can carry a 10 MB
#: observation, which would freeze the browser; the rest is counted, not drawn.
OBSERVATION_VIEW_CHARS: Final = 20_000
#: What each reward component means, in the words the view shows beside its value.
COMPONENT_WORDS: Final = {
    "R_submit": "submitted (1) or not (0)",
    "R_find": "span F1 of the submitted locations",
    "R_scope": "file IoU of the submitted locations",
    "R_turns": "minus the turns beyond the free ones",
    "R_calls": "minus the calls beyond the free ones",
    "R_pcre2_rule": "minus the ripgrep calls that needed PCRE2 without asking for it",
}
# An observation line of a search (`tools.observation_text`): `path:line: text` or
# `path:first-last: text`.
_MATCH_LINE: Final = re.compile(r"^(?P<path>[^\n]+?):(?P<start>\d+)(?:-(?P<end>\d+))?: ")


@dataclass(frozen=True, slots=True)
class ReadRange:
    """A `read_file` call's lines, and the expected spans it showed the agent (any line of)."""

    path: str
    start_line: int
    end_line: int
    covers: tuple[Span, ...]

    @property
    def label(self) -> str:
        return f"{self.path} L{self.start_line}-{self.end_line}"


@dataclass(frozen=True, slots=True)
class CallView:
    """One call as the view shows it. `kind` is "search", "read", "submit" or "other" (a name the
    gym does not know); `observation` is cut to `OBSERVATION_VIEW_CHARS` (`observation_chars` is
    its whole length); `rows` a search's shown findings against the expected spans."""

    turn: int
    name: str
    arguments: str
    kind: str
    observation: str
    observation_chars: int
    error: str
    matches: int
    rows: tuple[FindingRow, ...] = ()
    read: ReadRange | None = None

    @property
    def observation_cut(self) -> bool:
        return self.observation_chars > len(self.observation)

    @property
    def shown_matches(self) -> int:
        return sum(r.found is not None for r in self.rows)

    def count(self, status: FindingStatus) -> int:
        return sum(r.status is status for r in self.rows)


@dataclass(frozen=True, slots=True)
class TurnView:
    number: int
    calls: tuple[CallView, ...]


@dataclass(frozen=True, slots=True)
class Trajectory:
    """One episode for the view (module docstring). `corpus_problem` says why the corpus cannot
    be read (gone, renamed): the calls still show, the code windows do not; `blueprint` is None
    when neither the run nor the store has it (nothing to diff against); `problem` is set when the
    trajectory itself cannot be read (then there are no turns)."""

    title: str
    blueprint_id: str
    corpus: str
    blueprint: Blueprint | None
    turns: tuple[TurnView, ...]
    submitted: tuple[FindingRow, ...] | None
    reward: float
    components: Mapping[str, float]
    end_reason: str
    calls: int
    invalid_calls: int
    corpus_problem: str = ""
    problem: str = ""
    #: The weights it was rewarded with (its stored settings; the defaults when none were kept).
    weights: RewardWeights = DEFAULT_SETTINGS.weights

    @property
    def reward_parts(self) -> list[dict[str, Any]]:
        """A row per component: its value, its weight, the two multiplied and what it means. The
        reward is the sum of the weighted parts clamped to [-1, 1] (0 without a submit)."""
        terms = weighted_terms(self.components, self.weights)
        return [
            {
                "component": name,
                "value": value,
                "weight": getattr(self.weights, WEIGHT_OF[name]) if name in WEIGHT_OF else None,
                "weighted": terms.get(name),
                "what": COMPONENT_WORDS.get(name, ""),
            }
            for name, value in self.components.items()
        ]

    @property
    def reward_sum(self) -> str:
        """How the parts make the reward, in words ("" when there are no parts)."""
        total = sum(weighted_terms(self.components, self.weights).values())
        if not self.components:
            return ""
        if self.submitted is None:
            return f"No submit: the reward is 0 (the weighted parts add up to {total:.3f})."
        clamped = " clamped to [-1, 1]" if not -1.0 <= total <= 1.0 else ""
        return f"The weighted parts add up to {total:.3f}{clamped}: reward {self.reward:.3f}."

    @property
    def pages(self) -> int:
        return max(1, -(-len(self.turns) // TURNS_PER_PAGE))

    def page(self, number: int) -> tuple[TurnView, ...]:
        """The turns of page `number` (1-based; out-of-range numbers give the nearest page)."""
        n = min(max(1, number), self.pages)
        return self.turns[(n - 1) * TURNS_PER_PAGE : n * TURNS_PER_PAGE]

    @property
    def found_expected(self) -> int:
        """How many expected spans the submit hit."""
        return sum(r.status is FindingStatus.HIT for r in self.submitted or ())

    @property
    def expected(self) -> int:
        return len(self.blueprint.expected) if self.blueprint is not None else 0


@dataclass(frozen=True, slots=True)
class TurnPair:
    """Turn `number` of two episodes side by side; None on a side whose episode had ended."""

    number: int
    left: TurnView | None
    right: TurnView | None


def paired_turns(left: Trajectory, right: Trajectory) -> tuple[TurnPair, ...]:
    """The turns of two episodes of one task aligned by number, as long as the longer one: the
    columns a reader compares (what each searched first, where one gave up)."""
    n = max(len(left.turns), len(right.turns))
    return tuple(
        TurnPair(
            i + 1,
            left.turns[i] if i < len(left.turns) else None,
            right.turns[i] if i < len(right.turns) else None,
        )
        for i in range(n)
    )


def _arguments_text(arguments: Any) -> str:
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments, ensure_ascii=False, sort_keys=False)


def _arguments(arguments: Any) -> Mapping[str, Any]:
    """The arguments as an object: OpenAI's JSON text parsed, anything unreadable as none."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return {}
    return arguments if isinstance(arguments, Mapping) else {}


def shown_findings(observation: str) -> list[Finding]:
    """The matches a search's observation showed the agent, as whole-line findings."""
    found = []
    for line in observation.splitlines():
        m = _MATCH_LINE.match(line)
        if m is not None:
            start = int(m["start"])
            end = int(m["end"]) if m["end"] else start
            found.append(Finding(m["path"], start, 0, max(start, end), 0, 0, 0, ""))
    return found


def _read_range(arguments: Mapping[str, Any], expected: Sequence[Span]) -> ReadRange | None:
    path, start, end = arguments.get("path"), arguments.get("start_line"), arguments.get("end_line")
    if not isinstance(path, str) or not isinstance(start, int):
        return None
    last = end if isinstance(end, int) else start
    covers = tuple(
        s for s in expected if s.path == path and s.start_line <= last and s.end_line >= start
    )
    return ReadRange(path, start, last, covers)


def _call_view(turn: int, call: Mapping[str, Any], expected: Sequence[Span] | None) -> CallView:
    name = str(call.get("name", ""))
    observation = str(call.get("observation", ""))
    error = str(call.get("error", ""))
    shown = observation[:OBSERVATION_VIEW_CHARS]
    kind = (
        "search"
        if name in SEARCH_TOOLS
        else "read"
        if name == READ_FILE
        else "submit"
        if name == SUBMIT
        else "other"
    )
    rows: tuple[FindingRow, ...] = ()
    read = None
    if kind == "search" and not error and expected is not None:
        # Only what was shown is parsed: the diff is of what the agent saw, and a cut observation
        # stays cheap to read.
        rows = finding_rows(diff_findings(shown_findings(shown), expected))
    elif kind == "read" and not error:
        read = _read_range(_arguments(call.get("arguments")), expected or ())
    return CallView(
        turn=turn,
        name=name,
        arguments=_arguments_text(call.get("arguments")),
        kind=kind,
        observation=shown,
        observation_chars=len(observation),
        error=error,
        matches=int(call.get("findings") or 0),
        rows=rows,
        read=read,
    )


def corpus_problem(corpus: str) -> str:
    """Why the corpus's files cannot be shown ("" when they can)."""
    try:
        corpus_root(corpus)
    except CodesearchError as err:
        return str(err)
    return ""


def trajectory_view(
    trajectory: Mapping[str, Any],
    blueprint: Blueprint | None,
    *,
    corpus: str,
    title: str = "",
    blueprint_id: str = "",
    settings: Mapping[str, Any] | None = None,
) -> Trajectory:
    """The view of one trajectory (`EpisodeResult.to_dict()`'s shape, `info` included);
    `settings` the gym's settings it was played with (`GymSettings.to_dict`), for the weights."""
    bp_id = blueprint_id or str(trajectory.get("blueprint_id", ""))
    expected = blueprint.expected if blueprint is not None else None
    info = trajectory.get("info") or {}
    problem = ""
    turns: list[TurnView] = []
    try:
        for number, turn in enumerate(trajectory["turns"], start=1):
            calls = tuple(_call_view(number, c, expected) for c in turn)
            turns.append(TurnView(number, calls))
        submit = trajectory.get("submit")
        submitted_spans = (
            None
            if submit is None
            else [Span(str(s["path"]), int(s["start_line"]), int(s["end_line"])) for s in submit]
        )
        components = {str(k): float(v) for k, v in (info.get("components") or {}).items()}
        reward = float(info.get("reward", 0.0))
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        problem = f"the trajectory cannot be read ({type(err).__name__}: {err})"
        turns, submitted_spans, components, reward = [], None, {}, 0.0
    submitted = None
    if submitted_spans is not None:
        found = [Finding(s.path, s.start_line, 0, s.end_line, 0, 0, 0, "") for s in submitted_spans]
        submitted = finding_rows(diff_findings(found, expected or ()))
    return Trajectory(
        title=title,
        blueprint_id=bp_id,
        corpus=corpus,
        blueprint=blueprint,
        turns=tuple(turns),
        submitted=submitted,
        reward=reward,
        components=components,
        end_reason=str(info.get("end_reason", "")),
        calls=int(info.get("calls", sum(len(t.calls) for t in turns))),
        invalid_calls=int(info.get("invalid_calls", 0)),
        corpus_problem=corpus_problem(corpus) if corpus else "no corpus is named",
        problem=problem,
        weights=_weights(settings),
    )


def _weights(settings: Mapping[str, Any] | None) -> RewardWeights:
    try:
        return GymSettings.from_dict(settings or {}).weights
    except (TypeError, ValueError):  # settings a later version wrote, or damaged: the defaults
        return RewardWeights()


def is_agent_run(run: EvalRun) -> bool:
    return run.engine.startswith(AGENT_ENGINE_PREFIX)


def answer_trajectory(
    run: EvalRun, item: EvalItem, answer: EvalAnswer, blueprint: Blueprint | None
) -> Trajectory | None:
    """An agent run's answer as a trajectory (its `raw_text` is one, `gym.evaluate`); None for a
    single-call run's answer."""
    if not is_agent_run(run):
        return None
    try:
        trajectory = json.loads(answer.raw_text)
        if not isinstance(trajectory, Mapping):
            raise ValueError("not an object")
    except ValueError as err:
        trajectory = {"blueprint_id": item.blueprint_id, "turns": None, "error": str(err)}
    corpus = item.corpus or (blueprint.corpus if blueprint is not None else "")
    settings = run.summary.get("settings")
    return trajectory_view(trajectory, blueprint, corpus=corpus, title=run.label,
                           blueprint_id=item.blueprint_id,
                           settings=settings if isinstance(settings, Mapping) else None)  # fmt: skip


def episode_trajectory(episode: StoredEpisode, blueprint: Blueprint | None) -> Trajectory:
    """A stored episode (the episodes table) as a trajectory."""
    title = f"{episode.engine}" + (f" · {episode.model}" if episode.model else "")
    return trajectory_view(episode.trajectory, blueprint, corpus=episode.corpus, title=title,
                           blueprint_id=episode.blueprint_id, settings=episode.settings)  # fmt: skip
