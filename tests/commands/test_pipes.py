"""Pipes, signals and output: the process-level contract.

* ``ireval ... | head -1`` exits quietly: no BrokenPipeError traceback, nothing on
  stderr, and the exit code is what the command's outcome was (0 for an evaluation,
  1 for a failed gate: a closed pipe never turns a failed gate into a pass, nor an
  evaluation into "gate failed").
* SIGINT (Ctrl-C), SIGTERM (a CI timeout) or SIGHUP (the terminal or runner went
  away) at any point after start-up leaves no partial ``--output`` file and no
  temporary file: the existing file is untouched, ireval prints one line
  (``ireval: interrupted`` / ``ireval: terminated`` / ``ireval: hung up (SIGHUP)``)
  and exits 130 / 143 / 129.
* Closed standard streams (``>&-``, ``<&-``, ``2>&-``) change no exit code's meaning:
  a command that must write to a closed stdout or read a closed stdin fails with
  exit 2; a closed stderr only loses the message.
* ``--output`` to a full device, a read-only place or a full disk fails with one
  clear line and exit 2, leaving any existing file untouched. ``--output`` keeps an
  existing file's permissions, writes through a symlink, and writes into a character
  device or named pipe instead of renaming over it; a regular file is replaced
  atomically wherever it is (``/dev/shm`` too). An output that is an input is refused.
"""

from __future__ import annotations

import errno
import os
import random
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
QRELS = b"1 0 a 1\n1 0 b 0\n2 0 a 1\n"
RUN = b"1 Q0 a 1 3.0 r1\n1 Q0 b 2 2.0 r1\n2 Q0 a 1 5.0 r1\n"
MAP = b"map                   \tall\t1.0000\n"


def ireval_cmd() -> list[str]:
    exe = Path(sys.executable).parent / "ireval"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "irevalcli"]


@pytest.fixture
def small(tmp_path):
    (tmp_path / "q").write_bytes(QRELS)
    (tmp_path / "r").write_bytes(RUN)
    return tmp_path


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """Inputs whose ``-q -m all_trec`` output is far larger than a pipe buffer."""
    d = tmp_path_factory.mktemp("big")
    rnd = random.Random(1)
    q, r = [], []
    for t in range(200):
        for i in range(20):
            q.append(f"{t} 0 d{i} {rnd.randint(0, 2)}\n")
        for i in range(100):
            r.append(f"{t} Q0 d{i} {i} {rnd.random():.6f} run\n")
    (d / "q").write_text("".join(q))
    (d / "r").write_text("".join(r))
    return d


def no_temp_files(d: Path) -> bool:
    return not [p for p in d.iterdir() if p.name.startswith(".ireval-")]


# ---- broken pipes ------------------------------------------------------------------------------------


