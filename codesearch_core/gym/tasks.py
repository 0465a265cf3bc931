"""The gym's tasks: blueprints whose corpus is here.

Every seed of every seed file (`data/seeds/*.jsonl`: the fixture corpora's and the real packages'),
every blueprint of the store (authored or accepted there) and so every `split:eval` one is a task;
plan seeds are the multi-turn ones. A task whose corpus is missing (the real packages not fetched
yet) cannot run: `Tasks.missing` names it instead of an episode that scores 0 for the
environment's fault.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from codesearch_core.corpora import SEEDS_ALL, check_search_environment, corpus_root, load_seed_set
from codesearch_core.corpora import seed_files as corpora_seed_files
from codesearch_core.errors import CorpusError, InputFileError
from codesearch_core.models import Blueprint


@dataclass(frozen=True, slots=True)
class Task:
    blueprint: Blueprint
    corpus_root: Path


@dataclass(frozen=True, slots=True)
class Tasks:
    tasks: tuple[Task, ...]
    #: Blueprint ids left out, each with why (its corpus is not here).
    missing: tuple[tuple[str, str], ...] = ()


def seed_files() -> list[Path]:
    """Every seed file (the `seeds-all` set): the fixture corpora's first, then the others."""
    return corpora_seed_files(SEEDS_ALL)


def seed_blueprints() -> list[Blueprint]:
    """Every seed of every seed file (`--blueprints seeds-all`)."""
    return load_seed_set(SEEDS_ALL)


def as_tasks(blueprints: Iterable[Blueprint]) -> Tasks:
    """The blueprints whose corpus is here, once each (by id), in order."""
    roots: dict[str, Path | str] = {}
    tasks: list[Task] = []
    missing: list[tuple[str, str]] = []
    seen: set[str] = set()
    for bp in blueprints:
        if bp.id in seen:
            continue
        seen.add(bp.id)
        if bp.corpus not in roots:
            try:
                roots[bp.corpus] = corpus_root(bp.corpus)
            except CorpusError as err:
                roots[bp.corpus] = str(err)
        root = roots[bp.corpus]
        if isinstance(root, Path):
            tasks.append(Task(bp, root))
        else:
            missing.append((bp.id, root))
    return Tasks(tuple(tasks), tuple(missing))


def check_playable(tasks: Tasks, label: str, *, doing: str = "play") -> Tasks:
    """`tasks`, checked before any episode (`eval --agent`, `rollouts`, the Propose page's
    rollouts): some task has its corpus here, and the tools run. Without the tools every search
    would fail alike, and the episodes would be scored (and kept, served) as the agent's."""
    if not tasks.tasks:
        raise InputFileError(f"nothing to {doing}: no task of {label} has its corpus here")
    check_search_environment(t.blueprint.corpus for t in tasks.tasks)
    return tasks


def missing_summary(missing: Sequence[tuple[str, str]]) -> str:
    """One line for people: how many tasks were left out and the first reason."""
    if not missing:
        return ""
    return f"{len(missing)} task(s) left out: their corpus is not here ({missing[0][1]})"
