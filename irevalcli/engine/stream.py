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

import bz2
import gzip
import hashlib
import io
import lzma
import os
import zlib
from collections.abc import Generator, Iterator
from dataclasses import replace
from typing import IO, TYPE_CHECKING, Any

import numpy as np

from ..core.table import EvalOptions, EvalTable, build_table, check_qrels_duplicates, runs_of
from ..errors import InputError, MissingTopicError, NoQueriesError
from ..io import trec as readers
from ..io.arrow import binary_array, to_numpy
from ..io.trec import (
    GZIP_MAGIC,
    XZ_MAGIC,
    Qrels,
    Run,
    Source,
    ZScores,
    is_bzip2,
    line_too_long,
    parse_run,
)
from ..measures.names import Request
from .evaluate import Results, TopicColumn, compute_topics, concat_topics, summarize

if TYPE_CHECKING:
    import pyarrow as pa

# Measured on a 7M-line MS MARCO-like run (2 cores): 16 MiB chunks gave 3.7 s and
# 431 MiB peak against 5.0 s and 1339 MiB for reading the file whole (64 MiB chunks:
# 3.5 s, 864 MiB; 8 MiB: 3.6 s, 297 MiB), so large runs are streamed by default.
CHUNK_BYTES = 16 << 20  # decompressed bytes parsed at a time
STREAM_THRESHOLD = 32 << 20  # run files at least this large are streamed automatically


class NotGrouped(Exception):
    """A topic reappeared after its block ended (or a lone CR ends lines): evaluate the file in memory."""


class _HashingReader(io.RawIOBase):
    """Passes bytes through and hashes them (the SHA-256 is of the file as stored)."""

    def __init__(self, fh: IO[bytes]) -> None:
        from ..io.trec import HASH_INPUTS

        self.fh = fh
        self.sha = hashlib.sha256()
        self.enabled = HASH_INPUTS.get()

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:  # type: ignore[no-untyped-def]
        n = self.fh.readinto(b)
        if n and self.enabled:
            self.sha.update(memoryview(b)[:n])
        return n or 0


class ChunkReader:
    """Reads the file's bytes (decompressed) in chunks that end at a line end.

    :meth:`chunks` is a generator that takes, through ``send``, the bytes to put in
    front of the next chunk (the caller's unfinished tail), so each byte of the file
    is copied once, into the chunk's buffer, however the chunks are cut.
    """

    def __init__(self, path: str, chunk_bytes: int = CHUNK_BYTES) -> None:
        self.path = path
        self.chunk_bytes = chunk_bytes
        self.sha256 = ""
        self.size = 0

    def chunks(self) -> Generator[tuple[bytearray, bool], bytes | None, None]:
        """Yields ``(data, last)``: ``data`` ends at a line end unless ``last``. Send the
        bytes to prepend to the next chunk (``None`` or ``b""``: nothing)."""
        with open(self.path, "rb") as fh:
            head = fh.read(10)
            fh.seek(0)
            raw = _HashingReader(fh)
            buffered = io.BufferedReader(raw, buffer_size=1 << 20)
            stream: IO[bytes]
            if head.startswith(GZIP_MAGIC):
                stream = gzip.GzipFile(fileobj=buffered)
            elif is_bzip2(head):
                stream = bz2.BZ2File(buffered)
            elif head.startswith(XZ_MAGIC):
                stream = lzma.LZMAFile(buffered)
            else:
                stream = buffered
            prefix = b""  # sent by the caller
            carry = b""  # a line begun at the end of the last block
            last = False
            lines = 0  # line ends read so far
            while not last:
                lead = prefix + carry
                buf = bytearray(len(lead) + self.chunk_bytes)
                buf[: len(lead)] = lead
                try:
                    n = _fill(stream, memoryview(buf)[len(lead) :])
                except (OSError, EOFError, lzma.LZMAError, zlib.error) as exc:
                    raise InputError(
                        self.path, f"cannot read run file: corrupt or truncated compressed data ({exc})"
                    ) from None
                self.size += n
                last = n < self.chunk_bytes
                del buf[len(lead) + n :]
                nul = buf.find(b"\0", len(lead))
                if nul >= 0:  # TREC text: a NUL is an error wherever it is, found before reading on
                    raise InputError(self.path, "contains a NUL byte", lines + buf.count(b"\n", len(lead), nul) + 1)
                lines += buf.count(b"\n", len(lead))
                if not last:
                    cut = buf.rfind(b"\n", len(prefix))
                    if cut < 0:  # no line end in this block: read on, up to the limit for one line
                        if len(buf) - len(prefix) > readers.MAX_LINE:
                            raise line_too_long(self.path, lines + 1)
                        carry = bytes(buf[len(prefix) :])
                        continue
                    carry = bytes(buf[cut + 1 :])
                    del buf[cut + 1 :]
                else:
                    while buffered.read(1 << 20):  # hash whatever the decompressor left unread
                        pass
                    self.sha256 = raw.sha.hexdigest() if raw.enabled else ""
                prefix = (yield buf, last) or b""


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


