"""The one way a command that owns an engine's processes stops: `engine_stop_path`.

A command that runs vLLM (`propose`, `eval`, `rollouts`, `synthesize --engine vllm`,
`serve-model`) has child processes: vLLM's engine core, its workers, multiprocessing's resource
tracker (and, for `serve-model`, the whole server). A signal may reach the command alone (`kill
PID`, a service manager's SIGTERM, a CI runner) or its whole process group (Ctrl-C at a terminal),
at any moment: loading, compiling, generating, serving. Within `engine_stop_path`:

- the first SIGINT or SIGTERM raises `Stopped` (a KeyboardInterrupt) in the main thread, even when
  the main thread waits in a C call (vLLM's engine-ready poll): the command's `finally` blocks shut
  the engine down (vLLM's clean shutdown, given what is left of the grace) and the command reports
  what it stored; the block's end then stops whatever is left of its child processes: SIGTERM,
  then SIGKILL once the grace is spent;
- `STOP_GRACE_S` after the first signal, whatever has not ended is SIGKILLed and the process exits,
  so a run never outlives the grace the docs promise;
- a second signal SIGKILLs every child process and exits at once.

The exit status is 128 + the signal's number: 130 for SIGINT, 143 for SIGTERM (`Stopped.exit_code`,
which the CLI returns). Multiprocessing's resource tracker is spared: it ends by itself once
every process that shares it has, and unlinks the shared memory they left.

`run_supervised` runs a server process under the same path (`serve-model`). `grace_left` tells an
engine's shutdown how long it may take (`vllm_engine._shutdown_llm`).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

#: Seconds from the first SIGINT / SIGTERM to the end of the process, at the most.
STOP_GRACE_S: Final = 30.0
#: Of the grace, what is kept back for the last step (SIGKILL of what is left, the exit).
_LAST_STEP_S: Final = 3.0
#: How long the main thread has to run the signal handler itself before it is sent the signal.
_HANDLER_GRACE_S: Final = 0.5
_SIGNALS: Final = (signal.SIGINT, signal.SIGTERM)


class Stopped(KeyboardInterrupt):
    """The first SIGINT or SIGTERM of a run under `engine_stop_path`."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        """130 for SIGINT, 143 for SIGTERM: what a shell reports for a process the signal ended."""
        return 128 + self.signum


@dataclass
class _Stop:
    """The process's stop path while one is open (one per process: signals are process-wide)."""

    main_id: int
    signum: int | None = None
    deadline: float | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    handled: threading.Event = field(default_factory=threading.Event)
    #: Signals the watcher sent to the main thread itself, not yet read from the wakeup fd / not
    #: yet handled (the two happen in either order).
    unread: int = 0
    raised: bool = False  # the handler raised Stopped in the main thread
    unhandled: int = 0

    def begin(self, signum: int) -> bool:
        """Note the first signal; whether this call was the one that did."""
        with self.lock:
            if self.signum is not None:
                return False
            self.signum = signum
            self.deadline = time.monotonic() + STOP_GRACE_S
            return True


_open: _Stop | None = None


def stop_path_open() -> bool:
    """Whether this process runs under `engine_stop_path` (its signals are taken)."""
    return _open is not None


def grace_left() -> float | None:
    """Seconds an engine may still take to shut down cleanly after a stop signal, or None when
    there was none (no hurry: the engine's own timeout applies)."""
    stop = _open
    if stop is None or stop.deadline is None:
        return None
    return max(1.0, stop.deadline - _LAST_STEP_S - time.monotonic())


