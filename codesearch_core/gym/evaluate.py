"""Evaluating an agent on a task set: one episode per task and sample, stored as an eval run.

The run is an ordinary eval run (`store.evals`), so the Evaluations page lists it and compares it
with others; each answer is one episode: `raw_text` holds its trajectory (`EpisodeResult.to_dict`,
the import line's shape with every observation), `call` its submit, `findings` the submitted
locations (so the answer view diffs them against the expected spans), `error` why it ended without
a submit. The summary adds the agent's own metrics, overall, per tag and per language:
`success_rate` (reward >= 0.9), `mean_turns`, `mean_calls`, `invalid_call_rate`, `submit_rate`,
and the means of the episodes' recorded metrics (`reward.episode_metrics`, never in the reward):
`mean_precision`, `mean_recall`, `mean_calls_per_turn`, and `mean_evidence_drop` over the episodes
whose searches showed some expected span (None when none did).
"""

from __future__ import annotations

import itertools
import json
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

from codesearch_core import config
from codesearch_core.errors import InputFileError
from codesearch_core.export import full_summary
from codesearch_core.gym.actions import SEARCH_TOOLS, SUBMIT
from codesearch_core.gym.episode import Episode, EpisodeResult
from codesearch_core.gym.policies import Policy, ReplayPolicy, recorded_episode
from codesearch_core.gym.settings import DEFAULT_SETTINGS, GymSettings
from codesearch_core.gym.tasks import Task
from codesearch_core.models import Finding, canonical_json
from codesearch_core.store import UNFINISHED, EvalAnswer, EvalItem, EvalRun

#: The agent metrics a run's summary adds (beside the single-call eval's).
AGENT_METRICS: Final = (
    "success_rate",
    "mean_reward",
    "mean_turns",
    "mean_calls",
    "invalid_call_rate",
    "submit_rate",
    "mean_precision",
    "mean_recall",
    "mean_calls_per_turn",
    "mean_evidence_drop",
)
ProgressFn = Callable[[int, int], None]
#: An agent run's engine is `agent:<policy>` (the Evaluations page shows its answers as episodes).
AGENT_ENGINE_PREFIX: Final = "agent:"


def play(policy: Policy, task: Task, settings: GymSettings = DEFAULT_SETTINGS) -> EpisodeResult:
    """One episode of `policy` on `task`; one the policy leaves unfinished is stopped (scores 0)."""
    episode = Episode(task.blueprint, task.corpus_root, settings)
    policy.play(episode)
    return episode.stop()


def _answer(result: EpisodeResult, task: Task) -> EvalAnswer:
    reference_tool = task.blueprint.reference_call.name.value
    used = {o.call.name for turn in result.turns for o in turn if o.call.name in SEARCH_TOOLS}
    submitted = result.submitted
    return EvalAnswer(
        raw_text=canonical_json(result.to_dict()),
        call=None
        if submitted is None
        else {"name": SUBMIT, "arguments": {"locations": [s.to_dict() for s in submitted]}},
        repaired=False,
        reward=result.reward,
        span_f1=result.grade.span_f1 if result.grade is not None else 0.0,
        tool_ok=reference_tool in used,
        pcre2_violation=result.components["R_pcre2_rule"] < 0,
        error="" if submitted is not None else f"never submitted ({result.end_reason})",
        findings=tuple(
            Finding(s.path, s.start_line, 1, s.end_line, 1, 0, 0, "") for s in submitted or ()
        ),
    )


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def agent_summary(results: Sequence[EpisodeResult]) -> dict[str, Any]:
    calls = sum(r.calls for r in results)
    return {
        "episodes": len(results),
        "success_rate": _mean([float(r.success) for r in results]),
        "mean_reward": _mean([r.reward for r in results]),
        "mean_turns": _mean([float(len(r.turns)) for r in results]),
        "mean_calls": _mean([float(r.calls) for r in results]),
        "invalid_call_rate": sum(r.invalid_calls for r in results) / calls if calls else None,
        "submit_rate": _mean([float(r.submitted is not None) for r in results]),
        "mean_precision": _mean([r.metrics["precision"] for r in results]),
        "mean_recall": _mean([r.metrics["recall"] for r in results]),
        "mean_calls_per_turn": _mean([r.metrics["calls_per_turn"] for r in results]),
        "mean_evidence_drop": _mean(
            [r.metrics["evidence_drop"] for r in results if r.metrics["evidence_seen"]]
        ),
    }