def test_head_1_exits_quietly(big):
    """The reader takes one line and goes away while ireval is still writing."""
    proc = subprocess.Popen(
        [*ireval_cmd(), "-q", "-m", "all_trec", "q", "r"], cwd=big, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read()
    proc.stderr.close()
    code = proc.wait(timeout=60)
    assert first.startswith(b"num_ret")
    assert (code, err) == (0, b"")


def main_into(args: list[str], fd: int, cwd: Path) -> tuple[int, str]:
    """Run main() in-process with stdout on the real descriptor ``fd`` (a pipe, a device)."""
    import io

    from irevalcli.commands.main import main

    out = io.TextIOWrapper(
        io.BufferedWriter(io.FileIO(fd, "w", closefd=False)),
        encoding="utf-8",
        errors="surrogateescape",
        write_through=False,
    )
    err = io.StringIO()
    saved, here = (sys.stdout, sys.stderr), os.getcwd()
    sys.stdout, sys.stderr = out, err
    os.chdir(cwd)
    try:
        code = main([str(a) for a in args])
    finally:
        sys.stdout, sys.stderr = saved
        os.chdir(here)
        try:
            out.close()
        except OSError:
            pass
    return code, err.getvalue()


def closed_pipe() -> int:
    """The write end of a pipe nobody will ever read: the first write fails with EPIPE."""
    r, w = os.pipe()
    os.close(r)
    return w


@pytest.mark.parametrize(
    "args,code,err",
    [
        (["-q", "-m", "all_trec", "q", "r"], 0, ""),
        (["-q", "-m", "all_trec", "--format", "json", "q", "r"], 0, ""),
        (["measures"], 0, ""),
        (["--help"], 0, ""),
        # a closed pipe never hides a failed gate, and never makes one up
        (["gate", "q", "r", "--min", "map=0.99"], 1, "ireval: gate failed: 1 of 1 check failed (map >= 0.99)\n"),
        (["gate", "q", "r", "--min", "map=0.1"], 0, ""),
    ],
)
def test_reader_gone_before_the_first_write(big, args, code, err):
    w = closed_pipe()
    try:
        assert main_into(args, w, big) == (code, err)
    finally:
        os.close(w)


def test_shell_pipeline_with_pipefail(big):
    sh = "/bin/bash"
    if not os.path.exists(sh):
        pytest.skip("no bash")
    cmd = " ".join(ireval_cmd()) + " -q -m all_trec q r | head -1"
    res = subprocess.run([sh, "-o", "pipefail", "-c", cmd], cwd=big, capture_output=True, timeout=60, check=False)
    assert (res.returncode, res.stderr) == (0, b"")
    assert res.stdout.startswith(b"num_ret") or res.stdout.count(b"\n") == 1


# ---- signals -----------------------------------------------------------------------------------------


def _start_blocked(d: Path, out: Path, extra: list[str] | None = None) -> subprocess.Popen:
    """ireval reading its run from a stdin pipe we keep open: it is inside main(), blocked."""
    proc = subprocess.Popen(
        [*ireval_cmd(), "-q", "-m", "all_trec", "--output", str(out), *(extra or []), "q", "-"],
        cwd=d,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    # More than a pipe buffer: write() returns only once ireval has read most of it,
    # so it has started reading (inside main) when we signal.
    proc.stdin.write((d / "r").read_bytes()[: 1 << 20])
    proc.stdin.flush()
    time.sleep(0.1)
    return proc


SIGNALS = {
    signal.SIGINT: (130, b"ireval: interrupted\n"),
    signal.SIGTERM: (143, b"ireval: terminated\n"),
    signal.SIGHUP: (129, b"ireval: hung up (SIGHUP)\n"),
}


def test_signal_while_reading_input(big, tmp_path):
    """SIGINT, SIGTERM and SIGHUP (three processes at once) while ireval waits for the rest of its input."""
    runs = {}
    for sig in SIGNALS:
        d = tmp_path / signal.Signals(sig).name
        d.mkdir()
        out = d / "scores.txt"
        out.write_bytes(b"previous\n")
        runs[sig] = (_start_blocked(big, out), out)
    for sig, (proc, _out) in runs.items():
        proc.send_signal(sig)
        try:
            proc.stdin.close()
        except BrokenPipeError:
            pass
        proc.stdin = None
    for sig, (proc, out) in runs.items():
        stdout, stderr = proc.communicate(timeout=60)
        assert (proc.returncode, stderr) == SIGNALS[sig] and stdout == b""
        assert out.read_bytes() == b"previous\n" and no_temp_files(out.parent)


def _signal_during_run(d: Path, tmps: list[Path], sigs: list[int], delays: list[float]) -> None:
    """Start one ireval per signal (its qrels a FIFO, so we know when main() is running),
    signal each ``delay`` seconds later, and check the all-or-nothing invariant."""
    procs = []
    for tmp in tmps:
        fifo = tmp / "qrels.fifo"
        if not fifo.exists():
            os.mkfifo(fifo)
        out = tmp / "scores.txt"
        out.write_bytes(b"previous\n")
        proc = subprocess.Popen(
            [*ireval_cmd(), "-q", "-m", "all_trec", "--output", str(out), str(fifo), "r"],
            cwd=d,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        procs.append((proc, fifo, out))
    start = []
    for _proc, fifo, _out in procs:
        with open(fifo, "wb") as fh:  # returns once ireval has opened it: main() is running
            fh.write((d / "q").read_bytes())
        start.append(time.monotonic())
    for (proc, _fifo, _out), sig, delay, t0 in sorted(zip(procs, sigs, delays, start), key=lambda x: x[2] + x[3]):
        time.sleep(max(0.0, t0 + delay - time.monotonic()))
        proc.send_signal(sig)
    for (proc, _fifo, out), sig in zip(procs, sigs):
        stdout, stderr = proc.communicate(timeout=60)
        assert stdout == b""
        # 0: finished before the signal, or the signal came once the file was in place (it no
        # longer decides the exit: signals.committing); killed by it (-2, -15): it came after
        # main() returned, while the interpreter shut down. Either way the whole new file is there.
        if proc.returncode in (0, -signal.SIGINT, -signal.SIGTERM, -signal.SIGHUP):
            assert stderr == b""
            assert out.read_bytes().startswith(b"num_ret") and out.read_bytes().endswith(b"\n")
        else:
            assert (proc.returncode, stderr) == SIGNALS[sig]
            assert out.read_bytes() == b"previous\n"
        assert no_temp_files(out.parent)


def test_signal_during_evaluation(big, tmp_path):
    tmps = [tmp_path / "int", tmp_path / "term", tmp_path / "hup"]
    for t in tmps:
        t.mkdir()
    _signal_during_run(big, tmps, [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], [0.2, 0.35, 0.3])


@pytest.mark.slow
def test_signals_at_random_moments(big, tmp_path):
    rnd = random.Random(3)
    tmps = [tmp_path / str(i) for i in range(4)]
    for t in tmps:
        t.mkdir()
    for _ in range(15):
        _signal_during_run(big, tmps, [rnd.choice(list(SIGNALS)) for _ in tmps], [rnd.uniform(0, 2) for _ in tmps])


# ---- --output: full, read-only, special files ------------------------------------------------------


def _full_device(tmp_path: Path) -> Path | None:
    """A character device like /dev/full: our own node where mknod is allowed."""
    node = tmp_path / "full"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 7))
        with open(node, "wb") as fh:
            fh.write(b"x")
        return None  # writable: not a full device (nodev mount?)
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
            return node
    if os.path.exists("/dev/full") and stat.S_ISCHR(os.stat("/dev/full").st_mode):
        return Path("/dev/full")
    return None


def test_output_into_a_named_pipe_writes_to_it(cli, small, tmp_path):
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    res = cli(["-m", "map", "--output", fifo, "q", "r"], cwd=small)
    reader.join(10)
    assert (res.code, res.err) == (0, "")
    assert got == [MAP]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)  # not renamed over


