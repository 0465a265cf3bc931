"""Curated items out of the store as training data: xLAM, chat (SFT) and preference-pair JSONL.

Only proposals the export rule takes are exported (`EXPORT_RULE`: resolved as accepted, ran without
an error, graded against the blueprint as it is now; the manifest counts what it left out and why),
and, with `include_reference`, each matching blueprint's reference call as a gold item (a reference
call that an accepted proposal repeats is written once; one whose paths leave its corpus is skipped
and counted).
Records are numbered and ordered by blueprint id, then the reference call, then proposal id, so the
same store and filters give the same bytes. Pairs: for every rejected proposal, the blueprint's best
accepted proposal (highest span F1, then lowest id) or else its reference call is `chosen`.

Every export is written atomically (a temp file in the same folder, fsync, rename) with a manifest
beside it (`<out>.manifest.json`): a crash, a kill or a full disk leaves the previous file intact and
no partial file under the final name.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import tempfile
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from enum import StrEnum
from itertools import groupby, islice
from pathlib import Path
from typing import Any, BinaryIO, Final, TypeVar

import msgspec

from codesearch_core import config
from codesearch_core.access import Action
from codesearch_core.corpora import corpus_root
from codesearch_core.errors import CodesearchError, StoreError
from codesearch_core.export.formats import chat_record, pair_record, xlam_record
from codesearch_core.models import ToolCall, ToolName
from codesearch_core.store import DecisionState, ExportRow, QueueFilters, Store, utc_now
from codesearch_core.tools import check_runnable, parse_tool_call

T = TypeVar("T")

PACKAGE: Final = "codesearch-gym-studio"
EXPORT_RULE: Final = (
    "an answer is exported when it is resolved as accepted (the reviews the store asks for agree, "
    "or a lead decided), its call ran without an error, and its grade is current (computed "
    "against the blueprint's present corpus and expected spans); preference pairs take as "
    "rejected answers the items resolved as rejected and the items whose run failed "
    "(meta.run_failed)"
)
_WRITE_BUFFER: Final = 1 << 20


class ExportFormat(StrEnum):
    XLAM = "xlam"
    CHAT = "chat"
    PAIRS = "pairs"


@dataclass(frozen=True, slots=True)
class WriteResult:
    rows: int
    bytes: int
    sha256: str


@dataclass(frozen=True, slots=True)
class Manifest:
    """What an export wrote and from what: stored as JSON beside the data file."""

    format: str
    path: str
    rows: int
    bytes: int
    sha256: str
    counts: Mapping[str, int]
    filters: Mapping[str, Any]
    with_meta: bool
    include_reference: bool
    store: Mapping[str, Any]
    created_at: str
    code_version: str
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def manifest_path(out_path: Path) -> Path:
    return out_path.with_name(out_path.name + ".manifest.json")


def code_version() -> str:
    try:
        return importlib.metadata.version(PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


# --- records -------------------------------------------------------------------------------------


class ExportCounts:
    """Tallies kept while records stream out; they end up in the manifest's `counts`."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def add(self, key: str) -> None:
        self.counts[key] = self.counts.get(key, 0) + 1


class _GoldCheck:
    """Whether a reference call can be a gold answer: it must be able to run on its corpus (a
    blueprint stored before imports checked that may name a path outside it). Where the corpus is
    not on this machine the paths are still checked as written (no `..`, not absolute). Corpus
    roots are looked up once per export, not once per row."""

    def __init__(self) -> None:
        self._roots: dict[str, Path] = {}

    def __call__(self, row: ExportRow) -> bool:
        if row.call_json is None:
            return False
        if row.corpus not in self._roots:
            try:
                self._roots[row.corpus] = corpus_root(row.corpus)
            except CodesearchError:
                self._roots[row.corpus] = config.corpora_dir() / row.corpus
        try:
            check_runnable(parse_tool_call(json.loads(row.call_json)), self._roots[row.corpus])
        except (CodesearchError, ValueError):
            return False
        return True


