"""Import blueprints and proposals JSONL into the store: validate the whole file, then write once.

Parsing is not done here: blueprints are read by `blueprints.read_blueprints_jsonl` and proposals by
the import engine (`engines.import_engine`), so a file means the same thing wherever it is loaded.
A bad line raises an InputFileError naming the file and line and nothing is stored, unless
`skip_bad`: then the good lines are stored and the bad ones listed in the report.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codesearch_core.blueprints import read_blueprints_jsonl
from codesearch_core.engines.import_engine import ImportEngine
from codesearch_core.store_types import BlueprintConflictError, ImportReport

if TYPE_CHECKING:
    from codesearch_core.store import Store


def import_blueprints_jsonl(store: Store, path: Path, *, skip_bad: bool = False) -> ImportReport:
    blueprints, bad_lines = read_blueprints_jsonl(path, skip_bad=skip_bad)
    try:
        report = store.add_blueprints(blueprints, source=str(path), skip_bad=skip_bad)
    except BlueprintConflictError as err:
        raise _with_line(err, path) from None
    conflicts = tuple(
        _with_line(err, path) if isinstance(err, BlueprintConflictError) else err
        for err in report.errors
    )
    return replace(report, errors=(*bad_lines, *conflicts))


def import_proposals_jsonl(store: Store, path: Path, *, skip_bad: bool = False) -> ImportReport:
    blueprints = store.get_blueprints(sorted(_field_values(path, "blueprint_id")))
    engine = ImportEngine(path, skip_bad=skip_bad)
    proposals = engine.propose(blueprints)
    report = store.add_proposals_report(proposals, source=str(path))
    return replace(report, errors=tuple(engine.skipped))


def _json_objects(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for the lines that decode to objects; the rest is the parsers' job."""
    try:
        with path.open("rb") as fh:
            for number, raw in enumerate(fh, start=1):
                try:
                    value = json.loads(raw)
                except (ValueError, UnicodeDecodeError):
                    continue
                if isinstance(value, dict):
                    yield number, value
    except OSError:
        return


def _field_values(path: Path, field: str) -> set[str]:
    return {v for _, obj in _json_objects(path) if isinstance(v := obj.get(field), str)}


def _with_line(err: BlueprintConflictError, path: Path) -> BlueprintConflictError:
    """The store only knows which blueprint conflicts; point at the line that holds it."""
    for number, obj in _json_objects(path):
        if obj.get("id") == err.blueprint_id:
            return BlueprintConflictError(err.blueprint_id, source=str(path), line=number)
    return BlueprintConflictError(err.blueprint_id, source=str(path))