def test_output_to_a_full_device(cli, small, tmp_path):
    # first prove that a special file is written to, not replaced (so /dev/full is safe)
    fifo = tmp_path / "probe.fifo"
    os.mkfifo(fifo)
    threading.Thread(target=fifo.read_bytes, daemon=True).start()
    assert cli(["-m", "map", "--output", fifo, "q", "r"], cwd=small).code == 0
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    full = _full_device(tmp_path)
    if full is None:
        pytest.skip("no full device (/dev/full) here")
    res = cli(["-m", "map", "--output", full, "q", "r"], cwd=small)
    assert (res.code, res.out, res.err) == (
        2,
        b"",
        f"ireval: --output {full}: cannot write (No space left on device)\n",
    )
    assert stat.S_ISCHR(os.stat(full).st_mode)


def test_stdout_to_a_full_device(small, tmp_path):
    full = _full_device(tmp_path)
    if full is None:
        pytest.skip("no full device (/dev/full) here")
    message = "ireval: cannot write to standard output: No space left on device\n"
    with open(full, "wb") as fh:
        res = subprocess.run(
            [*ireval_cmd(), "-m", "map", "q", "r"],
            cwd=small,
            stdout=fh,
            stderr=subprocess.PIPE,
            timeout=60,
            check=False,
        )
    assert (res.returncode, res.stderr.decode()) == (2, message)
    for args in (["-q", "-m", "map", "--format", "json", "q", "r"], ["measures"], ["--help"]):
        fd = os.open(full, os.O_WRONLY)
        try:
            assert main_into(args, fd, small) == (2, message), args
        finally:
            os.close(fd)


