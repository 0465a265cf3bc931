"""Proposals made elsewhere (another machine, another tool), read from JSONL.

One object per line: `blueprint_id` and either `raw_text` (what the model wrote; parsed and repaired
here exactly like live output) or `call` (an already-decoded call; repaired and validated), plus any
provenance fields (`engine`, `model`, `finish_reason`, `sampling`, `prompt`, `latency_s`,
`prompt_tokens`, `completion_tokens`, `mutation_kind`, `tool_format`). The JSONL that
`codesearch propose --out` writes is valid input.

`raw_text` is read in the syntax it was written in (`tool_format.answer_format`: the markers it
holds, else the `tool_format` the line or its `sampling` declares, else bare JSON), with the same
tolerant reader the engines use: `<tool_call>{...}</tool_call>` scores as the call it holds. An
empty `raw_text` is an answer too, the model's own: it is unparsed (scored 0, stored, counted),
never a bad line that stops the import. A line with a `mutation_kind` is a deliberate hard negative: it is validated
but never repaired (repairing would undo the mutation, e.g. put back a dropped `pcre2`).

A bad line is an `InputFileError` naming the file and line: not UTF-8, not JSON, nested too deep
to decode, longer than `MAX_LINE_BYTES` (refused after reading that much, so a huge file without
newlines never sits in memory), or not a proposal. By default the whole file is checked before
anything is returned, so a bad file imports nothing; with `skip_bad` the good lines are kept and the
bad ones listed in `skipped`. The file is read once, a line at a time.
"""

from __future__ import annotations

import json
from collections.abc import Generator, Mapping, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any, Final

from codesearch_core.corpora import bounded_lines, line_too_long, open_jsonl
from codesearch_core.engines.base import ProgressFn, SamplingSettings, StopFn, proposal_from_text
from codesearch_core.engines.prompt import Example, PromptConfig
from codesearch_core.engines.repair import NESTING_TOO_DEEP, validate_and_repair
from codesearch_core.engines.tool_format import ToolFormat, answer_format
from codesearch_core.errors import InputFileError, ToolCallError
from codesearch_core.models import Blueprint, Proposal
from codesearch_core.tools import parse_tool_call

ENGINE_NAME: Final = "import"
DEFAULT_MODEL: Final = "imported"
#: The longest line read. A proposal line (raw text, prompt, provenance) is a few kB; a file
#: without newlines would otherwise be read whole into memory before it fails to decode.
NESTING_DETAIL: Final = f"not JSON: {NESTING_TOO_DEEP}"
_BLANK: Final = object()

_OPTIONAL_INT: Final = ("prompt_tokens", "completion_tokens")
_OPTIONAL_STR: Final = (
    "finish_reason",
    "mutation_kind",
    "prompt",
    "engine",
    "model",
    "tool_format",
)


