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
from dataclasses import replace
from typing import IO, Any, Iterator

import numpy as np

from .arrowbridge import binary_array, to_numpy
from .engine import Results, TopicColumn, ZScores, compute_topics, concat_topics, summarize
from .errors import InputError, MissingTopicError, NoQueriesError
from .names import Request
from .readers import GZIP_MAGIC, XZ_MAGIC, Qrels, Run, Source, is_bzip2, parse_run
from .table import EvalOptions, EvalTable, build_table, check_qrels_duplicates

# Measured on a 7M-line MS MARCO-like run (2 cores): 16 MiB chunks gave 3.7 s and
# 431 MiB peak against 5.0 s and 1339 MiB for reading the file whole (64 MiB chunks:
# 3.5 s, 864 MiB; 8 MiB: 3.6 s, 297 MiB), so large runs are streamed by default.
CHUNK_BYTES = 16 << 20  # decompressed bytes parsed at a time
STREAM_THRESHOLD = 32 << 20  # run files at least this large are streamed automatically


class NotGrouped(Exception):
    """A topic reappeared after its block ended: evaluate the file in memory."""


class _HashingReader(io.RawIOBase):
    """Passes bytes through and hashes them (the SHA-256 is of the file as stored)."""

    def __init__(self, fh: IO[bytes]) -> None:
        from .readers import HASH_INPUTS

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
    """Yields (chunk, lines before it): chunks end at a line end."""

    def __init__(self, path: str, chunk_bytes: int = CHUNK_BYTES) -> None:
        self.path = path
        self.chunk_bytes = chunk_bytes
        self.sha256 = ""
        self.size = 0

    def __iter__(self) -> Iterator[tuple[bytes, int]]:
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
            carry = b""
            lines_before = 0
            while True:
                try:
                    block = stream.read(self.chunk_bytes)
                except (OSError, EOFError, lzma.LZMAError, zlib.error) as exc:
                    raise InputError(
                        self.path, f"cannot read run file: corrupt or truncated compressed data ({exc})"
                    ) from None
                if not block:
                    break
                self.size += len(block)
                data = carry + block
                cut = data.rfind(b"\n")
                if cut < 0:
                    carry = data
                    continue
                chunk, carry = data[: cut + 1], data[cut + 1 :]
                yield chunk, lines_before
                lines_before += chunk.count(b"\n")
            if carry:
                yield carry, lines_before
            while buffered.read(1 << 20):  # hash whatever the decompressor left unread
                pass
            self.sha256 = raw.sha.hexdigest() if raw.enabled else ""


def _parsed_chunks(reader: ChunkReader, name: str) -> Iterator[Run]:
    for chunk, lines_before in reader:
        yield _parse_chunk(chunk, name, lines_before)


_DONE = object()


def prefetch(items: Iterator[Any], depth: int = 1) -> Iterator[Any]:
    """Run the iterator ``items`` in a worker thread, ``depth`` items ahead.

    Reading and parsing the next chunk (decompression, Arrow's CSV parser) mostly
    runs without the GIL, so it overlaps with the evaluation of the current
    chunk on the other core. Items, and an exception the iterator raises, come
    out in the same order as without the thread, so the results cannot depend
    on it. The worker runs in a copy of the caller's context (context variables
    such as ``readers.HASH_INPUTS`` keep their values) and stops when the
    consumer does.
    """
    import contextvars
    import queue
    import threading

    q: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(item: Any) -> bool:
        while not stop.is_set():
            try:
                q.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def work() -> None:
        try:
            for item in items:
                if not put((item, None)):
                    return
        except BaseException as exc:  # noqa: BLE001  handed to the consumer, raised there
            put((_DONE, exc))
            return
        put((_DONE, None))

    worker = threading.Thread(target=contextvars.copy_context().run, args=(work,), name="ireval-prefetch", daemon=True)
    worker.start()
    try:
        while True:
            item, exc = q.get()
            if item is _DONE:
                if exc is not None:
                    raise exc
                return
            yield item
    finally:
        stop.set()
        worker.join()


def _parse_chunk(chunk: bytes, name: str, lines_before: int) -> Run:
    try:
        run = parse_run(Source(name=name, data=chunk, sha256=""), allow_empty=True)
    except InputError as exc:
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
    done = binary_array([])
    pending: Run | None = None
    runid = ""
    rows = 0

    def evaluate_batch(batch: Run) -> None:
        nonlocal done
        enc = batch.qid.dictionary_encode()
        codes = to_numpy(enc.indices)
        blocks = 1 + int(np.count_nonzero(codes[1:] != codes[:-1]))
        topics = enc.dictionary
        if blocks != len(topics) or pc.any(pc.is_in(topics, value_set=done)).as_py():
            raise NotGrouped
        done = pa.concat_arrays([done, topics.cast(pa.large_binary())])
        judged = to_numpy(pc.is_in(qrels.qid, value_set=topics))
        if not judged.any():
            return
        table = _whole_file_facts(build_table(qrels.take(judged), batch, batch_opts, doc_dict=subtopics is not None), qrels, subtopics)
        if table.nq:
            parts.append((table.qids, compute_topics(table, requests)))

    for run in prefetch(_parsed_chunks(reader, path)):
        if not len(run):
            continue
        rows += len(run)
        runid = run.runid
        if pending is not None:
            run = Run.concat([pending, run])
        last = run.qid[len(run) - 1]
        other = np.flatnonzero(~to_numpy(pc.equal(run.qid, last)))
        start = int(other[-1]) + 1 if len(other) else 0
        if start == 0:
            pending = run
            continue
        evaluate_batch(run.take(np.arange(start)))
        pending = run.take(np.arange(start, len(run)))
    if pending is not None:
        evaluate_batch(pending)
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
    """Stream when asked, or automatically for a large regular file."""
    if stream is not None:
        return bool(stream) and isinstance(path, (str, os.PathLike)) and os.fspath(path) != "-"
    if not isinstance(path, (str, os.PathLike)) or os.fspath(path) == "-":
        return False
    try:
        return os.path.isfile(path) and os.path.getsize(path) >= STREAM_THRESHOLD
    except OSError:
        return False
