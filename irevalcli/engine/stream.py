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
from collections.abc import Callable, Generator, Iterator, Sequence
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
# A stream's first chunk, then twice as large each time up to CHUNK_BYTES: the main thread, done
# with the judgements, waited 40-60 ms for a whole first chunk's read and parse (7M-line run,
# timestamps: its first topics were scored at 252-280 ms, now at 210-215).
FIRST_CHUNK_BYTES = 1 << 20
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

    def chunks(
        self, *, cut_topics: bool = False, first: int | None = None
    ) -> Generator[tuple[bytearray, bool, bool], None, None]:
        """Yields ``(data, last, whole)``: ``data`` ends at a line end unless ``last``.
        ``first``: the first chunk's size, doubled for each next one up to ``chunk_bytes``.
        ``cut_topics``: a chunk whose last topic is short ends before it, where the bytes
        say it begins (:func:`_last_topic_at`), and that topic leads the next chunk; ``whole``
        says a chunk was so cut (its topics end in it). The errors it raises about a line (a NUL
        byte, a line too long) number lines from the first of the chunk being read: the caller
        knows the lines before it (:func:`in_file`)."""
        fh, spool = self._open()
        try:
            yield from self._chunks(fh, spool, cut_topics, first)
        finally:
            if not self.is_stdin:
                fh.close()

    def _chunks(
        self, fh: IO[bytes], spool: IO[bytes] | None, cut_topics: bool, first: int | None
    ) -> Generator[tuple[bytearray, bool, bool], None, None]:
        raw = self._raw = Tap(fh, hash=self.hash, progress=self.progress, spool=spool, name=self.name)
        head = raw.head(HEAD_BYTES)
        buffered = io.BufferedReader(raw, buffer_size=1 << 20)
        sniff = self.is_stdin  # a file's format was recognised before streaming it
        if sniff and head.startswith(b"PAR1"):
            raise NotGrouped  # read whole: Parquet is not streamed
        stream: Any = open_decompressed(buffered, head)
        carry = b""  # a line begun at the end of the last block (and, cutting, the topic it ends)
        last = False
        while not last:
            lead = carry
            # a line longer than a chunk is read on in blocks at least as long as what is
            # carried: its bytes are copied O(1) times each, not once a chunk
            size = self.chunk_bytes if first is None else min(first, self.chunk_bytes)
            if first is not None:
                first = first * 2 if first * 2 < self.chunk_bytes else None
            want = max(size, len(carry))
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
            whole = False
            if not last:
                cut = buf.rfind(b"\n")
                if cut < 0:  # no line end in this block: read on, up to the limit for one line
                    # (the line begins the chunk: its line 1, which the consumer renumbers)
                    if buf.find(b"\0") >= 0:  # TREC text: a NUL is an error wherever it is
                        raise InputError(self.name, "contains a NUL byte", 1)
                    if len(buf) > readers.MAX_LINE:
                        raise readers.line_too_long(self.name, 1)
                    carry = bytes(buf)
                    continue
                at = _last_topic_at(buf, cut + 1) if cut_topics else None
                whole = at is not None
                cut = at if at is not None else cut + 1
                carry = bytes(buf[cut:])
                del buf[cut:]
            else:
                while buffered.read(1 << 20):  # hash whatever the decompressor left unread
                    pass
                self.sha256 = raw.hexdigest()
            yield buf, last, whole


def in_file(exc: InputError, base: int) -> InputError:
    """The error ``exc`` about a chunk, which numbers lines from the chunk's first, numbering
    them from the file's (``base`` lines precede the chunk); as it is without a line."""
    return exc if exc.line is None or not base else type(exc)(exc.path, exc.detail, base + exc.line)