def _line_offset(data: bytes, newlines: int, line: int) -> int:
    """Byte offset where 1-based ``line`` starts in ``data``, which holds ``newlines`` line ends."""
    if line <= 1:
        return 0
    back = newlines - (line - 1) + 1  # line ends to step back over, the last one included
    if back <= 1 << 14:
        pos = len(data)
        for _ in range(back):
            pos = data.rfind(b"\n", 0, pos)
        return pos + 1
    return int(np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)[line - 2]) + 1


def topic_batches(reader: ChunkReader, name: str) -> Iterator[tuple[Run, np.ndarray, pa.Array]]:
    """(run rows of complete topics, rows per topic, topic ids) from a grouped run file.

    The last topic of a chunk may go on in the next one, so its lines are sent
    back to the reader to lead the next chunk; the rows before it are handed on
    as a zero-copy slice. Raises :class:`NotGrouped` when a topic reappears
    after its block ended.
    """
    chunks = reader.chunks()
    try:
        yield from _topic_batches(chunks, name)
    finally:
        chunks.close()  # the file and the decompressor, now, whatever happened


def _topic_batches(
    chunks: Generator[tuple[bytearray, bool], bytes | None, None], name: str
) -> Iterator[tuple[Run, np.ndarray, pa.Array]]:
    seen: set[bytes] = set()
    base = 0  # physical lines of the file before the current chunk
    data, last = next(chunks)
    while True:
        run = _parse_chunk(data, name, base)
        held: bytes | bytearray = b""  # lines of the last, possibly unfinished, topic
        newlines = run.lines or data.count(b"\n")  # non-last chunks end in a line end
        if not len(run):
            base += newlines
        else:
            start = len(run) if last else _last_topic_start(run.qid)
            if start == 0:  # one topic so far: keep reading
                held = data
            else:
                batch = run.slice(0, start)
                lengths, topics = runs_of(batch.qid)
                names = topics.to_pylist()
                if len(set(names)) != len(names) or not seen.isdisjoint(names):
                    raise NotGrouped
                seen.update(names)
                yield batch, lengths, topics
                if start < len(run):
                    line = int(run.lineno[start]) - base
                    held = data[_line_offset(data, newlines, line) :]
                    base += line - 1
                else:
                    base += newlines
        if last:
            return
        del run
        data, last = chunks.send(held)
        del held


_DONE = object()


