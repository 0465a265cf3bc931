"""First start: load the shipped seed blueprints into an empty store."""

from __future__ import annotations

from codesearch_core import config
from codesearch_core.corpora import read_blueprints_jsonl
from codesearch_core.models import Blueprint
from codesearch_core.store import ImportReport, Store


def seed_blueprints() -> list[Blueprint]:
    """The shipped seeds, or none when the seeds file is absent (a trimmed install)."""
    path = config.seeds_file()
    if not path.is_file():
        return []
    blueprints, _ = read_blueprints_jsonl(path)
    return blueprints


def ensure_seeded(store: Store) -> ImportReport | None:
    """Load the shipped seeds into an empty store (first start); None when it already has blueprints.

    Idempotent: a second call, or a second process, adds nothing (blueprints are stored once by id
    and content hash).
    """
    if store.counts().blueprints:
        return None
    return store.blueprints.add(seed_blueprints(), source="seeds")