def _accepted_rows(
    store: Store,
    filters: QueueFilters,
    include_reference: bool,
    with_meta: bool,
    counter: ExportCounts,
) -> Iterator[ExportRow]:
    rows = store.export_rows(
        filters, kind="accepted", include_reference=include_reference, with_meta=with_meta
    )
    gold = _GoldCheck()
    for _, group in groupby(rows, key=lambda r: r.blueprint_id):
        items = list(group)
        accepted_calls = {r.call_hash for r in items if r.proposal_id is not None}
        for row in items:
            if row.proposal_id is None and row.call_hash in accepted_calls:
                continue  # the same call is exported with its review provenance instead
            if row.proposal_id is None and not gold(row):
                counter.add("reference_outside_corpus")
                continue
            yield row


def _f1(row: ExportRow) -> float:
    return (
        -1.0 if row.grade is None or row.grade["span_f1"] is None else float(row.grade["span_f1"])
    )


def _counter_rows(rows: list[ExportRow]) -> list[ExportRow]:
    """The blueprint's counter-calls as rejected rows (they come on its reference row)."""
    ref = next((r for r in rows if r.proposal_id is None and r.counter_calls_json), None)
    if ref is None or ref.counter_calls_json is None:
        return []
    out = []
    for counter in json.loads(ref.counter_calls_json):
        call = ToolCall(ToolName(counter["call"]["name"]), counter["call"]["arguments"])
        out.append(
            replace(
                ref,
                call_json=call.to_json(),
                call_hash=call.call_hash,
                raw_text=call.to_json(),
                tool=call.name.value,
                action="reject",
                counter_calls_json=None,
                counter_why=str(counter["why"]),
            )
        )
    return out


def _pairs(
    store: Store, filters: QueueFilters, counter: ExportCounts
) -> Iterator[tuple[ExportRow, ExportRow]]:
    rows = store.export_rows(filters, kind="pairs", include_reference=True)
    gold = _GoldCheck()
    for _, group in groupby(rows, key=lambda r: r.blueprint_id):
        items = list(group)
        accepted = [r for r in items if r.action == "accept"]
        reference = [r for r in items if r.proposal_id is None and gold(r)]
        if accepted:
            chosen = min(accepted, key=lambda r: (-_f1(r), r.proposal_id or ""))
        elif reference:
            chosen = reference[0]
        else:
            continue
        for row in [*items, *_counter_rows(items)]:
            if row.action != "reject":
                continue
            if row.call_hash is not None and row.call_hash == chosen.call_hash:
                counter.add("skipped_same_call")
                continue
            counter.add("chosen_reference" if chosen.proposal_id is None else "chosen_accepted")
            if row.counter_why:
                counter.add("rejected_counter_call")
            elif row.call_json is None:
                counter.add("rejected_invalid")
            elif row.run_ok is False:
                counter.add("rejected_run_failed")
            yield chosen, row


def records(
    store: Store,
    fmt: ExportFormat | str,
    filters: QueueFilters | None = None,
    *,
    with_meta: bool = False,
    include_reference: bool = False,
    counter: ExportCounts | None = None,
) -> Generator[dict[str, Any], None, None]:
    """The export's records in order, streamed (what `export` writes and the app previews)."""
    fmt = ExportFormat(fmt)
    filters = replace(filters or QueueFilters(), decision=DecisionState.ACCEPTED)
    counter = counter or ExportCounts()
    if fmt is ExportFormat.PAIRS:
        for chosen, rejected in _pairs(store, filters, counter):
            counter.add("pairs")
            yield pair_record(chosen, rejected, with_meta=with_meta)
        return
    rows = _accepted_rows(store, filters, include_reference, with_meta, counter)
    for index, row in enumerate(rows):
        counter.add("reference" if row.proposal_id is None else "proposal")
        counter.add(f"tool:{row.tool}")
        if fmt is ExportFormat.XLAM:
            yield xlam_record(index, row, with_meta=with_meta)
        else:
            yield chat_record(row, with_meta=with_meta)


