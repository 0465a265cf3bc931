"""A data set recipe: one TOML file declaring everything a build does, read into typed data.

    [dataset]     name, license
    [[corpora]]   name, snapshot (the pinned snapshot id, or a prefix of it of 12+ characters)
    [synthesis]   engine ("templates"), rules (empty: all), limit (new drafts per corpus), seed,
                  workers
    [seeds]       files (seed JSONL, relative to the recipe; their seeds on the recipe's corpora)
    [verify]      timeout_s, workers
    [filters]     min_reward, difficulty (a list), dedup (near-duplicate intents), drop (a file
                  of item ids, one a line: what QA rejected), rule_errors (QA's per-rule error
                  rates, `DIR/qa/rule_errors.json`) and max_rule_error (a rule whose error's 95%
                  upper bound there is above it is left out)
    [split]       train, eval (corpus names: a corpus is on one side only)
    [mix]         max_rule_share, max_tool_share, min_ripgrep_share
    [export]      formats (the export writers' single-call layouts), with_meta

An unknown key, a value of the wrong type or range, or a corpus whose pin no longer matches is a
`RecipeError` naming the recipe's line: a typo must not silently build another data set.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from codesearch_core.corpora import corpus_root, current_snapshot, list_corpora, read_manifest
from codesearch_core.errors import CorpusError, InputFileError
from codesearch_core.export import ExportFormat
from codesearch_core.models import Difficulty
from codesearch_core.synthesis import TEMPLATES

#: The export layouts a build writes: one call per answer, from the verified items alone. The
#: preference layouts need rejected answers (reviews, counter-calls) that a fresh build has not.
BUILD_FORMATS: Final = (
    ExportFormat.XLAM,
    ExportFormat.HF_CHAT,
    ExportFormat.OPENAI_SFT,
    ExportFormat.SHAREGPT,
    ExportFormat.HF_PROMPTS,
)
ENGINES: Final = ("templates",)
MIN_PIN_CHARS: Final = 12


class RecipeError(InputFileError):
    """A recipe that cannot be built as written; the message names the file, line and key."""


@dataclass(frozen=True, slots=True)
class CorpusPin:
    name: str
    snapshot: str  # the full snapshot id checked against the corpus on this machine


@dataclass(frozen=True, slots=True)
class Synthesis:
    engine: str = "templates"
    rules: tuple[str, ...] = ()  # empty: every rule template
    limit: int | None = None  # new drafts per corpus; None: all it gives
    seed: int = 0
    workers: int = 2


@dataclass(frozen=True, slots=True)
class Verification:
    timeout_s: float = 10.0
    workers: int = 2


@dataclass(frozen=True, slots=True)
class Filters:
    min_reward: float = 0.9
    difficulty: tuple[Difficulty, ...] = tuple(Difficulty)
    dedup: bool = True
    drop: Path | None = None  # a list of item ids to leave out (QA's rejected.txt)
    rule_errors: Path | None = None  # QA's per-rule error rates (qa/rule_errors.json)
    max_rule_error: float = 1.0


@dataclass(frozen=True, slots=True)
class SplitSpec:
    train: tuple[str, ...]
    eval: tuple[str, ...]

    def side(self, corpus: str) -> str:
        return "eval" if corpus in self.eval else "train"


@dataclass(frozen=True, slots=True)
class Mix:
    max_rule_share: float = 1.0
    max_tool_share: float = 1.0
    min_ripgrep_share: float = 0.0


@dataclass(frozen=True, slots=True)
class Exports:
    formats: tuple[ExportFormat, ...] = (ExportFormat.XLAM,)
    with_meta: bool = False


@dataclass(frozen=True, slots=True)
class Recipe:
    """A parsed recipe; `text` is the file verbatim (the card embeds it, its sha256 names it)."""

    path: Path
    text: str
    name: str
    license: str
    corpora: tuple[CorpusPin, ...]
    synthesis: Synthesis
    seed_files: tuple[Path, ...]
    verification: Verification
    filters: Filters
    split: SplitSpec
    mix: Mix
    exports: Exports

    @property
    def corpus_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.corpora)


# --- where a key is written --------------------------------------------------------------------

_HEADER = re.compile(r"^\s*\[\[?\s*([A-Za-z0-9_.-]+)\s*\]\]?\s*(#.*)?$")


def key_line(text: str, table: str, key: str | None, index: int = 0) -> int | None:
    """The 1-based line of `key` in the `index`-th `[table]` (or `[[table]]`), or of the table's
    header when `key` is None. tomllib keeps no positions, so the text is scanned for them."""
    current, seen = "", -1
    header_line = None
    for number, line in enumerate(text.splitlines(), start=1):
        if m := _HEADER.match(line):
            current = m.group(1)
            if current == table:
                seen += 1
                if seen == index:
                    header_line = number
                    if key is None:
                        return number
            continue
        if (
            current == table
            and seen == index
            and key is not None
            and re.match(rf"^\s*[\"']?{re.escape(key)}[\"']?\s*=", line)
        ):
            return number
    if not table and key is not None:  # a top-level key
        for number, line in enumerate(text.splitlines(), start=1):
            if _HEADER.match(line):
                break
            if re.match(rf"^\s*{re.escape(key)}\s*=", line):
                return number
    return header_line


class _Reader:
    """Typed reads of one table, each error naming the recipe's line and the key."""

    def __init__(self, recipe: Path, text: str, table: str, data: Any, index: int = 0) -> None:
        self.recipe, self.text, self.table, self.index = recipe, text, table, index
        if not isinstance(data, Mapping):
            self.fail(None, f"[{table}] must be a table")
        self.data: Mapping[str, Any] = data

    def fail(self, key: str | None, message: str) -> None:
        line = key_line(self.text, self.table, key, self.index)
        where = f"{self.recipe}:{line}" if line else str(self.recipe)
        name = f"{self.table}.{key}" if key else f"[{self.table}]"
        raise RecipeError(f"{where}: {name}: {message}")

    def check_keys(self, known: Sequence[str]) -> None:
        for key in self.data:
            if key not in known:
                self.fail(key, f"unknown key (known here: {', '.join(known)})")

    def get(self, key: str, kind: type | tuple[type, ...], default: Any) -> Any:
        if key not in self.data:
            return default
        value = self.data[key]
        if isinstance(value, bool) and kind is not bool and bool not in _tuple(kind):
            self.fail(key, f"expected {_kind_name(kind)}, got {value!r}")
        if not isinstance(value, kind):
            self.fail(key, f"expected {_kind_name(kind)}, got {value!r}")
        return value

    def strings(self, key: str, default: Sequence[str] = ()) -> tuple[str, ...]:
        value = self.get(key, list, list(default))
        if not all(isinstance(v, str) and v for v in value):
            self.fail(key, "expected a list of non-empty strings")
        return tuple(value)

    def share(self, key: str, default: float) -> float:
        value = float(self.get(key, (int, float), default))
        if not 0.0 <= value <= 1.0:
            self.fail(key, f"a share between 0 and 1, got {value}")
        return value

    def positive(self, key: str, kind: type, default: Any) -> Any:
        value = self.get(key, kind if kind is int else (int, float), default)
        if value is not None and value <= 0:
            self.fail(key, f"must be positive, got {value}")
        return value


