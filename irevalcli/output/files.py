"""Writing what a command produces: to standard output, or to ``--output`` files, safely.

Every command that writes (``ireval``, ``compare``, ``gate``, ``pool``, ``curve``,
``plot``) writes through this module, so the promises hold in one place:

- a regular file is replaced atomically (a temporary file beside it, then a rename),
  wherever it lives (``/dev/shm`` too): an interrupted or failed command leaves the old
  file as it was; an existing file keeps its mode and owner, a symlink is written through;
- only what cannot be replaced is written in place, decided by what the path is, not by
  its name: a character device (``/dev/null``), a FIFO, or a file descriptor named as a
  path (``/dev/fd/N``, ``/dev/stderr``, ``/proc/self/fd/N``);
- an output that is one of the command's inputs (same device and inode, through
  symlinks; a member of an input directory; any file the command read, however it was
  named: a config file's path, ``--subtopics``, ``-Z``, standard input redirected from a
  file) is refused before anything is written;
- a command writing several files (``pool --output --counts``) writes them only once
  all of them are made, each atomically (:func:`write_files`);
- ``-`` is standard output.

Importing this module imports only the standard library.
"""

from __future__ import annotations

import os
import re
import stat
import sys
from collections.abc import Iterable, Sequence
from contextlib import nullcontext
from contextvars import ContextVar
from typing import Any

from .. import signals
from ..errors import OutputError, UsageError

# --output names that mean this process's standard output: write there, not over a file.
STDOUT_NAMES = frozenset({"-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"})

# A path naming an open file descriptor: written to in place, whatever the descriptor is
# (``>(...)`` process substitution, ``--output /dev/stderr``). Renaming over it would
# replace the file the descriptor was opened on, not write to the descriptor.
_DESCRIPTOR = r"^/(dev/(fd/[0-9]+|stdout|stderr)|proc/(self|thread-self|[0-9]+)/fd/[0-9]+)$"

# Output formats a file name's extension implies (when --format is not given).
EXTENSION_FORMATS = {
    ".json": "json",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".csv": "csv",
    ".md": "markdown",
    ".markdown": "markdown",
    ".tex": "latex",
    ".png": "png",
    ".svg": "svg",
    ".pdf": "pdf",
    ".xml": "junit",
}


# The parameters of ireval's commands that name input files. The command line records their
# values (:func:`command_inputs`) before a command runs, and every write refuses them as
# outputs, so a command is protected even where it does not pass its inputs itself.
INPUT_PARAMS = frozenset(
    {"qrels", "run", "more_runs", "runs", "run_a", "run_b", "baseline", "files", "config", "zscore_file", "subtopics"}
)
COMMAND_INPUTS: ContextVar[tuple[str, ...]] = ContextVar("COMMAND_INPUTS", default=())


def command_inputs(params: dict[str, Any]) -> tuple[str, ...]:
    """The input files named by a command's parsed parameters (quoted globs expanded)."""
    found: list[str] = []
    for name in INPUT_PARAMS & params.keys():
        value = params[name]
        for v in value if isinstance(value, (tuple, list)) else [value]:
            if not isinstance(v, str) or v in ("", "-"):
                continue
            found.append(v)
            # glob.has_magic's test, without importing glob for the plain paths of every run
            if ("*" in v or "?" in v or "[" in v) and not os.path.exists(v):
                import glob

                found += glob.glob(v)
    return tuple(found)


def is_stdout(output: str | None) -> bool:
    return output is None or output in STDOUT_NAMES


def format_for(
    output: str | None,
    fmt: str | None,
    formats: Sequence[str],
    default: str | None,
    *,
    command: str = "ireval",
    option: str = "--output",
) -> str | None:
    """The output format: ``--format`` if given, else the one ``output``'s extension names
    (``scores.json`` -> json), else ``default``. Refused: a ``--format`` that contradicts the
    extension (``--format json --output x.parquet``), and an extension naming a format the
    command does not write (``ireval curve --output x.parquet``)."""
    implied = None
    if not is_stdout(output):
        implied = EXTENSION_FORMATS.get(os.path.splitext(str(output))[1].lower())
    if implied is not None and implied not in formats:
        raise UsageError(
            f"{option} {output}: the name says {implied}, which {command} does not write "
            f"(formats: {', '.join(formats)}); give a name that matches the format"
        )
    if fmt is None:
        return implied or default
    if implied is not None and implied != fmt:
        raise UsageError(
            f"--format {fmt} contradicts {option} {output}, whose name says {implied}; "
            "drop --format or give a name that matches it"
        )
    return fmt


