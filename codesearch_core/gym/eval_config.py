"""An agent evaluation described by one TOML file (`codesearch eval --agent --config FILE`).

The keys follow verifiers' `vf-eval` config (`verifiers.v1.configs.cli.eval.EvalConfig`) where
they mean the same: `model`, `num_rollouts` (alias `rollouts_per_example`: episodes per task),
`max_concurrent` (episodes at once), `[client]` `base_url` / `api_key_var` / `timeout`,
`[sampling]` `temperature` / `top_p` / `max_tokens` / `seed`, `[select]` `limit`. The rest are the
gym's: `engine` (reference, import, openai, vllm), `from` (the recorded episodes of `import`,
relative to the file), `[select]` `blueprints` / `tag` / `split` (the task set, as the flags name
it), and `[env]`: the episode's `GymSettings` by field name, its reward weights a `[env.weights]`
table. An unknown key, a wrong type or a bad value is an `InputFileError` naming the file and
the key. The API key itself never goes in the file (it is stored with the run): `api_key_var`
names the environment variable that holds it.

`AgentEvalConfig.to_dict()` is the file with every default filled in: a run stores it, and
`--resume` compares the file given with it, so a run is only ever continued with what began it.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, fields, is_dataclass
from pathlib import Path
from typing import Any, Final

from codesearch_core.errors import InputFileError
from codesearch_core.gym.settings import DEFAULT_SETTINGS, GymSettings

#: The engines an agent eval takes (`eval --agent --engine`).
ENGINES: Final = ("reference", "import", "openai", "vllm")
#: vf-eval's other names for a key (`num_rollouts`' aliases that fit an agent eval).
_ALIASES: Final = {"rollouts_per_example": "num_rollouts"}
_NUMBER: Final = (int, float)

# Each table's keys: the types a value may have and its default (None: not given).
_TOP: Final[dict[str, tuple[tuple[type, ...], Any]]] = {
    "engine": ((str,), None),
    "model": ((str,), None),
    "from": ((str,), None),
    "num_rollouts": ((int,), 1),
    "max_concurrent": ((int,), None),
}
_TABLES: Final[dict[str, dict[str, tuple[tuple[type, ...], Any]]]] = {
    "client": {
        "base_url": ((str, list), None),
        "api_key_var": ((str,), "OPENAI_API_KEY"),
        "timeout": (_NUMBER, None),
    },
    "sampling": {
        "temperature": (_NUMBER, None),
        "top_p": (_NUMBER, None),
        "max_tokens": ((int,), None),
        "seed": ((int,), None),
    },
    "select": {
        "blueprints": ((str,), "seeds"),
        "tag": ((str,), None),
        "split": ((str,), None),
        "limit": ((int,), None),
    },
}


@dataclass(frozen=True, slots=True)
class AgentEvalConfig:
    """What an agent eval is (module docstring); `path` is the file it was read from."""

    path: Path
    engine: str
    model: str | None
    import_file: Path | None
    num_rollouts: int
    max_concurrent: int | None
    client: Mapping[str, Any]
    sampling: Mapping[str, Any]
    select: Mapping[str, Any]
    settings: GymSettings

    def to_dict(self) -> dict[str, Any]:
        """The file's content with every default filled in (what a run stores and `--resume`
        compares); `from` as written, relative to the file."""
        return {
            "engine": self.engine,
            "model": self.model,
            "from": None if self.import_file is None else self._written_from,
            "num_rollouts": self.num_rollouts,
            "max_concurrent": self.max_concurrent,
            "client": dict(self.client),
            "sampling": dict(self.sampling),
            "select": dict(self.select),
            "env": self.settings.to_dict(),
        }

    @property
    def _written_from(self) -> str:
        assert self.import_file is not None
        try:
            return str(self.import_file.relative_to(self.path.parent))
        except ValueError:
            return str(self.import_file)


def _bad(path: Path, key: str, message: str) -> InputFileError:
    return InputFileError(f"{key}: {message}", source=str(path))


def _checked(
    path: Path,
    table: str,
    data: Mapping[str, Any],
    spec: Mapping[str, tuple[tuple[type, ...], Any]],
) -> dict[str, Any]:
    """`data`'s keys checked against `spec` (unknown key, wrong type), defaults filled in."""
    out: dict[str, Any] = {}
    for raw_key, value in data.items():
        key = _ALIASES.get(raw_key, raw_key)
        where = f"{table}.{raw_key}" if table else raw_key
        if key not in spec:
            known = ", ".join(sorted(spec))
            raise _bad(path, where, f"not a key of {f'[{table}]' if table else 'the file'} "
                       f"(known: {known})")  # fmt: skip
        types, _ = spec[key]
        if isinstance(value, bool) or not isinstance(value, types):
            names = " or ".join("a list" if t is list else t.__name__ for t in types)
            raise _bad(path, where, f"must be {names}, not {value!r}")
        if key in out:
            raise _bad(path, where, f"given twice (as {key} too)")
        out[key] = value
    return {key: out.get(key, default) for key, (_, default) in spec.items()}


