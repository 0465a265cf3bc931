"""Shared by the export tests: the seed blueprints behind the exports store (tests/export/conftest.py
builds it), the type of the `datasets` loader fixture, what Qwen2.5's chat template renders calls
and observations as, and the OpenAI fine-tuning schemas (tests/export/data)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
from referencing import Registry, Resource

from codesearch_core.corpora.blueprints import load_seed_blueprints
from codesearch_core.models import Blueprint, DecisionAction
from codesearch_core.store import EPISODE, Store, StoredEpisode

DATA = Path(__file__).parent / "export" / "data"
TOOL_CALL = re.compile(r"<tool_call>\n(.*?)\n</tool_call>", re.DOTALL)
TOOL_RESPONSE = re.compile(r"<tool_response>\n(.*?)\n</tool_response>", re.DOTALL)

#: Seeds of every kind the exports treat differently: ast-grep and ripgrep references, with
#: counter-calls and without, a back-reference (PCRE2), and a plan (no single-call gold).
SEED_IDS = (
    "webshop-useeffect-calls-tsx",
    "webshop-todo-fixme-comments",
    "webshop-password-equals-user-backreference",
    "webshop-db-query-calls-ts",
    "telemetry-c-printf-text-type-filter",
    "telemetry-go-fmt-printf-calls",
    "telemetry-python-bare-except",
    "ledger-println-mentions",
)

Loader = Callable[[Path], Any]


def seed_blueprints() -> list[Blueprint]:
    seeds = load_seed_blueprints()
    chosen = [bp for bp in seeds if bp.id in SEED_IDS]
    plan = next(bp for bp in seeds if bp.plan is not None)
    return [*chosen, plan]


#: Seeds the agent exports' episodes are played on: a ripgrep and an ast-grep reference on two
#: fixture corpora (a plan seed is added: several turns).
EPISODE_SEED_IDS = (
    "webshop-todo-fixme-comments",
    "webshop-useeffect-calls-tsx",
    "telemetry-python-bare-except",
)


@dataclass(frozen=True)
class EpisodeExports:
    """The agent exports of a store of gym episodes, and the episodes they were written from."""

    folder: Path
    episodes: dict[str, StoredEpisode]  # by episode id
    replays: dict[str, Any]  # the gym's ReplayReport, by format


def turns_text(text: str) -> str:
    """A rendered conversation after the system turn (which shows a <tool_call> example)."""
    return text.split("<|im_start|>user", 1)[1]


def openai_validator(name: str) -> jsonschema.Draft202012Validator:
    """The OpenAI schema `name` (tests/export/data), its references resolved among them."""
    schemas = {p.name: json.loads(p.read_text()) for p in DATA.glob("openai-*.schema.json")}
    registry: Registry[Any] = Registry().with_resources(
        (n, Resource.from_contents(s)) for n, s in schemas.items()
    )
    return jsonschema.Draft202012Validator(schemas[name], registry=registry)


def review_episodes(store: Store, *, reject: frozenset[str] = frozenset()) -> list[str]:
    """Decide every stored episode in the Episodes queue as a reviewer does on the Review page
    (one review settles one by default): accept each, reject those of the blueprints in `reject`.
    Only accepted episodes leave the studio. Returns the accepted ids, oldest first."""
    accepted = []
    for episode in store.episodes.list(limit=100_000):
        no = episode.blueprint_id in reject
        action = DecisionAction.REJECT if no else DecisionAction.ACCEPT
        store.queue(EPISODE).decide(episode.episode_id, action, "rev")
        if not no:
            accepted.append(episode.episode_id)
    return accepted
