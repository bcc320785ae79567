"""A run typed at the terminal, as a user meets it: ``ireval QRELS -`` on a pseudo-terminal
(pty.fork: the child's standard input, output and error are the terminal, with its line
discipline, echo and Ctrl-C). One Ctrl-D ends the run; one Ctrl-C stops the command."""

from __future__ import annotations

import os
import select
import signal
import sys
import time

import pytest

pty = pytest.importorskip("pty")

PROMPT = b"ireval: reading the run from standard input (end with Ctrl-D)\r\n"
CTRL_C, CTRL_D = b"\x03", b"\x04"


def _read_until(fd: int, out: bytearray, want: bytes | None, deadline: float) -> bool:
    """Read the terminal into ``out`` until ``want`` appears (None: until the child closes it)."""
    while want is None or want not in out:
        if time.monotonic() > deadline:
            return False
        ready, _, _ = select.select([fd], [], [], 0.1)
        if not ready:
            continue
        try:
            data = os.read(fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            return want is None
        if not data:
            return want is None
        out += data
    return True


def terminal(args: list[str], typed: list[bytes]) -> tuple[int, bytes]:
    """Run ``ireval ARGS`` on a pseudo-terminal, type ``typed`` one key sequence at a time
    (each after the terminal echoed the one before), and return (exit code, what it showed)."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: its standard streams are the terminal
        try:
            os.execv(sys.executable, [sys.executable, "-m", "irevalcli", *args])
        finally:
            os._exit(127)
    out = bytearray()
    deadline = time.monotonic() + 120  # a guard against a hang, not a timing assertion
    try:
        assert _read_until(fd, out, PROMPT, deadline), bytes(out)
        for keys in typed:
            os.write(fd, keys)
            if keys.endswith(b"\n"):  # the terminal echoes a typed line
                assert _read_until(fd, out, keys.replace(b"\n", b"\r\n"), deadline), bytes(out)
        finished = _read_until(fd, out, None, deadline)
    finally:
        done, status = os.waitpid(pid, os.WNOHANG)
        while not done and time.monotonic() < deadline:
            time.sleep(0.05)
            done, status = os.waitpid(pid, os.WNOHANG)
        if not done:  # still waiting for input: the keys did not end it
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(fd)
    assert finished and done, f"ireval did not end: {bytes(out)!r}"
    return os.waitstatus_to_exitcode(status), bytes(out)


@pytest.fixture
def qrels(tmp_path):
    path = tmp_path / "qrels.txt"
    path.write_text("1 0 a 1\n1 0 b 0\n2 0 c 1\n")
    return str(path)


LINES = [b"1 Q0 b 1 2 r\n", b"1 Q0 a 2 1 r\n", b"2 Q0 c 1 3 r\n"]
ECHO = b"".join(line.replace(b"\n", b"\r\n") for line in LINES)


@pytest.mark.parametrize("extra", [[], ["--no-stream"]], ids=["streamed", "read-whole"])
def test_one_ctrl_d_ends_the_run(qrels, extra):
    code, shown = terminal(["-m", "map", "-m", "P.2", *extra, qrels, "-"], [*LINES, CTRL_D])
    assert code == 0
    assert shown == PROMPT + ECHO + b"map                   \tall\t0.7500\r\nP_2                   \tall\t0.5000\r\n"


def test_one_ctrl_d_ends_a_run_not_grouped_by_topic(qrels):
    # topic 1 comes back after topic 2: the streamed read gives up and reads the rest whole
    lines = [LINES[0], LINES[2], LINES[1]]
    code, shown = terminal(["-m", "map", qrels, "-"], [*lines, CTRL_D])
    assert code == 0
    assert shown.endswith(b"2 Q0 c 1 3 r\r\n1 Q0 a 2 1 r\r\nmap                   \tall\t0.7500\r\n")


def test_ctrl_d_on_nothing_is_an_empty_run(qrels):
    assert terminal(["-m", "map", qrels, "-"], [CTRL_D]) == (
        2,
        PROMPT + b"ireval: <stdin>: the run file is empty\r\n",
    )


@pytest.mark.parametrize("typed", [[], LINES[:2]], ids=["at-once", "after-lines"])
def test_one_ctrl_c_stops(qrels, typed):
    code, shown = terminal(["-m", "map", qrels, "-"], [*typed, CTRL_C])
    assert code == 130
    echo = b"".join(line.replace(b"\n", b"\r\n") for line in typed)
    assert shown == PROMPT + echo + b"^C\r\nireval: interrupted\r\n"
