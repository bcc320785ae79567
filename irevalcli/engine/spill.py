"""Out-of-core evaluation of a run that is not grouped by topic.

A run grouped by topic is streamed in bounded memory (:mod:`.stream`). One that is
not (shards concatenated, a distributed ranker's output) used to be read whole. If
its estimated size in memory exceeds the memory limit, it is now partitioned by a
hash of the topic id into temporary Arrow IPC files instead, in one pass over the
same chunks the streamed path reads (parsed by the same chunk parser, so rows keep
their physical line numbers). Every partition then holds every line of its topics
and is read back and scored on its own by the core engine (:mod:`.parts`); the
summary is computed once over all topics, so the bytes out are the in-memory path's.

Errors name what the whole run in memory names: a bad line is found by the pass in
file order (the earliest); after every partition is scored, a judged topic without
results is refused first, as the whole table refuses it before duplicates, then a
document retrieved twice: the earliest such line over all partitions.

Rows go to partitions by a hash of their topic id (:func:`topic_hash`, computed row by row,
kept in the partition), and a partition read back is grouped by that hash, so its topics
are scored as a streamed file's blocks are.

The partitions live in a private directory (mode 0700) under ``TMPDIR``, removed on
success, on error and on SIGINT/SIGTERM/SIGHUP (:mod:`irevalcli.signals` turns the first
into an exception, so ``finally`` runs, and holds the rest until the removal is done). A full disk is one error naming the directory.
"""

from __future__ import annotations

import errno
import math
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING, Any

from .. import signals
from ..errors import DuplicateDocError, InputError, TemporaryFilesError
from ..settings import parse_memory_limit

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

    from ..io.trec import Run
    from .evaluate import Results
    from .job import Job
    from .parts import Part

# Peak memory of evaluating a run, beyond what the process held before, per run line.
# Measured (peak RSS) on a 1M-line, 10k-topic shuffled run (docnos of 10-14 bytes,
# 'all_trec'): the whole file read and evaluated in memory, and one partition read back
# from Arrow IPC and scored. Longer docnos need more; the estimate errs on the high side.
WHOLE_BYTES_PER_ROW = 400
PART_BYTES_PER_ROW = 300
# The default limit: a quarter of the machine's memory, at most MEMORY_CAP, at least MEMORY_FLOOR.
# Measured on a 10M-line, 100k-topic run out of topic order (2 cores, idle): partitioned under
# 256 MiB it took 12.6 s and 403 MB peak for map + ndcg_cut.10, under 1 GiB 13.7 s and 668 MB,
# read whole 1.7 GB: partitions cost no time, so the cap is low.
MEMORY_CAP = 256 << 20
MEMORY_FLOOR = 64 << 20
MAX_PARTITIONS = 1024  # open partition files at once (kept under the process's file limit)


