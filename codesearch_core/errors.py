"""Error types a user can act on.

Every failure that crosses a module boundary is one of these, with a message written for the person
at the keyboard (what was wrong, where, and what to do), never a bare traceback.
"""

from __future__ import annotations

from enum import StrEnum


class ErrorKind(StrEnum):
    """Why a tool call produced no trustworthy findings. Stored with executions and used by rewards."""

    INVALID_CALL = "invalid_call"  # the call does not satisfy the schema
    UNKNOWN_LANGUAGE = "unknown_language"
    UNKNOWN_FILE_TYPE = "unknown_file_type"
    PATH_OUTSIDE_CORPUS = "path_outside_corpus"
    PCRE2_REQUIRED = "pcre2_required"  # look-around / back-reference without pcre2: true
    PCRE2_UNAVAILABLE = "pcre2_unavailable"
    # A regex that does not compile, or an ast-grep pattern that does not parse.
    INVALID_PATTERN = "invalid_pattern"
    TOOL_ERROR = "tool_error"  # the tool exited with an error status
    TOOL_NOT_FOUND = "tool_not_found"
    TIMEOUT = "timeout"
    BAD_OUTPUT = "bad_output"  # the tool printed something we could not parse


#: Failures of the machine, not of the call: a tool that is not installed, an `rg` built without
#: PCRE2. A run that failed for one of these says nothing about the call (or the model that wrote
#: it), so it is never graded, stored as a result, or scored as a reward: the work stops instead.
ENVIRONMENT_ERROR_KINDS: frozenset[ErrorKind] = frozenset(
    {ErrorKind.TOOL_NOT_FOUND, ErrorKind.PCRE2_UNAVAILABLE}
)


class CodesearchError(Exception):
    """Base class: `str(err)` is the message to show the user."""


class ToolCallError(CodesearchError):
    """A tool call or plan that is not valid. `field` is the JSON path of the offending field."""

    def __init__(self, message: str, field: str = "") -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.detail = message


class InputFileError(CodesearchError):
    """A JSONL (or other) input file with bad content; `line` is 1-based, 0 for the whole file."""

    def __init__(self, message: str, *, source: str = "", line: int = 0) -> None:
        where = f"{source}:{line}" if line else source
        super().__init__(f"{where}: {message}" if where else message)
        self.source = source
        self.line = line
        self.detail = message


class ToolOutputError(CodesearchError):
    """A tool printed something that is not the JSON we expect (ErrorKind.BAD_OUTPUT)."""


class CorpusError(CodesearchError):
    """An unknown corpus, or a path that leaves the corpus root."""


class ModelError(CodesearchError):
    """A model's weights cannot be added or found: an unknown name, a file that does not match its
    pin, a GGUF transformers cannot read, no environment with torch to convert it."""


class StoreError(CodesearchError):
    """The DuckDB store cannot be opened or written (locked, newer schema, corrupt file)."""


class EnvironmentFault(CodesearchError):
    """This machine cannot run tool calls: a tool is missing, a corpus is absent. Never a score."""


class EngineError(CodesearchError):
    """A proposal engine cannot be built or cannot reach its model (bad settings, server down)."""