def _tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _kind_name(kind: type | tuple[type, ...]) -> str:
    names = {int: "an integer", float: "a number", str: "a string", bool: "true or false",
             list: "a list"}  # fmt: skip
    return " or ".join(names.get(k, k.__name__) for k in _tuple(kind))


# --- the recipe --------------------------------------------------------------------------------

TABLES: Final = ("dataset", "corpora", "synthesis", "seeds", "verify", "filters", "split", "mix",
                 "export")  # fmt: skip


def load_recipe(path: Path, *, check_pins: bool = True) -> Recipe:
    """Read and check a recipe. `check_pins`: each corpus's snapshot now must match its pin."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise RecipeError(f"cannot read the recipe {path}: {err.strerror or err}") from err
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise RecipeError(f"{path}: not valid TOML: {err}") from err
    for key in data:
        if key not in TABLES:
            line = key_line(text, key, None) or key_line(text, "", key)
            where = f"{path}:{line}" if line else str(path)
            raise RecipeError(f"{where}: {key}: unknown table (known: {', '.join(TABLES)})")
    base = path.parent
    top = _Reader(path, text, "dataset", data.get("dataset", {}))
    top.check_keys(("name", "license"))
    corpora = _corpora(path, text, data.get("corpora", []), check_pins)
    names = {c.name for c in corpora}
    split = _split(_Reader(path, text, "split", data.get("split", {})), names)
    return Recipe(
        path=path,
        text=text,
        name=top.get("name", str, path.stem),
        license=top.get("license", str, "other"),
        corpora=corpora,
        synthesis=_synthesis(_Reader(path, text, "synthesis", data.get("synthesis", {}))),
        seed_files=_seed_files(_Reader(path, text, "seeds", data.get("seeds", {})), base),
        verification=_verification(_Reader(path, text, "verify", data.get("verify", {}))),
        filters=_filters(_Reader(path, text, "filters", data.get("filters", {})), base),
        split=split,
        mix=_mix(_Reader(path, text, "mix", data.get("mix", {}))),
        exports=_exports(_Reader(path, text, "export", data.get("export", {}))),
    )


def _corpora(path: Path, text: str, data: Any, check_pins: bool) -> tuple[CorpusPin, ...]:
    if not isinstance(data, list) or not data:
        line = key_line(text, "corpora", None)
        raise RecipeError(f"{path}:{line or 1}: corpora: give at least one [[corpora]] table")
    known = set(list_corpora())
    pins: list[CorpusPin] = []
    for i, item in enumerate(data):
        r = _Reader(path, text, "corpora", item, i)
        r.check_keys(("name", "snapshot"))
        name = r.get("name", str, None)
        if not name:
            r.fail(None, "each corpus needs a name")
        if any(p.name == name for p in pins):
            r.fail("name", f"corpus {name!r} is listed twice")
        pin = r.get("snapshot", str, None)
        if not pin or len(pin) < MIN_PIN_CHARS:
            r.fail("snapshot", f"corpus {name!r} needs its snapshot id (at least "
                               f"{MIN_PIN_CHARS} characters; `codesearch corpus list --json`)")  # fmt: skip
        if check_pins:
            if name not in known:
                r.fail("name", f"corpus {name!r} is not on this machine (`.ci/fetch_corpora.sh`"
                               " or `codesearch corpus add`)")  # fmt: skip
            pin = _checked_pin(r, name, pin)
        pins.append(CorpusPin(name, pin))
    return tuple(pins)


def _checked_pin(r: _Reader, name: str, pin: str) -> str:
    """The corpus's snapshot id when it matches the pin: the manifest's, and the files' now."""
    try:
        pinned = read_manifest_id(name)
        now = current_snapshot(name)
    except CorpusError as err:
        r.fail("name", f"corpus {name!r}: {err}")
        raise  # unreachable: fail raises
    if not now.startswith(pin):
        r.fail("snapshot", f"corpus {name!r} no longer matches its pin: the recipe says "
                           f"{pin[:16]}…, its files are {now[:16]}…"
                           + ("" if pinned == now else " (they differ from its manifest too: "
                              f"`codesearch corpus check {name}`)"))  # fmt: skip
    return now