@pytest.mark.skipif(IS_ROOT, reason="running as root: permission bits do not stop root from writing")
def test_output_into_a_read_only_directory(cli, small, tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    (ro / "scores.txt").write_bytes(b"previous\n")
    ro.chmod(0o555)
    try:
        res = cli(["-m", "map", "--output", ro / "scores.txt", "q", "r"], cwd=small)
        assert (res.code, res.out) == (2, b"")
        assert res.err == f"ireval: --output {ro / 'scores.txt'}: permission denied\n"
        assert (ro / "scores.txt").read_bytes() == b"previous\n" and no_temp_files(ro)
    finally:
        ro.chmod(0o755)


def test_output_into_a_place_root_cannot_write(cli, small):
    """As root, chmod does not stop writes; sysfs refuses new files even to root."""
    if not IS_ROOT:
        pytest.skip("covered by test_output_into_a_read_only_directory")
    if not os.path.isdir("/sys/kernel"):
        pytest.skip("no sysfs")
    res = cli(["-m", "map", "--output", "/sys/kernel/ireval-test.txt", "q", "r"], cwd=small)
    assert (res.code, res.out) == (2, b"")
    assert res.err in (
        "ireval: --output /sys/kernel/ireval-test.txt: permission denied\n",
        "ireval: --output /sys/kernel/ireval-test.txt: cannot write (Read-only file system)\n",
    )


@pytest.mark.parametrize(
    "where,err,message",
    [
        ("fsync", errno.ENOSPC, "cannot write (No space left on device)"),
        ("write", errno.EDQUOT, "cannot write (Disk quota exceeded)"),
        ("mkstemp", errno.EROFS, "cannot write (Read-only file system)"),
        ("mkstemp", errno.EACCES, "permission denied"),
        ("replace", errno.EXDEV, "cannot write (Invalid cross-device link)"),
    ],
)
def test_output_failure_leaves_the_existing_file_untouched(cli, small, tmp_path, monkeypatch, where, err, message):
    """A full disk, quota, read-only mount or refused rename, simulated where ireval meets it."""
    import tempfile

    out = tmp_path / "scores.txt"
    out.write_bytes(b"previous\n")
    out.chmod(0o640)

    def fail(*a, **k):
        raise OSError(err, os.strerror(err)) if err != errno.EACCES else PermissionError(err, os.strerror(err))

    if where == "fsync":
        monkeypatch.setattr(os, "fsync", fail)
    elif where == "replace":
        monkeypatch.setattr(os, "replace", fail)
    elif where == "mkstemp":
        monkeypatch.setattr(tempfile, "mkstemp", fail)
    else:
        real_fdopen = os.fdopen

        class Failing:
            def __init__(self, f):
                self.f = f

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                self.f.close()

            def write(self, data):
                fail()

            def __getattr__(self, name):
                return getattr(self.f, name)

        monkeypatch.setattr(os, "fdopen", lambda *a, **k: Failing(real_fdopen(*a, **k)))
    res = cli(["-m", "map", "--output", out, "q", "r"], cwd=small)
    monkeypatch.undo()
    assert (res.code, res.out, res.err) == (2, b"", f"ireval: --output {out}: {message}\n")
    assert out.read_bytes() == b"previous\n"
    assert stat.S_IMODE(out.stat().st_mode) == 0o640
    assert no_temp_files(tmp_path)


def test_output_to_a_missing_directory(cli, small, tmp_path):
    res = cli(["-m", "map", "--output", tmp_path / "no" / "x.txt", "q", "r"], cwd=small)
    assert (res.code, res.out) == (2, b"")
    assert res.err == f"ireval: --output {tmp_path / 'no' / 'x.txt'}: the directory {tmp_path / 'no'} does not exist\n"


def test_output_to_a_directory(cli, small, tmp_path):
    res = cli(["-m", "map", "--output", tmp_path, "q", "r"], cwd=small)
    assert (res.code, res.out, res.err) == (2, b"", f"ireval: --output {tmp_path}: is a directory\n")


def test_output_permissions_follow_umask_or_the_existing_file(cli, small, tmp_path):
    old = os.umask(0o027)
    try:
        res = cli(["-m", "map", "--output", tmp_path / "new.txt", "q", "r"], cwd=small)
    finally:
        os.umask(old)
    assert res.code == 0 and stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o640
    existing = tmp_path / "shared.txt"
    existing.write_bytes(b"previous\n")
    existing.chmod(0o664)
    assert cli(["-m", "map", "--output", existing, "q", "r"], cwd=small).code == 0
    assert existing.read_bytes() == MAP and stat.S_IMODE(existing.stat().st_mode) == 0o664


def test_output_through_a_symlink_keeps_the_link(cli, small, tmp_path):
    target = tmp_path / "v3.txt"
    target.write_bytes(b"previous\n")
    link = tmp_path / "latest.txt"
    link.symlink_to(target.name)
    assert cli(["-m", "map", "--output", link, "q", "r"], cwd=small).code == 0
    assert link.is_symlink() and target.read_bytes() == MAP and no_temp_files(tmp_path)


def test_output_dash_and_dev_stdout_mean_stdout(cli, small):
    for name in ("-", "/dev/stdout"):
        res = cli(["-m", "map", "--output", name, "q", "r"], cwd=small)
        assert (res.code, res.out, res.err) == (0, MAP, "")


def test_failed_evaluation_never_touches_output(cli, small, tmp_path):
    out = tmp_path / "scores.txt"
    out.write_bytes(b"previous\n")
    (small / "bad").write_bytes(b"1 Q0 a 1 x r\n")
    res = cli(["-m", "map", "--output", out, "q", "bad"], cwd=small)
    assert res.code == 2 and out.read_bytes() == b"previous\n" and no_temp_files(tmp_path)


@pytest.mark.parametrize(
    "sig,code,line",
    [
        (signal.SIGINT, 130, "ireval: interrupted\n"),
        (signal.SIGTERM, 143, "ireval: terminated\n"),
        (signal.SIGHUP, 129, "ireval: hung up (SIGHUP)\n"),
    ],
)
def test_signal_while_the_temporary_file_is_created(cli, small, tmp_path, monkeypatch, sig, code, line):
    """The signal lands just after mkstemp has created the file, before its name is known to
    the caller: the one moment a temporary file could leak. It is acted on after that."""
    import tempfile

    out = tmp_path / "scores.txt"
    out.write_bytes(b"previous\n")
    real = tempfile.mkstemp

    def mkstemp_then_signal(*a, **k):
        fd, name = real(*a, **k)
        os.kill(os.getpid(), sig)
        for _ in range(1000):  # give the interpreter every chance to run the handler here
            pass
        return fd, name

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp_then_signal)
    res = cli(["-m", "map", "--output", out, "q", "r"], cwd=small)
    assert (res.code, res.out, res.err) == (code, b"", line)
    assert out.read_bytes() == b"previous\n" and no_temp_files(tmp_path)


