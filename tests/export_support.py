"""Shared by the export tests: the seed blueprints behind the exports store (tests/export/conftest.py
builds it), and the type of the `datasets` loader fixture."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from codesearch_core.corpora.blueprints import load_seed_blueprints
from codesearch_core.models import Blueprint

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