def default_memory_limit() -> int:
    """A quarter of the machine's memory (or of the container's limit, if lower), between
    64 MiB and 256 MiB: partitioning is about as fast as reading whole (see MEMORY_CAP), and
    an evaluation never takes more than a share of a shared machine."""
    total = 0
    try:
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        pass
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path) as fh:
                limit = int(fh.read().strip())
        except (OSError, ValueError):
            continue
        if 0 < limit < (total or limit + 1):
            total = limit
    if total <= 0:
        return MEMORY_FLOOR
    return max(MEMORY_FLOOR, min(total // 4, MEMORY_CAP))


def _resident_bytes() -> int:
    """The process's resident memory now (0 where /proc is not available)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _forced_partitions() -> int | None:
    """Test hook: IREVAL_TEST_SPILL_PARTITIONS=N partitions every unsorted run into N."""
    value = os.environ.get("IREVAL_TEST_SPILL_PARTITIONS")
    return int(value) if value else None


def plan(
    *, rows: int, text: int, raw: int, stored: int, last: bool, limit: int, chunk_bytes: int, resident: int
) -> int:
    """How many partitions the run needs under ``limit`` (0: read it whole), from its first
    chunk: ``rows`` lines parsed from ``text`` decompressed bytes, ``raw`` bytes of the
    file read for them (``stored``: the file's size as stored), ``last``: the chunk is
    the whole run; ``resident``: the process's memory already in use."""
    forced = _forced_partitions()
    if forced is not None:
        return forced
    if last:
        total_rows = float(rows)
    else:
        ratio = text / raw if raw else 1.0
        if ratio > 1.05:  # compressed: the read-ahead makes the ratio low; err on the high side
            ratio *= 1.25
        total_rows = stored * ratio * (rows / text if rows and text else 1 / 64)
    # what the partition pass holds beside: chunks being parsed and split, and those read ahead
    # (their rows: resident already holds those read before this plan)
    budget = max(limit - resident - 4 * chunk_bytes, limit // 8, 1)
    if total_rows * WHOLE_BYTES_PER_ROW <= budget:
        return 0
    try:
        import resource

        files = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        cap = MAX_PARTITIONS if files == resource.RLIM_INFINITY else max(2, min(MAX_PARTITIONS, files - 64))
    except (ImportError, ValueError, OSError):
        cap = MAX_PARTITIONS
    return max(2, min(cap, math.ceil(total_rows * PART_BYTES_PER_ROW / budget)))


@contextmanager
def spill_directory() -> Iterator[str]:
    """A private temporary directory (mode 0700, under TMPDIR), removed with everything in
    it when the block ends, however it ends. The removal is not cut short by a signal:
    SIGINT/SIGTERM/SIGHUP wait until it is done (:func:`irevalcli.signals.deferred`)."""
    import shutil
    import tempfile

    path = None
    try:
        try:
            # A signal cannot land between creating it and knowing its name; one held meanwhile
            # is raised at the end of the block, where the finally below already owns it.
            with signals.deferred():
                path = tempfile.mkdtemp(prefix="ireval-spill-")
        except OSError as exc:
            raise TemporaryFilesError(
                f"cannot create a temporary directory for the run's partitions under {tempfile.gettempdir()} "
                f"({exc.strerror or exc}); set TMPDIR to a writable directory, or raise --memory-limit"
            ) from None
        yield path
    finally:
        if path is not None:
            with signals.deferred():  # held until it is gone (a second signal is never raised)
                shutil.rmtree(path, ignore_errors=True)


def _disk_error(exc: OSError, path: str) -> TemporaryFilesError:
    full = exc.errno in (errno.ENOSPC, errno.EFBIG, getattr(errno, "EDQUOT", errno.ENOSPC))
    reason = os.strerror(exc.errno) if exc.errno else str(exc)
    hint = "set TMPDIR to a file system with more room" if full else "set TMPDIR to a writable directory"
    return TemporaryFilesError(
        f"cannot write the run's temporary partitions in {path} ({reason}); {hint}, or raise --memory-limit"
    )


def topic_hash(ids: pa.Array) -> np.ndarray:
    """A 64-bit hash of each id's bytes (the same bytes give the same hash in every chunk).

    An id of at most 8 bytes (TREC topic ids: numbers) is read as one little-endian word
    from its offset (one gather, no per-byte work) and mixed with its length; a longer one
    is hashed as a polynomial over its bytes. Which of the two an id takes depends on its
    length only, so an id hashes the same whatever ids share its chunk."""
    import numpy as np
    import pyarrow as pa

    ids = ids.cast(pa.large_binary())
    n = len(ids)
    offsets = np.frombuffer(ids.buffers()[1], dtype=np.int64, count=n + 1, offset=ids.offset * 8)
    data = ids.buffers()[2]
    lo, hi = int(offsets[0]), int(offsets[-1])
    lengths = np.diff(offsets)
    padded = np.zeros(hi - lo + 8, dtype=np.uint8)  # 8 readable bytes from every offset
    if hi > lo:
        assert data is not None
        padded[: hi - lo] = np.frombuffer(data, dtype=np.uint8, count=hi - lo, offset=lo)
    words = np.ndarray((hi - lo + 1,), dtype="<u8", buffer=padded, strides=(1,))  # unaligned words
    low_bytes = np.array([(1 << (8 * k)) - 1 for k in range(9)], dtype=np.uint64)  # the first k bytes
    h = words[offsets[:-1] - lo] & low_bytes[np.minimum(lengths, 8)]
    h ^= lengths.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    long = np.flatnonzero(lengths > 8)
    if len(long):
        h[long] = _polynomial_hash(padded, offsets[long] - lo, lengths[long])
    h ^= h >> np.uint64(33)  # murmur3's finaliser: every input bit moves every output bit
    h *= np.uint64(0xFF51AFD7ED558CCD)
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xC4CEB9FE1A85EC53)
    h ^= h >> np.uint64(33)
    return h


def partition_of(h: np.ndarray, n: int) -> np.ndarray:
    """The partition (0 to ``n - 1``, ``n`` at most 2**16) of each :func:`topic_hash` value: its
    low 32 bits scaled to ``n`` (a multiply and a shift, a third of the time of ``h % n``; every
    bit of the id moved them). The high bits, which :func:`_by_hash` groups a partition's rows
    by, are left out. As uint16, which numpy sorts by radix."""
    import numpy as np

    return (((h & np.uint64(0xFFFFFFFF)) * np.uint64(n)) >> np.uint64(32)).astype(np.uint16)


def _polynomial_hash(data: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """A polynomial over the bytes ``data[start:start + length]`` of each id (length > 0)."""
    import numpy as np

    which = np.repeat(np.arange(len(starts)), lengths)
    first = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    pos = np.arange(int(lengths.sum()), dtype=np.int64) - first[which]
    byte = data[starts[which] + pos].astype(np.uint64)
    powers = np.cumprod(np.full(int(lengths.max()), 1099511628211, dtype=np.uint64))
    return np.add.reduceat((byte + np.uint64(1)) * powers[pos], first)


def _schema(ranks: bool) -> pa.Schema:
    import pyarrow as pa

    fields = [
        ("qid", pa.large_binary()),
        ("docno", pa.large_binary()),
        ("score", pa.float64()),
        ("lineno", pa.int64()),
        ("hash", pa.uint64()),  # topic_hash of the qid: groups the partition's rows by topic when read
    ]
    if ranks:
        fields.append(("rank", pa.int64()))
    return pa.schema(fields)


class _Partitions:
    """One Arrow IPC stream file per partition, written as chunks arrive."""

    def __init__(self, directory: str, n: int, ranks: bool) -> None:
        self.directory = directory
        self.n = n
        self.schema = _schema(ranks)
        self.ranks = ranks
        self.files: list[Any] = [None] * n
        self.writers: list[Any] = [None] * n
        self.rows = 0

    def path(self, i: int) -> str:
        return os.path.join(self.directory, f"part-{i:05d}.arrow")

    def split(self, run: Run) -> _Split:
        """The chunk's rows in partition order (each partition's in file order), as
        :meth:`write` takes them: the work of a pass's chunk that needs no file (the reading
        threads do it, beside the parse)."""
        import numpy as np
        import pyarrow as pa

        from ..io.arrow import take_rows

        qid = run.qid.cast(pa.large_binary())
        h = topic_hash(qid)  # row by row: no hash table of the chunk's topics
        part = partition_of(h, self.n)
        order = np.argsort(part, kind="stable")
        columns = [
            take_rows(qid, order),
            take_rows(run.docno.cast(pa.large_binary()), order),
            run.score[order],
            run.lineno[order],
            h[order],
        ]
        if self.ranks:
            assert run.rank is not None
            columns.append(run.rank[order])
        return _Split(columns, np.bincount(part, minlength=self.n), run.runid)

    def write(self, split: _Split, lines_before: int) -> None:
        """Append a chunk's rows (:meth:`split`, their lines numbered from the chunk's first) to
        their topics' partitions; ``lines_before``: the file's lines before the chunk."""
        import numpy as np
        import pyarrow as pa

        from ..io.arrow import own_type_array

        lineno = split.columns[3]
        if lines_before:
            lineno += lines_before  # (the split's own copy)
        # the numpy columns as Arrow arrays on their buffers: given to pa.record_batch as they
        # are, they would go through pyarrow's pandas shim, which imports pandas (a quarter of a
        # second)
        columns = [own_type_array(c) if isinstance(c, np.ndarray) else c for c in split.columns]
        batch = pa.record_batch(columns, schema=self.schema)
        self.rows += batch.num_rows
        start = 0
        for i in np.flatnonzero(split.counts).tolist():  # a loop over partitions, not rows
            c = int(split.counts[i])
            self._writer(i).write_batch(batch.slice(start, c))
            start += c

    def _writer(self, i: int) -> Any:
        import pyarrow as pa

        if self.writers[i] is None:
            self.files[i] = _open_partition(self.path(i))
            self.writers[i] = pa.ipc.new_stream(self.files[i], self.schema)
        return self.writers[i]

    def close(self) -> None:
        """Finish every file (the last bytes are written here too)."""
        for i in range(self.n):
            if self.writers[i] is not None:
                self.writers[i].close()
                self.writers[i] = None
            if self.files[i] is not None:
                self.files[i].close()
                self.files[i] = None

    def abandon(self) -> None:
        """Close the files without caring whether their last bytes reach the disk."""
        for f in self.files:
            if f is not None:
                try:
                    f.close()
                except OSError:
                    pass
        self.files = [None] * self.n
        self.writers = [None] * self.n

    def read(self, i: int, name: str, runid: str) -> tuple[Run, tuple[np.ndarray, pa.Array] | None] | None:
        """Partition ``i`` as a run (None if no row went there); its file is removed. The
        rows come grouped by topic (each topic's rows in file order), with the topics' blocks
        (lengths, ids); None for the blocks when a topic has two (hashes alike in their high
        bits, read in no useful order: the table then sorts the rows by topic itself)."""
        import pyarrow as pa

        from ..io.arrow import take_rows, to_numpy
        from ..io.trec import Run

        path = self.path(i)
        if not os.path.exists(path):
            return None
        with pa.OSFile(path, "rb") as fh:
            table = pa.ipc.open_stream(fh).read_all()
        os.unlink(path)  # its disk space is free as soon as it is read
        order = _by_hash(to_numpy(table.column("hash").combine_chunks()))
        # each column in one chunk first: a take across the file's batches is slower
        cols = {c: table.column(c).combine_chunks() for c in table.column_names if c != "hash"}
        del table
        run = Run(
            name,
            "",
            take_rows(cols["qid"], order),
            take_rows(cols["docno"], order),
            to_numpy(cols["score"])[order],
            to_numpy(cols["lineno"])[order],
            runid,
            rank=to_numpy(cols["rank"])[order] if self.ranks else None,
        )
        return run, _topic_blocks(run.qid)


class _Split:
    """A chunk's rows in partition order (:meth:`_Partitions.split`): the columns of the
    partitions' schema, the rows of each partition, the chunk's runid."""

    __slots__ = ("columns", "counts", "runid")

    def __init__(self, columns: list[Any], counts: np.ndarray, runid: str) -> None:
        self.columns = columns
        self.counts = counts
        self.runid = runid


def _by_hash(h: np.ndarray) -> np.ndarray:
    """Row order grouping equal hashes, each group's rows in their order: one sort of 64-bit
    words, each the hash's high bits above the row's index (a stable argsort of the hashes is
    several times slower). Rows whose hashes differ only in the low bits may interleave:
    :func:`_topic_blocks` then finds a topic in two blocks."""
    import numpy as np

    n = len(h)
    bits = max(n - 1, 1).bit_length()
    low = np.uint64((1 << bits) - 1)
    return (np.sort((h & ~low) | np.arange(n, dtype=np.uint64)) & low).astype(np.int64)


def _topic_blocks(qid: pa.Array) -> tuple[np.ndarray, pa.Array] | None:
    """The blocks (lengths, ids) of a run grouped by topic; None if a topic has two blocks."""
    import pyarrow.compute as pc

    from ..core.table import runs_of

    if len(qid) == 0:
        return None
    lengths, topics = runs_of(qid)
    return (lengths, topics) if len(pc.unique(topics)) == len(topics) else None


def _open_partition(path: str) -> Any:
    import pyarrow as pa

    return pa.OSFile(path, "wb")


def evaluate_out_of_core(
    job: Job,
    path: str,
    *,
    spool: IO[bytes] | None = None,
    memory_limit: int | str | None = None,
    chunk_bytes: int | None = None,
    hash: bool = True,
    ranks: bool = False,
) -> tuple[Results, str] | None:
    """Evaluate the run at ``path`` (not grouped by topic) partition by partition; the
    results and the run's SHA-256 ("" unless ``hash``; ``ranks``: the rank column is read and
    kept, for ``--ties rank``), or None when it is estimated to fit ``memory_limit``
    (or cannot be partitioned: lone CR line ends, standard input that is not TREC text):
    then read it whole. ``spool``: standard input, spooled (rewound for the caller on None,
    closed otherwise).
    """
    from .stream import CHUNK_BYTES, ChunkReader, NotGrouped

    if path == "-" and spool is None:  # standard input that could not be spooled: read it whole
        return None
    limit = parse_memory_limit(memory_limit) or default_memory_limit()
    _release()  # what the streamed attempt freed, before the resident memory is measured
    # smaller chunks under a small limit: the pass holds two chunks and their parsed rows
    chunk = chunk_bytes or max(1 << 20, min(CHUNK_BYTES, limit // 32))
    reader = ChunkReader(path, chunk, stdin=spool, spool=False, hash=hash, ranks=ranks)
    try:
        done = _evaluate(job, reader, limit=limit, spool=spool)
    except NotGrouped:
        done = None
    except BaseException:
        if spool is not None:
            spool.close()
        raise
    if spool is not None:
        if done is None:
            spool.seek(0)
        else:
            spool.close()
    return done


def _release() -> None:
    """Hand the memory Arrow's allocator keeps after frees back to the system."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()


# Handing freed memory back after every partition (a malloc_trim each) kept the process
# lean between partitions but not at its peak, and cost time: each trim walks the heap
# (py-spy put 6% of the main thread in madvise on the 10M-line shuffled run), and the next
# partition faults the same pages in again. The heap a partition leaves is reused by the
# next one and only creeps up (fragments), so memory is given back once the process is
# TRIM_SLACK larger than after the first partition: 4 trims instead of 39 on that run,
# about a third fewer page faults and 0.3 s less system time, the same peak (loaded
# 2-core machine, interleaved: 249k/171k minor faults, 1.5/1.3 s sys, 267/265 MiB before;
# 159k/112k, 1.25/0.95 s, 265/276 MiB after).
TRIM_SLACK = 16 << 20


class _Trimmer:
    """Called after each partition: gives freed memory back (:func:`_release`) once the
    process is :data:`TRIM_SLACK` larger than after the first one (every time, where the
    resident size cannot be read)."""

    def __init__(self) -> None:
        self.bound = 0  # set by the first call

    def __call__(self) -> None:
        now = _resident_bytes()
        if not self.bound:
            self.bound = now + TRIM_SLACK if now else 0
        if now and now <= self.bound:
            return
        _release()


def _stored_size(reader: Any, spool: IO[bytes] | None) -> int:
    try:
        if spool is not None:
            return os.fstat(spool.fileno()).st_size
        from ..io.source import stored_head

        found = stored_head(reader.path)  # a pipe named as a path: the size of its spool
        return found[1] if found is not None else 0
    except (OSError, ValueError, AttributeError):
        return 0


def _evaluate(job: Job, reader: Any, *, limit: int, spool: IO[bytes] | None) -> tuple[Results, str] | None:
    from .stream import ParsedChunks

    name = reader.name
    # The chunks are parsed in two threads which, once the first chunk has given the plan, also
    # split each chunk's rows by partition (:meth:`_Partitions.split`): this thread only writes.
    # (With one reading thread and the split here, this thread was the pass's bottleneck: 1.8-2.0
    # s of the 10M-line shuffled run's pass, 1.4-1.5 s so.)
    # Any InputError of the pass (a malformed line: the whole file's parser checks every line's
    # fields before any score, and hints from line 1, so the first bad chunk need not hold the
    # line it names) reads the run whole, to say exactly what the in-memory path says.
    chunks = ParsedChunks(reader, name, cut_topics=False, follow=True)
    try:
        items = iter(chunks)
        try:
            run, lines, last, _, size, raw, _ = next(items)
        except InputError:
            return None
        except StopIteration:  # pragma: no cover (a run that is not grouped has rows)
            return None
        n = plan(
            rows=len(run),
            text=size,
            raw=raw,  # (not the reader's count now: the threads have read on)
            stored=_stored_size(reader, spool),
            last=last,
            limit=limit,
            chunk_bytes=reader.chunk_bytes,
            resident=_resident_bytes(),
        )
        if n <= 0:
            return None
        with spill_directory() as directory:
            parts = _Partitions(directory, n, reader.ranks)
            chunks.then(parts.split)
            runid = run.runid
            base = 0  # physical lines before the chunk
            delay = float(os.environ.get("IREVAL_TEST_SPILL_DELAY") or 0)  # test hook: a slow pass
            try:
                split = parts.split(run) if len(run) else None
                del run
                while True:
                    if split is not None:
                        runid = split.runid
                        try:
                            parts.write(split, base)
                        except OSError as exc:
                            raise _disk_error(exc, directory) from None
                    base += lines
                    del split
                    if delay:
                        import time

                        time.sleep(delay)
                    if last:
                        break
                    try:
                        rows, lines, last, _, _, _, split = next(items)
                    except InputError:
                        parts.abandon()
                        return None
                    if split is None and rows is not None and len(rows):  # (taken before the plan)
                        split = parts.split(rows)
                    del rows
                try:
                    parts.close()
                except OSError as exc:
                    raise _disk_error(exc, directory) from None
            except BaseException:
                parts.abandon()
                raise
            chunks.close()  # (the reading threads are done: the partitions are read one at a time)
            return _score(job, parts, name=name, runid=runid), reader.sha256
    finally:
        chunks.close()


def _score(job: Job, parts: _Partitions, *, name: str, runid: str) -> Results:
    """Score each partition; the errors the whole run's table would raise, in its order."""
    import pyarrow as pa

    from .parts import finish, whole_run_checks
    from .stream import prefetch

    if parts.rows == 0:  # pragma: no cover (a run that is not grouped has rows)
        raise InputError(name, "the run file has no results (only comments or blank lines)")
    seen: list[pa.Array] = []
    scored: list[Part] = []
    duplicate: DuplicateDocError | None = None
    trim = _Trimmer()
    # the next partition is read (and grouped: Arrow's take and numpy's sort, without the
    # GIL) in a worker thread while this one is scored
    with prefetch(_read_all(parts, name, runid)) as partitions:
        for run, blocks in partitions:
            duplicate = _score_one(job, run, blocks, seen, scored, duplicate, trim)
            del run
    # the errors of the whole run's table, in its order: a missing topic, a judgement given
    # twice, then the earliest document retrieved twice (partitions hold disjoint topics)
    every = pa.concat_arrays([t.cast(pa.large_binary()) for t in seen])
    whole_run_checks(job, every, path=name, duplicate=duplicate)
    return finish(job, scored, every, path=name, runid=runid)


def _read_all(parts: _Partitions, name: str, runid: str) -> Iterator[tuple[Run, tuple[np.ndarray, pa.Array] | None]]:
    for i in range(parts.n):
        got = parts.read(i, name, runid)
        if got is not None:
            yield got


def _score_one(
    job: Job,
    run: Run,
    blocks: tuple[np.ndarray, pa.Array] | None,
    seen: list[pa.Array],
    scored: list[Part],
    duplicate: DuplicateDocError | None,
    trim: Callable[[], None],
) -> DuplicateDocError | None:
    """Score one partition into ``scored`` (its topics into ``seen``); the earliest document
    retrieved twice so far (``duplicate``, or this partition's if earlier). ``trim`` then
    gives freed memory back (:class:`_Trimmer`)."""
    import pyarrow.compute as pc

    from .parts import score_part

    topics = blocks[1] if blocks is not None else pc.unique(run.qid)
    seen.append(topics)
    try:
        part = score_part(job, run, run_blocks=blocks, topics=topics)
    except DuplicateDocError as exc:  # the earliest line over all partitions is named
        return exc if duplicate is None or (exc.line or 0) < (duplicate.line or 0) else duplicate
    finally:
        trim()
    if part is not None and duplicate is None:
        scored.append(part)
    return duplicate
