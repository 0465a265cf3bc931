"""Run a validated ToolCall (or a Plan) with the real `rg` / `ast-grep` and return normalized Findings.

The runner only glues pieces together: `argv` builds the command, a subprocess runs it with
cwd=corpus root, the stream parser turns stdout into Findings *while the tool runs* (reads of up to
256 KiB, never the whole output in memory), and the exit status plus stderr decide `ok` /
`error_kind`. Tool problems come back in the RunResult (ok=False), never as exceptions, and so does
a call the kernel refuses to start (an argument list over its size limit, a NUL byte in a call built
without `parse_tool_call`); a corpus root that does not exist is the caller's mistake and raises
CorpusError.

ast-grep skips a file it cannot read (no permission, a socket) without a word and exits 0. The
runner reads which walked or named files it skipped from its `--inspect=entity` trace, and checks
the named paths the trace never mentions (a socket or a FIFO is not even tried): such a run is a
`tool_error` naming them, with the findings in the other files kept, as rg reports them.

Order: findings are sorted by path, then by position. rg prints each file's matches in order but
files in whatever order its threads finish (`--sort path` would force one thread), so sorting after
is both deterministic and faster. When `max_findings` cuts a search short (`truncated`), which
findings were kept depends on that thread order.
"""

from __future__ import annotations

import os
import stat
import subprocess
import time
from collections.abc import Sequence
from operator import attrgetter
from pathlib import Path, PurePosixPath
from typing import Any, Final

from codesearch_core.errors import CorpusError, ErrorKind
from codesearch_core.models import Plan, RunResult, ToolCall, ToolName
from codesearch_core.tools.argv import ArgvError, ripgrep_files_argv, tool_argv
from codesearch_core.tools.binaries import ToolNotFoundError
from codesearch_core.tools.parsers import (
    AstGrepParser,
    RipgrepParser,
    strip_dot_slash,
)
from codesearch_core.tools.pattern_check import misread_warning
from codesearch_core.tools.process import StreamParser, execute

DEFAULT_TIMEOUT_S: Final = 10.0
DEFAULT_MAX_FINDINGS: Final = 10_000
_ERROR_DETAIL_CHARS: Final = 1500

_RG_PATTERN_ERRORS: Final = (
    "regex parse error",
    "error parsing regex",
    "PCRE2: error compiling pattern",
    "is not allowed in a regex",
    "error parsing glob",
    # A regex that parses but whose compiled form is over rg's --regex-size-limit (`\w{1000}{1000}`).
    "compiled regex exceeds size limit",
)
_AST_GREP_BAD_PATTERN: Final = "Pattern contains an ERROR node"
_AST_GREP_BAD_RULE: Final = "Cannot parse rule"
_MAX_UNREAD_LISTED: Final = 10

_TOOL_LABELS: Final = {ToolName.RIPGREP: "rg", ToolName.AST_GREP: "ast-grep"}
_by_path = attrgetter("path")
_by_position = attrgetter("path", "byte_start", "byte_end")