@contextlib.contextmanager
def engine_stop_path() -> Iterator[None]:
    """Within the block, SIGINT and SIGTERM stop the command and its child processes within
    `STOP_GRACE_S` (module docstring). Outside the main thread (a Streamlit script), a no-op:
    signal handlers belong to the main thread."""
    global _open
    if threading.current_thread() is not threading.main_thread() or _open is not None:
        yield
        return
    main_id = threading.main_thread().ident
    assert main_id is not None
    stop = _Stop(main_id)

    def on_signal(signum: int, frame: Any) -> None:
        stop.handled.set()
        stop.begin(signum)  # the watcher may have noted the signal first
        with stop.lock:
            first, stop.raised = not stop.raised, True
            again = stop.unhandled > 0
            stop.unhandled = max(0, stop.unhandled - 1)
        if first or again:
            raise Stopped(stop.signum or signum)
        # a real second signal: the watcher ends the process

    wake_r, wake_w = os.pipe()
    quit_r, quit_w = os.pipe()
    os.set_blocking(wake_w, False)  # set_wakeup_fd needs it: a signal handler must never block
    previous = {signum: signal.getsignal(signum) for signum in _SIGNALS}
    for signum in _SIGNALS:
        signal.signal(signum, on_signal)
    old_fd = signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
    watcher = threading.Thread(
        target=_watch, args=(stop, wake_r, quit_r), name="codesearch-stop", daemon=True
    )
    _open = stop
    watcher.start()
    try:
        yield
    finally:
        if stop.signum is not None:
            deadline = stop.deadline or time.monotonic()
            end_child_processes(deadline - _LAST_STEP_S / 2)
        signal.set_wakeup_fd(old_fd)
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        os.write(quit_w, b"x")
        watcher.join()
        _open = None
        for fd in (wake_r, wake_w, quit_r, quit_w):
            os.close(fd)


def _watch(stop: _Stop, wake_r: int, quit_r: int) -> None:
    """Sees every signal through the wakeup fd: makes sure the main thread gets the first, ends
    the process on a second one or once the grace is spent."""
    seen = 0  # real signals, the watcher's own forwards left out
    while True:
        timeout: float | None = None
        if stop.deadline is not None:
            timeout = min(_HANDLER_GRACE_S, max(0.0, stop.deadline - time.monotonic()))
        ready, _, _ = select.select([wake_r, quit_r], [], [], timeout)
        if quit_r in ready:
            return
        signum = stop.signum
        if signum is not None and stop.deadline is not None and time.monotonic() >= stop.deadline:
            _end_now(signum, f"not stopped {STOP_GRACE_S:g} s after {_name(signum)}")
        if wake_r not in ready:
            if signum is not None and _in_vllms_engine_ready_wait(
                sys._current_frames().get(stop.main_id)
            ):
                _forward(stop, signum)
            continue
        for received in os.read(wake_r, 512):
            if received not in _SIGNALS:
                continue
            with stop.lock:
                if stop.unread > 0:
                    stop.unread -= 1
                    continue
            seen += 1
            if seen > 1:
                _end_now(stop.signum or received, f"{_name(received)} again")
            stop.begin(received)
            _say(
                f"stopping on {_name(received)}: the engine gets up to {STOP_GRACE_S:g} s to "
                "shut down (signal again to end it at once)"
            )
            if not stop.handled.wait(_HANDLER_GRACE_S):
                _forward(stop, stop.signum or received)


def _forward(stop: _Stop, signum: int) -> None:
    """Send the signal to the main thread itself: that breaks its C call with EINTR and runs the
    handler there."""
    with stop.lock:
        stop.unread += 1
        stop.unhandled += 1
    stop.handled.clear()
    signal.pthread_kill(stop.main_id, signum)


def _in_vllms_engine_ready_wait(frame: Any) -> bool:
    """Whether the main thread waits in vLLM's engine-ready poll (a zmq poll called by
    `MPClient.__init__`). vLLM 0.32 swallows a KeyboardInterrupt raised while its engine starts
    (`zmq_socket_ctx` logs "Got Keyboard Interrupt" and carries on) and waits there for the engine
    the signal ended: the watcher sends the signal again while the main thread sits in it."""
    calls: list[tuple[str, str]] = []
    while frame is not None and len(calls) < 4:
        calls.append((frame.f_code.co_filename, frame.f_code.co_name))
        frame = frame.f_back
    client = os.path.join("v1", "engine", "core_client.py")
    return (
        bool(calls)
        and calls[0][1] == "poll"
        and any(name == "__init__" and path.endswith(client) for path, name in calls)
    )