def no_short_output_option(command: str) -> Any:
    """A hidden ``-o VALUE`` for commands where ``-o`` means nothing: ``-o`` is trec_eval's
    ignored flag in the main command, so it never means ``--output`` anywhere else."""
    import click

    def refuse(ctx: Any, param: Any, value: Any) -> None:
        if value is not None:
            raise UsageError(
                f"-o is not an option of {command}: write --output {value} "
                "(-o is trec_eval's ignored flag, so no ireval command takes it for --output)"
            )

    return click.option("-o", "short_o", hidden=True, expose_value=False, default=None, callback=refuse)


def _stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None


def _destroys(option: str, output: str, inp: str) -> OutputError:
    return OutputError(
        f"{option} {output}: is the input file {inp}; writing it would destroy the input (give another output file)"
    )


def _local(inp: str) -> str | None:
    """An input's local path: a ``file://`` URL's path; None for other URLs (not local)."""
    if inp.startswith("file://"):
        return inp[len("file://") :] or "/"
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", inp):
        return None
    return inp


def check_not_input(output: str | None, inputs: Iterable[str | None], *, option: str = "--output") -> None:
    """Refuse an ``output`` that is the same file as one of ``inputs`` (same device and
    inode, symlinks followed), or a file inside an input directory (a dataset's member):
    writing it would destroy the input. ``-`` is standard input, which is a file when
    redirected from one (``< run.txt``). Outputs that do not exist yet or are not regular
    files never clash; nor do URLs other than ``file://``. Every file actually read is
    checked again when the output is written (:func:`write_files`)."""
    if is_stdout(output):
        return
    assert output is not None
    out = _stat(output)
    if out is None or not stat.S_ISREG(out.st_mode):
        return
    inside = os.path.realpath(output)
    for inp in inputs:
        if inp is None:
            continue
        if inp == "-":
            try:
                st: os.stat_result | None = os.fstat(0)
            except OSError:
                st = None
            if st is not None and (st.st_dev, st.st_ino) == (out.st_dev, out.st_ino):
                raise _destroys(option, output, "standard input")
            continue
        local = _local(str(inp))
        if local is None:
            continue
        st = _stat(local)
        if st is None:
            continue
        if (st.st_dev, st.st_ino) == (out.st_dev, out.st_ino):
            raise _destroys(option, output, str(inp))
        if stat.S_ISDIR(st.st_mode) and inside.startswith(os.path.join(os.path.realpath(local), "")):
            raise OutputError(
                f"{option} {output}: is a file of the input dataset {inp}; writing it would destroy the input "
                "(give another output file)"
            )


def check_not_read(output: str, *, option: str = "--output") -> None:
    """Refuse an ``output`` that is a file read as an input in this command, however it was
    named (a config file's path, a dataset's member, ``--subtopics``, ``-Z``, standard input
    redirected from a file)."""
    from ..io.source import inputs_read

    read = inputs_read()
    if not read or is_stdout(output):
        return
    out = _stat(output)
    if out is not None and stat.S_ISREG(out.st_mode) and (out.st_dev, out.st_ino) in read:
        raise _destroys(option, output, read[(out.st_dev, out.st_ino)])


def check_output_path(path: str, *, option: str = "--output") -> None:
    """Refuse, before any work, an output path that can never be written as the user means
    it: a directory, a name ending in '/', a relative name in a working directory that no
    longer exists, a dangling symlink whose target's directory does not exist."""
    _target(path, option)