def read_manifest_id(name: str) -> str | None:
    manifest = read_manifest(corpus_root(name))
    return None if manifest is None else manifest.snapshot_id


def _synthesis(r: _Reader) -> Synthesis:
    r.check_keys(("engine", "rules", "limit", "seed", "workers"))
    engine = r.get("engine", str, "templates")
    if engine not in ENGINES:
        r.fail("engine", f"a build writes intents with {', '.join(ENGINES)}, got {engine!r}")
    rules = r.strings("rules")
    known = {t.id for t in TEMPLATES}
    for rule in rules:
        if rule not in known:
            r.fail("rules", f"unknown rule {rule!r} (known: {', '.join(sorted(known))})")
    return Synthesis(
        engine=engine,
        rules=rules,
        limit=r.positive("limit", int, None),
        seed=r.get("seed", int, 0),
        workers=r.positive("workers", int, 2),
    )


def _seed_files(r: _Reader, base: Path) -> tuple[Path, ...]:
    r.check_keys(("files",))
    files = []
    for name in r.strings("files"):
        path = (base / name).resolve()
        if not path.is_file():
            r.fail("files", f"no seed file {path}")
        files.append(path)
    return tuple(files)


def _verification(r: _Reader) -> Verification:
    r.check_keys(("timeout_s", "workers"))
    return Verification(
        timeout_s=float(r.positive("timeout_s", float, 10.0)), workers=r.positive("workers", int, 2)
    )


