"""The progress display: drawn on stderr under a (pseudo-)terminal, never in pipes,
and stdout is the same bytes either way."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import threading

import pytest

from tests.conftest import DATA, TREC_EVAL

GOLDEN = DATA / "golden"
ARGS = ["-m", "map", "-m", "P.10", "qrels.test", "results.test", "results.test"]
ESC = b"\x1b["


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "TERM", "NO_COLOR")}
    env.update(TERM="xterm-256color", COLUMNS="100", **extra)
    return env


def run_under_pty(args: list[str], **env: str) -> tuple[int, bytes, bytes]:
    """Run ireval with stderr on a pseudo-terminal; returns (exit code, stdout, what the terminal got)."""
    pty = pytest.importorskip("pty")
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "irevalcli", *args],
        cwd=TREC_EVAL,
        stdout=subprocess.PIPE,
        stderr=slave,
        stdin=subprocess.DEVNULL,
        env=_env(**env),
    )
    os.close(slave)
    seen = bytearray()

    def drain() -> None:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO once the child has closed the terminal
                return
            if not chunk:
                return
            seen.extend(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    out, _ = proc.communicate(timeout=60)
    code = proc.returncode
    reader.join(timeout=10)
    os.close(master)
    return code, out, bytes(seen)


@functools.cache
def _plain(args: tuple[str, ...]) -> bytes:
    return subprocess.run(
        [sys.executable, "-m", "irevalcli", *args], cwd=TREC_EVAL, capture_output=True, env=_env(), check=False
    ).stdout


def plain_stdout(args: list[str]) -> bytes:
    return _plain(tuple(args))


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_progress_drawn_on_a_terminal():
    code, out, tty = run_under_pty(["--progress", *ARGS])
    assert code == 0
    assert ESC in tty  # rich drew (and then erased) the display
    assert b"reading qrels.test" in tty and b"evaluating run 2/2 results.test" in tty
    assert tty.rstrip().endswith(b"\x1b[?25h")  # the cursor is given back
    assert out == plain_stdout(ARGS) and ESC not in out


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_small_inputs_and_no_progress_stay_quiet_on_a_terminal():
    for args in (ARGS, ["--no-progress", *ARGS]):
        code, out, tty = run_under_pty(args)
        assert code == 0 and tty == b"" and out == plain_stdout(ARGS)


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_error_message_after_progress_is_clean():
    code, out, tty = run_under_pty(["--progress", "-m", "map", "qrels.test", "missing.txt"])
    assert code == 2 and out == b""
    assert tty.endswith(b"ireval: missing.txt: cannot read run file: no such file\r\n")


def test_piped_output_has_no_escape_codes():
    """Even when asked for, nothing is drawn when stderr is a pipe; stdout is plain too."""
    res = subprocess.run(
        [sys.executable, "-m", "irevalcli", "--progress", "--format", "table", *ARGS],
        cwd=TREC_EVAL,
        capture_output=True,
        env=_env(FORCE_COLOR="1"),
        check=False,
    )
    assert res.returncode == 0
    assert res.stderr == b"" and ESC not in res.stdout and b"\r" not in res.stdout


def test_wanted_rules(monkeypatch, tmp_path):
    from irevalcli.output import progress

    big = tmp_path / "big"
    with open(big, "wb") as fh:
        fh.truncate(progress.LARGE_INPUT)
    monkeypatch.setattr(progress, "stderr_is_terminal", lambda: True)
    monkeypatch.delenv("CI", raising=False)
    assert progress.wanted(None, [str(big)]) and not progress.wanted(None, [str(GOLDEN / "qrels.txt")])
    assert progress.wanted(True, ["-"]) and not progress.wanted(False, [str(big)])
    monkeypatch.setenv("CI", "true")
    assert not progress.wanted(None, [str(big)])
    monkeypatch.setattr(progress, "stderr_is_terminal", lambda: False)
    assert not progress.wanted(True, [str(big)])


def test_file_names_are_not_markup(tmp_path):
    """A path with rich markup in it is shown as written, and '[/x]' cannot break the display."""
    import io

    from rich.console import Console

    from irevalcli.output.progress import Progress

    console = Console(file=io.StringIO(), width=200, force_terminal=False, color_system=None)
    p = Progress(True)
    with p, p.step("reading [/x] [red]run[/red]"):
        console.print(p._live.make_tasks_table(p._live.tasks))  # type: ignore[union-attr]
    assert "reading [/x] [red]run[/red]" in console.file.getvalue()