def _end_now(signum: int, why: str) -> None:
    """SIGKILL every child process (the resource tracker aside) and exit with 128 + signum."""
    killed = _kill_all(_ProcessTree())
    _say(f"{why}: killed {killed} engine process(es)\ninterrupted")
    time.sleep(0.1)  # a StderrTail copier may still hold the last lines
    os._exit(128 + signum)


def _say(text: str) -> None:
    with contextlib.suppress(OSError):
        os.write(2, f"{text}\n".encode())


def _name(signum: int) -> str:
    return signal.Signals(signum).name


class _ProcessTree:
    """This process's descendants, remembered by (pid, start time) as they are seen: a worker
    whose parent died is reparented away from this process, and must still be found."""

    def __init__(self) -> None:
        self.known: dict[int, str] = {}
        self.refresh()

    def refresh(self) -> None:
        table = _process_table()
        children: dict[int, list[int]] = {}
        for pid, (parent, _) in table.items():
            children.setdefault(parent, []).append(pid)
        todo = [os.getpid(), *self.alive(table)]  # and the orphans' own children
        while todo:
            for pid in children.get(todo.pop(), []):
                if pid not in self.known and not _is_resource_tracker(pid):
                    self.known[pid] = table[pid][1]
                    todo.append(pid)

    def alive(self, table: dict[int, tuple[int, str]] | None = None) -> list[int]:
        table = _process_table() if table is None else table
        return [pid for pid, started in self.known.items() if table.get(pid, (0, ""))[1] == started]


def _process_table() -> dict[int, tuple[int, str]]:
    """Live processes (zombies left out): pid -> (parent pid, start time), from /proc."""
    table: dict[int, tuple[int, str]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:  # not Linux: nothing to find
        return table
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="utf-8", errors="replace") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (comm) "
        if fields[0] != "Z":
            table[int(name)] = (int(fields[1]), fields[19])
    return table


def _is_resource_tracker(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return b"resource_tracker" in handle.read()
    except OSError:
        return False


def _kill_all(tree: _ProcessTree) -> int:
    alive = tree.alive()
    for pid in alive:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    return len(alive)


def end_child_processes(deadline: float) -> int:
    """Stop what is left of this process's children: SIGTERM to each child (vLLM's engine core
    then stops its workers), SIGKILL at `deadline` (time.monotonic) to every descendant still
    alive. Returns how many were killed."""
    tree = _ProcessTree()
    if not tree.known:
        return 0
    parent = os.getpid()
    table = _process_table()
    for pid in tree.alive():
        if table.get(pid, (0, ""))[0] == parent:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGTERM)
    while time.monotonic() < deadline:
        tree.refresh()
        if not tree.alive():
            return 0
        time.sleep(0.1)
    tree.refresh()
    killed = _kill_all(tree)
    if killed:
        _say(
            f"killed {killed} engine process(es) still running {STOP_GRACE_S:g} s after the signal"
        )
    return killed


_PR_SET_PDEATHSIG: Final = 1


def _die_with_parent() -> Callable[[], None] | None:
    """For a child, to run before exec: SIGTERM when the parent dies (Linux's PR_SET_PDEATHSIG), so
    a supervisor killed by SIGKILL does not leave its server behind. libc is looked up here, in
    the parent: a dlopen between fork and exec may wait for a lock another thread held."""
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # not Linux
        return None

    def set_death_signal() -> None:
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM))

    return set_death_signal


def run_supervised(argv: Sequence[str], env: Mapping[str, str]) -> int:
    """Run a server (its own process group) until it ends or a signal stops it: then SIGTERM to the
    server (its graceful shutdown), SIGKILL to its group once the grace is spent. Returns the
    server's exit status; a signal raises `Stopped` once the server is gone."""
    with engine_stop_path():
        proc = subprocess.Popen(
            list(argv),
            env=dict(env),
            # A terminal's Ctrl-C reaches this process only; the server gets one SIGTERM from here.
            start_new_session=True,
            preexec_fn=_die_with_parent(),
        )
        try:
            return proc.wait()
        except Stopped:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=grace_left())
            except subprocess.TimeoutExpired:
                _say(f"the server did not stop within {STOP_GRACE_S:g} s: killing it")
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)  # what is left of its group, if anything
            proc.wait()
            raise