def _summaries(pairs: Sequence[tuple[Task, EpisodeResult]]) -> dict[str, Any]:
    by_tag: dict[str, list[EpisodeResult]] = defaultdict(list)
    by_language: dict[str, list[EpisodeResult]] = defaultdict(list)
    for task, result in pairs:
        for tag in task.blueprint.tags:
            by_tag[tag].append(result)
        by_language[task.blueprint.language].append(result)
    return {
        "overall": agent_summary([r for _, r in pairs]),
        "by_tag": {t: agent_summary(rs) for t, rs in sorted(by_tag.items())},
        "by_language": {lang: agent_summary(rs) for lang, rs in sorted(by_language.items())},
    }


def evaluate_agent(
    policy: Policy,
    tasks: Sequence[Task],
    *,
    n: int = 1,
    label: str = "",
    settings: GymSettings = DEFAULT_SETTINGS,
    workers: int | None = None,
    on_progress: ProgressFn | None = None,
    resume: Resume | None = None,
) -> EvalRun:
    """`n` episodes of `policy` per task (episodes run on a few threads; each episode's searches
    share the gym's pool), graded and summarized into an eval run (module docstring). With
    `resume`, the pairs it holds are not played again, the run keeps its id, and the unfinished
    run is handed to its `checkpoint` every `every_s` seconds and when the run fails."""
    if not tasks:
        raise InputFileError("nothing to evaluate: no task in the set")
    jobs = [(task, k) for task in tasks for k in range(n)]
    results: dict[tuple[str, int], EpisodeResult] = dict(resume.done) if resume else {}
    created = datetime.fromisoformat(resume.created_at) if resume else datetime.now(UTC)
    run_id = resume.run_id if resume else new_run_id(policy, created)

    def run(complete: bool) -> EvalRun:
        return _run(policy, tasks, n, label, settings, results, run_id, created, complete, resume)

    todo = [(t, k) for t, k in jobs if (t.blueprint.id, k) not in results]
    done = len(jobs) - len(todo)
    saved = time.monotonic()
    pool = ThreadPoolExecutor(max_workers=workers or 2 * config.usable_cores())
    try:
        futures = {(t.blueprint.id, k): pool.submit(play, policy, t, settings) for t, k in todo}
        # Collected in the jobs' order, so what is done is always a prefix of each task's samples.
        for key, future in futures.items():
            results[key] = future.result()
            done += 1
            if on_progress is not None:
                on_progress(done, len(jobs))
            if resume is not None and time.monotonic() - saved >= resume.every_s:
                resume.checkpoint(run(complete=False))
                saved = time.monotonic()
    except BaseException:
        # A failed episode (a model server gone) or Ctrl-C ends the run: the episodes not begun
        # are dropped rather than played to the end before the error is seen.
        pool.shutdown(wait=False, cancel_futures=True)
        if resume is not None:  # what was finished is kept, for `--resume`
            resume.checkpoint(run(complete=False))
        raise
    pool.shutdown()
    final = run(complete=True)
    if resume is not None:  # its end replaces the unfinished run
        resume.checkpoint(final)
    return final


def new_run_id(policy: Policy, created: datetime) -> str:
    """An agent run's id: when it began (to the microsecond) and the policy."""
    return f"{created:%Y%m%d-%H%M%S-%f}-agent-{policy.name}"