class prefetch:
    """Run the iterator ``items`` in a worker thread, ``depth`` items ahead.

    Reading and parsing the next chunk (decompression, Arrow's CSV parser) mostly
    runs without the GIL, so it overlaps with the evaluation of the current
    chunk on the other core. Items, and an exception the iterator raises, come
    out in the same order as without the thread, so the results cannot depend
    on it. The worker runs in a copy of the caller's context (context variables
    such as ``readers.HASH_INPUTS`` keep their values).

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

    def _work(self) -> None:
        try:
            for item in self._items:
                if not self._put((item, None)):
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


def _parse_chunk(chunk: bytes, name: str, lines_before: int) -> Run:
    from ..io.trec import has_bare_cr

    if has_bare_cr(chunk):
        raise NotGrouped  # lone CR line ends: read the file whole, where they become line ends
    try:
        run = parse_run(Source(name=name, data=chunk, sha256=""), allow_empty=True)
    except InputError as exc:
        from ..io.tabular import explain_run_error

        if lines_before == 0:  # the hints look at the file's first line
            exc = explain_run_error(exc, chunk)
        line = exc.line + lines_before if exc.line is not None else None
        raise type(exc)(name, exc.detail, line) from None
    run.lineno = run.lineno + lines_before
    return run


def evaluate_stream(
    qrels: Qrels,
    path: str,
    requests: list[Request],
    opts: EvalOptions,
    *,
    num_qrels_topics: int,
    num_rel_complete: int,
    zscores: ZScores | None = None,
    chunk_bytes: int = CHUNK_BYTES,
    subtopics: Any = None,
) -> tuple[Results, str]:
    """Evaluate the run at ``path`` chunk by chunk; returns the results and the run's SHA-256.

    Raises :class:`NotGrouped` when the file is not grouped by topic.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    check_qrels_duplicates(qrels)
    batch_opts = replace(opts, complete=False)
    reader = ChunkReader(path, chunk_bytes)
    parts: list[tuple[list[str], list[TopicColumn]]] = []
    seen: list[pa.Array] = []
    runid = ""
    rows = 0
    with prefetch(topic_batches(reader, path)) as batches:
        for batch, lengths, topics in batches:
            rows += len(batch)
            runid = batch.runid
            seen.append(topics)
            judged = to_numpy(pc.is_in(qrels.qid, value_set=topics))
            if not judged.any():
                continue
            table = build_table(
                qrels.take(judged), batch, batch_opts, doc_dict=subtopics is not None, run_blocks=(lengths, topics),
                run_order=True,  # concat_topics puts the topics in order
            )
            table = _whole_file_facts(table, qrels, subtopics)
            if table.nq:
                parts.append((table.qids, compute_topics(table, requests)))
    done = pa.concat_arrays(seen) if seen else binary_array([])
    if rows == 0:
        if reader.size == 0:
            raise InputError(path, "the run file is empty")
        raise InputError(path, "the run file has no results (only comments or blank lines)")

    # judged topics that never appeared in the run
    qtopics = pc.unique(qrels.qid.cast(pa.large_binary()))
    absent = qtopics.filter(pc.invert(pc.is_in(qtopics, value_set=done)))
    if len(absent) and opts.compat == "10.0":
        absent = absent.take(pc.sort_indices(absent))
        if not opts.complete:
            qid = absent[0].as_py().decode("utf-8", "surrogateescape")
            raise MissingTopicError(
                path,
                f"topic '{qid}' is judged in {qrels.name} but has no results in the run "
                "(use -c to score missing topics as 0)",
            )
        judged = to_numpy(pc.is_in(qrels.qid, value_set=absent))
        table = _whole_file_facts(build_table(qrels.take(judged), Run.empty(path, runid), opts, doc_dict=subtopics is not None), qrels, subtopics)
        parts.append((table.qids, compute_topics(table, requests)))
    if not parts:
        raise NoQueriesError(f"{path}: the run shares no topic with {qrels.name}: nothing to evaluate")
    qids, columns = concat_topics(parts)
    results = summarize(
        qids,
        columns,
        opts=opts,
        runid=runid,
        num_qrels_topics=num_qrels_topics,
        num_rel_complete=num_rel_complete,
        zscores=zscores,
    )
    return results, reader.sha256


def _whole_file_facts(table: EvalTable, qrels: Qrels, subtopics: Any) -> EvalTable:
    """What a batch's table cannot see: the highest label of the whole qrels, the subtopic judgements."""
    table.max_label = int(qrels.rel.max()) if len(qrels.rel) else 0
    table.subtopics = subtopics
    return table


def should_stream(path: object, stream: bool | None) -> bool:
    """Stream when asked, or automatically for a large regular file or any compressed one.

    The size on disk says nothing about a compressed file's size in memory (a 260 KB
    gzip can expand to 256 MiB), so every gzip, bzip2 or xz run is streamed; the
    chunks bound its memory whatever it expands to.
    """
    if stream is not None:
        return bool(stream) and isinstance(path, (str, os.PathLike)) and os.fspath(path) != "-"
    if not isinstance(path, (str, os.PathLike)) or os.fspath(path) == "-":
        return False
    try:
        if not os.path.isfile(path):
            return False
        if os.path.getsize(path) >= STREAM_THRESHOLD:
            return True
        with open(path, "rb") as fh:
            head = fh.read(10)
    except OSError:
        return False
    return head.startswith((GZIP_MAGIC, XZ_MAGIC)) or is_bzip2(head)
