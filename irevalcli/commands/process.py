"""The process around a command: exit statuses, signals, standard streams, memory.

Every command runs through :func:`run`, which turns whatever ends it into one line on
stderr and an :class:`ExitStatus`, in one place:

* an ireval error (:mod:`irevalcli.errors`) prints its message and exits with its code;
* SIGINT, SIGTERM and SIGHUP (:mod:`irevalcli.signals`, the one mechanism the commands,
  ``--output`` and the spill directory share) exit 130, 143 and 129 after every clean-up
  ran; a burst of them is one exit, never a traceback;
* running out of memory, wherever it happens (Python's ``MemoryError``, a library that
  cannot map its code, OpenBLAS that cannot get its buffers), is an environment error
  (exit 2), checked before the native libraries load so that none of them spins forever
  on a failed allocation (where no signal could stop it);
* a reader that goes away (``| head``) is not an error; a closed or full standard output
  is (exit 2); a closed standard error loses the message but not the exit status;
* anything else is a bug in ireval: exit 3, "please report it".
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable, Sequence
from enum import IntEnum
from typing import Any

from .. import signals
from ..errors import IrevalError, OutputError
from ..machine import cpus
from ..output.files import silence_broken_pipe


class ExitStatus(IntEnum):
    """The exit codes, stable and documented in the README's "Errors and exit codes"."""

    OK = 0
    GATE_FAILED = 1  # ``ireval gate``: a quality check failed
    USAGE_OR_INPUT = 2  # usage, input, output or environment (memory, cluster) error
    INTERNAL = 3  # a bug in ireval: please report it
    HUNG_UP = 129  # SIGHUP
    INTERRUPTED = 130  # SIGINT (Ctrl-C)
    TERMINATED = 143  # SIGTERM


class UsageLine(Exception):
    """A usage error the command line has already worded in full (click's, with its
    'see --help' pointer): printed as it is after ``ireval: ``, exit 2."""

    def __init__(self, line: str) -> None:
        super().__init__(line)
        self.line = line


# --------------------------------------------------------------------------
# Messages


def one_line(msg: str) -> str:
    return " ".join(str(msg).split())


# Characters shown escaped in messages: controls (an ESC could restyle the terminal),
# and invisible or direction-changing marks (a BOM, zero-width spaces, bidi overrides).
_INVISIBLE = frozenset(
    "\u00ad\u061c\u180e\u200b\u200c\u200d\u200e\u200f\u2028\u2029"
    "\u202a\u202b\u202c\u202d\u202e\u2060\u2066\u2067\u2068\u2069\ufeff"
)


def printable(msg: str) -> str:
    """``msg`` as one line a terminal shows faithfully.

    Ids are bytes: an undecodable byte (kept as a surrogate escape) prints as ``\\xff``;
    control characters and invisible marks print as ``\\x1b``, ``\\n``, ``\\ufeff``.
    """
    out = []
    for ch in msg:
        o = ord(ch)
        if 0xDC80 <= o <= 0xDCFF:
            out.append(f"\\x{o - 0xDC00:02x}")
        elif ch in "\t\n\r":
            out.append({"\t": "\\t", "\n": "\\n", "\r": "\\r"}[ch])
        elif o < 0x20 or 0x7F <= o < 0xA0:
            out.append(f"\\x{o:02x}")
        elif ch in _INVISIBLE or 0xD800 <= o <= 0xDFFF:
            out.append(f"\\u{o:04x}")
        else:
            out.append(ch)
    return "".join(out)


def say(line: str) -> None:
    """One line on stderr; if stderr itself is gone there is no one to tell."""
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass


def isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


# --------------------------------------------------------------------------
# Standard streams


