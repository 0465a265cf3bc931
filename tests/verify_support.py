"""Shared data for the verification tests: proposals made from the shipped seeds, and a slow corpus."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from codesearch_core.corpora.blueprints import load_seed_blueprints
from codesearch_core.corpora.corpus import corpus_root
from codesearch_core.engines.mutations import MutationEngine
from codesearch_core.models import Blueprint, Proposal, Span
from codesearch_core.store.core import Store
from codesearch_core.store.rows import proposal_id
from codesearch_core.verify.tasks import VerifyOutcome, VerifyTask

#: Catastrophic backtracking in PCRE2: each 32-`a` line takes tens of milliseconds to reject, below
#: PCRE2's match limit (33 and more `a`s hit the limit and fail fast instead of running long).
SLOW_PATTERN = "^(a|aa)+$"
SLOW_LINE = "a" * 32 + "!"


def reference_proposal(bp: Blueprint) -> Proposal:
    """The blueprint's own reference call, proposed as if a model had written it."""
    return Proposal(
        blueprint_id=bp.id,
        engine="reference",
        model="reference",
        raw_text=bp.reference_call.to_json(),
        call=bp.reference_call,
        valid=True,
    )


def invalid_proposal(bp: Blueprint) -> Proposal:
    return Proposal(
        blueprint_id=bp.id,
        engine="test",
        model="test",
        raw_text='{"name": "ripgrep_search", "arguments": {',
        call=None,
        valid=False,
        error="invalid JSON: unexpected end of text",
    )


def seed_proposals(mutations_per_blueprint: int = 2) -> tuple[list[Blueprint], list[Proposal]]:
    """Every seed blueprint, with its reference call and up to N mutations of it."""
    blueprints = load_seed_blueprints()
    mutations = MutationEngine().propose(blueprints, n=mutations_per_blueprint)
    return blueprints, [reference_proposal(bp) for bp in blueprints] + mutations


def task_for(proposal: Proposal, bp: Blueprint, **limits: Any) -> VerifyTask:
    return VerifyTask(
        proposal_id=proposal_id(proposal),
        call_json=None if proposal.call is None else proposal.call.to_json(),
        corpus=bp.corpus,
        corpus_root=str(corpus_root(bp.corpus)),
        expected=bp.expected,
        invalid_reason=proposal.error,
        **limits,
    )


def tasks_for(blueprints: Sequence[Blueprint], proposals: Sequence[Proposal]) -> list[VerifyTask]:
    by_id = {bp.id: bp for bp in blueprints}
    return [task_for(p, by_id[p.blueprint_id]) for p in proposals]


def comparable(outcome: VerifyOutcome) -> tuple[Any, ...]:
    """Everything about an outcome except timings, stderr (which can carry timings) and where the
    tool binary lives (another machine, another path)."""
    run = outcome.run
    return (
        run.ok,
        run.error_kind,
        run.findings,
        run.truncated,
        run.return_code,
        run.argv[1:],
        outcome.grade,
        outcome.reward.total,
        dict(outcome.reward.components),
    )


def by_proposal(outcomes: Sequence[VerifyOutcome]) -> dict[str, tuple[Any, ...]]:
    keyed = {o.proposal_id: comparable(o) for o in outcomes}
    assert len(keyed) == len(outcomes), "an outcome was reported twice"
    return keyed


def make_store(path: Path, blueprints: Sequence[Blueprint], proposals: Sequence[Proposal]) -> Store:
    store = Store(path)
    store.blueprints.add(blueprints)
    store.add_proposals(list(proposals))
    return store


def write_slow_corpus(root: Path) -> Path:
    """A corpus where SLOW_PATTERN runs for well over a minute (2,000 lines of ~40 ms each)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "aaa.txt").write_text((SLOW_LINE + "\n") * 2000, encoding="utf-8")
    return root


def slow_blueprint(corpus: str) -> Blueprint:
    from codesearch_core.tools.schemas import parse_tool_call

    return Blueprint(
        id="slow-backtracking",
        intent="Lines made only of the letter a (a pattern that backtracks catastrophically).",
        reference_call=parse_tool_call(
            {"name": "ripgrep_search", "arguments": {"pattern": SLOW_PATTERN, "pcre2": True}}
        ),
        corpus=corpus,
        expected=(Span("aaa.txt", 1, 1),),
        language="text",
    )
