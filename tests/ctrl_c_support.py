"""Ctrl-C a `codesearch` command mid-run, as a person at a terminal does: its stderr on a
pseudo-terminal (where the progress line is drawn; it is silent on a pipe), the signal sent once
the progress line shows what the caller waits for.

And what a stopped run leaves: the live processes of its session (a command started in its own
session, as a terminal's job or a service is), the shared memory they map."""

from __future__ import annotations

import os
import pty
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

#: SIGINT's default handler, as a terminal gives it: a shell's background job (CI started with
#: `&`) inherits SIGINT ignored, and then no Ctrl-C would reach the command at all.
CLI_WITH_CTRL_C = (
    "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "from codesearch_core.cli import main; sys.exit(main())"
)


@dataclass(frozen=True)
class Interrupted:
    returncode: int
    stdout: bytes
    terminal: str  # what the command wrote to stderr, progress line included


def ctrl_c_when(
    command: list[str], progress: bytes, env: Mapping[str, str] | None = None
) -> Interrupted:
    """Run `codesearch COMMAND`, send SIGINT once stderr matches the regex `progress`, and return
    what it printed until it ended."""
    primary, secondary = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-c", CLI_WITH_CTRL_C, *command],
        stdout=subprocess.PIPE,
        stderr=secondary,
        env=dict(env) if env is not None else None,
        start_new_session=True,  # the signal reaches this process only, not the test's group
    )
    os.close(secondary)
    err = b""
    while re.search(progress, err) is None:
        chunk = os.read(primary, 4096)
        assert chunk, err
        err += chunk
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=120)
    while True:  # the rest the command wrote to the terminal, until its end is closed
        try:
            chunk = os.read(primary, 4096)
        except OSError:
            break
        if not chunk:
            break
        err += chunk
    os.close(primary)
    return Interrupted(proc.returncode, out, err.decode(errors="replace"))


def session_processes(sid: int) -> dict[int, str]:
    """Live processes of a session (pid -> command line), zombies left out."""
    found: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (comm) "
        if int(fields[3]) == sid and fields[0] != "Z":
            found[int(entry.name)] = cmdline
    return found


def mapped_shared_memory(pids: Iterable[int]) -> set[str]:
    """The /dev/shm segments these processes have mapped (vLLM's message queues are psm_*)."""
    names: set[str] = set()
    for pid in pids:
        try:
            maps = Path(f"/proc/{pid}/maps").read_text()
        except OSError:
            continue
        names.update(m.group(0) for m in re.finditer(r"/dev/shm/\S+", maps))
    return names


def wait_for(condition: Callable[[], object], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.25)
    return bool(condition())
