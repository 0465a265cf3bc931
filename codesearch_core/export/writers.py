"""Curated items out of the store as training data, one JSONL layout per trainer (`records`), written
atomically with a manifest and a dataset card.

Only proposals the export rule takes are exported (`EXPORT_RULE`: resolved as accepted, ran without
an error, graded against the blueprint as it is now; the manifest counts what it left out and why),
and, with `include_reference`, each matching blueprint's reference call as a gold item (a reference
call that an accepted proposal repeats is written once; one whose paths leave its corpus is skipped
and counted).
Records are numbered and ordered by blueprint id, then the reference call, then proposal id, so the
same store and filters give the same bytes. How pairs are chosen: `export.records`.

Every export is written atomically (a temp file in the same folder, fsync, rename) with a manifest
beside it (`<out>.manifest.json`): a crash, a kill or a full disk leaves the previous file intact and
no partial file under the final name. The folder's `README.md` (the dataset card, rebuilt from the
manifests beside it: one config per export) and, for `sharegpt`, LLaMA-Factory's
`dataset_info.json` (this export's entry added to what is there) are rewritten after it.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any, BinaryIO, Final, TypeVar

import msgspec

from codesearch_core import config
from codesearch_core.access import Action
from codesearch_core.errors import StoreError
from codesearch_core.export.card import card_info, card_is_ours, card_text, dataset_info_text
from codesearch_core.export.episode_rows import ExportCounts
from codesearch_core.export.episodes import EpisodeFrame
from codesearch_core.export.records import (
    ALWAYS_REFERENCE,
    GYM_FORMATS,
    ExportFormat,
    export_filters,
    records,
)
from codesearch_core.store import QueueFilters, Store, StoredEpisode, utc_now
from codesearch_core.tools import pid_alive

T = TypeVar("T")
#: Checks a complete export before it is put in place: (the written temp file, the episode ids of
#: its rows in order); raising leaves the previous file and manifest as they were.
Check = Callable[[Path, Sequence[str]], None]

PACKAGE: Final = "codesearch-gym-studio"
EXPORT_RULE: Final = (
    "an answer is exported when it is resolved as accepted (the reviews the store asks for agree, "
    "or a lead decided), its call ran without an error, and its grade is current (computed "
    "against the blueprint's present corpus and expected spans); preference pairs take as "
    "rejected answers the items resolved as rejected and the items whose run failed "
    "(meta.run_failed); the reward-ranked ones (hf-preference, openai-dpo) also the blueprint's "
    "counter-calls and unreviewed proposals graded well below the chosen answer"
)
_WRITE_BUFFER: Final = 1 << 20


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


def _left_out(store: Store, filters: QueueFilters) -> dict[str, int]:
    counts = store.export_answer_counts(filters)
    return {k: n for k, n in counts.items() if k != "answers"}


def _gone(corpora: Mapping[str, int], counter: ExportCounts) -> dict[str, dict[str, Any]]:
    """What an agent export left out whole: the accepted episodes whose corpus is gone."""
    total = sum(corpora.values())
    if not total:
        return {}
    counter.counts["skipped_corpus_gone"] = total
    names = ", ".join(f"{c} ({n:,})" for c, n in sorted(corpora.items()))
    return {"corpus_gone": {"episodes": total, "corpora": dict(sorted(corpora.items())),
                            "reason": f"their corpus is gone: {names}; kept in the store"}}  # fmt: skip


def _skipped(
    store: Store,
    fmt: ExportFormat,
    filters: QueueFilters,
    include_reference: bool,
    include_eval: bool,
    counter: ExportCounts,
) -> dict[str, dict[str, Any]]:
    """What the export left out whole, by reason, with the number of blueprints (also in
    `counts`): plan blueprints, whose reference no single-call layout can hold (every layout here
    is one call per answer), and the held-out eval split."""
    with_reference = include_reference or fmt in ALWAYS_REFERENCE
    found = store.export_blueprint_counts(filters, with_reference=with_reference)
    skipped: dict[str, dict[str, Any]] = {}
    if with_reference and found["plan"]:
        counter.counts["skipped_plan"] = found["plan"]
        skipped["plan"] = {
            "blueprints": found["plan"],
            "reason": f"a plan's reference is several calls; {fmt.value} holds one call per answer",
        }
    if not include_eval and found["eval"]:
        counter.counts["held_out_eval"] = found["eval"]
        skipped["eval_split"] = {
            "blueprints": found["eval"],
            "reason": "held out for evaluation (split: eval); --include-eval exports them",
        }
    return skipped


def preview(
    store: Store,
    fmt: ExportFormat | str,
    filters: QueueFilters | None = None,
    *,
    limit: int = 5,
    with_meta: bool = False,
    include_reference: bool = False,
    include_eval: bool = False,
    frame: EpisodeFrame | None = None,
) -> list[dict[str, Any]]:
    """The first `limit` records an export would write (for those who may export)."""
    store.require(Action.EXPORT)
    stream = records(
        store,
        fmt,
        filters,
        with_meta=with_meta,
        include_reference=include_reference,
        include_eval=include_eval,
        frame=frame,
    )
    try:
        return list(islice(stream, max(limit, 0)))
    finally:
        stream.close()


# --- writing -------------------------------------------------------------------------------------


def _remove_stale_temps(path: Path) -> None:
    """Temp files left by an export that was killed (its process is gone) are removed."""
    prefix = f".{path.name}."
    for candidate in path.parent.glob(f".{path.name}.*.tmp"):
        pid_text = candidate.name[len(prefix) :].split(".", 1)[0]
        if pid_text.isdigit() and not pid_alive(int(pid_text)):
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


def _write_beside(path: Path, text: str, what: str) -> None:
    tmp, _ = _write_temp(path, lambda fh: fh.write(text.encode("utf-8")), what)
    _move_into_place([(tmp, path)], what)


def export(
    store: Store,
    fmt: ExportFormat | str,
    out_path: Path,
    *,
    filters: QueueFilters | None = None,
    with_meta: bool = False,
    include_reference: bool = False,
    include_eval: bool = False,
    license: str = "other",
    frame: EpisodeFrame | None = None,
    episodes: Sequence[StoredEpisode] | None = None,
    check: Check | None = None,
    corpora_gone: Mapping[str, int] | None = None,
) -> Manifest:
    """Write the export, its manifest and the folder's dataset card; returns the manifest. Refused
    (AccessDenied) unless the store's actor may export; the export is recorded in the audit trail.
    `license` is the card's license field (the corpora and intents are the studio owner's).
    Blueprints of the eval split are left out (and counted) unless `include_eval`. The agent
    formats take the gym's `frame` and `episodes` (default: the store's accepted ones); `check`
    runs on the complete file before it replaces anything (the gym's replay); `corpora_gone` counts
    the accepted episodes left out because their corpus is gone, by corpus (the manifest says so)."""
    store.require(Action.EXPORT)
    fmt = ExportFormat(fmt)
    out_path = Path(out_path)
    if out_path.resolve() == store.path.resolve():
        raise StoreError(f"{out_path} is the store itself; choose another file for the export")
    given = filters or QueueFilters()
    filters = export_filters(given, include_eval=include_eval)
    fingerprint = store.fingerprint()
    counter = ExportCounts()
    stream = records(
        store,
        fmt,
        filters,
        with_meta=with_meta,
        include_reference=include_reference,
        include_eval=include_eval,
        counter=counter,
        frame=frame,
        stored=episodes,
    )
    data_tmp, result = _write_temp(out_path, _jsonl_fill(stream), "export")
    agent = fmt in GYM_FORMATS
    try:
        if check is not None:
            check(data_tmp, [e.episode_id for e in counter.episodes])
        # An episode's plan is its turns, and its answers are episodes, not proposals: what the
        # single-call exports leave out does not apply (the counts say what was left out).
        skipped = _gone(corpora_gone or {}, counter) if agent else _skipped(
            store, fmt, filters, include_reference, include_eval, counter)  # fmt: skip
        # The decision filter does not apply: exports take accepted (and, for pairs, rejected) items.
        # The split held out is in `include_eval` and `skipped`, not among the filters asked for.
        exported_filters = {k: v for k, v in given.to_dict().items() if k != "decision"}
        manifest = Manifest(
            format=fmt.value,
            path=str(out_path),
            rows=result.rows,
            bytes=result.bytes,
            sha256=result.sha256,
            counts=dict(sorted(counter.counts.items())),
            filters=exported_filters,
            with_meta=with_meta,
            include_reference=(include_reference or fmt in ALWAYS_REFERENCE)
            and fmt is not ExportFormat.PAIRS
            and not agent,
            store=fingerprint,
            created_at=utc_now().isoformat() + "Z",
            code_version=code_version(),
            extra={
                "rule": EXPORT_RULE,
                "skipped": skipped,
                "include_eval": include_eval,
                "left_out": {} if agent else _left_out(store, filters),
                "card": card_info(
                    fmt,
                    out_path.name,
                    counter.corpora,
                    license,
                    with_meta=with_meta,
                    episodes=counter.episodes if agent else None,
                ),
                **({"episode_ids": [e.episode_id for e in counter.episodes]} if agent else {}),
            },
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
    card_path = out_path.parent / "README.md"
    if card_is_ours(card_path):  # a folder's own README.md (a project's) is left alone
        _write_beside(card_path, card_text(out_path.parent), "dataset card")
    if fmt in (ExportFormat.SHAREGPT, ExportFormat.SHAREGPT_AGENT):
        info_path = out_path.parent / "dataset_info.json"
        _write_beside(info_path, dataset_info_text(info_path, out_path.name), "dataset_info.json")
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