# ---- what --output is decided by stat, not by name ------------------------------------------------------


def test_regular_file_under_dev_shm_is_replaced_atomically(cli, small, monkeypatch):
    """/dev/shm is a tmpfs of regular files: a file there is replaced by a rename like any
    other, so an interruption leaves the old file, never a truncated one."""
    if not os.path.isdir("/dev/shm") or not os.access("/dev/shm", os.W_OK):
        pytest.skip("no writable /dev/shm")
    import tempfile

    fd, name = tempfile.mkstemp(dir="/dev/shm", prefix="ireval-test-")
    os.write(fd, b"previous\n")
    os.close(fd)
    before = os.stat(name).st_ino
    try:
        renamed = []
        real = os.replace
        monkeypatch.setattr(os, "replace", lambda a, b: (renamed.append(b), real(a, b)))
        res = cli(["-m", "map", "--output", name, "q", "r"], cwd=small)
        monkeypatch.undo()
        assert (res.code, res.out, res.err) == (0, b"", "")
        assert renamed == [name] and Path(name).read_bytes() == MAP and os.stat(name).st_ino != before
    finally:
        os.unlink(name)


def test_output_through_a_file_descriptor_path_writes_in_place(small, tmp_path):
    """/dev/stderr (a descriptor, here a file) is written to, not renamed over."""
    err = tmp_path / "err.txt"
    with open(err, "wb") as fh:
        proc = subprocess.run(
            [*ireval_cmd(), "-m", "map", "--output", "/dev/stderr", "q", "r"],
            cwd=small,
            stdout=subprocess.PIPE,
            stderr=fh,
            timeout=120,
            check=False,
        )
    assert (proc.returncode, proc.stdout, err.read_bytes()) == (0, b"", MAP)


