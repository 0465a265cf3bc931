"""Blueprints as JSON Lines: one verifiable task per line, validated field by field on the way in.

Line format::

    {"id": "webshop-useeffect-calls-tsx", "intent": "...", "corpus": "webshop", "language": "tsx",
     "reference_call": {"name": "ast_grep_search", "arguments": {...}},
     "expected": [{"path": "src/App.tsx", "start_line": 3, "end_line": 5},
                  {"path": "src/api.ts", "start_line": 9, "end_line": 9, "supporting": true}],
     "tags": ["adversarial:structure-vs-text"], "difficulty": "medium", "notes": "...",
     "counter_calls": [{"call": {"name": "ripgrep_search", ...}, "why": "..."}],
     "pins": {"src/App.tsx": "<sha256 of the file>"}, "snapshot": "<corpus snapshot id>",
     "second_opinion": [{"tool": "ripgrep_search", "arguments": {...}, "mode": "covers",
                         "why": "text_call"}]}

An expected span marked `"supporting": true` is context, not the answer: the grade neither requires
nor penalises it (`grading.spans`); unmarked spans are essential, so an old file grades as before.
`tags`, `difficulty` (default medium), `notes`, `counter_calls` (the strongest wrong calls the author
found), `split` (`train`, the default, or `eval`: held out of exports), `pins` and `snapshot` (both filled in by `codesearch seeds pin`: the expected files' sha256
and the corpus snapshot id the spans were checked on) and `second_opinion` (searches a reader would
also count, `"mode": "covers"`: every line one finds lies in an expected span, or would leave out,
`"excludes"`: no expected span holds a line one finds; `why` a short slug; `codesearch seeds
audit` runs them) may be left out. A plan seed's
`reference_call` is a plan, `{"steps": [{"call": ..., "restrict_to_previous": true}, ...]}` (two or
three steps; the last step's findings are the plan's). Errors name the line and the field,
and reading a file either returns every blueprint or raises on the first bad line (unless asked to
skip bad lines), so a half-read file is never mistaken for a whole one.
"""

from __future__ import annotations

import io
import json
import os
import re
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Final

from codesearch_core import config
from codesearch_core.corpora.jsonl_lines import bounded_lines, line_too_long, open_jsonl
from codesearch_core.errors import CodesearchError, CorpusError, InputFileError, ToolCallError
from codesearch_core.models import Blueprint, Check, CounterCall, Difficulty, Span, Split
from codesearch_core.tools import parse_plan, parse_tool_call, resolve_in_corpus

MAX_INTENT_CHARS: Final = 2000
MAX_NOTES_CHARS: Final = 4000
MAX_TAGS: Final = 32
MAX_TAG_CHARS: Final = 64
MAX_EXPECTED: Final = 10_000
MAX_PATH_CHARS: Final = 512

#: Ids and corpus names end up in file names, URLs and SQL keys: keep them to a safe alphabet.
SLUG_RE: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
LANGUAGE_RE: Final = re.compile(r"^[a-z][a-z0-9+#_-]{0,31}$")

_REQUIRED: Final = ("id", "intent", "corpus", "language", "reference_call", "expected")
_OPTIONAL: Final = (
    "tags", "difficulty", "notes", "counter_calls", "pins", "snapshot", "split", "second_opinion",
)  # fmt: skip
MAX_COUNTER_CALLS: Final = 16
MAX_CHECKS: Final = 16
#: A check's `why`: a short slug, the reason an audit line shows (`missed:<why>`).
_WHY_RE: Final = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
_CHECK_FIELDS: Final = frozenset({"tool", "arguments", "mode", "why"})
_SHA256_RE: Final = re.compile(r"^[0-9a-f]{64}$")


def _bad(field: str, message: str) -> InputFileError:
    return InputFileError(f"{field}: {message}")


def _slug(d: Mapping[str, Any], field: str) -> str:
    value = d[field]
    if not isinstance(value, str) or not SLUG_RE.match(value) or ".." in value:
        raise _bad(
            field,
            f"{value!r} is not a valid {field}: use letters, digits, '.', '_' and '-' "
            "(at most 128 characters, starting with a letter or digit)",
        )
    return value


def check_relative_path(path: Any, field: str) -> str:
    """A corpus-relative POSIX path: no leading '/', no '..' or '.' segments, no backslashes."""
    if not isinstance(path, str) or not path:
        raise _bad(field, "must be a non-empty string")
    if len(path) > MAX_PATH_CHARS:
        raise _bad(field, f"too long ({len(path)} characters, at most {MAX_PATH_CHARS})")
    if "\\" in path or "\x00" in path:
        raise _bad(field, f"{path!r} must be a POSIX path (forward slashes, no NUL)")
    if path.startswith("/") or re.match(r"^[A-Za-z]:", path):
        raise _bad(field, f"{path!r} must be relative to the corpus root")
    if any(part in ("", ".", "..") for part in path.split("/")):
        raise _bad(field, f"{path!r} must not contain empty, '.' or '..' segments")
    return path


