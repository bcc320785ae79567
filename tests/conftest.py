"""Shared fixtures: run the CLI in-process and capture bytes, exit code and stderr."""

from __future__ import annotations

import io
import signal
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import settings

# No test may assert a wall-clock time (CI machines are loaded): hypothesis's per-example
# deadline is one, so it is off for every property test.
settings.register_profile("ireval", deadline=None)
settings.load_profile("ireval")

# A background CI job starts pytest with SIGINT ignored, and a child process inherits an
# ignored signal: the tests that interrupt ireval (Ctrl-C) would then see it carry on.
# Restore Python's own handler so that children start with the default disposition.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
# Likewise SIGHUP under nohup: ireval keeps an ignored SIGHUP (as it should), so the tests
# that hang up on it need their children to start with the default disposition.
if hasattr(signal, "SIGHUP") and signal.getsignal(signal.SIGHUP) is signal.SIG_IGN:
    signal.signal(signal.SIGHUP, signal.SIG_DFL)

DATA = Path(__file__).parent / "data"
TREC_EVAL = DATA / "trec_eval"


@dataclass
class CliResult:
    code: int
    out: bytes
    err: str


@pytest.fixture
def cli(monkeypatch):
    """cli(args, stdin=b"") -> CliResult, running irevalcli.commands.main.main in-process."""
    from irevalcli.commands.main import main

    def run(args, stdin: bytes = b"", cwd: Path | None = None) -> CliResult:
        out, err = io.BytesIO(), io.StringIO()

        class _Out:
            buffer = out

            def write(self, s):  # click.echo of text goes here
                out.write(s.encode())

            def flush(self):
                pass

            def isatty(self):
                return False

        class _In:
            buffer = io.BytesIO(stdin)

        monkeypatch.setattr(sys, "stdout", _Out())
        monkeypatch.setattr(sys, "stderr", err)
        monkeypatch.setattr(sys, "stdin", _In())
        if cwd is not None:
            monkeypatch.chdir(cwd)
        code = main([str(a) for a in args])
        return CliResult(code, out.getvalue(), err.getvalue())

    return run


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def same_log_tables(fast, slow) -> None:
    """A labelled log's table read as numbers (``fast``) is the general path's (``slow``):
    every field, and the judgements as a multiset (the numbers path keeps them in ranked
    order)."""
    import numpy as np

    for name in fast._fields:
        if name in ("_cache", "qg", "qrel", "doc", "doc_dict"):
            continue
        x, y = getattr(fast, name), getattr(slow, name)
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype, name
            np.testing.assert_array_equal(x, y, err_msg=name)
        else:
            assert x == y, name
    a, b = np.lexsort((fast.qrel, fast.qg)), np.lexsort((slow.qrel, slow.qg))
    np.testing.assert_array_equal(fast.qg[a], slow.qg[b])
    np.testing.assert_array_equal(fast.qrel[a], slow.qrel[b])