def run_tool_call(
    call: ToolCall,
    corpus_root: Path,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    max_findings: int = DEFAULT_MAX_FINDINGS,
    restrict_files: Sequence[str] | None = None,
) -> RunResult:
    """Execute `call` over `corpus_root`.

    `restrict_files` (corpus-relative paths) limits the search to those files, intersected with what
    the call itself selects (`paths`, and for rg `file_types` / `globs`); an empty intersection
    gives an ok result with no findings and runs nothing.
    """
    root = _corpus_root(corpus_root)
    if max_findings < 0:
        raise ValueError(f"max_findings must be >= 0, got {max_findings}")
    started = time.monotonic()
    deadline = started + timeout_s
    try:
        files = None
        if restrict_files is not None:
            files = _narrow(call, root, restrict_files, deadline)
            if not files:
                return RunResult(ok=True, findings=(), elapsed_s=time.monotonic() - started)
        argv = tool_argv(call, root, files)
    except ArgvError as err:
        return _failed(err.kind, str(err), started)
    except (OSError, ValueError) as err:  # from `rg --files` while narrowing
        return _failed(*_not_started(_TOOL_LABELS[call.name], err), started)
    except ToolNotFoundError as err:
        return _failed(ErrorKind.TOOL_NOT_FOUND, str(err), started)
    except subprocess.TimeoutExpired:
        return _failed(ErrorKind.TIMEOUT, _timeout_message("rg --files", timeout_s), started)

    parser: StreamParser
    if call.name is ToolName.RIPGREP:
        parser = RipgrepParser(multiline=bool(call.arguments.get("multiline")), root=root)
    else:
        parser = AstGrepParser(str(call.arguments["language"]))
    traced = call.name is ToolName.AST_GREP
    try:
        run = execute(argv, root, parser, deadline, max_findings, traced=traced)
    except (OSError, ValueError) as err:
        return _failed(*_not_started(argv[0], err), started)
    run.findings.sort(key=_by_path if call.name is ToolName.RIPGREP else _by_position)

    # A tool we stopped on purpose (truncated) has no exit status worth reading; judge it as if it
    # had succeeded, so only what it already said on stderr (an unparsable pattern) counts.
    status = 0 if run.truncated else run.return_code
    if run.timed_out:
        kind: ErrorKind | None = ErrorKind.TIMEOUT
        error = _timeout_message(_TOOL_LABELS[call.name], timeout_s)
    elif run.bad_output:
        kind, error = ErrorKind.BAD_OUTPUT, run.bad_output
    elif call.name is ToolName.RIPGREP:
        kind, error = _rg_status(status, run.stderr)
    else:
        kind, error = _ast_grep_status(status, run.stderr, call)
        if kind in (None, ErrorKind.TOOL_ERROR):
            unread = _not_searchable(root, argv[argv.index("--") + 1 :]) + run.unread
            if unread:
                note = _unread_message(unread)
                kind, error = ErrorKind.TOOL_ERROR, f"{error}; {note}" if error else note
    # Only a silent 0 is worth the second process: what found something parsed as intended.
    silent = kind is None and not run.findings and call.name is ToolName.AST_GREP
    warning = misread_warning(call) if silent else None
    warnings = (warning,) if warning else ()
    return RunResult(
        ok=kind is None,
        findings=tuple(run.findings),
        stderr=run.stderr,
        return_code=run.return_code,
        elapsed_s=time.monotonic() - started,
        truncated=run.truncated,
        error_kind=kind,
        error=error,
        argv=tuple(argv),
        warnings=warnings,
    )


def run_plan(
    plan: Plan,
    corpus_root: Path,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    max_findings: int = DEFAULT_MAX_FINDINGS,
) -> RunResult:
    """Run the steps in order; the last step's findings are the plan's.

    A step with `restrict_to_previous` searches only the files the previous step found (none found:
    no findings, nothing run). The first failing step ends the plan and its error is the plan's.
    `timeout_s` and `max_findings` apply to each step; `steps` holds every step that ran.
    """
    steps: list[RunResult] = []
    previous: RunResult | None = None
    for i, step in enumerate(plan.steps):
        restrict = None
        if step.restrict_to_previous and previous is not None:
            restrict = sorted({f.path for f in previous.findings})
        result = run_tool_call(
            step.call,
            corpus_root,
            timeout_s=timeout_s,
            max_findings=max_findings,
            restrict_files=restrict,
        )
        steps.append(result)
        if not result.ok:
            return RunResult(
                ok=False,
                findings=(),
                stderr=result.stderr,
                return_code=result.return_code,
                elapsed_s=sum(s.elapsed_s for s in steps),
                truncated=any(s.truncated for s in steps),
                error_kind=result.error_kind,
                error=f"step {i + 1} of {len(plan.steps)}: {result.error}",
                argv=result.argv,
                steps=tuple(steps),
            )
        previous = result
    last = steps[-1]
    return RunResult(
        ok=True,
        findings=last.findings,
        stderr=last.stderr,
        return_code=last.return_code,
        elapsed_s=sum(s.elapsed_s for s in steps),
        # A narrowed step is incomplete when the step it narrowed from was.
        truncated=any(s.truncated for s in steps),
        argv=last.argv,
        steps=tuple(steps),
        warnings=tuple(f"step {i + 1}: {w}" for i, s in enumerate(steps) for w in s.warnings),
    )


def run_result_to_dict(result: RunResult) -> dict[str, Any]:
    """A JSON-ready view of a RunResult (for `codesearch run --json` and logs)."""
    return {
        "ok": result.ok,
        "error_kind": None if result.error_kind is None else result.error_kind.value,
        "error": result.error,
        "truncated": result.truncated,
        "return_code": result.return_code,
        "elapsed_s": round(result.elapsed_s, 6),
        "argv": list(result.argv),
        "stderr": result.stderr,
        "findings": [f.to_dict() for f in result.findings],
        "warnings": list(result.warnings),
        "steps": [run_result_to_dict(s) for s in result.steps],
    }


def _not_searchable(root: Path, named: Sequence[str]) -> list[str]:
    """Named paths that are neither a file nor a directory: ast-grep skips them without a trace.

    A missing path is left out: ast-grep reports it (`ERROR: ... No such file or directory`).
    """
    out: list[str] = []
    for path in named:
        try:
            mode = os.stat(root / path).st_mode  # argv has checked it stays inside the corpus
        except OSError:
            continue
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            out.append(f"{path} (a {_file_kind(mode)}, not a file or directory)")
    return out