class ClosedStream:
    """Standard input or output that was closed when ireval started (``>&-``, ``<&-``): every
    use is the error a closed descriptor gives, so the command reports it and exits 2."""

    def __init__(self, name: str) -> None:
        self.name = name

    @property
    def buffer(self) -> ClosedStream:
        return self

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        raise ValueError(f"standard {self.name} is closed")

    def flush(self) -> None:
        pass  # nothing was written (writing raised), and the interpreter flushes at exit

    def write(self, data: Any) -> int:
        raise OSError(errno.EBADF, "it is closed")

    def __getattr__(self, attr: str) -> Any:
        if self.name == "input":
            from ..errors import InputError

            raise InputError(
                "<stdin>", "cannot read standard input: it is closed (give the run as a file or pipe it in)"
            )
        raise OSError(errno.EBADF, "it is closed")


def guard_standard_streams() -> None:
    """Give closed standard descriptors (0, 1, 2) a meaning that cannot change an exit code.

    Each closed one is pointed at /dev/null first, so no file ireval opens later (an
    output's temporary file) can take its number and receive what was meant for it.
    Then: a closed stdin or stdout is an error when used ('cannot read standard input',
    'cannot write to standard output': exit 2), a closed stderr silently takes the
    messages (there is no one to tell; the exit code still says what happened)."""
    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        try:
            os.fstat(fd)
            continue
        except OSError:
            pass
        try:
            devnull = os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY)
            if devnull != fd:
                os.dup2(devnull, fd)
                os.close(devnull)
        except OSError:
            continue
        if getattr(sys, name) is None:
            if fd == 2:
                sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115  lives as long as the process
            else:
                setattr(sys, name, ClosedStream("input" if fd == 0 else "output"))


