"""Where every input's bytes come from: one byte source under every reader.

The readers (:mod:`irevalcli.io.trec`, :mod:`irevalcli.io.tabular`, the streamed and
out-of-core engines, the dataset readers) get their bytes here and nowhere else, so each
of these is written once:

- the compression table (:data:`COMPRESSIONS`): gzip, bzip2, xz and zstd, recognised by
  their magic numbers, never by a file's name; decompressed whole (:func:`inflate`) or as a
  stream (:func:`open_decompressed`);
- the one reading loop (:class:`Tap`): it hashes what passes through (SHA-256 of the bytes
  as stored), reports their count to a progress hook, and may copy them to a spool; bytes
  that reach a reader by another way (an ir_datasets export, a URL) are hashed by
  :func:`digest`, the only other hashing of inputs;
- whole reads (:func:`read_whole`) and sniffing (:func:`sniff_head`);
- inputs that cannot be read twice. Standard input (``-``) is spooled by the streamed
  reader as it goes. Any other input that is not a regular file, a pipe named as a path
  (``<(zcat run.gz)``, ``/dev/stdin``, ``/dev/fd/N``), a FIFO or a character device, is
  copied once, in full, to an unnamed temporary file the first time it is opened
  (:func:`open_input`); every later open within the same :func:`reading_session`
  (the sniffing of its format, then the reading itself, or the same pipe named twice)
  reads that copy from its first byte. Nothing is lost to a sniff.
- which files were read (:func:`inputs_read`): every regular file an input was read from,
  by device and inode, so that no output ever replaces one of them, however it was named
  (a config file, a dataset directory, ``--subtopics``, ``-Z``, standard input redirected
  from a file).

Whether to hash and where progress goes are arguments, not context: callers pass them.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import re
import stat
import sys
import threading
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import IO, Any, BinaryIO

from ..errors import InputError

Progress = Callable[[int], None]  # called with the number of bytes just read (as stored)

# ------------------------------------------------------------------ compression


def _is_bzip2(head: bytes) -> bool:
    """bzip2 by content: 'BZh', a block size digit, then a block or end-of-stream magic."""
    return head.startswith(b"BZh") and head[3:4].isdigit() and head[4:10] in (b"1AY&SY", b"\x17rE8P\x90")


def _zstd_whole(raw: bytes) -> bytes:
    import pyarrow as pa  # pyarrow's zstd codec: no extra dependency

    return bytes(pa.CompressedInputStream(pa.BufferReader(raw), "zstd").read())


def _zstd_stream(fh: IO[bytes]) -> Any:
    import pyarrow as pa

    return pa.CompressedInputStream(pa.PythonFile(fh, mode="r"), "zstd")


def _gzip_stream(fh: IO[bytes]) -> Any:
    return gzip.GzipFile(fileobj=fh)


def _bz2_stream(fh: IO[bytes]) -> Any:
    return bz2.BZ2File(fh)


def _xz_stream(fh: IO[bytes]) -> Any:
    return lzma.LZMAFile(fh)


@dataclass(frozen=True)
class Compression:
    """One compressed format: how its first bytes look and how to decompress it."""

    name: str
    matches: Callable[[bytes], bool]  # given at least HEAD_BYTES of the stored bytes
    whole: Callable[[bytes], bytes]
    stream: Callable[[IO[bytes]], Any]  # a file-like reader of the decompressed bytes


COMPRESSIONS: tuple[Compression, ...] = (
    Compression("gzip", lambda h: h.startswith(b"\x1f\x8b"), gzip.decompress, _gzip_stream),
    Compression("bzip2", _is_bzip2, bz2.decompress, _bz2_stream),
    Compression("xz", lambda h: h.startswith(b"\xfd7zXZ\x00"), lzma.decompress, _xz_stream),
    Compression("zstd", lambda h: h.startswith(b"\x28\xb5\x2f\xfd"), _zstd_whole, _zstd_stream),
)
HEAD_BYTES = 10  # enough of the stored bytes to tell every format of the table apart

# what a corrupt or truncated compressed stream raises, in any of the formats
DECOMPRESS_ERRORS: tuple[type[BaseException], ...] = (OSError, EOFError, ValueError, lzma.LZMAError, zlib.error)


_URL_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def is_url(spec: Any) -> bool:
    """``scheme://...``: an input read through fsspec."""
    return isinstance(spec, str) and bool(_URL_SCHEME.match(spec))


