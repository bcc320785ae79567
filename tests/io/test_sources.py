"""The byte source under every reader (irevalcli.io.source), and inputs that cannot be read twice.

A pipe named as a path (``<(zcat run.gz)``, ``/dev/stdin``, ``/dev/fd/N``) or a FIFO is read
from its source once, in every command, the API and the dataset readers: the sniffing of its
format reads a spooled copy, never the pipe itself, so no block is lost. The tests feed
FIFOs from a thread that counts how often the FIFO is opened for reading (exactly once), with
runs whose line ends fall exactly on the block boundaries the readers use (8 KiB, 64 KiB,
1 MiB), where a lost block used to lose whole lines silently.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from irevalcli.io import source

BOUNDARIES = (10, 8192, 1 << 16, 1 << 20)


def _run_bytes(ntopics: int = 40, size: int = (1 << 20) + 5000) -> bytes:
    """A grouped TREC run of about ``size`` bytes whose lines end exactly at every BOUNDARIES offset."""
    out = bytearray()
    n = 0
    targets = [b for b in BOUNDARIES if b > 40] + [size]
    per_topic = size // ntopics + 1
    for target in targets:
        while len(out) < target:
            q = min(len(out) // per_topic + 1, ntopics)
            line = b"%d Q0 d%d %d %d.5 r1\n" % (q, n, n, (n * 7919) % 100003)
            room = target - len(out)
            if room < 2 * len(line):  # the last line before the boundary: padded to end on it
                pad = room - len(line)
                line = b"%d Q0 d%d%s %d %d.5 r1\n" % (q, n, b"x" * pad, n, (n * 7919) % 100003)
            out += line
            n += 1
        assert len(out) == target, (len(out), target)
    return bytes(out)


RUN = _run_bytes()
QRELS = b"".join(
    b"%s 0 %s %d\n" % (f[0], f[2], len(f[2]) % 3) for f in (line.split() for line in RUN.splitlines()[::9])
)


def test_run_lines_end_on_the_boundaries():
    for b in BOUNDARIES[1:]:
        assert RUN[b - 1 : b] == b"\n"


class Feeder:
    """A FIFO at ``path`` fed ``data`` the first time it is opened for reading; every later
    open reads nothing (end of file at once), as a pipe read a second time would."""

    def __init__(self, path: Path, data: bytes) -> None:
        self.path = path
        self.data = data
        self.opens = 0
        self.done = False
        os.mkfifo(path)
        self.thread = threading.Thread(target=self._feed, daemon=True)
        self.thread.start()

    def _feed(self) -> None:
        import errno
        import time

        while True:
            try:
                with open(self.path, "wb") as fh:  # blocks until a reader opens it
                    if self.done:
                        return
                    self.opens += 1
                    if self.opens == 1:
                        fh.write(self.data)
            except BrokenPipeError:
                pass
            while not self.done:  # until that reader has closed it: a later open is another reader
                try:
                    fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
                except OSError as exc:
                    if exc.errno == errno.ENXIO:
                        break
                    raise
                os.close(fd)
                time.sleep(0.002)

    def close(self) -> int:
        """Stop feeding; the number of times the FIFO was opened by a reader."""
        self.done = True
        fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)  # releases a writer waiting in open()
        self.thread.join(timeout=10)
        os.close(fd)
        return self.opens


@pytest.fixture
def files(tmp_path):
    (tmp_path / "q").write_bytes(QRELS)
    (tmp_path / "r").write_bytes(RUN)
    (tmp_path / "r.gz").write_bytes(gzip.compress(RUN))
    shuffled = b"".join(sorted(RUN.splitlines(keepends=True), key=lambda line: line.split()[2]))
    (tmp_path / "shuffled").write_bytes(shuffled)  # not grouped by topic: streamed, then read whole
    return tmp_path


# ---------------------------------------------------------------- the byte source itself


def test_one_compression_table():
    assert [c.name for c in source.COMPRESSIONS] == ["gzip", "bzip2", "xz", "zstd"]
    text = b"1 0 a 1\n"
    for packed in (gzip.compress(text), bz2.compress(text), lzma.compress(text)):
        assert source.inflate(packed, "x", "qrels") == text
    assert source.inflate(text, "x", "qrels") == text
    assert source.compression_of(b"BZh9") is None  # 'BZh' and a digit alone are text that starts so
    with pytest.raises(Exception) as e:
        source.inflate(gzip.compress(text)[:-6], "x", "qrels")
    assert str(e.value).startswith("x: cannot read qrels file: corrupt or truncated compressed data (")


def test_tap_hashes_counts_and_spools():
    import hashlib

    seen: list[int] = []
    spool = io.BytesIO()
    tap = source.Tap(io.BytesIO(b"abcdef"), hash=True, progress=seen.append, spool=spool)
    assert tap.head(2) == b"ab"
    assert tap.read() == b"abcdef"
    assert (tap.hexdigest(), sum(seen), spool.getvalue()) == (hashlib.sha256(b"abcdef").hexdigest(), 6, b"abcdef")
    assert source.Tap(io.BytesIO(b"x"), hash=False).hexdigest() == ""


def test_a_fifo_is_read_from_its_source_once_in_a_session(tmp_path):
    feed = Feeder(tmp_path / "fifo", RUN)
    with source.reading_session():
        assert source.sniff_head(tmp_path / "fifo", 16) == RUN[:16]
        whole = source.read_whole(tmp_path / "fifo", what="run", hash=False)
        again = source.read_whole(tmp_path / "fifo", what="run", hash=False)
    assert whole.data == RUN and again.data == RUN and whole.name == str(tmp_path / "fifo")
    assert feed.close() == 1


def test_dev_zero_is_refused_not_spooled():
    with source.reading_session(), pytest.raises(Exception) as e:
        source.read_whole("/dev/zero", what="run")
    assert str(e.value) == "/dev/zero:1: contains a NUL byte"


# ---------------------------------------------------------------- every command, a FIFO as the run


def _out(cli, args, cwd):
    res = cli(args, cwd=cwd)
    assert res.code == 0, res.err
    return res.out


COMMANDS = {
    "eval": ["-m", "map", "-m", "P.10", "q", "RUN"],
    "eval-stream": ["--stream", "-m", "map", "q", "RUN"],
    "eval-whole": ["--no-stream", "-q", "-m", "ndcg", "q", "RUN"],
    "compare": ["compare", "-m", "map", "q", "r", "RUN"],
    "compare-baseline": ["compare", "-m", "map", "q", "RUN", "r"],
    "gate": ["gate", "--min", "map=0", "--max-drop", "map=1", "--baseline", "r", "q", "RUN"],
    "curve": ["curve", "q", "RUN"],
    "pool": ["pool", "--depth", "5", "RUN"],
    "plot": ["plot", "pr", "--format", "svg", "--output", "-", "q", "RUN"],
}


@pytest.mark.parametrize("name", ["r", "r.gz", "shuffled"])
@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_reads_a_fifo_as_the_file(cli, files, command, name):
    args = COMMANDS[command]
    if command == "plot":
        pytest.importorskip("matplotlib")
    (files / "reg").mkdir()
    (files / "fif").mkdir()
    (files / "reg" / name).write_bytes((files / name).read_bytes())
    expected = _out(cli, [f"reg/{name}" if a == "RUN" else a for a in args], files)
    feed = Feeder(files / "fif" / name, (files / name).read_bytes())
    got = _out(cli, [f"fif/{name}" if a == "RUN" else a for a in args], files)
    assert feed.close() == 1
    assert got.replace(b"fif/", b"reg/") == expected


def test_the_qrels_as_a_fifo(cli, files):
    expected = _out(cli, ["-m", "map", "q", "r"], files)
    feed = Feeder(files / "qfifo", QRELS)
    assert _out(cli, ["-m", "map", "qfifo", "r"], files) == expected
    assert feed.close() == 1


def test_the_api_reads_a_fifo_once(files):
    from irevalcli import evaluate

    expected = evaluate(files / "q", files / "r", ["map", "P.5"]).results
    for stream in (True, False, None):
        feed = Feeder(files / "fifo", RUN)
        ev = evaluate(files / "q", str(files / "fifo"), ["map", "P.5"], stream=stream)
        assert feed.close() == 1
        os.unlink(files / "fifo")
        assert ev.results.summary == expected.summary
        assert ev.run.sha256 == evaluate(files / "q", files / "r", ["map"]).run.sha256


def test_a_dataset_member_that_is_a_fifo(cli, files):
    d = files / "ds"
    d.mkdir()
    half = RUN.index(b"\n21 Q0") + 1
    (d / "part-0").write_bytes(RUN[:half])
    expected = _out(cli, ["-m", "map", "q", "r"], files)
    feed = Feeder(d / "part-1", RUN[half:])
    assert _out(cli, ["-m", "map", "q", "ds"], files) == expected
    assert feed.close() == 1


# ---------------------------------------------------------------- real pipes, in a real process


def _ireval() -> list[str]:
    return [sys.executable, "-m", "irevalcli"]


@pytest.mark.parametrize("stream", ["--stream", "--no-stream"])
def test_a_pipe_named_by_its_descriptor(files, stream):
    """``<(zcat run.gz)``: the shell passes /dev/fd/N, a pipe; the first block is not lost."""
    want = subprocess.run([*_ireval(), "-m", "map", "-m", "num_ret", "q", "r"], cwd=files, capture_output=True)
    r, w = os.pipe()
    proc = subprocess.Popen(
        [*_ireval(), stream, "-m", "map", "-m", "num_ret", "q", f"/dev/fd/{r}"],
        cwd=files,
        pass_fds=(r,),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    os.close(r)
    with os.fdopen(w, "wb") as fh:
        fh.write(RUN)
    out, err = proc.communicate(timeout=120)
    assert (proc.returncode, err) == (0, b"")
    assert out == want.stdout and b"num_ret" in out


def test_dev_stdin_as_a_path(files):
    want = subprocess.run([*_ireval(), "-m", "map", "q", "r.gz"], cwd=files, capture_output=True)
    got = subprocess.run(
        [*_ireval(), "--stream", "-m", "map", "q", "/dev/stdin"],
        cwd=files,
        input=(files / "r.gz").read_bytes(),
        capture_output=True,
        timeout=120,
    )
    assert (got.returncode, got.stderr, got.stdout) == (0, b"", want.stdout)


@pytest.mark.slow  # starts a local Dask cluster
def test_the_dask_engine_refuses_a_fifo_it_cannot_hand_to_its_workers(cli, files):
    pytest.importorskip("distributed")
    os.mkfifo(files / "fifo")  # never opened: refused before any reading
    res = cli(["-m", "map", "--engine", "dask", "q", "fifo"], cwd=files)
    assert (res.code, res.err) == (
        2,
        "ireval: --engine dask reads the run from a file, a directory or a URL, not a pipe or FIFO (fifo); "
        "save it to a file first\n",
    )