def _left_out(store: Store, filters: QueueFilters) -> dict[str, int]:
    counts = store.export_answer_counts(filters)
    return {k: n for k, n in counts.items() if k != "answers"}


def preview(
    store: Store,
    fmt: ExportFormat | str,
    filters: QueueFilters | None = None,
    *,
    limit: int = 5,
    with_meta: bool = False,
    include_reference: bool = False,
) -> list[dict[str, Any]]:
    """The first `limit` records an export would write (for those who may export)."""
    store.require(Action.EXPORT)
    stream = records(store, fmt, filters, with_meta=with_meta, include_reference=include_reference)
    try:
        return list(islice(stream, max(limit, 0)))
    finally:
        stream.close()


# --- writing -------------------------------------------------------------------------------------


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_stale_temps(path: Path) -> None:
    """Temp files left by an export that was killed (its process is gone) are removed."""
    prefix = f".{path.name}."
    for candidate in path.parent.glob(f".{path.name}.*.tmp"):
        pid_text = candidate.name[len(prefix) :].split(".", 1)[0]
        if pid_text.isdigit() and not _pid_alive(int(pid_text)):
            candidate.unlink(missing_ok=True)


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems cannot sync a directory; the rename itself is still atomic
    finally:
        os.close(fd)


def _write_temp(path: Path, fill: Callable[[BinaryIO], T], what: str) -> tuple[Path, T]:
    """Run `fill` on a temp file beside `path` and sync it; the caller renames it into place.

    On any error the temp file is removed, and an OSError (disk full, permission) becomes a
    StoreError; `path` itself is never touched here.
    """
    if path.is_dir():
        raise StoreError(f"{path} is a directory; give a file name for the {what}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _remove_stale_temps(path)
        fd, tmp_name = tempfile.mkstemp(
            prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=path.parent
        )
    except OSError as err:
        raise StoreError(f"cannot write the {what} {path}: {err.strerror or err}") from err
    tmp = Path(tmp_name)
    try:
        # mkstemp makes the file 0600; an export is for others (trainers, teammates) to read.
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb", buffering=_WRITE_BUFFER) as fh:
            result = fill(fh)
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as err:
        tmp.unlink(missing_ok=True)
        raise StoreError(
            f"could not write the {what} {path}: {err.strerror or err}; {_kept(path)}"
        ) from err
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp, result


def _umask() -> int:
    """The process umask, read without changing it (os.umask would, for every thread)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


def export_path(name: str | Path, folder: Path | None = None) -> Path:
    """Where the app writes an export called `name`: inside the exports folder, never elsewhere.

    `name` is a file name or a relative path under the folder; an absolute path, `..` or a path
    through a link that leaves the folder is refused (the app's users cannot pick server paths).
    """
    folder = (folder or config.exports_dir()).resolve()
    text = str(name).strip()
    if not text:
        raise StoreError("give the export a file name")
    rel = Path(text)
    if rel.is_absolute() or ".." in rel.parts:
        raise StoreError(
            f"{text!r} is not a file name inside the exports folder: exports are written under "
            f"{folder} only (no absolute paths, no ..)"
        )
    path = (folder / rel).resolve()
    if not path.is_relative_to(folder):
        raise StoreError(f"{text!r} leads outside the exports folder {folder}")
    return path


def _kept(path: Path) -> str:
    return "the previous file is unchanged" if path.exists() else "no file was created"


def _move_into_place(moves: Sequence[tuple[Path, Path]], what: str) -> None:
    """Rename each synced temp file over its final name, then sync the folder."""
    try:
        for tmp, path in moves:
            os.replace(tmp, path)
    except OSError as err:
        for tmp, _ in moves:
            tmp.unlink(missing_ok=True)
        raise StoreError(f"could not put the {what} in place: {err.strerror or err}") from err
    for folder in {path.parent for _, path in moves}:
        _fsync_dir(folder)


def _jsonl_fill(rows: Iterable[Mapping[str, Any]]) -> Callable[[BinaryIO], WriteResult]:
    encode = msgspec.json.Encoder().encode

    def fill(fh: BinaryIO) -> WriteResult:
        digest = hashlib.sha256()
        count = size = 0
        for row in rows:
            line = encode(row) + b"\n"
            digest.update(line)
            fh.write(line)
            count += 1
            size += len(line)
        return WriteResult(count, size, digest.hexdigest())

    return fill


def write_jsonl_atomic(path: Path, rows: Iterable[Mapping[str, Any]]) -> WriteResult:
    """Write one JSON object per line to `path`, all or nothing: the previous file stays in place
    until the new one is complete and synced, and a failure leaves no temp file behind."""
    path = Path(path)
    tmp, result = _write_temp(path, _jsonl_fill(rows), "export")
    _move_into_place([(tmp, path)], "export")
    return result


def export(
    store: Store,
    fmt: ExportFormat | str,
    out_path: Path,
    *,
    filters: QueueFilters | None = None,
    with_meta: bool = False,
    include_reference: bool = False,
) -> Manifest:
    """Write the export and its manifest; returns the manifest. Refused (AccessDenied) unless the
    store's actor may export; the export is recorded in the audit trail."""
    store.require(Action.EXPORT)
    fmt = ExportFormat(fmt)
    out_path = Path(out_path)
    if out_path.resolve() == store.path.resolve():
        raise StoreError(f"{out_path} is the store itself; choose another file for the export")
    filters = filters or QueueFilters()
    fingerprint = store.fingerprint()
    counter = ExportCounts()
    stream = records(
        store,
        fmt,
        filters,
        with_meta=with_meta,
        include_reference=include_reference,
        counter=counter,
    )
    data_tmp, result = _write_temp(out_path, _jsonl_fill(stream), "export")
    try:
        # The decision filter does not apply: exports take accepted (and, for pairs, rejected) items.
        exported_filters = {k: v for k, v in filters.to_dict().items() if k != "decision"}
        manifest = Manifest(
            format=fmt.value,
            path=str(out_path),
            rows=result.rows,
            bytes=result.bytes,
            sha256=result.sha256,
            counts=dict(sorted(counter.counts.items())),
            filters=exported_filters,
            with_meta=with_meta,
            include_reference=include_reference and fmt is not ExportFormat.PAIRS,
            store=fingerprint,
            created_at=utc_now().isoformat() + "Z",
            code_version=code_version(),
            extra={"rule": EXPORT_RULE, "left_out": _left_out(store, filters)},
        )
        text = json.dumps(manifest.to_dict(), indent=2, ensure_ascii=False, sort_keys=True) + "\n"
        meta_path = manifest_path(out_path)
        meta_tmp, _ = _write_temp(meta_path, lambda fh: fh.write(text.encode()), "manifest")
    except BaseException:
        data_tmp.unlink(missing_ok=True)
        raise
    # Both files are complete before either is renamed. The old manifest goes first, so a crash
    # between the renames leaves data without a manifest, never a manifest describing other data.
    try:
        meta_path.unlink(missing_ok=True)
    except OSError as err:
        data_tmp.unlink(missing_ok=True)
        meta_tmp.unlink(missing_ok=True)
        raise StoreError(f"cannot replace the manifest {meta_path}: {err.strerror or err}") from err
    _move_into_place([(data_tmp, out_path), (meta_tmp, meta_path)], "export")
    store.record_audit(
        Action.EXPORT,
        "export.write",
        str(out_path),
        format=fmt.value,
        rows=result.rows,
        sha256=result.sha256,
        filters=exported_filters,
    )
    return manifest