def is_dataset(spec: Any) -> bool:
    """A directory or a URL: read as one input made of many files (:mod:`irevalcli.io.dataset`,
    which a plain file's reading does not import)."""
    if not isinstance(spec, (str, os.PathLike)) or isinstance(spec, bytes):
        return False
    s = os.fspath(spec)
    return s != "-" and (is_url(s) or os.path.isdir(s))


def compression_of(head: bytes) -> Compression | None:
    """The compression the stored bytes ``head`` start with, or None for plain bytes."""
    for c in COMPRESSIONS:
        if c.matches(head[:HEAD_BYTES]):
            return c
    return None


def is_compressed(head: bytes) -> bool:
    return compression_of(head) is not None


def corrupt(name: str, what: str, exc: BaseException) -> InputError:
    return InputError(name, f"cannot read {what} file: corrupt or truncated compressed data ({exc})")


def inflate(raw: bytes, name: str, what: str) -> bytes:
    """``raw`` decompressed if a format of the table recognises it, else as it is."""
    c = compression_of(raw)
    if c is None:
        return raw
    try:
        return c.whole(raw)
    except DECOMPRESS_ERRORS as exc:
        raise corrupt(name, what, exc) from None


def open_decompressed(fh: IO[bytes], head: bytes) -> Any:
    """A stream of ``fh``'s bytes decompressed (``head``: its first stored bytes)."""
    c = compression_of(head)
    return fh if c is None else c.stream(fh)


# ------------------------------------------------------------------ the reading loop


class Tap(io.RawIOBase):
    """Passes a stream's bytes through: hashes them (``hash``: SHA-256 of the bytes as
    stored), reports their count to ``progress``, and copies them to ``spool`` if given.

    :meth:`head` reads the first bytes ahead (to recognise a compressed stream without
    seeking) and gives them again to the next reads."""

    def __init__(
        self,
        fh: IO[bytes],
        *,
        hash: bool = True,
        progress: Progress | None = None,
        spool: IO[bytes] | None = None,
        name: str = "<stdin>",
    ) -> None:
        self.fh = fh
        self.progress = progress
        self.sha: Any = None  # hashlib's sha256, when ``hash`` (hashlib is imported only then)
        if hash:
            import hashlib

            self.sha = hashlib.sha256()
        self.enabled = hash
        self.spool = spool
        self.name = name
        self.ahead = b""
        self.count = 0  # bytes read from ``fh`` (as stored: compressed, if it is)
        self.eof = False  # a read gave nothing: the input ended (a terminal's one Ctrl-D)

    def readable(self) -> bool:
        return True

    def _read(self, b: Any) -> int:
        if self.eof:  # a terminal would wait for another Ctrl-D: the input ended at the first
            return 0
        # one read of the file at a time (readinto1): a buffered standard input's readinto
        # would read on after a terminal's Ctrl-D to fill ``b``, swallowing the end of input
        read = getattr(self.fh, "readinto1", None) or self.fh.readinto  # type: ignore[attr-defined]
        n = read(b)
        if not n:
            self.eof = True
        if n:
            self.count += n
            if self.progress is not None:
                self.progress(n)
            if self.enabled:
                self.sha.update(memoryview(b)[:n])
            if self.spool is not None:
                try:
                    self.spool.write(memoryview(b)[:n])
                except OSError as exc:  # a full disk: the bytes read could not be read again
                    raise spool_failed(self.name, exc) from None
        return n or 0

    def head(self, size: int) -> bytes:
        buf = bytearray(size)
        got = 0
        while got < size:
            n = self._read(memoryview(buf)[got:])
            if not n:
                break
            got += n
        self.ahead = bytes(buf[:got])
        return self.ahead

    def readinto(self, b: Any) -> int:
        if self.ahead:
            n = min(len(b), len(self.ahead))
            b[:n] = self.ahead[:n]
            self.ahead = self.ahead[n:]
            return n
        return self._read(b)

    def hexdigest(self) -> str:
        return self.sha.hexdigest() if self.enabled else ""

    def close(self) -> None:  # the file is its owner's to close (standard input stays open)
        super().close()


