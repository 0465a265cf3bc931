"""One tool process: started, its stdout parsed while it runs, stopped at a deadline or a cap.

Split from `runner` (which decides what to run and what the outcome means) so the part that
talks to the kernel (pipes, polling, reads) can be read on its own.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import select
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Final, Protocol

from codesearch_core.errors import ToolOutputError
from codesearch_core.models import Finding
from codesearch_core.tools.parsers import strip_dot_slash

STDERR_TAIL_BYTES: Final = 64 * 1024
_READ_BYTES: Final = 256 * 1024
# A bigger pipe lets the tool write ahead while we parse (Linux default: 64 KiB; 1 MiB is the
# unprivileged maximum).
_PIPE_BYTES: Final = 1024 * 1024
_DEFAULT_PIPE_BYTES: Final = 64 * 1024
_AST_GREP_TRACE: Final = re.compile(rb"^sg: (?:entity|summary)\|.*\n?", re.MULTILINE)
_AST_GREP_SKIPPED: Final = re.compile(rb"^sg: entity\|file\|(.*): skipped=(\w+)\r?$", re.MULTILINE)
_TRACE_BLOCK_BYTES: Final = 1024 * 1024
#: Skip reasons that mean a file's matches are missing. Not `emptyFile`, nor `invalidUtf8`: ast-grep
#: parses UTF-8 only, a documented limit (such a corpus needs ripgrep_search).
_AST_GREP_UNREAD: Final = {b"permissionDenied": "permission denied", b"ioError": "read error"}


class StreamParser(Protocol):
    def feed(self, chunk: bytes) -> list[Finding]: ...
    def close(self) -> list[Finding]: ...


class ProcessRun:
    __slots__ = (
        "bad_output", "findings", "return_code", "stderr", "timed_out", "truncated", "unread"
    )  # fmt: skip

    def __init__(self) -> None:
        self.findings: list[Finding] = []
        self.return_code: int | None = None
        self.stderr = ""
        self.truncated = False
        self.timed_out = False
        self.bad_output = ""
        self.unread: list[str] = []  # files the tool skipped unread, "path (why)"


def pid_alive(pid: int) -> bool:
    """Whether process `pid` still runs (a temp or staging file named after it may be in use).
    A process we may not signal is alive, not gone."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def execute(
    argv: list[str],
    cwd: Path,
    parser: StreamParser,
    deadline: float,
    max_findings: int,
    *,
    traced: bool = False,
) -> ProcessRun:
    """Run `argv`, parsing stdout as it arrives; kill on deadline or once past `max_findings`.

    `traced`: stderr carries ast-grep's `--inspect=entity` trace, read for skipped files and left
    out of `stderr`.
    """
    run = ProcessRun()
    findings = run.findings
    # stderr goes to a file, not a pipe: a tool that writes lots of warnings cannot block on it
    # while we read stdout, and we keep only its tail.
    with _Files.get() as (err_file, devnull):
        proc = subprocess.Popen(
            argv, cwd=cwd, stdin=devnull, stdout=subprocess.PIPE, stderr=err_file
        )
        try:
            assert proc.stdout is not None
            fd = proc.stdout.fileno()
            widened = False
            poller = select.poll()
            poller.register(fd, select.POLLIN)
            eof = False
            while not eof:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    run.timed_out = True
                    break
                if not poller.poll(remaining * 1000):
                    continue
                # Readable: one read takes what the pipe holds now (up to `_READ_BYTES`) without
                # waiting for more, or b"" at the end. Batching by what is there, not by waiting:
                # a small search's output is parsed the moment it arrives, and a big one comes in
                # big pieces because the tool keeps the pipe full.
                chunk = os.read(fd, _READ_BYTES)
                if not widened and len(chunk) >= _DEFAULT_PIPE_BYTES:
                    # A big output: let the tool write ahead while we parse. Only then, because
                    # resizing the pipe costs the kernel more than a small search's whole read.
                    _widen_pipe(fd)
                    widened = True
                eof = not chunk
                try:
                    findings += parser.close() if eof else parser.feed(chunk)
                except ToolOutputError as err:
                    run.bad_output = str(err)
                    break
                if len(findings) > max_findings:
                    del findings[max_findings:]
                    run.truncated = True
                    break
            if eof and not _exited_by(proc, deadline):
                run.timed_out = True
        finally:
            if proc.poll() is None:
                proc.kill()
            run.return_code = proc.wait()
            proc.stdout.close()  # type: ignore[union-attr]
        if traced:
            run.stderr, run.unread = _untrace(err_file)
        else:
            run.stderr = _tail(err_file)
    return run


