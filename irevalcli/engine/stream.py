"""Bounded-memory evaluation of a run file that is grouped by topic.

TREC runs list each topic's results together. Such a file is read in chunks;
each chunk's complete topics are ranked, labelled and scored on their own
(topics are independent), and only their per-topic values are kept. The last
topic of a chunk is carried into the next, since it may continue there. The
summary is computed once at the end over all topics in bytewise order, so the
output is byte-identical to evaluating the whole file in memory.

If a topic turns up again after its block has ended, the file is not grouped:
the caller falls back to reading it whole (more memory, same result).
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Callable, Generator, Iterator
from typing import IO, TYPE_CHECKING, Any

import numpy as np

from ..core.table import runs_of
from ..errors import DuplicateDocError, InputError
from ..io import trec as readers
from ..io.arrow import to_numpy
from ..io.source import DECOMPRESS_ERRORS, HEAD_BYTES, Tap, corrupt, is_compressed, open_decompressed
from ..io.trec import (
    Run,
    Source,
    line_too_long,
    parse_run,
)
from .evaluate import Results
from .job import Job
from .parts import Part, finish, score_part, whole_run_checks

if TYPE_CHECKING:
    import pyarrow as pa

# Measured on a 7M-line MS MARCO-like run (2 cores): 16 MiB chunks gave 3.7 s and
# 431 MiB peak against 5.0 s and 1339 MiB for reading the file whole (64 MiB chunks:
# 3.5 s, 864 MiB; 8 MiB: 3.6 s, 297 MiB), so large runs are streamed by default.
# Since the parse and the scoring got faster, 8 MiB chunks take no more CPU time than
# 16 MiB ones (`-m map -m ndcg_cut.10`: 1.60 s against 1.75 s user+sys, interleaved,
# loaded machine) and peak at 217 MiB against 299 MiB (C trec_eval 10.0: 599 MiB); 4 MiB
# chunks peak lower still (about 170 MiB) at more fixed cost per chunk.
CHUNK_BYTES = 8 << 20  # decompressed bytes parsed at a time
STREAM_THRESHOLD = 32 << 20  # run files at least this large are streamed automatically


class NotGrouped(Exception):
    """A topic reappeared after its block ended (or a lone CR ends lines): evaluate the file in memory."""


class ChunkReader:
    """Reads the file's bytes (decompressed) in chunks that end at a line end.

    :meth:`chunks` is a generator of (chunk, last); it takes, through ``send``, the
    number of physical lines in the chunk it just gave (the caller's parser counts them
    anyway; None: the reader counts them itself), so that an error found while reading
    (a NUL byte, a line too long) names its line without a second scan of every chunk.

    ``progress`` is called with the number of bytes read (as stored) as they are read;
    ``hash``: compute the SHA-256 of the bytes as stored; ``ranks``: the chunks' parser keeps
    the rank column (``--ties rank``).
    A pipe or FIFO named as a path is read once, through the spool of
    :func:`irevalcli.io.source.open_input`, like a file.
    ``path`` ``-`` reads standard input (``stdin``, else ``sys.stdin.buffer``), as it
    arrives, spooling what it reads to an unnamed temporary file for :meth:`rest`;
    its format is not known beforehand, so a first chunk that is not TREC text
    (CSV, JSON Lines, Parquet, zstd) raises :class:`NotGrouped` too.
    """

    def __init__(
        self,
        path: str,
        chunk_bytes: int = CHUNK_BYTES,
        *,
        stdin: IO[bytes] | None = None,
        spool: bool = True,
        progress: Callable[[int], None] | None = None,
        hash: bool = True,
        ranks: bool = False,
    ) -> None:
        self.hash = hash
        self.ranks = ranks
        self.path = path
        self.progress = progress
        self.chunk_bytes = chunk_bytes
        self.sha256 = ""
        self.size = 0
        self.is_stdin = path == "-"
        self.name = "<stdin>" if self.is_stdin else path
        self._stdin = stdin
        self._keep_spool = spool  # False: ``stdin`` is a spool already (read again), not spooled twice
        self._spool: IO[bytes] | None = None
        self._raw: Tap | None = None

    def _open(self) -> tuple[IO[bytes], IO[bytes] | None]:
        """The raw input and, for standard input, the spool."""
        if not self.is_stdin:
            from ..io.source import open_input

            fh = open_input(self.path, what="run")
            fh.seek(0)
            return fh, None
        import sys
        import tempfile

        from ..io.source import record_stdin

        source = self._stdin if self._stdin is not None else sys.stdin.buffer
        record_stdin(source)
        if not self._keep_spool:
            return source, None
        try:
            self._spool = tempfile.TemporaryFile(prefix="ireval-stdin-")  # noqa: SIM115  unlinked already
        except OSError:  # no temporary directory to write to: nothing read yet, read it whole
            raise NotGrouped from None
        return source, self._spool

    @property
    def interactive(self) -> bool:
        """Standard input is a terminal: typed by hand, read in the caller's thread (a Ctrl-C
        then stops a read that would otherwise block a worker thread, and so the process)."""
        if not self.is_stdin:
            return False
        import sys

        source = self._stdin if self._stdin is not None else sys.stdin.buffer
        try:
            return bool(source.isatty())
        except (AttributeError, ValueError, OSError):
            return False

    @property
    def raw_read(self) -> int:
        """Bytes read so far from the file as stored (compressed, if it is), read-ahead included."""
        return self._raw.count if self._raw is not None else 0

    @property
    def spooled(self) -> bool:
        """Whether standard input is being spooled (false before it was opened)."""
        return self._spool is not None

    def rest(self) -> IO[bytes]:
        """Standard input as it was given, from its first byte: the spooled bytes, then
        what was not read yet (after :class:`NotGrouped`, to read the run whole)."""
        assert self._spool is not None
        source = self._stdin if self._stdin is not None else __import__("sys").stdin.buffer
        spool, self._spool = self._spool, None
        read = getattr(source, "read1", None) or source.read  # one read at a time, as io.source.Tap
        while not (self._raw is not None and self._raw.eof) and (block := read(1 << 20)):
            spool.write(block)
        spool.seek(0)
        return spool

    def close(self) -> None:
        """Drop the spool (nothing to read again)."""
        if self._spool is not None:
            self._spool.close()
            self._spool = None

    def chunks(self) -> Generator[tuple[bytearray, bool], Any, None]:
        """Yields ``(data, last)``: ``data`` ends at a line end unless ``last``. Send the
        number of physical lines in ``data`` (None: the reader counts them), or ``(lines,
        again)``: the last ``again`` bytes of ``data`` (whole lines) are given once more at the
        head of the next chunk, and ``lines`` counts the lines before them."""
        fh, spool = self._open()
        try:
            yield from self._chunks(fh, spool)
        finally:
            if not self.is_stdin:
                fh.close()

    def _chunks(self, fh: IO[bytes], spool: IO[bytes] | None) -> Generator[tuple[bytearray, bool], Any, None]:
        raw = self._raw = Tap(fh, hash=self.hash, progress=self.progress, spool=spool, name=self.name)
        head = raw.head(HEAD_BYTES)
        buffered = io.BufferedReader(raw, buffer_size=1 << 20)
        sniff = self.is_stdin  # a file's format was recognised before streaming it
        if sniff and head.startswith(b"PAR1"):
            raise NotGrouped  # read whole: Parquet is not streamed
        stream: Any = open_decompressed(buffered, head)
        carry = b""  # a line begun at the end of the last block
        last = False
        lines = 0  # physical lines in the chunks given so far
        while not last:
            lead = carry
            # a line longer than a chunk is read on in blocks at least as long as what is
            # carried: its bytes are copied O(1) times each, not once a chunk
            want = max(self.chunk_bytes, len(carry))
            buf = bytearray(len(lead) + want)
            buf[: len(lead)] = lead
            try:
                n = _fill(stream, memoryview(buf)[len(lead) :])
            except DECOMPRESS_ERRORS as exc:
                raise corrupt(self.name, "run", exc) from None
            self.size += n
            last = n < want
            del buf[len(lead) + n :]
            if sniff and (last or b"\n" in buf):  # the first line is whole: is it TREC text?
                from ..io.tabular import detect

                sniff = False
                if detect(bytes(buf[: 1 << 16])) != "trec":
                    raise NotGrouped
            nul = buf.find(b"\0", len(lead))
            if nul >= 0:  # TREC text: a NUL is an error wherever it is, found before reading on
                raise InputError(self.name, "contains a NUL byte", lines + buf.count(b"\n", 0, nul) + 1)
            if not last:
                cut = buf.rfind(b"\n")
                if cut < 0:  # no line end in this block: read on, up to the limit for one line
                    if len(buf) > readers.MAX_LINE:
                        raise line_too_long(self.name, lines + 1)
                    carry = bytes(buf)
                    continue
                carry = bytes(buf[cut + 1 :])
                del buf[cut + 1 :]
            else:
                while buffered.read(1 << 20):  # hash whatever the decompressor left unread
                    pass
                self.sha256 = raw.hexdigest()
            reply = yield buf, last
            counted, again = reply if isinstance(reply, tuple) else (reply, 0)
            lines += counted if counted is not None else buf.count(b"\n")
            if again:  # the chunk's last lines lead the next chunk too (before its partial line)
                carry = bytes(buf[len(buf) - again :]) + carry


def _fill(stream: IO[bytes], view: memoryview) -> int:
    """Read into ``view`` until it is full or the data ends (a read gives nothing)."""
    got = 0
    while got < len(view):
        n = stream.readinto(view[got:])  # type: ignore[attr-defined]
        if not n:
            break
        got += n
    return got


def _last_topic_start(qid: pa.Array) -> int:
    """Row where the last topic's block begins (looks back from the end, widening)."""
    import pyarrow.compute as pc

    n = len(qid)
    last = qid[n - 1]
    width = 4096
    while True:
        lo = max(n - width, 0)
        other = np.flatnonzero(~to_numpy(pc.equal(qid.slice(lo), last)))
        if len(other):
            return lo + int(other[-1]) + 1
        if lo == 0:
            return 0
        width *= 4