def digest(data: bytes, *, hash: bool = True) -> str:
    """The SHA-256 of bytes in memory already (an ir_datasets export, a dataset's file on a
    URL, a gate config, a baseline record), as :class:`Tap` gives it for the bytes it reads:
    the hex digest, or "" when ``hash`` is False."""
    if not hash:
        return ""
    import hashlib

    return hashlib.sha256(data).hexdigest()


def spool_failed(name: str, exc: OSError) -> InputError:
    what, fix = ("standard input", "give the run as a file") if name == "<stdin>" else ("it", "give a regular file")
    return InputError(
        name,
        f"cannot keep a temporary copy of {what} ({exc.strerror or exc}); "
        f"{fix}, or set TMPDIR to a directory with room",
    )


# ------------------------------------------------------------------ opening inputs


def is_regular(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` names a regular file, which can be opened and read again as often
    as needed. A path that cannot be stat'ed counts as regular: opening it says why."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return True


def reread_safe(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` can be opened twice and give the same bytes: not ``-`` and not a
    pipe, FIFO or device named as a path (those are spooled; see :func:`open_input`)."""
    return os.fspath(path) != "-" and is_regular(path)


@dataclass
class _Session:
    spools: dict[tuple[int, int], IO[bytes]] = field(default_factory=dict)
    read: dict[tuple[int, int], str] = field(default_factory=dict)  # (device, inode) -> name
    lock: threading.Lock = field(default_factory=threading.Lock)

    def close(self) -> None:
        for fh in self.spools.values():
            try:
                fh.close()
            except OSError:
                pass
        self.spools.clear()


_SESSION: ContextVar[_Session | None] = ContextVar("_SESSION", default=None)


@contextmanager
def reading_session() -> Iterator[None]:
    """Within the block, an input that is not a regular file is read from its source once
    (copied to a temporary file the first time it is opened, read from there every time),
    and the regular files read are recorded (:func:`inputs_read`). A block inside another
    shares the outer one. Each command and each API call reads in one session."""
    if _SESSION.get() is not None:
        yield
        return
    session = _Session()
    token = _SESSION.set(session)
    try:
        yield
    finally:
        _SESSION.reset(token)
        session.close()


def inputs_read() -> dict[tuple[int, int], str]:
    """(device, inode) -> name of every regular file read as an input in the current session."""
    session = _SESSION.get()
    if session is None:
        return {}
    with session.lock:
        return dict(session.read)


def record_input(st: os.stat_result, name: str) -> None:
    """Record a regular file as read (an output must never replace it)."""
    session = _SESSION.get()
    if session is not None and stat.S_ISREG(st.st_mode):
        with session.lock:
            session.read.setdefault((st.st_dev, st.st_ino), name)


def record_stdin(stream: Any) -> None:
    """Standard input redirected from a regular file (``< run.txt``) is that file: record it."""
    try:
        record_input(os.fstat(stream.fileno()), "standard input")
    except (AttributeError, ValueError, OSError, io.UnsupportedOperation):
        pass


def _open_error(name: str, what: str, exc: OSError) -> InputError:
    if isinstance(exc, FileNotFoundError):
        return InputError(name, f"cannot read {what} file: no such file")
    if isinstance(exc, IsADirectoryError):
        return InputError(name, f"cannot read {what} file: it is a directory")
    if isinstance(exc, PermissionError):
        return InputError(name, f"cannot read {what} file: permission denied")
    return InputError(name, f"cannot read {what} file: {exc.strerror or exc}")


FIRST_BLOCK = 1 << 20


def open_input(path: str | os.PathLike[str], *, what: str) -> BinaryIO:
    """``path`` opened for reading from its first byte (the caller closes what it gets).

    A regular file is opened. Anything else (a pipe, a FIFO, ``/dev/stdin``, a device) is
    read once, in full, into an unnamed temporary file the first time it is opened in the
    session; each open gives a new handle on that copy, from its first byte. Outside a
    session it is copied for this open alone."""
    name = os.fspath(path)
    session = _SESSION.get()
    if session is not None:  # spooled already: not opened again (a second reader of a pipe reads nothing)
        try:
            st = os.stat(name)
        except (OSError, ValueError):
            pass
        else:
            with session.lock:
                spool = session.spools.get((st.st_dev, st.st_ino))
            if spool is not None and not stat.S_ISREG(st.st_mode):
                return _handle(spool)
    try:
        fh = open(name, "rb")  # noqa: SIM115  the caller closes it
    except OSError as exc:
        raise _open_error(name, what, exc) from None
    try:
        st = os.fstat(fh.fileno())
    except OSError:
        return fh
    if stat.S_ISREG(st.st_mode):
        record_input(st, name)
        return fh
    if stat.S_ISDIR(st.st_mode):
        fh.close()
        raise InputError(name, f"cannot read {what} file: it is a directory")
    key = (st.st_dev, st.st_ino)
    if session is not None:
        with session.lock:
            spool = session.spools.get(key)
            if spool is None:
                with fh:
                    spool = session.spools[key] = _spool(fh, name, what)
            else:
                fh.close()
        return _handle(spool)
    with fh:
        return _spool(fh, name, what)


def _handle(spool: IO[bytes]) -> BinaryIO:
    """A handle of its own on a spool, at its first byte (it shares the offset with the
    spool's other handles: they are read one at a time)."""
    dup = os.fdopen(os.dup(spool.fileno()), "rb")
    dup.seek(0)
    return dup


def _spool(fh: BinaryIO, name: str, what: str) -> BinaryIO:
    """Every byte of ``fh`` in an unnamed temporary file, rewound."""
    import tempfile

    try:
        spool = tempfile.TemporaryFile(prefix="ireval-input-")  # noqa: SIM115  unlinked already
    except OSError as exc:
        raise spool_failed(name, exc) from None
    try:
        first = True
        while True:
            try:
                block = fh.read(FIRST_BLOCK)
            except OSError as exc:
                raise InputError(name, f"cannot read {what} file: {exc.strerror or exc}") from None
            if not block:
                break
            if first:
                check_first_block(block, name)  # /dev/zero is refused, not copied until the disk is full
                first = False
            try:
                spool.write(block)
            except OSError as exc:
                raise spool_failed(name, exc) from None
        spool.flush()
        spool.seek(0)
    except BaseException:
        spool.close()
        raise
    return spool


def _rewound(fh: BinaryIO) -> BinaryIO:
    try:
        fh.seek(0)
    except (OSError, io.UnsupportedOperation):
        pass
    return fh


@contextmanager
def opened(path: str | os.PathLike[str], *, what: str) -> Iterator[BinaryIO]:
    """:func:`open_input` as a context manager, rewound to the first byte."""
    fh = _rewound(open_input(path, what=what))
    try:
        yield fh
    finally:
        fh.close()


def check_first_block(block: bytes, name: str) -> None:
    """A NUL byte in the first block of an uncompressed, non-Parquet input is an error now."""
    if block[:4] == b"PAR1" or is_compressed(block):
        return
    pos = block.find(b"\x00")
    if pos >= 0:
        raise InputError(name, "contains a NUL byte", block.count(b"\n", 0, pos) + 1)


# ------------------------------------------------------------------ Arrow's thread pool


def arrow_threads(nbytes: int, block: int) -> bool:
    """Whether an Arrow reader should use its thread pool for ``nbytes`` read in blocks of
    ``block``: only when there is more than one block to share out.

    One block gains nothing from the pool, and starting the pool has a cost that stays: when
    a Python process ends normally (the API, a test calling ``main()``), Arrow's pool can be
    torn down while a worker is still winding down, and the C++ runtime aborts the finished
    process ("terminate called without an active exception", SIGABRT; apache/arrow#34314).
    The ``ireval`` command ends with ``os._exit`` (:func:`irevalcli.commands.process.exit_now`)
    and never meets it; a small input read in the caller's process no longer starts the pool.
    """
    return nbytes > block


# ------------------------------------------------------------------ whole reads and sniffing


@dataclass
class Raw:
    """The bytes of one input as stored (not decompressed), with what identifies them."""

    name: str  # as shown in messages: the path, or "<stdin>"
    data: bytes
    sha256: str  # "" when not hashed


def read_whole(
    path: str | os.PathLike[str],
    *,
    what: str,
    stdin: BinaryIO | None = None,
    hash: bool = True,
    progress: Progress | None = None,
    name: str | None = None,
) -> Raw:
    """The stored bytes of a whole input: a path, or ``-`` for standard input (``stdin``,
    else the process's). Text whose first block holds a NUL byte (``/dev/zero``) fails at
    once instead of being read until memory runs out. ``name``: the input as messages name
    it (default: the path)."""
    spath = os.fspath(path)
    if spath == "-":
        stream = stdin if stdin is not None else sys.stdin.buffer
        record_stdin(stream)
        return _read_all(stream, "<stdin>", what, hash, progress)
    shown = spath if name is None else name
    try:
        with opened(spath, what=what) as fh:
            if progress is None:
                whole = _read_regular(fh, shown, what, hash)
                if whole is not None:
                    return whole
            return _read_all(fh, shown, what, hash, progress)
    except InputError as exc:
        if exc.path == spath and shown != spath:
            raise type(exc)(shown, exc.detail, exc.line) from None
        raise


def _read_regular(fh: BinaryIO, name: str, what: str, hash: bool) -> Raw | None:
    """A regular file read in one call, into one buffer of its size (no blocks to join: half
    the copies and the peak memory of :func:`_read_all`); None for any other input."""
    try:
        regular = stat.S_ISREG(os.fstat(fh.fileno()).st_mode)
    except (OSError, AttributeError, io.UnsupportedOperation):
        return None
    if not regular:
        return None
    try:
        data = fh.read()
    except OSError as exc:
        raise InputError(name, f"cannot read {what} file: {exc.strerror or exc}") from None
    check_first_block(data[:FIRST_BLOCK], name)
    if not hash:
        return Raw(name=name, data=data, sha256="")
    import hashlib

    return Raw(name=name, data=data, sha256=hashlib.sha256(data).hexdigest())


def _read_all(fh: BinaryIO, name: str, what: str, hash: bool, progress: Progress | None) -> Raw:
    tap = Tap(fh, hash=hash, progress=progress, name=name)
    parts: list[bytes] = []
    try:
        buf = bytearray()
        while len(buf) < FIRST_BLOCK:  # a terminal or pipe gives what it has, a line at a time
            got = tap.read(FIRST_BLOCK - len(buf))
            if not got:
                break
            buf += got
        first = bytes(buf)
        check_first_block(first, name)
        parts.append(first)
        if len(first) == FIRST_BLOCK:
            while block := tap.read(8 << 20):
                parts.append(block)
    except OSError as exc:
        raise InputError(name, f"cannot read {what} file: {exc.strerror or exc}") from None
    data = parts[0] if len(parts) == 1 else b"".join(parts)
    return Raw(name=name, data=data, sha256=tap.hexdigest())


def sniff_head(path: str | os.PathLike[str], size: int = 1 << 16, *, what: str = "run") -> bytes | None:
    """The first ``size`` decompressed bytes of an input, or None when it cannot be read.
    A pipe or FIFO is spooled (:func:`open_input`), so what is sniffed is read again."""
    try:
        with opened(path, what=what) as fh:
            head = fh.read(HEAD_BYTES)
            fh.seek(0)
            stream = open_decompressed(fh, head)
            return bytes(stream.read(size))
    except InputError:
        return None
    except DECOMPRESS_ERRORS:
        return None


def stored_head(path: str | os.PathLike[str], *, what: str = "run") -> tuple[bytes, int] | None:
    """The first stored bytes of an input (enough for :func:`compression_of`) and its
    size as stored, or None when it cannot be read."""
    try:
        with opened(path, what=what) as fh:
            head = fh.read(HEAD_BYTES)
            return head, os.fstat(fh.fileno()).st_size
    except (InputError, OSError):
        return None