def _target(path: str, option: str) -> tuple[str, os.stat_result | None, bool]:  # noqa: C901  one refusal per way an output can name an input
    """(the file to write, its stat or None, whether it is written in place)."""
    if path == "":
        raise OutputError(f"{option}: the file name is empty")
    if path.endswith(("/", os.sep)) or os.path.basename(path) in (".", ".."):
        if os.path.isdir(path):
            raise OutputError(f"{option} {path}: is a directory")
        raise OutputError(f"{option} {path}: ends in '/', so it names a directory, not a file; give a file name")
    if not os.path.isabs(path):
        try:
            os.getcwd()
        except FileNotFoundError:
            raise OutputError(
                f"{option} {path}: the working directory no longer exists; give an absolute path"
            ) from None
    absolute = os.path.abspath(path)
    if re.match(_DESCRIPTOR, absolute):  # (compiled at its first use)
        return path, None, True
    try:
        st: os.stat_result | None = os.stat(path)
    except FileNotFoundError:
        st = None
    except NotADirectoryError:
        raise OutputError(f"{option} {path}: a part of the path is not a directory") from None
    except OSError as exc:
        raise OutputError(f"{option} {path}: cannot write ({exc.strerror or exc})") from None
    target = os.path.realpath(path)
    if st is None:
        directory = os.path.dirname(target)
        if os.path.islink(path):
            if not os.path.isdir(directory):
                raise OutputError(
                    f"{option} {path}: is a symlink to {os.readlink(path)}, whose directory {directory} does not exist"
                )
        elif not os.path.isdir(directory):
            raise OutputError(f"{option} {path}: the directory {os.path.dirname(absolute)} does not exist")
        return target, None, False
    if stat.S_ISDIR(st.st_mode):
        raise OutputError(f"{option} {path}: is a directory")
    if stat.S_ISREG(st.st_mode):
        return target, st, False
    if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
        return path, st, True
    kind = "a block device" if stat.S_ISBLK(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode) else "not a file"
    raise OutputError(f"{option} {path}: is {kind}; ireval writes regular files, character devices and FIFOs")