class _Files(threading.local):
    """This thread's stderr file and /dev/null, opened once and reused by each run.

    Opening a temporary file (and /dev/null) for every run cost ~0.1 ms of a 3 ms search; a
    verification worker runs thousands. Per thread, because two threads cannot share one stderr
    file, and per process: a forked child (a verification worker) opens its own rather than
    truncating its parent's. A run that is still using this thread's files (a tool started from
    a callback inside `execute`, which nothing does) gets fresh ones.
    """

    def __init__(self) -> None:
        self.pid = -1
        self.busy = False
        self.err: IO[bytes] | None = None
        self.devnull = -1

    @staticmethod
    @contextlib.contextmanager
    def get() -> Iterator[tuple[IO[bytes], int]]:
        files = _FILES
        if files.busy:
            with tempfile.TemporaryFile() as fresh, open(os.devnull, "rb") as devnull:
                yield fresh, devnull.fileno()
            return
        if files.pid != os.getpid() or files.err is None:
            files.err = _scratch_file()
            files.devnull = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
            files.pid = os.getpid()
        err = files.err
        if err.tell():  # what the last run left (rg usually writes nothing)
            err.seek(0)
            err.truncate()
        files.busy = True
        try:
            yield err, files.devnull
        finally:
            files.busy = False


_FILES: Final = _Files()


def _scratch_file() -> IO[bytes]:
    """A file for stderr held in memory (memfd, Linux): a disk-backed temp file journals each
    truncate, a cost paid on every run. Elsewhere a temporary file."""
    memfd_create = getattr(os, "memfd_create", None)
    if memfd_create is not None:
        with contextlib.suppress(OSError):
            return open(memfd_create("codesearch-stderr", os.MFD_CLOEXEC), "w+b")
    return tempfile.TemporaryFile()


def _exited_by(proc: subprocess.Popen[bytes], deadline: float) -> bool:
    """Whether `proc` exits before `deadline` (it has closed its output: it usually has).

    `Popen.wait(timeout=...)` polls with sleeps of 0.5 ms and more, a third of a small search's
    cost; a pidfd (Linux 5.3+) wakes the moment the process exits.
    """
    if proc.poll() is not None:
        return True
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):  # not Linux, or an old kernel
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            return False
        return True
    try:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        poller.poll(max(0.0, deadline - time.monotonic()) * 1000)
    finally:
        os.close(pidfd)
    return proc.poll() is not None


def _widen_pipe(fd: int) -> None:
    set_size = getattr(fcntl, "F_SETPIPE_SZ", None)
    if set_size is None:
        return
    # Over /proc/sys/fs/pipe-max-size it fails, and the default size still works.
    with contextlib.suppress(OSError):
        fcntl.fcntl(fd, set_size, _PIPE_BYTES)


def _tail(f: IO[bytes]) -> str:
    size = f.seek(0, os.SEEK_END)
    f.seek(max(0, size - STDERR_TAIL_BYTES))
    return f.read().decode("utf-8", "replace")


def _untrace(f: IO[bytes]) -> tuple[str, list[str]]:
    """ast-grep's stderr without its trace (the tail, as `_tail`), and the files the trace says it
    skipped unread. The whole file is read: the trace has a line per file, so a skipped file can be
    far from the tail."""
    f.seek(0)
    kept = bytearray()
    unread: dict[str, str] = {}
    rest = b""
    # In blocks of whole lines, each searched by a regex in C: a loop over the lines in Python
    # cost ~1 us for each file the search walked.
    while True:
        data = f.read(_TRACE_BLOCK_BYTES)
        if data:
            data = rest + data
            cut = data.rfind(b"\n") + 1
            block, rest = data[:cut], data[cut:]
        elif rest:
            block, rest = rest, b""  # the last line, without its newline
        else:
            break
        if b": skipped=" in block:  # rare: a file skipped, perhaps unread
            for skipped in _AST_GREP_SKIPPED.finditer(block):
                if skipped[2] in _AST_GREP_UNREAD:
                    path = strip_dot_slash(skipped[1].decode("utf-8", "replace"))
                    unread.setdefault(path, _AST_GREP_UNREAD[skipped[2]])
        kept += _AST_GREP_TRACE.sub(b"", block)
        if len(kept) > 2 * STDERR_TAIL_BYTES:
            del kept[:-STDERR_TAIL_BYTES]
    tail = bytes(kept[-STDERR_TAIL_BYTES:]).decode("utf-8", "replace")
    return tail, [f"{path} ({why})" for path, why in unread.items()]
