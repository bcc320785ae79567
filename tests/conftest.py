"""Shared fixtures: run the CLI in-process and capture bytes, exit code and stderr."""

from __future__ import annotations

import io
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

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