def silence_broken_pipe() -> None:
    """stdout cannot take more (its reader went away, or the disk is full): point the
    descriptor at /dev/null so nothing, the interpreter's final flush included, fails again."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, ValueError, OSError):
        return  # not a real file (an in-process caller's buffer)
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)
        os.close(devnull)
    except OSError:
        pass


def _pieces(data: bytes | Iterable[bytes]) -> Iterable[bytes]:
    return [data] if isinstance(data, (bytes, bytearray)) else data


def _umask() -> int:
    try:
        with open("/proc/self/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_stdout(data: bytes | Iterable[bytes], fmt: str = "") -> None:
    """Write ``data`` to standard output. A reader that goes away (``| head``) is not an
    error; a closed or full standard output is (exit 2)."""
    binary = fmt in ("parquet", "png", "pdf")
    if binary and _isatty(sys.stdout):
        raise UsageError(f"--format {fmt} writes binary data: give --output PATH or redirect stdout")
    out = getattr(sys.stdout, "buffer", None)
    if out is None:
        raise OutputError("cannot write to standard output: it is closed")
    try:
        for piece in _pieces(data):
            write_all(out, piece)
        out.flush()
        signals.commit()  # all of it is written: a signal from now on does not say otherwise
    except BrokenPipeError:
        # The reader went away (``| head``) and wants no more. Carry on, so the exit
        # code still tells the truth (a failed gate stays 1).
        silence_broken_pipe()
    except (OSError, ValueError) as exc:
        silence_broken_pipe()
        reason = getattr(exc, "strerror", None) or ("it is closed" if isinstance(exc, ValueError) else exc)
        if isinstance(exc, OSError) and exc.errno == 9:  # EBADF: started with stdout closed (>&-)
            reason = "it is closed"
        raise OutputError(f"cannot write to standard output: {reason}") from None


def write_all(fh: Any, piece: bytes) -> None:
    """Write all of ``piece``. A buffered writer's ``write`` comes back short when a signal
    interrupts a large write to a pipe and its handler returns (a signal recorded, not
    raised: once the output is complete, :func:`irevalcli.signals.commit`): the rest is
    written, not lost."""
    view = memoryview(piece)
    while view:
        n = fh.write(view)
        view = view[len(view) if n is None else n :]


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def write_output(
    data: bytes | Iterable[bytes],
    output: str | None,
    fmt: str = "",
    *,
    inputs: Iterable[str | None] = (),
    option: str = "--output",
) -> None:
    """Write the output: to standard output (``output`` None or ``-``), or to the file
    ``output`` all or nothing, refusing it if it is one of ``inputs``. ``data`` is bytes,
    or pieces made as they are written (trec ``-q``)."""
    if is_stdout(output):
        write_stdout(data, fmt)
        return
    assert output is not None
    write_files([(output, data, option)], inputs=inputs)


def write_atomic(
    path: str, data: bytes | Iterable[bytes], *, inputs: Iterable[str | None] = (), option: str = "--output"
) -> None:
    """Write ``data`` to ``path`` all or nothing (see the module docstring)."""
    write_files([(path, data, option)], inputs=inputs)


def write_files(
    files: Sequence[tuple[str, bytes | Iterable[bytes], str]],
    *,
    inputs: Iterable[str | None] = (),
    stdout: tuple[bytes | Iterable[bytes], str] | None = None,
) -> None:
    """Write each (path, data, option) of ``files``, and ``stdout`` (data, format) if given:
    every check first (no output is an input, no two outputs are the same file), then
    every regular file to a temporary file beside it, then devices and FIFOs, then
    standard output, then the renames. A failure or a signal before the renames leaves
    every regular file as it was; once they are done the output is complete, and a
    signal no longer decides the exit (:func:`irevalcli.signals.committing`). So this is
    a command's last output: one call with all of it (``pool --output --counts``, or a
    file and the report on standard output)."""
    inputs = [*inputs, *COMMAND_INPUTS.get()]
    targets = []
    seen: dict[tuple[int, int] | str, str] = {}
    for path, data, option in files:
        target, st, in_place = _target(path, option)
        check_not_input(path, inputs, option=option)
        check_not_read(path, option=option)
        key: tuple[int, int] | str = (st.st_dev, st.st_ino) if st is not None else target
        if key in seen and not in_place:
            raise OutputError(f"{option} {path}: is the same file as {seen[key]}; give each output its own file")
        seen[key] = f"{option} {path}"
        targets.append((path, data, option, target, st, in_place))
    temps: list[tuple[str, str, str, str]] = []  # (tmp, target, path, option)
    try:
        for path, data, option, target, st, in_place in targets:
            if not in_place:
                _write_temp(path, data, option, target, st, temps)
        for path, data, option, _target_path, _st, in_place in targets:
            if in_place:  # a device or FIFO cannot be rolled back: after every temporary file, before any rename
                write_special(path, data, option=option)
        if stdout is not None:  # nor can standard output
            write_stdout(*stdout)
        # All the renames or none: a signal now is held until they are done, and then no longer
        # decides the exit (the outputs are in place: the command did what it was asked).
        with signals.committing() if targets or stdout is not None else nullcontext():
            while temps:
                tmp, target, path, option = temps[0]
                try:
                    os.replace(tmp, target)
                except PermissionError:
                    raise OutputError(f"{option} {path}: permission denied") from None
                except OSError as exc:
                    raise OutputError(f"{option} {path}: cannot write ({exc.strerror or exc})") from None
                temps.pop(0)
    finally:
        with signals.deferred():  # the clean-up runs to the end, whatever arrives
            for tmp, _, _, _ in temps:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass


def _write_temp(
    path: str,
    data: bytes | Iterable[bytes],
    option: str,
    target: str,
    st: os.stat_result | None,
    temps: list[tuple[str, str, str, str]],
) -> None:
    """Write ``data`` to a new temporary file beside ``target``, added to ``temps`` (tmp,
    target, path, option) the moment it exists, so that the caller removes it whatever
    happens next: a signal that lands between this function's end and an append by its
    caller would have left it behind."""
    directory = os.path.dirname(target) or "."
    mode = stat.S_IMODE(st.st_mode) if st is not None else 0o666 & ~_umask()
    import tempfile  # (2 ms of start-up when the output goes to stdout)

    fh = None
    try:
        with signals.deferred():  # a signal cannot land between creating the file and recording its name
            fd, tmp = tempfile.mkstemp(prefix=".ireval-", suffix=".tmp", dir=directory)
            temps.append((tmp, target, path, option))
            fh = os.fdopen(fd, "wb")
        with fh:
            for piece in _pieces(data):
                fh.write(piece)
            fh.flush()
            os.fchmod(fh.fileno(), mode)
            if st is not None:
                try:  # keep the owner when root rewrites someone else's file
                    os.fchown(fh.fileno(), st.st_uid, st.st_gid)
                except OSError:
                    pass
            os.fsync(fh.fileno())
    except PermissionError:
        raise OutputError(f"{option} {path}: permission denied") from None
    except OSError as exc:
        raise OutputError(f"{option} {path}: cannot write ({exc.strerror or exc})") from None
    finally:
        if fh is not None:
            with signals.deferred():  # the clean-up runs to the end, whatever arrives
                try:
                    fh.close()
                except OSError:
                    pass


def write_special(path: str, data: bytes | Iterable[bytes], *, option: str = "--output") -> None:
    """``path`` is a character device, a FIFO or a file descriptor: write straight to it."""
    try:
        with open(path, "wb") as fh:
            for piece in _pieces(data):
                write_all(fh, piece)
    except BrokenPipeError:
        pass  # its reader went away: like ``| head`` on stdout
    except PermissionError:
        raise OutputError(f"{option} {path}: permission denied") from None
    except OSError as exc:
        raise OutputError(f"{option} {path}: cannot write ({exc.strerror or exc})") from None
