"""Import blueprints and proposals JSONL into the store: validate the whole file, then write once.

Parsing is not done here: blueprints are read by `blueprints.read_blueprints_jsonl` and proposals by
the import engine (`engines.import_engine`), so a file means the same thing wherever it is loaded.
A bad line raises an InputFileError naming the file and line and nothing is stored, unless
`skip_bad`: then the good lines are stored and the bad ones listed in the report.

Each file is read once, a line at a time, and a line longer than `MAX_LINE_BYTES` is refused after
reading that much, so a huge file without newlines never sits in memory. A blueprint is also
refused when its corpus is not here or lacks one of its expected files: no call could ever match
that gold, and verifying it would fail. Only to name the line of a blueprint refused after parsing
(those, and ids that conflict with the store) is the file read again.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from codesearch_core.corpora import (
    bounded_lines,
    check_expected_files,
    corpus_root,
    line_too_long,
    open_jsonl,
    read_blueprints_jsonl,
)
from codesearch_core.engines import ImportEngine
from codesearch_core.errors import CorpusError, InputFileError
from codesearch_core.models import Blueprint
from codesearch_core.store import BlueprintConflictError, ImportReport
from codesearch_core.tools import ArgvError, check_runnable

if TYPE_CHECKING:
    from codesearch_core.store import Store

_PAGE: Final = 10_000


def import_blueprints_jsonl(store: Store, path: Path, *, skip_bad: bool = False) -> ImportReport:
    lines = _BoundedLines(path, skip_bad=skip_bad)
    blueprints, bad_lines = read_blueprints_jsonl(lines, skip_bad=skip_bad)
    missing = corpus_check_errors(blueprints, _BoundedLines(path, skip_bad=True), source=str(path))
    if missing and not skip_bad:
        raise missing[0]
    refused = {e.blueprint_id for e in missing}
    try:
        report = store.blueprints.add(
            [bp for bp in blueprints if bp.id not in refused], source=str(path), skip_bad=skip_bad
        )
    except BlueprintConflictError as err:
        raise _with_line(err, path) from None
    conflicts = [
        _with_line(err, path) if isinstance(err, BlueprintConflictError) else err
        for err in report.errors
    ]
    errors = sorted([*lines.errors, *bad_lines, *missing, *conflicts], key=lambda e: e.line)
    return replace(report, errors=tuple(errors))


def import_proposals_jsonl(
    store: Store, path: Path, *, skip_bad: bool = False, source: str = ""
) -> ImportReport:
    """`source` names the file in errors and in the store (an upload's name, not its temp path)."""
    # Every stored blueprint is a valid target: handing them all to the engine spares a first pass
    # over the file to learn which ones it names (the store is bounded, the file is not).
    engine = ImportEngine(path, skip_bad=skip_bad, source=source)
    proposals = engine.propose(_stored_blueprints(store))
    report = store.add_proposals_report(proposals, source=source or str(path))
    return replace(report, errors=tuple(engine.skipped))


class ExpectedFilesError(InputFileError):
    """A blueprint whose corpus is not here, or lacks files its expected findings name."""

    def __init__(self, blueprint_id: str, message: str, *, source: str = "", line: int = 0) -> None:
        super().__init__(message, source=source, line=line)
        self.blueprint_id = blueprint_id


def corpus_check_errors(
    blueprints: Sequence[Blueprint], lines: Iterable[str | bytes], *, source: str
) -> list[ExpectedFilesError]:
    """An error for each blueprint that cannot be gold on its corpus: the corpus is not here, its
    expected findings name a file the corpus does not have, or its reference call could not run
    there (a path outside the corpus, an unknown file type, ...). In the order given, naming its
    line among `lines` (the text the blueprints were read from: a file's `_BoundedLines`, an
    upload's lines)."""
    roots: dict[str, Path | CorpusError] = {}
    problems: dict[str, str] = {}
    for bp in blueprints:
        if bp.corpus not in roots:
            try:
                roots[bp.corpus] = corpus_root(bp.corpus)
            except CorpusError as err:
                roots[bp.corpus] = err
        root = roots[bp.corpus]
        if isinstance(root, CorpusError):
            problems[bp.id] = f"{root}; add the corpus before its blueprints"
        elif gone := check_expected_files(bp, root):
            shown = ", ".join(gone[:5]) + (f" and {len(gone) - 5} more" if len(gone) > 5 else "")
            problems[bp.id] = (
                f"blueprint {bp.id!r}: expected file missing from corpus {bp.corpus!r}: {shown}"
                " (no call could find it; fix the expected findings or the corpus)"
            )
        else:
            try:
                for call in bp.reference_calls:
                    check_runnable(call, root)
            except ArgvError as err:
                problems[bp.id] = (
                    f"blueprint {bp.id!r}: its reference call cannot run on corpus "
                    f"{bp.corpus!r}: {err} (a reference call is gold: it must run)"
                )
    if not problems:
        return []
    line_of = _lines_of_ids(lines, problems)
    return [
        ExpectedFilesError(bp_id, message, source=source, line=line_of.get(bp_id, 0))
        for bp_id, message in problems.items()
    ]


class _BoundedLines:
    """A JSONL file's lines as bytes, each read with at most `MAX_LINE_BYTES` held in memory.

    A longer line raises a line-numbered InputFileError; with `skip_bad` it is listed in `errors`
    and passed on as a blank line instead (read past, never held), so line numbers stay right.
    `name` is what `read_blueprints_jsonl` puts in its messages.
    """

    def __init__(self, path: Path, *, skip_bad: bool = False) -> None:
        self.path = path
        self.name = str(path)
        self.skip_bad = skip_bad
        self.errors: list[InputFileError] = []

    def __iter__(self) -> Iterator[Any]:
        # Bytes, typed Any for `read_blueprints_jsonl`: decoding (and naming bad UTF-8) is its job.
        with open_jsonl(self.path) as handle:
            for number, chunk in bounded_lines(handle):
                if chunk is not None:
                    yield chunk
                    continue
                too_long = line_too_long("record", source=self.name, line=number)
                if not self.skip_bad:
                    raise too_long
                self.errors.append(too_long)
                yield b"\n"


def _lines_of_ids(lines: Iterable[str | bytes], ids: Collection[str]) -> dict[str, int]:
    """Line number of the first object whose `id` is one of `ids`."""
    found: dict[str, int] = {}
    for number, raw in enumerate(lines, start=1):
        if number == 1:
            raw = (
                raw.removeprefix(b"\xef\xbb\xbf")
                if isinstance(raw, bytes)
                else raw.removeprefix("\ufeff")
            )
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict) and isinstance(bp_id := value.get("id"), str) and bp_id in ids:
            found.setdefault(bp_id, number)
            if len(found) == len(ids):
                break
    return found


def _with_line(err: BlueprintConflictError, path: Path) -> BlueprintConflictError:
    """The store only knows which blueprint conflicts; point at the line that holds it."""
    line = _lines_of_ids(_BoundedLines(path, skip_bad=True), {err.blueprint_id}).get(
        err.blueprint_id, 0
    )
    return BlueprintConflictError(err.blueprint_id, source=str(path), line=line)


def _stored_blueprints(store: Store) -> list[Blueprint]:
    page = store.blueprints.list(limit=_PAGE)
    blueprints = list(page.items)
    while len(blueprints) < page.total:
        page = store.blueprints.list(offset=len(blueprints), limit=_PAGE)
        if not page.items:
            break
        blueprints.extend(page.items)
    return blueprints