def topic_batches(reader: ChunkReader, name: str) -> Generator[tuple[Run, np.ndarray, pa.Array], None, None]:
    """(run rows of complete topics, rows per topic, topic ids) from a grouped run file.

    The last topic of a chunk may go on in the next one, so its parsed rows are
    kept (zero-copy slices) and joined to the next chunk's rows of the same topic
    when it ends; the rows before it are handed on as a zero-copy slice. Raises :class:`NotGrouped` when a topic reappears
    after its block ended.
    """
    chunks = reader.chunks()
    try:
        yield from _topic_batches(chunks, name, reader.ranks)
    finally:
        chunks.close()  # the file and the decompressor, now, whatever happened


def _first_topic_end(qid: pa.Array) -> int:
    """Row where the first topic's block ends (looks forward from the start, widening)."""
    import pyarrow.compute as pc

    n = len(qid)
    first = qid[0]
    width = 4096
    while True:
        hi = min(width, n)
        other = np.flatnonzero(~to_numpy(pc.equal(qid.slice(0, hi), first)))
        if len(other):
            return int(other[0])
        if hi == n:
            return n
        width *= 4


def _topic_batches(
    chunks: Generator[tuple[bytearray, bool], Any, None], name: str, ranks: bool
) -> Iterator[tuple[Run, np.ndarray, pa.Array]]:
    seen: set[bytes] = set()
    base = 0  # physical lines of the file before the current chunk
    reply: Any = None  # told to the reader: the chunk's lines, and its bytes to give again
    # The rows of the last, possibly unfinished, topic. A short one (at most 1/8 of the
    # chunk's rows: a run's topic) is parsed again at the head of the next chunk: its bytes
    # are given again by the reader, and the chunk's complete topics go on as a zero-copy
    # slice. A long one is kept as parsed pieces, joined when it ends: each byte of the file
    # is parsed at most twice, however many chunks a topic spans.
    pending: list[Run] = []
    while True:
        data, last = chunks.send(reply)
        run = _parse_chunk(data, name, base, ranks)  # type: ignore[arg-type]  # a bytearray reads as bytes
        counted = run.lines or data.count(b"\n")  # non-last chunks end in a line end
        again_lines = again = 0
        start = len(run) if last or not len(run) else _last_topic_start(run.qid)
        short = 0 < start < len(run) and not pending and (len(run) - start) * 8 <= len(run)
        if short:
            again_lines = counted - int(run.lineno[start] - base) + 1  # from its first line on
            again = len(data) - _line_start(data, again_lines)
        del data
        if len(run):
            if short:
                yield _checked(run.slice(0, start), seen)
            elif start == 0:  # the chunk is one topic: it continues the pending one, or ends it
                if pending and pending[0].qid[0].as_py() != run.qid[0].as_py():
                    yield _checked(_concat(pending), seen)
                    pending = []
                pending.append(run)
            else:
                done = 0  # rows of the chunk that finish the pending topic: joined to it
                if pending and pending[0].qid[0].as_py() == run.qid[0].as_py():
                    done = _first_topic_end(run.qid)
                    pending.append(run.slice(0, done))
                # one batch a chunk: the finished pending topic and the chunk's own complete
                # topics together (a zero-copy slice when nothing is pending). Two batches, one
                # of them a single topic, cost a second table and every measure's fixed cost:
                # 0.3 s on a 7M-line run with -m all_trec.
                pieces = [*pending, run.slice(done, start)] if done < start else pending
                if pieces:
                    yield _checked(_concat(pieces), seen)
                pending = [_own(run.slice(start, len(run)))] if start < len(run) else []
        if last:
            if pending:
                yield _checked(_concat(pending), seen)
            return
        reply = (counted - again_lines, again)
        base += counted - again_lines
        del run