def test_output_to_dev_null_is_written_not_replaced(cli, small):
    res = cli(["-m", "map", "--output", "/dev/null", "q", "r"], cwd=small)
    assert (res.code, res.out, res.err) == (0, b"", "")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


# ---- closed standard streams --------------------------------------------------------------------------


def _closed(small: Path, args: list[str], close: list[int], stdin: bytes | None = None) -> tuple[int, bytes, bytes]:
    """Run ireval with the descriptors in ``close`` closed (as ``>&-`` does); stdout and
    stderr, where open, are captured through files."""
    out, err = small / "stdout.bin", small / "stderr.bin"
    script = f"import os, sys\nfor fd in {close!r}: os.close(fd)\nos.execv(sys.argv[1], sys.argv[1:])\n"
    exe = ireval_cmd()
    with open(out, "wb") as o, open(err, "wb") as e:
        proc = subprocess.run(
            [sys.executable, "-c", script, *exe, *args],
            cwd=small,
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            stdout=o,
            stderr=e,
            timeout=120,
            check=False,
        )
    return proc.returncode, out.read_bytes(), err.read_bytes()


CLOSED_STDOUT = b"ireval: cannot write to standard output: it is closed\n"


@pytest.mark.parametrize(
    "args,code,err",
    [
        (["-m", "map", "q", "r"], 2, CLOSED_STDOUT),
        (["gate", "q", "r", "--min", "map=0.5"], 2, CLOSED_STDOUT),
        (["gate", "q", "r", "--min", "map=2"], 2, CLOSED_STDOUT),
        (["--help"], 2, CLOSED_STDOUT),
        (["--version"], 2, CLOSED_STDOUT),
        (["measures"], 2, CLOSED_STDOUT),
        (["pool", "r", "--depth", "1"], 2, CLOSED_STDOUT),
        (["-m", "map", "--output", "scores.txt", "q", "r"], 0, b""),  # stdout not needed
        (["-m", "map", "q", "missing"], 2, b"ireval: missing: cannot read run file: no such file\n"),
    ],
)
def test_closed_stdout(small, args, code, err):
    assert _closed(small, args, [1])[0::2] == (code, err)


def test_closed_stdin_with_run_dash(small):
    got = _closed(small, ["-m", "map", "q", "-"], [0])
    assert got == (
        2,
        MAP[:0],
        b"ireval: <stdin>: cannot read standard input: it is closed (give the run as a file or pipe it in)\n",
    )
    assert _closed(small, ["-m", "map", "q", "r"], [0]) == (0, MAP, b"")  # stdin not needed


@pytest.mark.parametrize(
    "args,code,out",
    [
        (["-m", "map", "q", "r"], 0, MAP),
        (["-m", "map", "q", "missing"], 2, b""),
        (["--bogus", "q", "r"], 2, b""),
        (["gate", "q", "r", "--min", "map=2"], 1, None),
        (["gate", "q", "r", "--min", "map=0.5"], 0, None),
        (["--help"], 0, None),
    ],
)
def test_closed_stderr_keeps_exit_codes(small, args, code, out):
    got = _closed(small, args, [2])
    assert got[0] == code and got[2] == b""
    if out is not None:
        assert got[1] == out


def test_everything_closed_with_output_file(small):
    assert _closed(small, ["-m", "map", "--output", "s.txt", "q", "r"], [0, 1, 2]) == (0, b"", b"")
    assert (small / "s.txt").read_bytes() == MAP and no_temp_files(small)


def test_relative_output_in_a_deleted_working_directory(small, tmp_path):
    gone = tmp_path / "gone"
    gone.mkdir()
    script = f"import os, sys\nos.chdir({str(gone)!r}); os.rmdir({str(gone)!r})\nos.execv(sys.argv[1], sys.argv[1:])\n"
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            script,
            *ireval_cmd(),
            "-m",
            "map",
            "--output",
            "scores.txt",
            str(small / "q"),
            str(small / "r"),
        ],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        2,
        b"",
        b"ireval: --output scores.txt: the working directory no longer exists; give an absolute path\n",
    )