def _line_number(value: Any, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _bad(field, f"must be an integer, got {value!r}")
    if value < 1:
        raise _bad(field, f"must be >= 1 (lines are 1-based), got {value}")
    return value


def _expected(value: Any) -> tuple[Span, ...]:
    if not isinstance(value, list):
        raise _bad("expected", "must be a list of {path, start_line, end_line} objects")
    if len(value) > MAX_EXPECTED:
        raise _bad("expected", f"too many spans ({len(value)}, at most {MAX_EXPECTED})")
    spans: list[Span] = []
    seen: dict[Span, int] = {}
    for i, item in enumerate(value):
        where = f"expected[{i}]"
        if not isinstance(item, Mapping):
            raise _bad(where, "must be an object with path, start_line and end_line")
        unknown = sorted(set(item) - {"path", "start_line", "end_line", "supporting"})
        if unknown:
            raise _bad(where, f"unknown field(s): {', '.join(map(str, unknown))}")
        missing = [k for k in ("path", "start_line", "end_line") if k not in item]
        if missing:
            raise _bad(where, f"missing field(s): {', '.join(missing)}")
        supporting = item.get("supporting", False)
        if not isinstance(supporting, bool):
            raise _bad(f"{where}.supporting", f"must be true or false, got {supporting!r}")
        span = Span(
            check_relative_path(item["path"], f"{where}.path"),
            _line_number(item["start_line"], f"{where}.start_line"),
            _line_number(item["end_line"], f"{where}.end_line"),
            supporting,
        )
        if span.end_line < span.start_line:
            raise _bad(
                f"{where}.end_line",
                f"{span.end_line} is before start_line {span.start_line}",
            )
        if span in seen:
            raise _bad(where, f"duplicate of expected[{seen[span]}]")
        seen[span] = i
        spans.append(span)
    return tuple(spans)


def _tags(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or len(value) > MAX_TAGS:
        raise _bad("tags", f"must be a list of at most {MAX_TAGS} strings")
    for i, tag in enumerate(value):
        if not isinstance(tag, str) or not tag.strip() or len(tag) > MAX_TAG_CHARS:
            raise _bad(
                f"tags[{i}]", f"must be a non-empty string of at most {MAX_TAG_CHARS} characters"
            )
    return tuple(value)


def _counter_calls(value: Any) -> tuple[CounterCall, ...]:
    if not isinstance(value, list) or len(value) > MAX_COUNTER_CALLS:
        raise _bad("counter_calls", f"must be a list of at most {MAX_COUNTER_CALLS} objects")
    out: list[CounterCall] = []
    for i, item in enumerate(value):
        where = f"counter_calls[{i}]"
        if not isinstance(item, Mapping) or set(item) != {"call", "why"}:
            raise _bad(where, 'must be an object with exactly "call" and "why"')
        why = item["why"]
        if not isinstance(why, str) or not why.strip() or len(why) > MAX_NOTES_CHARS:
            raise _bad(f"{where}.why", "must say, in a non-empty string, why the call is wrong")
        try:
            call = parse_tool_call(item["call"])
        except ToolCallError as err:
            raise ToolCallError(err.detail, f"{where}.call.{err.field}") from None
        out.append(CounterCall(call, why))
    return tuple(out)


def _second_opinion(value: Any) -> tuple[Check, ...]:
    if not isinstance(value, list) or len(value) > MAX_CHECKS:
        raise _bad("second_opinion", f"must be a list of at most {MAX_CHECKS} checks")
    out: list[Check] = []
    for i, item in enumerate(value):
        where = f"second_opinion[{i}]"
        if not isinstance(item, Mapping) or set(item) != _CHECK_FIELDS:
            raise _bad(where, 'must be an object with exactly "tool", "arguments", "mode", "why"')
        try:
            call = parse_tool_call({"name": item["tool"], "arguments": item["arguments"]})
        except ToolCallError as err:
            field = "tool" if err.field == "name" else err.field
            raise ToolCallError(err.detail, f"{where}.{field}") from None
        mode = item["mode"]
        if mode not in ("covers", "excludes"):
            raise _bad(f"{where}.mode", f"{mode!r} is not one of: covers, excludes")
        why = item["why"]
        if not isinstance(why, str) or not _WHY_RE.match(why):
            raise _bad(
                f"{where}.why",
                f"{why!r} is not a short slug (lowercase letters, digits, '_', '.', '-'; at most "
                "64 characters), such as text_call",
            )
        out.append(Check(call.name.value, call.arguments, mode, why))
    return tuple(out)


def _pins(value: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, Mapping):
        raise _bad("pins", "must be an object mapping each expected file to its sha256")
    for path, digest in value.items():
        check_relative_path(path, f"pins[{path!r}]")
        if not isinstance(digest, str) or not _SHA256_RE.match(digest):
            raise _bad(f"pins[{path!r}]", "must be a lowercase hex sha256 (64 characters)")
    return tuple(sorted(value.items()))


def blueprint_from_dict(d: Any) -> Blueprint:
    """Validate one decoded blueprint object.

    Raises ToolCallError for a bad reference call (its field starts with `reference_call.`) and
    InputFileError for any other field; both messages name the field.
    """
    if not isinstance(d, Mapping):
        raise InputFileError(f"a blueprint must be a JSON object, got {type(d).__name__}")
    unknown = sorted(set(d) - set(_REQUIRED) - set(_OPTIONAL))
    if unknown:
        raise InputFileError(f"unknown field(s): {', '.join(map(str, unknown))}")
    missing = [k for k in _REQUIRED if k not in d]
    if missing:
        raise InputFileError(f"missing field(s): {', '.join(missing)}")

    bp_id = _slug(d, "id")
    corpus = _slug(d, "corpus")
    intent = d["intent"]
    if not isinstance(intent, str) or not intent.strip():
        raise _bad("intent", "must be a non-empty string")
    if len(intent) > MAX_INTENT_CHARS:
        raise _bad("intent", f"too long ({len(intent)} characters, at most {MAX_INTENT_CHARS})")
    language = d["language"]
    if not isinstance(language, str) or not LANGUAGE_RE.match(language):
        raise _bad("language", f"{language!r} is not a language name such as 'python' or 'text'")
    plan = None
    try:
        reference = d["reference_call"]
        if isinstance(reference, Mapping) and "steps" in reference:
            plan = parse_plan(reference)
            if len(plan.steps) < 2:
                raise ToolCallError("a plan reference needs 2 or more steps", "steps")
            call = plan.steps[-1].call
        else:
            call = parse_tool_call(reference)
    except ToolCallError as err:
        raise ToolCallError(err.detail, f"reference_call.{err.field}") from None
    difficulty_value = d.get("difficulty", Difficulty.MEDIUM.value)
    if difficulty_value not in [x.value for x in Difficulty]:
        allowed = ", ".join(x.value for x in Difficulty)
        raise _bad("difficulty", f"{difficulty_value!r} is not one of: {allowed}")
    notes = d.get("notes", "")
    if not isinstance(notes, str) or len(notes) > MAX_NOTES_CHARS:
        raise _bad("notes", f"must be a string of at most {MAX_NOTES_CHARS} characters")
    return Blueprint(
        id=bp_id,
        intent=intent,
        reference_call=call,
        corpus=corpus,
        expected=_expected(d["expected"]),
        language=language,
        tags=_tags(d.get("tags", [])),
        difficulty=Difficulty(difficulty_value),
        notes=notes,
        counter_calls=_counter_calls(d.get("counter_calls", [])),
        pins=_pins(d.get("pins", {})),
        plan=plan,
        snapshot=_snapshot(d.get("snapshot")),
        split=_split(d.get("split", Split.TRAIN.value)),
        second_opinion=_second_opinion(d.get("second_opinion", [])),
    )


def _split(value: Any) -> Split:
    if value not in [x.value for x in Split]:
        allowed = ", ".join(x.value for x in Split)
        raise _bad("split", f"{value!r} is not one of: {allowed}")
    return Split(value)


def _snapshot(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not _SHA256_RE.match(value):
        raise _bad("snapshot", "must be a corpus snapshot id (64 lowercase hex characters)")
    return value


def blueprint_to_dict(bp: Blueprint) -> dict[str, Any]:
    """The JSONL object for one blueprint (`notes`, `counter_calls`, `pins`, `second_opinion`
    only when set)."""
    d: dict[str, Any] = {
        "id": bp.id,
        "intent": bp.intent,
        "corpus": bp.corpus,
        "language": bp.language,
        "reference_call": bp.reference_dict(),
        "expected": [s.to_dict() for s in bp.expected],
        "tags": list(bp.tags),
        "difficulty": bp.difficulty.value,
    }
    if bp.notes:
        d["notes"] = bp.notes
    if bp.counter_calls:
        d["counter_calls"] = [{"call": c.call.to_dict(), "why": c.why} for c in bp.counter_calls]
    if bp.pins:
        d["pins"] = dict(bp.pins)
    if bp.snapshot:
        d["snapshot"] = bp.snapshot
    if bp.split is not Split.TRAIN:  # written only when held out: seed files keep their bytes
        d["split"] = bp.split.value
    if bp.second_opinion:
        d["second_opinion"] = [
            {"tool": c.tool, "arguments": dict(c.arguments), "mode": c.mode, "why": c.why}
            for c in bp.second_opinion
        ]
    return d


def _source_name(source: Path | IO[str] | IO[bytes] | Iterable[str]) -> str:
    if isinstance(source, Path):
        return str(source)
    name = getattr(source, "name", None)
    return str(name) if isinstance(name, str) else "<input>"


def _lines(
    source: Path | IO[str] | IO[bytes] | Iterable[str],
) -> Iterator[str | bytes | None]:
    """The source's lines; from a file, None stands for a line too long to read (never held)."""
    if isinstance(source, Path):
        with open_jsonl(source) as fh:
            yield from (raw for _, raw in bounded_lines(fh))
    else:
        yield from source


def _parse_line(raw: str | bytes | None, number: int) -> Blueprint | None:
    """The blueprint on one line, None for a blank line; errors without the source and line."""
    if raw is None:
        raise line_too_long("blueprint")
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError as err:
        raise InputFileError(f"not valid UTF-8 (byte {err.start})") from None
    if number == 1:
        text = text.removeprefix("\ufeff")
    if not text.strip():
        return None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as err:
        raise InputFileError(f"not valid JSON ({err.msg} at column {err.colno})") from None
    except RecursionError:
        # The decoder recurses per `[` / `{`: `[` * 100,000 exhausts the stack, not the syntax.
        raise InputFileError("not valid JSON (nested too deeply)") from None
    return blueprint_from_dict(obj)


def read_blueprints_jsonl(
    source: Path | IO[str] | IO[bytes] | Iterable[str], *, skip_bad: bool = False
) -> tuple[list[Blueprint], list[InputFileError]]:
    """Read blueprints, one JSON object per line (blank lines are ignored).

    With `skip_bad=False` the first bad line raises InputFileError (with its line number) and nothing
    is returned; with `skip_bad=True` bad lines are left out and returned as errors. A repeated id is
    an error on the later line that names the earlier one.
    """
    name = _source_name(source)
    blueprints: list[Blueprint] = []
    errors: list[InputFileError] = []
    first_line_of: dict[str, int] = {}
    for number, raw in enumerate(_lines(source), start=1):
        try:
            bp = _parse_line(raw, number)
            if bp is None:
                continue
            if bp.id in first_line_of:
                raise InputFileError(
                    f"duplicate id {bp.id!r} (first used on line {first_line_of[bp.id]})"
                )
        except CodesearchError as err:
            failure = InputFileError(str(err), source=name, line=number)
            if not skip_bad:
                raise failure from None
            errors.append(failure)
            continue
        first_line_of[bp.id] = number
        blueprints.append(bp)
    return blueprints, errors


def dumps_blueprints_jsonl(blueprints: Sequence[Blueprint]) -> str:
    """The JSONL text for `blueprints` (UTF-8 kept, one object per line)."""
    out = io.StringIO()
    for bp in blueprints:
        out.write(json.dumps(blueprint_to_dict(bp), ensure_ascii=False))
        out.write("\n")
    return out.getvalue()


def write_blueprints_jsonl(path: Path, blueprints: Sequence[Blueprint]) -> None:
    """Write atomically (temp file, fsync, rename): readers see the old file or the new one, never half."""
    seen: set[str] = set()
    for bp in blueprints:
        if bp.id in seen:
            raise InputFileError(f"duplicate id {bp.id!r}; ids must be unique", source=str(path))
        seen.add(bp.id)
    text = dumps_blueprints_jsonl(blueprints)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        # mkstemp makes the file 0600: a rewritten seed file keeps the mode it had (it is shared).
        try:
            mode = path.stat().st_mode & 0o777
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_seed_blueprints() -> list[Blueprint]:
    """The shipped seed blueprints (`config.seeds_file()`); any bad line is an error."""
    blueprints, _ = read_blueprints_jsonl(config.seeds_file())
    return blueprints


def check_expected_files(bp: Blueprint, corpus_root: Path) -> list[str]:
    """Expected paths that are not regular files inside `corpus_root` (empty when all exist)."""
    missing: list[str] = []
    for path in dict.fromkeys(s.path for s in bp.expected):
        try:
            if not resolve_in_corpus(corpus_root, path).is_file():
                missing.append(path)
        except CorpusError:
            missing.append(path)
    return missing