def replayed(
    run: EvalRun, tasks: Sequence[Task], settings: GymSettings
) -> dict[tuple[str, int], EpisodeResult]:
    """The episodes of a stored agent run, played again from their trajectories (each answer's
    `raw_text`), by blueprint id and sample: what `Resume.done` needs to summarize them with the
    rest. A blueprint not among `tasks`, or an episode whose replay earns another reward than
    stored (the corpus or a tool changed since), is an InputFileError: a run continued so would
    mix two evaluations."""
    by_id = {t.blueprint.id: t for t in tasks}
    out: dict[tuple[str, int], EpisodeResult] = {}
    for item in run.items:
        task = by_id.get(item.blueprint_id)
        if task is None:
            raise InputFileError(
                f"eval run {run.run_id} has episodes of {item.blueprint_id}, which is not in the "
                "task set now"
            )
        for k, answer in enumerate(item.answers):
            where = f"eval run {run.run_id}, {item.blueprint_id} #{k}"
            try:
                trajectory = json.loads(answer.raw_text)
            except ValueError as err:
                raise InputFileError(f"not a stored episode: {err}", source=where) from None
            recorded = recorded_episode(trajectory, where)
            result = play(ReplayPolicy([recorded], model=run.model), task, settings)
            if abs(result.reward - answer.reward) > 1e-9:
                raise InputFileError(
                    f"replays to reward {result.reward:.3f}, stored {answer.reward:.3f}: the "
                    "corpus or the tools changed since the run began; start a new run",
                    source=where,
                )
            out[(item.blueprint_id, k)] = result
    return out


@dataclass(frozen=True, slots=True)
class Resume:
    """A run stored as it goes, so that it can be continued: its id and start (kept when
    continued), the episodes it has (by blueprint id and sample), where the unfinished run is
    saved (`checkpoint`) and how often, and what `summary` records besides (the run's config)."""

    run_id: str
    created_at: str
    checkpoint: Callable[[EvalRun], object]
    done: Mapping[tuple[str, int], EpisodeResult] = field(default_factory=dict)
    every_s: float = 5.0
    summary: Mapping[str, Any] = field(default_factory=dict)


def _samples(
    blueprint_id: str, n: int, results: Mapping[tuple[str, int], EpisodeResult]
) -> list[int]:
    """The samples of a task that `results` holds from the first on (they are kept in order)."""
    return list(itertools.takewhile(lambda k: (blueprint_id, k) in results, range(n)))


def _run(
    policy: Policy,
    tasks: Sequence[Task],
    n: int,
    label: str,
    settings: GymSettings,
    results: Mapping[tuple[str, int], EpisodeResult],
    run_id: str,
    created: datetime,
    complete: bool,
    resume: Resume | None,
) -> EvalRun:
    """The eval run of `results`; unfinished, each task holds the samples it has (a prefix)."""
    answered = {t.blueprint.id: _samples(t.blueprint.id, n, results) for t in tasks}
    kept = [t for t in tasks if answered[t.blueprint.id]]
    pairs = [(t, results[(t.blueprint.id, k)]) for t in kept for k in answered[t.blueprint.id]]
    items = tuple(
        EvalItem(
            blueprint_id=task.blueprint.id,
            tags=tuple(task.blueprint.tags),
            language=task.blueprint.language,
            reference_tool=task.blueprint.reference_call.name.value,
            answers=tuple(
                _answer(results[(task.blueprint.id, k)], task) for k in answered[task.blueprint.id]
            ),
            corpus=task.blueprint.corpus,
            blueprint=task.blueprint,
        )
        for task in kept
    )
    agent = _summaries(pairs)
    single = full_summary(items)  # the keys every eval run has, for the page's charts
    summary = {
        "agent": True,
        "settings": settings.to_dict(),
        "overall": {**single["overall"], **agent["overall"]},
        "by_tag": {t: {**single["by_tag"][t], **s} for t, s in agent["by_tag"].items()},
        "by_language": {
            lang: {**single["by_language"][lang], **s} for lang, s in agent["by_language"].items()
        },
        **(resume.summary if resume else {}),
    }
    if not complete:
        summary[UNFINISHED] = {"episodes": len(pairs), "of": len(tasks) * n}
    return EvalRun(
        run_id=run_id,
        engine=f"{AGENT_ENGINE_PREFIX}{policy.name}",
        model=policy.model,
        n=n,
        blueprints=label,
        created_at=created.replace(tzinfo=None).isoformat(),
        items=items,
        summary=summary,
    )
