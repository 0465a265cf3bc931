"""Evaluating an agent on a task set: one episode per task and sample, stored as an eval run.

The run is an ordinary eval run (`store.evals`), so the Evaluations page lists it and compares it
with others; each answer is one episode: `raw_text` holds its trajectory (`EpisodeResult.to_dict`,
the import line's shape with every observation), `call` its submit, `findings` the submitted
locations (so the answer view diffs them against the expected spans), `error` why it ended without
a submit. The summary adds the agent's own metrics, overall, per tag and per language:
`success_rate` (reward >= 0.9), `mean_turns`, `mean_calls`, `invalid_call_rate`, `submit_rate`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any, Final

from codesearch_core import config
from codesearch_core.errors import InputFileError
from codesearch_core.export import full_summary
from codesearch_core.gym.actions import SEARCH_TOOLS, SUBMIT
from codesearch_core.gym.episode import Episode, EpisodeResult
from codesearch_core.gym.policies import Policy
from codesearch_core.gym.settings import DEFAULT_SETTINGS, GymSettings
from codesearch_core.gym.tasks import Task
from codesearch_core.models import Finding, canonical_json
from codesearch_core.store import EvalAnswer, EvalItem, EvalRun

#: The agent metrics a run's summary adds (beside the single-call eval's).
AGENT_METRICS: Final = (
    "success_rate",
    "mean_reward",
    "mean_turns",
    "mean_calls",
    "invalid_call_rate",
    "submit_rate",
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
) -> EvalRun:
    """`n` episodes of `policy` per task (episodes run on a few threads; each episode's searches
    share the gym's pool), graded and summarized into an eval run (module docstring)."""
    if not tasks:
        raise InputFileError("nothing to evaluate: no task in the set")
    jobs = [(task, k) for task in tasks for k in range(n)]
    done = 0
    results: dict[tuple[str, int], EpisodeResult] = {}
    pool = ThreadPoolExecutor(max_workers=workers or 2 * config.usable_cores())
    try:
        futures = {(t.blueprint.id, k): pool.submit(play, policy, t, settings) for t, k in jobs}
        for key, future in futures.items():
            results[key] = future.result()
            done += 1
            if on_progress is not None:
                on_progress(done, len(jobs))
    except BaseException:
        # A failed episode (a model server gone) or Ctrl-C ends the run: the episodes not begun
        # are dropped rather than played to the end before the error is seen.
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    pairs = [(t, results[(t.blueprint.id, k)]) for t, k in jobs]
    items = tuple(
        EvalItem(
            blueprint_id=task.blueprint.id,
            tags=tuple(task.blueprint.tags),
            language=task.blueprint.language,
            reference_tool=task.blueprint.reference_call.name.value,
            answers=tuple(_answer(results[(task.blueprint.id, k)], task) for k in range(n)),
            corpus=task.blueprint.corpus,
            blueprint=task.blueprint,
        )
        for task in tasks
    )
    created = datetime.now(UTC)
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
    }
    return EvalRun(
        run_id=f"{created:%Y%m%d-%H%M%S-%f}-agent-{policy.name}",
        engine=f"{AGENT_ENGINE_PREFIX}{policy.name}",
        model=policy.model,
        n=n,
        blueprints=label,
        created_at=created.replace(tzinfo=None).isoformat(),
        items=items,
        summary=summary,
    )