def _like(path: Path, where: str, value: Any, default: Any) -> None:
    """`value` has the kind of the setting's default: a number (an int where a float is wanted
    too), a bool, a string; a setting that is itself settings (the reward weights) a table of
    its own fields, checked the same way."""
    if is_dataclass(default) and not isinstance(default, type):
        if not isinstance(value, Mapping):
            raise _bad(path, where, "must be a table")
        inner = {f.name: getattr(default, f.name) for f in fields(default)}
        for key, sub in value.items():
            if key not in inner:
                raise _bad(path, f"{where}.{key}", f"not one of {', '.join(sorted(inner))}")
            _like(path, f"{where}.{key}", sub, inner[key])
        return
    if isinstance(default, bool):
        ok, kind = isinstance(value, bool), "true or false"
    elif isinstance(default, int | float):
        ok, kind = isinstance(value, int | float) and not isinstance(value, bool), "a number"
        ok = ok and (isinstance(default, float) or isinstance(value, int))
    else:
        ok, kind = isinstance(value, type(default)), f"a {type(default).__name__}"
    if not ok:
        raise _bad(path, where, f"must be {kind}, not {value!r}")


def _settings(path: Path, data: Any) -> GymSettings:
    """`[env]`: `GymSettings`' fields by name, each of its default's kind (`_like`). Checked key
    by key, since `GymSettings.from_dict` (made for stored settings) skips what it does not
    know."""
    if not isinstance(data, Mapping):
        raise _bad(path, "env", "must be a table")
    known = {f.name: getattr(DEFAULT_SETTINGS, f.name) for f in fields(GymSettings)}
    for key, value in data.items():
        if key not in known:
            raise _bad(path, f"env.{key}", f"not a setting (known: {', '.join(sorted(known))})")
        _like(path, f"env.{key}", value, known[key])
    try:
        return GymSettings.from_dict(data)
    except (ValueError, TypeError) as err:
        raise _bad(path, "env", str(err)) from None


def _values(path: Path, top: Mapping[str, Any], tables: Mapping[str, Mapping[str, Any]]) -> None:
    """The checks of values, once every key has its type."""
    if top["engine"] is None:
        raise _bad(path, "engine", f"missing: one of {', '.join(ENGINES)}")
    if top["engine"] not in ENGINES:
        raise _bad(path, "engine", f"must be one of {', '.join(ENGINES)}, not {top['engine']!r}")
    if (top["engine"] == "import") != (top["from"] is not None):
        raise _bad(path, "from", "the recorded episodes (JSONL) are given with engine "
                   "'import', and only with it")  # fmt: skip
    if top["engine"] in ("openai", "vllm") and not top["model"]:
        raise _bad(path, "model", f"missing: engine {top['engine']!r} needs the model's name")
    for key in ("num_rollouts", "max_concurrent"):
        if top[key] is not None and top[key] < 1:
            raise _bad(path, key, f"must be at least 1, got {top[key]}")
    select = tables["select"]
    if select["split"] not in (None, "train", "eval"):
        raise _bad(path, "select.split", f"must be 'train' or 'eval', not {select['split']!r}")
    if select["limit"] is not None and select["limit"] < 1:
        raise _bad(path, "select.limit", f"must be at least 1, got {select['limit']}")
    urls = tables["client"]["base_url"]
    if isinstance(urls, list) and (not urls or not all(isinstance(u, str) for u in urls)):
        raise _bad(path, "client.base_url", "must be a URL or a non-empty list of URLs")
    if tables["sampling"]["max_tokens"] is not None and tables["sampling"]["max_tokens"] < 1:
        raise _bad(path, "sampling.max_tokens", "must be at least 1")


def load_eval_config(path: Path) -> AgentEvalConfig:
    """The agent eval `path` describes (module docstring); InputFileError on any mistake."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise InputFileError(f"cannot read the eval config: {err.strerror or err}",
                             source=str(path)) from None  # fmt: skip
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise InputFileError(f"not TOML: {err}", source=str(path)) from None
    tables: dict[str, dict[str, Any]] = {}
    for name, spec in _TABLES.items():
        table = data.pop(name, {})
        if not isinstance(table, Mapping):
            raise _bad(path, name, "must be a table")
        tables[name] = _checked(path, name, table, spec)
    settings = _settings(path, data.pop("env", {}))
    top = _checked(path, "", data, _TOP)
    _values(path, top, tables)
    urls = tables["client"]["base_url"]
    if isinstance(urls, str):
        tables["client"]["base_url"] = [urls]
    source = top["from"]
    return AgentEvalConfig(
        path=path,
        engine=top["engine"],
        model=top["model"],
        import_file=None if source is None else path.parent / source,
        num_rollouts=top["num_rollouts"],
        max_concurrent=top["max_concurrent"],
        client=tables["client"],
        sampling=tables["sampling"],
        select=tables["select"],
        settings=settings,
    )


def config_differences(stored: Mapping[str, Any], given: Mapping[str, Any]) -> list[str]:
    """The keys (dotted) whose values differ between two `to_dict()`s, in order."""
    out: list[str] = []
    for key in dict.fromkeys([*stored, *given]):
        a, b = stored.get(key), given.get(key)
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            out += [f"{key}.{sub}" for sub in config_differences(a, b)]
        elif a != b:
            out.append(key)
    return out