def _last_topic_at(data: bytearray, end: int) -> int | None:
    """Where the lines of the last topic of ``data[:end]`` (whole lines) begin, as the bytes
    say: the lines that start with the last line's first field and a blank. None when that is
    not sure (the last line, or the line before them, starts with a blank or is a comment or
    blank line, which the tokenizer reads otherwise), when they begin the data or when they
    are more than an eighth of it (a long topic: its rows are joined when parsed instead).
    A wrong answer costs time, never a result: a topic found in two batches makes the run be
    read whole (:class:`NotGrouped`)."""
    start = data.rfind(b"\n", 0, end - 1) + 1  # the last line
    qid_end = start
    while qid_end < end and data[qid_end] > 32:
        qid_end += 1
    if qid_end == start or qid_end - start > 256 or data[qid_end] not in b" \t" or data[start] == ord("#"):
        return None  # a blank or comment line, or one that starts with a blank
    key = np.frombuffer(bytes(data[start:qid_end]), dtype=np.uint8)
    limit = max(end // 8, 1)
    width = 1 << 16
    while True:
        lo = max(end - width, 0)
        view = np.frombuffer(memoryview(data)[lo:end], dtype=np.uint8)
        # line starts in the window (after each LF but the last; the window's first byte too
        # when it is the data's)
        starts = np.flatnonzero(view[:-1] == 10) + 1
        if lo == 0:
            starts = np.concatenate(([0], starts))
        room = starts + len(key) < len(view)
        same = room.copy()
        for j, byte in enumerate(key.tolist()):
            same[room] &= view[starts[room] + j] == byte
        same[room] &= np.isin(view[starts[room] + len(key)], (9, 32))
        other = np.flatnonzero(~same)
        if len(other):
            before = int(starts[other[-1]])  # the last line of another topic
            if view[before] <= 32 or view[before] == ord("#"):
                return None
            at = lo + int(starts[other[-1] + 1])
            return at if end - at <= limit else None
        if lo == 0 or width >= limit:
            return None  # the topic begins the data, or is long
        width *= 4


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


# in_order's items: rows of whole topics, their topic blocks (lengths, ids) and what a worker made
# of them (ParsedChunks.score_with; None when it did not)
Batch = tuple[Run, "np.ndarray", "pa.Array", "Scored | None"]
Parsed = tuple[Run, int, bool, bool]  # a chunk's rows, its physical lines, last, whole (topics end in it)
# ParsedChunks' items: Parsed's, then the bytes of text parsed, the bytes of the file read up to
# the chunk's end (ChunkReader.raw_read then: compressed, if it is) and what ``then`` made of the
# rows (None without it; with it the rows are None: see ParsedChunks.then), or what ``score_with``
# made of them (the rows kept)
Taken = tuple[Any, int, bool, bool, int, int, Any]


def topic_batches(reader: ChunkReader, name: str) -> Generator[Batch, None, None]:
    """:data:`Batch` items (run rows of complete topics, rows per topic, topic ids, and None:
    nothing scored them) from a grouped run file, its chunks parsed in this thread
    (:class:`ParsedChunks` parses them in two, and may score them there).

    A chunk's short last topic is carried to the next chunk as bytes; a long one may go on in
    the next chunk, so its parsed rows are kept (zero-copy slices) and joined to the next
    chunk's rows of the same topic when it ends. Raises :class:`NotGrouped` when a topic
    reappears after its block ended.
    """
    chunks = reader.chunks(cut_topics=True)

    def parsed() -> Iterator[Parsed]:
        for data, last, whole in chunks:
            yield _parsed(data, name, reader.ranks, last, whole)

    try:
        yield from in_order(parsed(), name)
    finally:
        chunks.close()  # the file and the decompressor, now, whatever happened


def _parsed(data: bytearray, name: str, ranks: bool, last: bool, whole: bool, threads: bool | None = None) -> Parsed:
    run = _parse_chunk(data, name, 0, ranks, threads)  # type: ignore[arg-type]  # a bytearray reads as bytes
    return run, run.lines or data.count(b"\n"), last, whole  # non-last chunks end in a line end


def in_order(items: Iterator[Sequence[Any]], name: str) -> Iterator[Batch]:
    """The batches of complete topics of the parsed chunks ``items`` (:data:`Parsed` or
    :data:`Taken`: their first four fields are read; their lines numbered
    from each chunk's first: renumbered here, in file order, as are the lines their errors
    name)."""
    seen: set[bytes] = set()
    base = 0  # physical lines of the file before the current chunk
    # The rows of the last topic of a chunk that did not end with whole topics (one longer
    # than an eighth of a chunk, or one the bytes did not tell for sure): kept as parsed
    # pieces, joined when it ends, so each byte of the file is parsed once.
    pending: list[Run] = []
    while True:
        try:
            item = next(items)
        except StopIteration:  # (a reader that gave no last chunk: stopped)
            return
        except InputError as exc:
            raise in_file(exc, base) from None
        run: Run = item[0]
        counted, last, whole = item[1], item[2], item[3]
        # what a worker made of a chunk of whole topics (ParsedChunks.score_with), when nothing
        # is pending (always so: the chunk before it ended with whole topics)
        scored = item[6] if len(item) > 6 and not pending else None
        if base:
            run.lineno += base
        base += counted
        if scored is not None:
            yield _checked(run, seen, scored)
        elif len(run):
            start = len(run) if last or whole else _last_topic_start(run.qid)
            if start == 0:  # the chunk is one topic: it continues the pending one, or ends it
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
        del run


class ParsedChunks:
    """The reader's chunks, cut at topic boundaries, parsed in ``workers`` threads (two; one on a
    single CPU) and given in file order (:data:`Taken`; a chunk's error is raised in its turn).
    ``cut_topics``: chunks end where their topics do (:meth:`ChunkReader.chunks`), and a first
    chunk with a topic in two blocks is :class:`NotGrouped` as soon as it is parsed, so no more is
    read ahead (any chunk's error stops the reading: the consumer stops there). ``follow``: the
    workers also do the consumer's work on the rows of every chunk after the first, which the
    consumer names when it has seen the first (:meth:`then`; the out-of-core pass splits them by
    partition so).

    A worker takes the next chunk from the reader (one at a time), then parses it beside the
    others, each with one of Arrow's threads: on two cores, two chunks parsed at once and the
    evaluation of a third keep both busy, where one chunk parsed on Arrow's two threads left a
    core idle whenever the reading thread ran Python. At most ``ahead`` chunks are read and not
    yet taken (the memory of that many chunks and their rows): one more than there are workers,
    so that one can start on the next chunk while another finishes the one the consumer waits
    for (as many as there are workers left a core idle then: 1.09 -> 1.03-1.06 s median on the
    7M-line run, 10 interleaved runs, about 3 MiB more at the peak).
    ``score_with``: once the consumer says how (its judgements are read by then), a worker also
    scores the rows of each chunk that holds whole topics (the chunk before it ended with whole
    topics, and it does too: with ``cut_topics``, nearly every chunk), so the consumer only
    collects the parts. The command then has two busy threads on two cores, not three: the
    same 8 MiB chunks parsed in a loop took 24 ms of CPU each on one thread, 26-27 ms on two
    and 30-34 ms on three, and the 7M-line run took 5-10% longer with the consumer scoring.
    The workers run in copies of the caller's context (the reading session of
    :func:`irevalcli.io.source.reading_session`, which finds a pipe's spool, is the caller's).

    Use it as a context manager: leaving the block stops the workers, waits for them (each
    finishes the chunk it parses), then closes the reader's file. Workers are not daemon
    threads, for the reason :class:`prefetch` gives.
    """

    def __init__(
        self,
        reader: ChunkReader,
        name: str,
        *,
        workers: int | None = None,
        ahead: int | None = None,
        cut_topics: bool = True,
        follow: bool = False,
    ) -> None:
        import contextvars
        import threading

        from ..machine import cpus

        workers = workers or min(2, cpus())  # (one CPU: one worker, the memory of fewer chunks)

        self._reader = reader
        # a stream's first chunks grow from FIRST_CHUNK_BYTES: the evaluation begins as soon as the
        # judgements are read, not a whole chunk's read and parse later (the out-of-core pass
        # plans on its first chunk: a whole one)
        self._chunks = reader.chunks(cut_topics=cut_topics, first=FIRST_CHUNK_BYTES if cut_topics else None)
        self._grouped = cut_topics  # the first chunk's topics are checked where it is parsed
        self._name = name
        self._ranks = reader.ranks
        self._read = threading.Lock()  # one worker at a time takes a chunk from the reader
        self._ready = threading.Condition()
        self._done: dict[int, tuple[Any, BaseException | None]] = {}
        self._next = 0  # the number of the next chunk to read
        self._end: int | None = None  # the number after the last chunk (or the one that failed)
        self._slots = threading.Semaphore(ahead or workers + 1)
        self._stop = threading.Event()
        # follow: what to do with the rows of every chunk after the first, once the consumer has
        # seen the first (:meth:`then`); the workers wait for that word before they give one
        self._then: Callable[[Run], Any] | None = None
        # score: what the workers do with the rows of a chunk that holds whole topics, once the
        # consumer has said it (:meth:`score_with`); clean: the next chunk read begins a topic
        self._score: Callable[[Run], Any] | None = None
        self._clean = True
        self._decided = threading.Event()
        if not follow:
            self._decided.set()
        self._workers = [
            threading.Thread(target=contextvars.copy_context().run, args=(self._work,), name="ireval-parse")
            for _ in range(workers)
        ]
        for w in self._workers:
            w.start()

    def _slot(self) -> bool:
        return _acquire_unless(self._slots, self._stop)

    def _work(self) -> None:
        while self._slot():
            with self._read:
                if self._end is not None or self._stop.is_set():
                    self._slots.release()
                    return
                seq = self._next
                self._next += 1
                try:
                    data, last, whole = next(self._chunks)
                except StopIteration:  # (a reader always ends with a last chunk)
                    self._finish(seq, None)
                    return
                except BaseException as exc:
                    self._finish(seq, exc)
                    return
                if last:
                    self._end = seq + 1
                clean, self._clean = self._clean, whole or last
                raw = self._reader.raw_read  # (the file's bytes read up to this chunk's end)
            if self._stop.is_set():
                return  # (not taken: nothing waits for it)
            size = len(data)
            item: Taken | None = None
            error: BaseException | None = None
            try:
                parsed = _parsed(data, self._name, self._ranks, last, whole, threads=False)
            except BaseException as exc:
                error = exc
            del data  # (parsed: the bytes go before the work on the rows)
            if error is None:
                try:
                    item = self._after_parse(seq, parsed, size, raw, clean)
                except BaseException as exc:
                    error = exc
            if error is not None:
                self._failed(seq)
            with self._ready:
                self._done[seq] = (item, error)
                self._ready.notify_all()

    def _after_parse(self, seq: int, parsed: Parsed, size: int, raw: int, clean: bool = False) -> Taken:
        """Chunk ``seq`` as the consumer takes it: its first chunk's topics checked, the later
        chunks' rows given to :meth:`then`'s function, once it is known."""
        run, lines, last, whole = parsed
        if seq == 0 and self._grouped and len(run) and not _may_be_grouped(run.qid):
            raise NotGrouped  # (said here, the rest is not read ahead: see _failed)
        if seq > 0 and len(run) and _wait_unless(self._decided, self._stop) and self._then is not None:
            return None, lines, last, whole, size, raw, self._then(run)  # (the rows: taken by then)
        score = self._score
        if clean and (whole or last) and len(run) and score is not None and not self._stop.is_set():
            return run, lines, last, whole, size, raw, score(run)
        return run, lines, last, whole, size, raw, None

    def score_with(self, score: Callable[[Run], Any]) -> None:
        """``score(rows)``: what the workers do from now on with the rows of each chunk that holds
        whole topics and begins a topic (its result is the chunk's ``followed``, its rows kept;
        the lines of the rows are numbered from the chunk's first: see :class:`Scored`)."""
        self._score = score

    def then(self, follow: Callable[[Run], Any] | None) -> None:
        """``follow(rows)`` is what the workers do with the rows of every chunk after the first
        (its result is the chunk's ``followed``, its rows then None); None: nothing. Said once,
        by the consumer of a ``follow=True`` stream, when it has seen the first chunk."""
        self._then = follow
        self._decided.set()

    def _failed(self, seq: int) -> None:
        """Chunk ``seq`` failed: no chunk after it is read (the consumer stops at its error)."""
        with self._read:
            if self._end is None or self._end > seq + 1:
                self._end = seq + 1

    def _finish(self, seq: int, error: BaseException | None) -> None:
        """The reader ended (or failed: ``error``) at chunk ``seq``, under the reading lock."""
        self._end = seq if error is None else seq + 1
        with self._ready:
            if error is not None:
                self._done[seq] = (None, error)
            self._ready.notify_all()

    def __iter__(self) -> Iterator[Taken]:
        seq = 0
        while True:
            with self._ready:
                while seq not in self._done:
                    if self._end is not None and seq >= self._end:
                        return
                    if not any(w.is_alive() for w in self._workers) and seq not in self._done:
                        # (a worker records every chunk it takes or its error: cannot happen)
                        raise RuntimeError("the run's parsing threads ended without its chunk")  # pragma: no cover
                    self._ready.wait(0.05)
                item, error = self._done.pop(seq)
            self._slots.release()
            if error is not None:
                raise error
            yield item
            seq += 1

    def close(self) -> None:
        """Stop the workers, wait for them, close the reader's file."""
        self._stop.set()
        for w in self._workers:
            w.join()
        self._done.clear()
        self._chunks.close()

    def __enter__(self) -> Iterator[Batch]:
        return in_order(iter(self), self._name)

    def __exit__(self, *exc: object) -> None:
        self.close()


def _checked(batch: Run, seen: set[bytes], scored: Any = None) -> Batch:
    """``batch`` with its topic blocks; :class:`NotGrouped` if a topic appears twice."""
    lengths, topics = runs_of(batch.qid) if scored is None else (scored.lengths, scored.topics)
    names = topics.to_pylist()
    if len(set(names)) != len(names) or not seen.isdisjoint(names):
        raise NotGrouped
    seen.update(names)
    return batch, lengths, topics, scored


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


def _may_be_grouped(qid: pa.Array) -> bool:
    """False when a topic has two blocks of rows in ``qid`` (a chunk's topic ids): a run out of
    topic order, found as its first chunk is parsed (a shuffled run's first chunk holds
    thousands of such topics, whose ids the consumer's check would make into Python objects)."""
    import pyarrow.compute as pc

    _, topics = runs_of(qid)
    return len(topics) < 2 or int(pc.count_distinct(topics).as_py()) == len(topics)


def _wait_unless(event: Any, stop: Any) -> bool:
    """Wait for ``event``; False, without it, once ``stop`` (an event) is set."""
    while not stop.is_set():
        if event.wait(0.05):
            return True
    return False


def _acquire_unless(slots: Any, stop: Any) -> bool:
    """Take one of ``slots`` (a semaphore), waiting until one is free; False, without one, once
    ``stop`` (an event) is set: a worker waiting for room sees a stop within 50 ms."""
    while not stop.is_set():
        if slots.acquire(timeout=0.05):
            return True
    return False


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
        return _acquire_unless(self._slots, self._stop)

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


def _parse_chunk(chunk: bytes, name: str, lines_before: int, ranks: bool, threads: bool | None = None) -> Run:
    """A chunk's rows, numbered by the file's physical lines (``lines_before`` precede it;
    ``ranks``: with the rank column). :class:`NotGrouped` for lone CR line ends and for a
    malformed line (the whole file's parser then names the line it would name); an
    :class:`InputError` for a NUL byte, naming its line."""
    from ..io.trec import fast_run, has_bare_cr

    src = Source(name=name, data=chunk, sha256="")
    # Arrow's parser takes a plain chunk (its checks find any NUL, CR or other control byte
    # in the same pass); only a chunk it does not take is scanned for what is wrong
    run = fast_run(src, ranks=ranks, release=False, threads=threads) if chunk else None
    if run is None:
        nul = chunk.find(b"\0")
        if nul >= 0:  # TREC text: a NUL is an error wherever it is, found before reading on
            raise InputError(name, "contains a NUL byte", lines_before + chunk.count(b"\n", 0, nul) + 1)
        if has_bare_cr(chunk):
            raise NotGrouped  # lone CR line ends: read the file whole, where they become line ends
        try:
            run = parse_run(src, allow_empty=True, ranks=ranks, fast=False)
        except InputError:
            # The whole file's parser checks every line's field count before any score, and
            # hints from line 1: the first bad chunk need not hold the line it names (a later
            # line may lack fields). Read the file whole, to say exactly what it says.
            raise NotGrouped from None
    if lines_before:
        run.lineno += lines_before
    return run


class Begun:
    """A run file's stream begun before its judgements are read: its workers read and parse
    the first chunks meanwhile (the reading of a regular file, not standard input, with no one
    watching its progress). Whatever goes wrong there, the file missing included, is raised
    where the chunk is taken, in its turn, after the judgements' own errors. :meth:`close`
    stops the workers (whether the run was evaluated or not); as a context manager it gives
    the batches and closes on leaving."""

    def __init__(self, path: str, *, chunk_bytes: int = CHUNK_BYTES, hash: bool = True, ranks: bool = False) -> None:
        self.reader = ChunkReader(path, chunk_bytes, hash=hash, ranks=ranks)
        self._parsed = ParsedChunks(self.reader, self.reader.name)  # the workers start now

    def close(self) -> None:
        self._parsed.close()
        self.reader.close()

    def score_with(self, score: Callable[[Run], Any]) -> None:
        """:meth:`ParsedChunks.score_with`."""
        self._parsed.score_with(score)

    def __enter__(self) -> Iterator[Batch]:
        return self._parsed.__enter__()

    def __exit__(self, *exc: object) -> None:
        self.close()


class Scored:
    """A chunk of whole topics scored by a worker (:func:`_scorer`): its topic blocks and its
    part (None: no topic judged), or ``failed``: scoring raised. The worker numbers the chunk's
    lines from its first (the lines before it are counted in file order, by the consumer), and
    errors must come in file order: so the consumer scores a failed chunk again in its turn, and
    raises what the whole run's evaluation raises, naming the file's lines."""

    __slots__ = ("failed", "lengths", "part", "topics")

    def __init__(self, lengths: np.ndarray, topics: pa.Array, part: Part | None, failed: bool = False) -> None:
        self.lengths, self.topics, self.part, self.failed = lengths, topics, part, failed


def _scorer(job: Job) -> Callable[[Run], Scored]:
    """What :class:`ParsedChunks`' workers do with a chunk of whole topics: :func:`score_part`."""

    def score(run: Run) -> Scored:
        lengths, topics = runs_of(run.qid)
        try:
            return Scored(lengths, topics, score_part(job, run, run_blocks=(lengths, topics), topics=topics))
        except Exception:  # (scored again by the consumer, which raises it in its turn)
            return Scored(lengths, topics, None, failed=True)

    return score


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
        begun.score_with(_scorer(job))
    else:
        if reader.interactive:
            source = contextlib.closing(topic_batches(reader, path))
        else:
            source = ParsedChunks(reader, path)
            source.score_with(_scorer(job))
    with source as batches:
        for batch, lengths, topics, scored in batches:
            rows += len(batch)
            runid = batch.runid
            seen.append(topics)
            if duplicate is not None:  # only the topics are needed now, for the checks made before it
                continue
            if scored is not None and not scored.failed:
                if scored.part is not None:
                    parts.append(scored.part)
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