def flush_stdout() -> None:
    """Flush text written with click.echo now, so that a broken pipe or a full disk is
    handled here and not reported by the interpreter at exit."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        silence_broken_pipe()
    except OSError as exc:
        silence_broken_pipe()
        raise OutputError(f"cannot write to standard output: {exc.strerror or exc}") from None


_WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})


# --------------------------------------------------------------------------
# Memory


def _address_space_limit() -> tuple[int, str] | None:
    """The smaller of the process's address-space and data limits in bytes, with the
    ``ulimit`` option that sets it (``-v``, ``-d``), or None when neither is set."""
    try:
        import resource
    except ImportError:
        return None
    limits = []
    for which, option in (("RLIMIT_AS", "-v"), ("RLIMIT_DATA", "-d")):
        if hasattr(resource, which):
            try:
                soft = resource.getrlimit(getattr(resource, which))[0]
            except (ValueError, OSError):
                continue
            if soft != resource.RLIM_INFINITY:
                limits.append((soft, option))
    return min(limits) if limits else None


def has_room(nbytes: int) -> bool:
    """Whether ``nbytes`` more of address space can be mapped now (always, without a limit).
    The mapping is never touched, so it costs no memory, and is released at once."""
    if _address_space_limit() is None:
        return True
    import mmap

    try:
        probe = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | getattr(mmap, "MAP_ANONYMOUS", 0))
    except (OSError, ValueError, OverflowError, MemoryError):
        return False
    probe.close()
    return True


# The C library's allocator for the ireval process (GNU libc; tune_malloc): blocks below
# 64 MiB come from its heaps, and a heap keeps up to 64 MiB free at its top, where its
# defaults map a large block (from 128 KiB up; the bound grows with what is freed) and unmap
# it when freed, and give back a heap's top above twice that bound. Every chunk of a streamed
# run (8 MiB of text, its columns, Arrow's parse buffers) then came in new pages, each
# faulted in and zeroed by the kernel: 54k page faults on the 7M-line run against 38k. 12
# interleaved runs: 7M lines 1.152 -> 1.076 s median (CPU 1.90 -> 1.79 s), a 5M-row
# --labelled log 1.40 -> 1.24 s, Robust04 0.389 -> 0.377 s, DL 0.286 -> 0.278 s; peak memory
# the same within 2 MiB there, and up to 20 MiB more (of 235) for the 10M-line shuffled run.
MALLOC_OPTIONS = ((-3, 64 << 20), (-1, 64 << 20))  # (M_MMAP_THRESHOLD, M_TRIM_THRESHOLD)
# set by the user, they win (the environment variables GNU libc reads at start-up)
MALLOC_USER_VARS = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_MMAP_MAX_")


def tune_malloc() -> bool:
    """Set :data:`MALLOC_OPTIONS` (the ireval process only: the API leaves the caller's
    allocator alone). False, changing nothing, off Linux, without GNU libc's ``mallopt``, or
    when the user tuned the allocator through the environment."""
    if not sys.platform.startswith("linux") or any(v in os.environ for v in MALLOC_USER_VARS):
        return False
    if "glibc.malloc." in os.environ.get("GLIBC_TUNABLES", ""):
        return False
    import ctypes  # (numpy imports it anyway)

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return all(mallopt(option, value) == 1 for option, value in MALLOC_OPTIONS)


# Address space a native library needs when it loads, in MiB: (its code and tables, and per
# CPU its OpenBLAS thread buffers). Measured as the growth of VmSize on import (numpy 1 and 2
# CPUs: 84 and 124 MiB; scipy.stats on top: 140 and 180 MiB), with a margin. OpenBLAS, in
# numpy and in scipy, retries a failed buffer allocation forever inside the import, holding
# the interpreter: no signal handler can run, so SIGTERM would be ignored. It is not let load
# without the room it needs.
NATIVE_NEEDS_MIB = {"numpy": (64, 48), "scipy": (128, 48)}


class NativeImportGuard:
    """A ``sys.meta_path`` finder that checks, before numpy or scipy load, that the address
    space they need is there; if not, the import raises MemoryError (reported as out of
    memory) instead of hanging. It finds nothing itself: the import goes on as usual."""

    def __init__(self) -> None:
        self.checked: set[str] = set()

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> None:
        need = NATIVE_NEEDS_MIB.get(fullname)
        if need is not None and fullname not in self.checked:
            self.checked.add(fullname)
            fixed, per_cpu = need
            if not has_room((fixed + per_cpu * cpus()) << 20):
                raise MemoryError(f"not enough address space left to load {fullname}")
        return None

    def invalidate_caches(self) -> None:
        pass


def _out_of_memory(exc: BaseException) -> bool:
    """Whether ``exc`` is the process running out of memory, under whatever name the
    library that ran out gives it."""
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, MemoryError):
            return True
        if isinstance(e, OSError) and e.errno == errno.ENOMEM:
            return True
        text = str(e)
        if isinstance(e, ImportError) and ("failed to map segment" in text or "annot allocate memory" in text):
            return True
        if "std::bad_alloc" in text:
            return True
        e = e.__cause__ or e.__context__
    # a library that fails oddly (SystemError, a half-initialised module) with almost no room left
    return not has_room(64 << 20)


def out_of_memory_line() -> str:
    limit = _address_space_limit()
    if limit is None:
        return "ireval: out of memory"
    return f"ireval: out of memory (the address space is limited to {limit[0] >> 20} MiB by ulimit {limit[1]})"


# --------------------------------------------------------------------------
# Running a command


def signal_outcome() -> ExitStatus | None:
    """The exit status (after printing the line) if a signal arrived, else None."""
    import signal

    deciding = signals.deciding()  # (not one that came once the outputs were in place)
    if not deciding:
        return None
    first = deciding[0]
    if first == signal.SIGINT:
        say(("\n" if isatty(sys.stderr) else "") + "ireval: interrupted")
        return ExitStatus.INTERRUPTED
    if first == getattr(signal, "SIGHUP", None):
        say("ireval: hung up (SIGHUP)")
        return ExitStatus.HUNG_UP
    say("ireval: terminated")
    return ExitStatus.TERMINATED


def run(body: Callable[[], int], args: Sequence[str], *, own_process: bool = False) -> int:
    """Run ``body`` (a command; returns its exit status) as the process's work: standard
    streams guarded, signals handled, memory checked, every ending turned into one line
    and an :class:`ExitStatus`. ``own_process``: the process ends right after (the
    console script), so the signal handlers stay in place until it does: a signal in
    between is recorded, not a traceback."""
    import warnings

    debug = "--debug" in args
    guard_standard_streams()
    signals.reset()
    guard = NativeImportGuard()
    saved: list[tuple[int, Any]] = []
    held = signals.hold()  # a signal sent while the handlers go in waits for the try below
    try:
        # A signal that arrives while the ending is being reported is recorded, never raised.
        try:
            saved = signals.install()
            sys.meta_path.insert(0, guard)
            signals.release(held)  # (one held is raised here, and ends the command below)
            with warnings.catch_warnings():
                if not debug:
                    # numpy's floating-point warnings (inf - inf in a measure, say) would print
                    # two lines of Python internals; trec_eval's C arithmetic is silent too.
                    warnings.simplefilter("ignore")
                return _run(body, debug)
        except (KeyboardInterrupt, signals.Terminated):  # a signal between two handlers
            return signal_outcome() or ExitStatus.TERMINATED
    finally:
        signals.finish()
        signals.release(held)  # (if an error came first: from now on signals are only recorded)
        try:
            sys.meta_path.remove(guard)
        except ValueError:
            pass
        if not own_process:
            signals.restore(saved)


def _run(body: Callable[[], int], debug: bool) -> int:  # noqa: C901  one except clause per way a command ends: the exit-status table
    import click

    try:
        code = body()
        flush_stdout()
        return code
    except UsageLine as exc:
        say(f"ireval: {exc.line}")
        return ExitStatus.USAGE_OR_INPUT
    except (click.Abort, KeyboardInterrupt):
        signals.interrupted()
        return signal_outcome() or ExitStatus.INTERRUPTED
    except signals.Terminated:
        return signal_outcome() or ExitStatus.TERMINATED
    except IrevalError as exc:
        if signals.deciding():
            return signal_outcome() or ExitStatus.INTERNAL
        if debug:
            import traceback

            traceback.print_exc()
        say(f"ireval: {printable(str(exc))}")
        return exc.exit_code
    except BrokenPipeError:
        silence_broken_pipe()
        return signal_outcome() or ExitStatus.OK
    except OSError as exc:
        if signals.deciding():
            return signal_outcome() or ExitStatus.INTERNAL
        if exc.errno in _WRITE_ERRNOS:  # click.echo to a full stdout (--help, 'ireval measures')
            silence_broken_pipe()
            say(f"ireval: cannot write to standard output: {exc.strerror}")
            return ExitStatus.USAGE_OR_INPUT
        if exc.errno == errno.EBADF and isinstance(sys.stdout, ClosedStream):  # click.echo, stdout closed
            say("ireval: cannot write to standard output: it is closed")
            return ExitStatus.USAGE_OR_INPUT
        if _out_of_memory(exc):
            return _report_out_of_memory(debug)
        return internal(exc, debug)
    except Exception as exc:  # MemoryError included
        outcome = signal_outcome()
        if outcome is not None:
            return outcome
        if _out_of_memory(exc):
            return _report_out_of_memory(debug)
        return internal(exc, debug)


def _report_out_of_memory(debug: bool) -> int:
    if debug:
        import traceback

        traceback.print_exc()
    say(out_of_memory_line())
    return ExitStatus.USAGE_OR_INPUT


def internal(exc: BaseException, debug: bool) -> int:
    if debug:
        import traceback

        traceback.print_exc()
    say(
        f"ireval: internal error: {type(exc).__name__}: {printable(one_line(str(exc)))} "
        "(please report it; --debug shows the traceback)"
    )
    return ExitStatus.INTERNAL


def exit_now(code: int) -> None:
    """Flush the standard streams and end the process now, without the interpreter's teardown.

    The exit code is decided and every line is written: what is left is the teardown of
    native libraries, where a thread pool (Arrow's readers, BLAS) still winding down can
    abort the process ("terminate called without an active exception", exit 134) after the
    error line was printed, turning exit 2 into a crash. Our own files are closed and
    renamed in ``finally`` blocks before this point; nothing registered with atexit matters.
    A signal arriving now changes nothing: the handlers only record it.
    """
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:
            silence_broken_pipe()
        except (OSError, ValueError, AttributeError):
            pass
    os._exit(int(code))
