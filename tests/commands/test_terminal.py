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


# ---- an 80-column terminal: the results table and the measures listing fit it ----------------


def on_terminal(args: list[str], columns: int = 80, cwd: str | None = None) -> str:
    """``ireval ARGS`` with its standard output on a terminal ``columns`` wide (the window
    size of a pseudo-terminal, as a terminal emulator sets it; COLUMNS unset); what it
    showed, colours dropped."""
    import fcntl
    import re
    import struct
    import subprocess
    import termios

    main, child = os.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "irevalcli", *args], stdout=child, stderr=subprocess.PIPE, env=env, cwd=cwd
    )
    os.close(child)
    out = bytearray()
    _read_until(main, out, None, time.monotonic() + 120)
    os.close(main)
    assert proc.wait(timeout=120) == 0, proc.stderr.read() if proc.stderr else b""
    if proc.stderr:
        proc.stderr.close()
    return re.sub(r"\x1b\[[0-9;]*m", "", out.decode("utf-8").replace("\r\n", "\n"))


def piped(args: list[str], cwd: str | None = None) -> str:
    import subprocess

    return subprocess.run(
        [sys.executable, "-m", "irevalcli", *args], capture_output=True, check=True, text=True, cwd=cwd
    ).stdout


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_the_measures_listing_fits_80_columns():
    shown = on_terminal(["measures"])
    assert max(len(line) for line in shown.splitlines()) <= 80
    # the same words as the listing piped, where each entry is one line (for grep)
    whole = piped(["measures"])
    assert shown.split() == whole.split()
    assert max(len(line) for line in whole.splitlines()) > 80
    entry = next(i for i, line in enumerate(shown.splitlines()) if line.startswith("num_rel "))
    lines = shown.splitlines()
    assert lines[entry].startswith("num_rel                 Number of relevant documents (judged rel >= -l);")
    assert lines[entry + 1].startswith(" " * 24) and lines[entry + 1][24] != " "  # continued under the text


def test_a_measure_description_fits_80_columns():
    shown = on_terminal(["measures", "err"])
    assert shown.splitlines()[:3] == [
        "err: Expected reciprocal rank: the sum over ranks i of R_i / i * prod_{j<i} (1 -",
        "  R_j), with R = (2^rel - 1) / 2^g_max; g_max is the highest label unless given",
        "  (err.gmax=4), and k=K stops at rank K.",
    ]
    assert max(len(line) for line in shown.splitlines()) <= 80
    assert shown.split() == piped(["measures", "err"]).split()


def test_the_results_table_fits_80_columns():
    args = ["examples/qrels.txt", "examples/run.txt", "examples/run2.txt", "--format", "table"]
    shown = on_terminal(args, cwd=ROOT)
    assert max(len(line) for line in shown.splitlines()) <= 80
    lines = shown.splitlines()
    # runs numbered, a legend naming them; every measure of the piped table is shown
    assert lines[-2:] == ["1: examples/run.txt (runid bm25)", "2: examples/run2.txt (runid dense)"]
    header = piped(args, cwd=ROOT).splitlines()[0]
    measures = [h.strip() for h in header.split("|")[2:]]
    assert len(measures) == 29
    assert all(m in shown.split() for m in measures)