def _line_start(data: bytearray, lines: int) -> int:
    """Where the last ``lines`` lines of ``data`` (which ends at a line end) begin."""
    import numpy as np

    tail = min(len(data), 1 << 16)
    width = 4096 + 2 * lines * (tail // max(data.count(b"\n", len(data) - tail), 1) + 1)  # twice their bytes, guessed
    while True:
        lo = max(len(data) - width, 0)
        ends = np.flatnonzero(np.frombuffer(memoryview(data)[lo:], dtype=np.uint8) == 10)
        if len(ends) > lines:  # the line end before them
            return lo + int(ends[-lines - 1]) + 1
        if lo == 0:
            return 0
        width *= 4


def _checked(batch: Run, seen: set[bytes]) -> tuple[Run, np.ndarray, pa.Array]:
    """``batch`` with its topic blocks; :class:`NotGrouped` if a topic appears twice."""
    lengths, topics = runs_of(batch.qid)
    names = topics.to_pylist()
    if len(set(names)) != len(names) or not seen.isdisjoint(names):
        raise NotGrouped
    seen.update(names)
    return batch, lengths, topics


def _own(run: Run) -> Run:
    """A copy of the rows of the slice ``run``, so the whole chunk they came from can go
    (each row is copied at most once: only a chunk's unfinished last topic is)."""
    import pyarrow as pa

    return Run(
        run.name,
        run.sha256,
        pa.concat_arrays([run.qid]),
        pa.concat_arrays([run.docno]),
        run.score.copy(),
        run.lineno.copy(),
        run.runid,
        rank=None if run.rank is None else run.rank.copy(),
    )


def _concat(pieces: list[Run]) -> Run:
    """The rows of ``pieces`` in order, as one run (no copy for one piece)."""
    if len(pieces) == 1:
        return pieces[0]
    import pyarrow as pa

    def arrays(col: str) -> pa.Array:
        parts = [getattr(p, col) for p in pieces]
        if len({a.type for a in parts}) > 1:  # the fast and the tokenizing parser differ
            parts = [a.cast(pa.large_binary()) for a in parts]
        return pa.concat_arrays(parts)

    last = pieces[-1]
    ranks = [p.rank for p in pieces]
    rank: np.ndarray | None = None if any(r is None for r in ranks) else np.concatenate(ranks)  # type: ignore[arg-type]
    return Run(
        last.name,
        last.sha256,
        arrays("qid"),
        arrays("docno"),
        np.concatenate([p.score for p in pieces]),
        np.concatenate([p.lineno for p in pieces]),
        last.runid,
        rank=rank,
    )


_DONE = object()


class prefetch:
    """Run the iterator ``items`` in a worker thread, ``depth`` items ahead.

    Reading and parsing the next chunk (decompression, Arrow's CSV parser) mostly
    runs without the GIL, so it overlaps with the evaluation of the current
    chunk on the other core. Items, and an exception the iterator raises, come
    out in the same order as without the thread, so the results cannot depend
    on it. The worker runs in a copy of the caller's context (the reading session
    of :func:`irevalcli.io.source.reading_session`, which finds a pipe's spool, is the
    caller's).

    Use it as a context manager: leaving the block, normally or by an exception
    raised on either side, stops the worker, closes ``items`` (its file and
    decompressor) and joins the thread *before* the exception goes on. A worker
    still inside Arrow's C++ code when the interpreter shuts down is killed by
    Python while it unwinds native frames, which aborts the process
    ("terminate called without an active exception", exit 134) after the error
    line was printed; so the thread is never left running, and it is not a
    daemon thread (the interpreter would wait for it rather than kill it).
    """

    def __init__(self, items: Iterator[Any], depth: int = 1) -> None:
        import contextvars
        import queue
        import threading

        self._items = items
        self._q: queue.Queue = queue.Queue(maxsize=depth)
        # The worker starts on an item only when there is room for it: a slot is taken
        # before the item is read and given back when the caller takes an item. Putting
        # into the full queue instead would hold one more parsed chunk (the queue's, the
        # caller's and the one waiting to be put): a chunk's worth of peak memory.
        self._slots = threading.Semaphore(depth)
        self._stop = threading.Event()
        self._worker = threading.Thread(
            target=contextvars.copy_context().run, args=(self._work,), name="ireval-prefetch", daemon=False
        )
        self._started = False

    def _put(self, item: Any) -> bool:
        import queue

        while not self._stop.is_set():
            try:
                self._q.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def _slot(self) -> bool:
        while not self._stop.is_set():
            if self._slots.acquire(timeout=0.05):
                return True
        return False

    def _work(self) -> None:
        try:
            while self._slot():
                try:
                    item = next(self._items)
                except StopIteration:
                    break
                if not self._put((item, None)):
                    return
            else:
                return
        except BaseException as exc:
            self._put((_DONE, exc))
            return
        finally:
            close = getattr(self._items, "close", None)
            if close is not None:
                close()  # the generator's file and decompressor, in the thread that runs it
        self._put((_DONE, None))

    def __enter__(self) -> Iterator[Any]:
        self._worker.start()
        self._started = True
        return self._consume()

    def _consume(self) -> Iterator[Any]:
        while True:
            item, exc = self._q.get()
            self._slots.release()
            if item is _DONE:
                if exc is not None:
                    raise exc
                return
            yield item

    def close(self) -> None:
        """Stop the worker and wait for it (it finishes the item it is reading)."""
        import queue

        self._stop.set()
        if not self._started:
            return
        while self._worker.is_alive():
            try:  # make room, so a worker blocked on a full queue sees the stop at once
                self._q.get_nowait()
            except queue.Empty:
                pass
            self._worker.join(timeout=0.05)

    def __exit__(self, *exc: object) -> None:
        self.close()


def parse_chunk(chunk: bytes, name: str, lines_before: int, *, ranks: bool = False) -> Run:
    """A chunk's rows, numbered by the file's physical lines (``lines_before`` precede it;
    ``ranks``: with the rank column). :class:`NotGrouped` for lone CR line ends and for a
    malformed line (the whole file's parser then names the line it would name)."""
    return _parse_chunk(chunk, name, lines_before, ranks)


def _parse_chunk(chunk: bytes, name: str, lines_before: int, ranks: bool) -> Run:
    from ..io.trec import has_bare_cr

    if has_bare_cr(chunk):
        raise NotGrouped  # lone CR line ends: read the file whole, where they become line ends
    try:
        run = parse_run(Source(name=name, data=chunk, sha256=""), allow_empty=True, ranks=ranks)
    except InputError:
        # The whole file's parser checks every line's field count before any score, and
        # hints from line 1: the first bad chunk need not hold the line it names (a later
        # line may lack fields). Read the file whole, to say exactly what it says.
        raise NotGrouped from None
    run.lineno = run.lineno + lines_before
    return run


class Begun:
    """A run file's stream begun before its judgements are read: its worker reads and parses
    the first chunk meanwhile (the reading of a regular file, not standard input, with no one
    watching its progress). Whatever goes wrong there, the file missing included, is raised
    where the chunk is taken, in its turn, after the judgements' own errors. :meth:`close`
    stops the worker (whether the run was evaluated or not); as a context manager it gives
    the batches and closes on leaving."""

    def __init__(self, path: str, *, chunk_bytes: int = CHUNK_BYTES, hash: bool = True, ranks: bool = False) -> None:
        self.reader = ChunkReader(path, chunk_bytes, hash=hash, ranks=ranks)
        self._worker = prefetch(topic_batches(self.reader, self.reader.name))
        self.batches = self._worker.__enter__()  # the worker starts now

    def close(self) -> None:
        self._worker.close()
        self.reader.close()

    def __enter__(self) -> Iterator[tuple[Run, np.ndarray, pa.Array]]:
        return self.batches

    def __exit__(self, *exc: object) -> None:
        self.close()


def evaluate_stream(
    job: Job,
    path: str,
    *,
    chunk_bytes: int = CHUNK_BYTES,
    stdin: IO[bytes] | None = None,
    progress: Callable[[int], None] | None = None,
    hash: bool = True,
    ranks: bool = False,
    begun: Begun | None = None,
) -> tuple[Results, str]:
    """Evaluate the run at ``path`` (``-``: standard input, or ``stdin``) chunk by chunk;
    returns the results and the run's SHA-256 ("" unless ``hash``). ``progress`` is called
    with the number of bytes read (as stored) as the file is read (from the reading thread).
    ``ranks``: read the rank column (``--ties rank``).

    Raises :class:`NotGrouped` when the file is not grouped by topic; for standard
    input its ``rest`` is then the whole input again (spooled), to be read whole.
    ``begun``: the stream of ``path`` begun already (:class:`Begun`; the other arguments it
    was begun with are its own).
    """
    reader = (
        begun.reader
        if begun is not None
        else ChunkReader(path, chunk_bytes, stdin=stdin, progress=progress, hash=hash, ranks=ranks)
    )
    try:
        return _evaluate_stream(job, reader, begun)
    except NotGrouped as exc:
        exc.rest = reader.rest() if reader.is_stdin and reader.spooled else None  # type: ignore[attr-defined]
        raise
    finally:
        reader.close()


def _evaluate_stream(job: Job, reader: ChunkReader, begun: Begun | None = None) -> tuple[Results, str]:
    import pyarrow as pa

    path = reader.name
    parts: list[Part] = []
    seen: list[pa.Array] = []
    runid = ""
    rows = 0
    duplicate: DuplicateDocError | None = None  # the first is the earliest line: topics come in file order
    source: Any
    if begun is not None:
        source = begun
    else:
        batched = topic_batches(reader, path)
        source = contextlib.closing(batched) if reader.interactive else prefetch(batched)
    with source as batches:
        for batch, lengths, topics in batches:
            rows += len(batch)
            runid = batch.runid
            seen.append(topics)
            if duplicate is not None:  # only the topics are needed now, for the checks made before it
                continue
            try:
                part = score_part(job, batch, run_blocks=(lengths, topics), topics=topics)
            except DuplicateDocError as exc:
                duplicate = exc
                continue
            if part is not None:
                parts.append(part)
    if rows == 0:
        if reader.size == 0:
            raise InputError(path, "the run file is empty")
        raise InputError(path, "the run file has no results (only comments or blank lines)")
    # as the whole run's table: a missing topic, then a judgement given twice, before a duplicate document
    whole_run_checks(job, pa.concat_arrays(seen), path=path, duplicate=duplicate)
    results = finish(job, parts, pa.concat_arrays(seen), path=path, runid=runid)
    return results, reader.sha256


def should_stream(path: object, stream: bool | None) -> bool:
    """Stream when asked, or automatically for a large regular file, any compressed one
    and standard input (``-``).

    The size on disk says nothing about a compressed file's size in memory (a 260 KB
    gzip can expand to 256 MiB), so every gzip, bzip2, xz or zstd run is streamed; the
    chunks bound its memory whatever it expands to. Standard input has no size and
    can hold anything: it is streamed too (a run that is not grouped by topic, or
    not TREC text, is then read whole from what was spooled plus the rest).
    """
    if not isinstance(path, (str, os.PathLike)):
        return False
    if stream is not None:
        return bool(stream)
    if os.fspath(path) == "-":
        return True
    from ..io.source import stored_head

    found = stored_head(path)  # a pipe or FIFO named as a path: spooled, then sized like a file
    if found is None:
        return False
    head, size = found
    return size >= STREAM_THRESHOLD or is_compressed(head)
