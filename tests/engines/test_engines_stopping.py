"""The engine's stop path with real processes and real signals, no vLLM: a process tree stands
for the engine core and its worker (the child ends on SIGTERM, its own child when its parent is
gone, as vLLM's do; or both ignore SIGTERM, as vLLM's do while compiling). `test_engines_vllm.py`
stops the real engine the same way."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from codesearch_core.engines.stopping import STOP_GRACE_S, Stopped, engine_stop_path
from tests.ctrl_c_support import session_processes, wait_for

REPO = Path(__file__).resolve().parents[2]

#: A command under the stop path with a child and a grandchild; it prints `ready` once both run.
COMMAND = """
import signal, subprocess, sys, time
from codesearch_core.engines.stopping import Stopped, end_child_processes, engine_stop_path
stubborn = sys.argv[1] == "stubborn"
ignore = "signal.signal(signal.SIGTERM, signal.SIG_IGN); " if stubborn else ""
grandchild = f"import signal, sys, time; {ignore}print(flush=True); sys.stdin.read(); time.sleep(600 if {stubborn} else 0)"
child = (
    f"import signal, subprocess, sys, time; {ignore}"
    f"p = subprocess.Popen([sys.executable, '-c', {grandchild!r}], stdin=subprocess.PIPE, stdout=subprocess.PIPE); "
    "p.stdout.readline(); print(flush=True); time.sleep(600)"
)
try:
    with engine_stop_path():
        proc = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE)
        proc.stdout.readline()
        print("ready", flush=True)
        if sys.argv[2:] == ["end"]:  # what the block's end does after a signal, with a 1 s grace
            started = time.monotonic()
            killed = end_child_processes(started + 1)
            print(f"killed {killed} after {time.monotonic() - started:.1f}", flush=True)
            sys.exit(0)
        time.sleep(600)
except Stopped as stop:
    print(f"stopped {stop.exit_code}", flush=True)
    sys.exit(stop.exit_code)
"""


@pytest.fixture
def default_sigint() -> Iterator[None]:
    """SIGINT's default handler, as a terminal gives it: a shell's background job (CI started with
    `&`) inherits SIGINT ignored."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.mark.usefixtures("default_sigint")
@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_that_lands_in_another_thread_interrupts_the_main_threads_c_call(
    signum: int, code: int
) -> None:
    # vLLM's start-up: the main thread waits in C (here a read of a pipe nobody writes) while the
    # signal is delivered to another thread (here one that sends it to itself). Python notes it
    # there, and without help the main thread only sees it once the read returns: the fallback
    # write, 30 s on, would then come first.
    read_fd, write_fd = os.pipe()
    fell_back = threading.Event()

    def write_after_all() -> None:
        fell_back.set()
        os.write(write_fd, b"x")

    fallback = threading.Timer(30, write_after_all)
    fallback.start()

    def signal_this_thread() -> None:
        time.sleep(0.5)  # the main thread is in the read by then
        signal.pthread_kill(threading.get_ident(), signum)

    before = signal.getsignal(signal.SIGTERM)
    try:
        with pytest.raises(Stopped) as stopped, engine_stop_path():
            threading.Thread(target=signal_this_thread).start()
            os.read(read_fd, 1)
        assert not fell_back.is_set()  # the interrupt came first, not the fallback's byte
        assert stopped.value.exit_code == code
    finally:
        fallback.cancel()
        os.close(read_fd)
        os.close(write_fd)
    # outside the block the handlers are what they were
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert signal.getsignal(signal.SIGTERM) == before


def start(kind: str, *more: str) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, "-c", COMMAND, kind, *more],
        cwd=str(REPO),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own session: what is left of it is found by session id
    )
    assert proc.stdout is not None
    assert proc.stdout.readline() == b"ready\n", proc.stderr.read() if proc.stderr else b""
    assert len(session_processes(proc.pid)) == 3  # the command, its child and grandchild
    return proc


def finish(proc: subprocess.Popen[bytes], timeout: float) -> tuple[int, str, str]:
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc.returncode, out.decode(), err.decode()


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_the_first_signal_to_the_command_alone_stops_its_process_tree(
    signum: int, code: int
) -> None:
    proc = start("cooperative")
    proc.send_signal(signum)  # to the command only, as `kill PID` or a service manager
    rc, out, err = finish(proc, STOP_GRACE_S)
    assert (rc, out) == (code, f"stopped {code}\n"), err
    assert f"stopping on {signal.Signals(signum).name}" in err
    # the child got SIGTERM, the grandchild ended with its parent: nothing had to be killed
    assert "killed" not in err
    assert wait_for(lambda: not session_processes(proc.pid), 10), session_processes(proc.pid)


def test_a_second_signal_ends_a_stubborn_tree_at_once() -> None:
    proc = start("stubborn")
    os.killpg(proc.pid, signal.SIGTERM)  # the whole group: the tree ignores it
    time.sleep(1)
    assert proc.poll() is None  # waiting for its child, within the grace
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    rc, _, err = finish(proc, 10)
    assert rc == 143, err  # the first signal's status
    assert "SIGINT again: killed 2 engine process(es)" in err
    assert time.monotonic() - sent < 5  # at once, not at the end of the grace
    assert wait_for(lambda: not session_processes(proc.pid), 10), session_processes(proc.pid)


def test_what_ignores_sigterm_is_killed_when_the_grace_is_spent() -> None:
    proc = start("stubborn", "end")
    rc, out, err = finish(proc, 10)
    assert rc == 0, err
    killed, took = out.split()[1], float(out.split()[3])
    assert killed == "2" and 1.0 <= took < 3.0, out  # SIGTERM ignored; SIGKILL at the deadline
    assert "killed 2 engine process(es) still running" in err
    assert wait_for(lambda: not session_processes(proc.pid), 10), session_processes(proc.pid)