class ImportEngine:
    """Reads `path`; `n` and sampling do not apply (every line is one proposal)."""

    name: str = ENGINE_NAME

    def __init__(
        self, path: Path, *, skip_bad: bool = False, model: str = DEFAULT_MODEL, source: str = ""
    ) -> None:
        self.path = Path(path)
        #: The name errors give the file: an upload's own name, never the server's temp path.
        self.source = source or str(path)
        self.skip_bad = skip_bad
        self._model = model
        self.skipped: list[InputFileError] = []

    @property
    def model(self) -> str:
        return self._model

    def propose(
        self,
        blueprints: Sequence[Blueprint],
        *,
        n: int = 1,
        settings: SamplingSettings | None = None,
        prompt: PromptConfig | None = None,
        examples: Sequence[Example] = (),
        on_progress: ProgressFn | None = None,
        should_stop: StopFn | None = None,
    ) -> list[Proposal]:
        """The file's proposals for these blueprints, in file order; other ids are errors."""
        known = {b.id for b in blueprints}
        self.skipped = []
        rows: list[tuple[int, Mapping[str, Any]]] = []
        with closing(self._rows()) as lines:
            for line_no, row in lines:
                try:
                    _check_row(row, known, self.source, line_no)
                except InputFileError as err:
                    if not self.skip_bad:
                        raise
                    self.skipped.append(err)
                    continue
                rows.append((line_no, row))
        proposals: list[Proposal] = []
        for done, (line_no, row) in enumerate(rows, start=1):
            if should_stop is not None and should_stop():
                break
            try:
                proposals.append(self._proposal(row))
            except RecursionError:
                # A line just under the decoder's depth limit can still be too deep to re-encode.
                bad = InputFileError(NESTING_DETAIL, source=self.source, line=line_no)
                if not self.skip_bad:
                    raise bad from None
                self.skipped.append(bad)
            if on_progress is not None:
                on_progress(done, len(rows))
        return proposals

    def _rows(self) -> Generator[tuple[int, Any], None, None]:
        """(line number, decoded value) for each non-blank line, read once, a line at a time."""
        source = self.source
        with open_jsonl(self.path) as handle:
            for line_no, raw in bounded_lines(handle):
                try:
                    value = _decode_line(raw, line_no)
                except InputFileError as err:
                    bad = InputFileError(err.detail, source=source, line=line_no)
                    if not self.skip_bad:
                        raise bad from None
                    self.skipped.append(bad)
                    continue
                if value is not _BLANK:
                    yield line_no, value

    def _proposal(self, row: Mapping[str, Any]) -> Proposal:
        engine = str(row.get("engine") or ENGINE_NAME)
        model = str(row.get("model") or self._model)
        sampling = row.get("sampling") if isinstance(row.get("sampling"), Mapping) else {}
        common: dict[str, Any] = {
            "engine": engine,
            "model": model,
            "sampling": sampling,
            "prompt": str(row.get("prompt") or ""),
            "latency_s": float(row.get("latency_s") or 0.0),
            "prompt_tokens": row.get("prompt_tokens"),
            "completion_tokens": row.get("completion_tokens"),
        }
        raw_text = row.get("raw_text")
        if row.get("mutation_kind"):
            return self._mutation(row, common)
        if isinstance(raw_text, str) and (raw_text.strip() or row.get("call") is None):
            proposal = proposal_from_text(
                str(row["blueprint_id"]),
                raw_text,
                finish_reason=row.get("finish_reason"),
                tool_format=_format_of(row, raw_text),
                **common,
            )
        else:
            result = validate_and_repair(row["call"])
            proposal = Proposal(
                blueprint_id=str(row["blueprint_id"]),
                raw_text=json.dumps(row["call"], ensure_ascii=False),
                call=result.call,
                valid=result.call is not None,
                error=result.error,
                repairs=result.repairs,
                finish_reason=row.get("finish_reason"),
                **common,
            )
        return proposal

    @staticmethod
    def _mutation(row: Mapping[str, Any], common: dict[str, Any]) -> Proposal:
        """A mutation is wrong on purpose (e.g. pcre2 dropped): validated strictly, never repaired."""
        raw_text = row.get("raw_text")
        source = row.get("call")
        error = ""
        if source is None and isinstance(raw_text, str):
            parsed = _format_of(row, raw_text).parse(raw_text, row.get("finish_reason"))
            source, error = parsed.value, parsed.error
        call = None
        if not error:
            try:
                call = parse_tool_call(source)
            except ToolCallError as err:
                error = str(err)
        return Proposal(
            blueprint_id=str(row["blueprint_id"]),
            raw_text=raw_text if isinstance(raw_text, str) else json.dumps(source),
            call=call,
            valid=call is not None,
            error=error,
            finish_reason=row.get("finish_reason"),
            mutation_kind=str(row["mutation_kind"]),
            **common,
        )


def _format_of(row: Mapping[str, Any], raw_text: str) -> ToolFormat:
    """The syntax of a line's answer: its markers, else the format the line (or its sampling
    record, as `propose --out` writes it) declares, else bare JSON."""
    sampling = row.get("sampling")
    declared = row.get("tool_format") or (
        sampling.get("tool_format") if isinstance(sampling, Mapping) else None
    )
    return answer_format(raw_text, declared if isinstance(declared, str) else None)


def _decode_line(raw: bytes | None, line_no: int) -> Any:
    """The JSON value on one line, `_BLANK` for a blank line; InputFileError (no source) if bad."""
    if raw is None:
        raise line_too_long("proposal")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise InputFileError(f"not UTF-8 text (byte {err.start + 1} of the line)") from None
    if line_no == 1:
        text = text.removeprefix("\ufeff")
    if not text.strip():
        return _BLANK
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise InputFileError(f"not JSON: {err.msg} at column {err.colno}") from None
    except RecursionError:
        raise InputFileError(NESTING_DETAIL) from None


def _check_row(row: Any, known: set[str], source: str, line: int) -> None:
    def bad(message: str) -> InputFileError:
        return InputFileError(message, source=source, line=line)

    if not isinstance(row, Mapping):
        raise bad(f"expected a JSON object, got {type(row).__name__}")
    blueprint_id = row.get("blueprint_id")
    if not isinstance(blueprint_id, str) or not blueprint_id:
        raise bad("missing `blueprint_id` (the blueprint this proposal answers)")
    if blueprint_id not in known:
        raise bad(f"unknown blueprint_id {blueprint_id!r}: it is not among the blueprints given")
    raw_text = row.get("raw_text")
    # An empty string is what the model wrote (nothing): an unparsed answer, not a bad line.
    if raw_text is None and row.get("call") is None:
        raise bad("give `raw_text` (what the model wrote) or `call` (the decoded call)")
    if raw_text is not None and not isinstance(raw_text, str):
        raise bad("`raw_text` must be a string")
    for key in _OPTIONAL_STR:
        if row.get(key) is not None and not isinstance(row[key], str):
            raise bad(f"`{key}` must be a string")
    for key in _OPTIONAL_INT:
        value = row.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            raise bad(f"`{key}` must be an integer")
    latency = row.get("latency_s")
    if latency is not None and (not isinstance(latency, int | float) or isinstance(latency, bool)):
        raise bad("`latency_s` must be a number")
    if row.get("sampling") is not None and not isinstance(row["sampling"], Mapping):
        raise bad("`sampling` must be an object")