def _file_kind(mode: int) -> str:
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    return "special file"


def _unread_message(unread: Sequence[str]) -> str:
    named = ", ".join(unread[:_MAX_UNREAD_LISTED])
    more = len(unread) - _MAX_UNREAD_LISTED
    if more > 0:
        named += f" and {more} more"
    return (
        f"ast-grep skipped files it could not read: {named}; their matches are missing (the "
        "findings in the other files are kept)"
    )


def _not_started(program: str, err: OSError | ValueError) -> tuple[ErrorKind, str]:
    """Why a process could not start: the kernel refused it (`E2BIG`: arguments over its limit), or
    Popen could not pass an argument (a NUL byte, text that does not encode)."""
    if isinstance(err, OSError):
        return ErrorKind.TOOL_ERROR, f"could not start {program}: {err}"
    return ErrorKind.INVALID_CALL, (
        f"could not start {program}: {err}; build calls with schemas.parse_tool_call, which "
        "refuses NUL bytes and lone surrogates with the field they are in"
    )


def _corpus_root(corpus_root: Path) -> Path:
    root = Path(corpus_root)
    if not os.path.isdir(root):
        raise CorpusError(f"corpus root {str(root)!r} is not a directory")
    return root


def _narrow(
    call: ToolCall, root: Path, restrict_files: Sequence[str], deadline: float
) -> list[str]:
    """The restrict files that `call` would itself search, in sorted order."""
    args = call.arguments
    if call.name is ToolName.RIPGREP and (args.get("file_types") or args.get("globs")):
        # rg searches a file named on its command line whatever its type or glob, so ask rg which
        # files the call selects and keep those.
        listing = subprocess.run(
            ripgrep_files_argv(call, root),
            cwd=root,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=max(0.001, deadline - time.monotonic()),
        )
        selected = {
            strip_dot_slash(line.decode("utf-8", "replace")) for line in listing.stdout.splitlines()
        }
        return sorted(f for f in set(restrict_files) if f in selected)
    scopes = [str(PurePosixPath(str(p))) for p in args.get("paths", ())]
    return sorted(f for f in set(restrict_files) if _within(f, scopes))


def _within(path: str, scopes: list[str]) -> bool:
    if not scopes:
        return True
    return any(s == "." or path == s or path.startswith(s + "/") for s in scopes)


def _failed(kind: ErrorKind, message: str, started: float) -> RunResult:
    return RunResult(
        ok=False,
        findings=(),
        elapsed_s=time.monotonic() - started,
        error_kind=kind,
        error=message,
    )


def _timeout_message(tool: str, timeout_s: float) -> str:
    return (
        f"{tool} did not finish within the {timeout_s:g} s limit and was stopped; narrow the "
        "search (paths, file_types) or simplify the pattern"
    )


def _detail(stderr: str) -> str:
    text = stderr.strip()
    return text if len(text) <= _ERROR_DETAIL_CHARS else text[:_ERROR_DETAIL_CHARS] + " ..."


def _rg_status(rc: int | None, stderr: str) -> tuple[ErrorKind | None, str]:
    """rg exits 0 (matches), 1 (none), 2 (an error, even when it also printed matches)."""
    if rc in (0, 1):
        return None, ""
    if any(marker in stderr for marker in _RG_PATTERN_ERRORS):
        return ErrorKind.INVALID_PATTERN, f"rg rejected the pattern: {_detail(stderr)}"
    return ErrorKind.TOOL_ERROR, f"rg exited with status {rc}: {_detail(stderr)}"


def _ast_grep_status(rc: int | None, stderr: str, call: ToolCall) -> tuple[ErrorKind | None, str]:
    """ast-grep exits 0 (matches; `scan` also without), 1 (none) and reports some problems only on
    stderr: an unparsable pattern is a warning with status 0, a missing path an `ERROR:` line."""
    language = call.arguments.get("language")
    if _AST_GREP_BAD_PATTERN in stderr:
        return ErrorKind.INVALID_PATTERN, (
            f"ast-grep could not parse the pattern as {language} code (it contains an ERROR "
            "node); write a complete, valid code fragment with $METAVARIABLES for the holes"
        )
    if _AST_GREP_BAD_RULE in stderr:
        return ErrorKind.INVALID_PATTERN, f"ast-grep rejected the rule: {_detail(stderr)}"
    if "--lang" in stderr and "invalid value" in stderr:
        return ErrorKind.UNKNOWN_LANGUAGE, f"ast-grep does not know language {language!r}"
    if rc in (0, 1) and not any(line.startswith("ERROR:") for line in stderr.splitlines()):
        return None, ""
    return ErrorKind.TOOL_ERROR, f"ast-grep exited with status {rc}: {_detail(stderr)}"