def _filters(r: _Reader, base: Path) -> Filters:
    r.check_keys(("min_reward", "difficulty", "dedup", "drop", "rule_errors", "max_rule_error"))
    min_reward = float(r.get("min_reward", (int, float), 0.9))
    if not -1.0 <= min_reward <= 1.0:
        r.fail("min_reward", f"a reward between -1 and 1, got {min_reward}")
    levels = r.strings("difficulty", [d.value for d in Difficulty])
    for level in levels:
        if level not in {d.value for d in Difficulty}:
            r.fail("difficulty", f"unknown difficulty {level!r} (easy, medium, hard)")
    drop = r.get("drop", str, None)
    rule_errors = r.get("rule_errors", str, None)
    max_rule_error = float(r.get("max_rule_error", (int, float), 1.0))
    if not 0.0 <= max_rule_error <= 1.0:
        r.fail("max_rule_error", f"an error rate between 0 and 1, got {max_rule_error}")
    return Filters(
        min_reward=min_reward,
        difficulty=tuple(Difficulty(level) for level in levels),
        dedup=r.get("dedup", bool, True),
        # A drop list that is not there yet is an empty one: the first build has no QA behind it.
        drop=(base / drop).resolve() if drop else None,
        rule_errors=(base / rule_errors).resolve() if rule_errors else None,
        max_rule_error=max_rule_error,
    )


def _split(r: _Reader, corpora: set[str]) -> SplitSpec:
    r.check_keys(("train", "eval"))
    train, held = r.strings("train"), r.strings("eval")
    for key, names in (("train", train), ("eval", held)):
        for name in names:
            if name not in corpora:
                r.fail(key, f"corpus {name!r} is not among the recipe's [[corpora]]")
    if both := sorted(set(train) & set(held)):
        r.fail("eval", f"corpus {', '.join(both)} is on both sides of the split: an evaluation "
                       "would see files it trained on")  # fmt: skip
    if rest := sorted(corpora - set(train) - set(held)):
        r.fail(None, f"corpus {', '.join(rest)} is on neither side of the split")
    return SplitSpec(train, held)


def _mix(r: _Reader) -> Mix:
    r.check_keys(("max_rule_share", "max_tool_share", "min_ripgrep_share"))
    return Mix(
        max_rule_share=r.share("max_rule_share", 1.0),
        max_tool_share=r.share("max_tool_share", 1.0),
        min_ripgrep_share=r.share("min_ripgrep_share", 0.0),
    )


def _exports(r: _Reader) -> Exports:
    r.check_keys(("formats", "with_meta"))
    formats = []
    for name in r.strings("formats", ["xlam"]):
        if name not in {f.value for f in BUILD_FORMATS}:
            r.fail("formats", f"a build writes {', '.join(f.value for f in BUILD_FORMATS)}; got "
                              f"{name!r}")  # fmt: skip
        formats.append(ExportFormat(name))
    return Exports(tuple(dict.fromkeys(formats)), r.get("with_meta", bool, False))
