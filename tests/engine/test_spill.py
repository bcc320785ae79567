"""Out-of-core evaluation (issue 17 item 1): a run that is not grouped by topic and too large
for --memory-limit is partitioned by topic into temporary Arrow IPC files and scored
partition by partition; the bytes out and the errors are the in-memory path's."""

from __future__ import annotations

import errno
import gzip
import io
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from irevalcli import evaluate
from irevalcli.engine import spill
from irevalcli.errors import DuplicateDocError, InputError, MissingTopicError, TemporaryFilesError, UsageError
from irevalcli.output.formatters import format_trec
from tests.conftest import write

ROOT = Path(__file__).resolve().parents[2]


def trec(ev, q=True):
    return format_trec(ev.results, per_query=q)


@pytest.fixture
def tmpdir_env(tmp_path, monkeypatch):
    """A TMPDIR of the test's own (tempfile caches its directory: reset it too)."""
    import tempfile

    d = tmp_path / "tmp"
    d.mkdir()
    monkeypatch.setenv("TMPDIR", str(d))
    monkeypatch.setattr(tempfile, "tempdir", str(d))
    return d


@pytest.fixture
def spilled(monkeypatch):
    """Count the partitions written (and check each run really went out of core)."""
    made: list[int] = []
    real = spill._Partitions.__init__

    def init(self, directory, n, ranks):
        made.append(n)
        real(self, directory, n, ranks)

    monkeypatch.setattr(spill._Partitions, "__init__", init)
    return made


def _random_files(tmp_path: Path, seed: int, *, topics: int = 40, labels=(-1, 0, 0, 1, 2, 3)) -> tuple[Path, Path]:
    """A qrels and a run shuffled out of topic order: ties, unjudged documents, judged
    topics without results, ids of several lengths, rank column with ties."""
    rng = random.Random(seed)
    qrels, run = [], []
    used = set()
    for t in range(rng.randint(topics // 2, topics)):
        qid = str(rng.choice([t, t * 10, 1000 + t, f"q{t}x"]))
        if qid in used:
            continue
        used.add(qid)
        docs = sorted({f"d{rng.randint(0, 80)}" for _ in range(rng.randint(1, 50))})
        for d in docs:
            if rng.random() < 0.6:
                qrels.append(f"{qid} 0 {d} {rng.choice(labels)}")
        if not any(line.split()[0] == qid for line in qrels):
            qrels.append(f"{qid} 0 {docs[0]} 1")
        for d in docs:
            run.append(f"{qid} Q0 {d} {rng.randint(1, 5)} {rng.choice([1.0, 2.0, 2.5, rng.random()])} run{seed}")
    for k in range(3):  # judged topics absent from the run
        qrels.append(f"{5000 + k} 0 dx 1")
    rng.shuffle(run)
    return write(tmp_path / "q", "\n".join(qrels) + "\n"), write(tmp_path / "r", "\n".join(run) + "\n")


def both(q, r, measures, *, memory_limit="1K", **kw):
    whole = evaluate(q, r, measures, stream=False, **kw)
    ooc = evaluate(q, r, measures, stream=True, memory_limit=memory_limit, **kw)
    return whole, ooc


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("chunk", [None, 200])
def test_random_unsorted_runs_all_trec(tmp_path, tmpdir_env, spilled, seed, chunk):
    """The real --memory-limit path: a 1K limit partitions even a small run (many parts);
    several chunks (200 bytes) exercise the estimate from a first chunk that is not the run."""
    q, r = _random_files(tmp_path, seed)
    whole = evaluate(q, r, ["all_trec"], stream=False, complete=True)
    ooc = evaluate(q, r, ["all_trec"], stream=True, complete=True, memory_limit="1K", chunk_bytes=chunk)
    assert trec(ooc) == trec(whole)
    assert ooc.results.runid == whole.results.runid == f"run{seed}"
    assert spilled and spilled[-1] >= 8
    assert list(tmpdir_env.iterdir()) == []


@pytest.mark.parametrize("parts", [1, 2, 3, 17, 64])
def test_forced_partition_counts(tmp_path, tmpdir_env, monkeypatch, spilled, parts):
    monkeypatch.setenv("IREVAL_TEST_SPILL_PARTITIONS", str(parts))
    q, r = _random_files(tmp_path, parts)
    whole, ooc = both(q, r, ["all_trec", "ndcg_cut.5,10", "err", "auc", "gauc", "pfound"], complete=True)
    assert trec(ooc) == trec(whole)
    assert spilled == [parts]
    assert list(tmpdir_env.iterdir()) == []


@pytest.mark.parametrize("mask", [0, 0xFF, 0xFFFF_FFFF])
def test_partitions_whose_topics_share_a_hash(tmp_path, tmpdir_env, monkeypatch, spilled, mask):
    """A partition read back is grouped by the hash of its topics: topics whose hashes are
    alike (in the high bits the grouping reads, or wholly) interleave, and are then ranked
    by the table's own sort of the rows: the same bytes."""
    import numpy as np

    real = spill.topic_hash
    monkeypatch.setattr(spill, "topic_hash", lambda ids: real(ids) & np.uint64(mask))
    monkeypatch.setenv("IREVAL_TEST_SPILL_PARTITIONS", "3")
    q, r = _random_files(tmp_path, 21)
    for opts in ({"complete": True}, {"complete": True, "ties": "input", "max_docs": 5}):
        whole, ooc = both(q, r, ["all_trec", "ndcg_cut.5"], **opts)
        assert trec(ooc) == trec(whole)
    q, r, _ = _errors(tmp_path)["missing+dup"]
    msgs = []
    for kw in ({"stream": False}, {"stream": True, "memory_limit": "1K"}):
        with pytest.raises(InputError) as e:
            evaluate(q, r, ["map"], **kw)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]
    assert spilled


def test_topic_hash_of_short_and_long_ids():
    """Ids of up to 8 bytes are hashed as one word with their length, longer ones by their
    bytes: an id hashes the same beside ids of any length, and ids that differ only in
    trailing bytes or length do not collide."""
    import numpy as np
    import pyarrow as pa

    ids = [b"7", b"70", b"700", b"7\x00", b"12345678", b"123456789", b"1234567890123", b"q", b""]
    h = spill.topic_hash(pa.array(ids, type=pa.large_binary()))
    assert len(set(h.tolist())) == len(ids)
    for i, one in enumerate(ids):
        assert spill.topic_hash(pa.array([one], type=pa.large_binary()))[0] == h[i]
    assert np.array_equal(spill.topic_hash(pa.array(ids[4:6])), h[4:6])


@pytest.mark.parametrize(
    "opts",
    [
        {},
        {"complete": True},
        {"complete": True, "max_docs": 7},
        {"complete": True, "judged_only": True},
        {"complete": True, "rel_level": 2},
        {"complete": True, "num_docs": 30},
        {"complete": True, "ties": "input"},
        {"complete": True, "ties": "rank"},
        {"complete": True, "compat": "9.0.8"},
        {"compat": "9.0.8"},
    ],
)
def test_options_graded_and_beyond_measures(tmp_path, tmpdir_env, spilled, opts):
    q, r = _random_files(tmp_path, 7)
    if not opts.get("complete") and opts.get("compat") != "9.0.8":
        q = write(tmp_path / "q2", "".join(line + "\n" for line in q.read_text().splitlines() if "dx" not in line))
    measures = ["all_trec", "ndcg_cut.3,10", "err", "err_cut.5", "auc", "gauc", "pfound", "mrr", "P.5"]
    whole, ooc = both(q, r, measures, **opts)
    assert trec(ooc) == trec(whole)
    assert spilled


def test_diversity_measures_with_subtopics(tmp_path, tmpdir_env, spilled):
    q, r = _random_files(tmp_path, 11)
    rng = random.Random(11)
    lines = []
    for line in q.read_text().splitlines():
        qid, _, doc, _ = line.split()
        for s in range(1, 4):
            if rng.random() < 0.5:
                lines.append(f"{qid} {s} {doc} {rng.choice([0, 1])}")
    sub = write(tmp_path / "sub", "\n".join(lines) + "\n")
    measures = ["alpha_ndcg_cut.5,10", "err_ia_cut.5,20", "nrbp", "map_ia"]
    whole, ooc = both(q, r, measures, complete=True, subtopics=sub)
    assert trec(ooc) == trec(whole)
    assert spilled


def test_gzip_and_stdin_go_out_of_core(tmp_path, tmpdir_env, spilled):
    """A compressed run (its size in memory estimated from the first chunk's ratio) and
    standard input (partitioned from its spool, not read whole) give the same bytes."""
    q, r = _random_files(tmp_path, 5)
    whole = evaluate(q, r, ["all_trec"], stream=False, complete=True)
    gz = tmp_path / "r.gz"
    gz.write_bytes(gzip.compress(r.read_bytes()))
    ooc = evaluate(q, gz, ["all_trec"], complete=True, memory_limit="1K", chunk_bytes=300)
    assert trec(ooc) == trec(whole)
    assert ooc.run.sha256 == __import__("hashlib").sha256(gz.read_bytes()).hexdigest()
    for data in (r.read_bytes(), gz.read_bytes()):
        fh = io.BytesIO(data)
        got = evaluate(q, "-", ["all_trec"], complete=True, memory_limit="1K", stdin=fh, chunk_bytes=300)
        assert trec(got) == trec(whole)
        assert got.run.name == "<stdin>" and fh.read() == b""
    assert len(spilled) == 3
    assert list(tmpdir_env.iterdir()) == []


def test_a_run_that_fits_is_read_whole(tmp_path, tmpdir_env, spilled):
    q, r = _random_files(tmp_path, 2)
    whole, ooc = both(q, r, ["map"], memory_limit="1G", complete=True)
    assert trec(ooc) == trec(whole)
    assert spilled == []  # no partition written
    fh = io.BytesIO(r.read_bytes())
    got = evaluate(q, "-", ["map"], complete=True, memory_limit="1G", stdin=fh)
    assert trec(got) == trec(whole) and spilled == []


def test_plan_estimates_the_run_from_its_first_chunk(monkeypatch):
    monkeypatch.delenv("IREVAL_TEST_SPILL_PARTITIONS", raising=False)
    args = {"text": 1 << 20, "raw": 1 << 20, "last": False, "chunk_bytes": 1 << 20, "resident": 0}
    # 1 MiB of text holds 20k lines; a 1 GiB file about 20M lines: too large for 1 GiB
    n = spill.plan(rows=20_000, stored=1 << 30, limit=1 << 30, **args)
    assert n == -(-20_000 * 1024 * spill.PART_BYTES_PER_ROW // ((1 << 30) - (4 << 20)))
    assert spill.plan(rows=20_000, stored=10 << 20, limit=1 << 30, **args) == 0  # 200k lines fit
    # compressed 4:1: the same file size is four times (and a margin) the lines
    packed = dict(args, raw=256 << 10)
    assert spill.plan(rows=20_000, stored=100 << 20, limit=1 << 30, **packed) > 0
    assert spill.plan(rows=20_000, stored=100 << 20, limit=1 << 30, **args) == 0
    # the whole run in its first chunk: counted exactly
    assert spill.plan(rows=1000, stored=0, limit=1 << 30, **dict(args, last=True)) == 0
    assert spill.plan(rows=1000, stored=0, limit=1 << 10, **dict(args, last=True)) == spill.MAX_PARTITIONS


def test_plan_is_given_the_first_chunks_bytes_whatever_was_read_ahead(tmp_path, tmpdir_env, monkeypatch):
    """The pass's threads read on while the first chunk is planned: the plan is given the file's
    bytes read up to that chunk's end, not the reader's count when it plans (the 10M-line run's
    text-to-bytes ratio then looked like 1:3, and it was cut into half the partitions)."""
    from irevalcli.engine import stream

    monkeypatch.delenv("IREVAL_TEST_SPILL_PARTITIONS", raising=False)
    seen = []
    real = spill.plan

    def plan(**kw):
        seen.append(kw)
        return real(**kw)

    class Slow(stream.ParsedChunks):
        def __iter__(self):
            items = super().__iter__()
            first = next(items)
            time.sleep(0.3)  # the threads read ahead meanwhile
            yield first
            yield from items

    monkeypatch.setattr(spill, "plan", plan)
    monkeypatch.setattr(stream, "ParsedChunks", Slow)
    rng = random.Random(3)
    lines = [f"{t} Q0 d{t}x{i} 1 {rng.random():.4f} r\n" for i in range(80) for t in range(3000)]
    rng.shuffle(lines)
    r = write(tmp_path / "run", "".join(lines))
    q = write(tmp_path / "qrels", "".join(f"{t} 0 d{t}x1 1\n" for t in range(3000)))
    chunk = 1 << 20
    assert r.stat().st_size > 5 * chunk
    ooc = evaluate(q, r, ["map"], stream=True, memory_limit="64M", chunk_bytes=chunk)
    assert trec(ooc, q=False) == trec(evaluate(q, r, ["map"], stream=False), q=False)
    (kw,) = seen
    assert chunk - 100 < kw["text"] <= chunk
    assert kw["raw"] <= 2 * chunk  # that chunk and at most the reader's buffer beyond it


def test_topic_hash_depends_on_the_bytes_only():
    import numpy as np
    import pyarrow as pa

    ids = [b"1", b"10", b"301", b"q7x", b"", b"a" * 40, b"\xff\x00z"]
    h = spill.topic_hash(pa.array(ids, type=pa.binary()))
    assert np.array_equal(h, spill.topic_hash(pa.array(ids, type=pa.large_binary())))
    sliced = pa.array([b"zz", *ids, b"yy"], type=pa.binary()).slice(1, len(ids))
    assert np.array_equal(h, spill.topic_hash(sliced))
    assert len(set(h.tolist())) == len(ids)
    many = spill.topic_hash(pa.array([str(i).encode() for i in range(100_000)]))
    for n in (2, 3, 64, spill.MAX_PARTITIONS):
        part = spill.partition_of(many, n)
        assert part.dtype == np.uint16 and int(part.max()) < n
        counts = np.bincount(part.astype(np.int64), minlength=n)
        mean, spread = 100_000 / n, 5 * (100_000 / n) ** 0.5  # five standard deviations
        assert counts.min() > mean - spread and counts.max() < mean + spread
    # the partition leaves the high bits free: the rows of one partition still differ there
    one = many[spill.partition_of(many, 64) == 0] >> np.uint64(40)
    assert len(np.unique(one)) > 0.9 * len(one)


@pytest.mark.parametrize(
    ("text", "value"),
    [("1000", 1000), ("64K", 64 << 10), ("512M", 512 << 20), ("2G", 2 << 30), ("1.5GiB", 3 << 29), ("8mb", 8 << 20)],
)
def test_memory_limit_sizes(text, value):
    assert spill.parse_memory_limit(text) == value


@pytest.mark.parametrize(
    ("text", "msg"),
    [
        ("lots", "--memory-limit lots: expected a size such as 512M, 2G or a number of bytes"),
        ("12X", "--memory-limit 12X: expected a size such as 512M, 2G or a number of bytes"),
        ("-5", "--memory-limit -5: expected a size such as 512M, 2G or a number of bytes"),
        ("0", "--memory-limit 0: the limit must be more than 0 bytes"),
        ("0.1", "--memory-limit 0.1: the limit must be more than 0 bytes"),
    ],
)
def test_memory_limit_nonsense_is_refused(cli, tmp_path, text, msg):
    with pytest.raises(UsageError) as e:
        spill.parse_memory_limit(text)
    assert str(e.value) == msg
    q, r = write(tmp_path / "q", "1 0 a 1\n"), write(tmp_path / "r", "1 Q0 a 1 1 r\n")
    res = cli(["--memory-limit", text, str(q), str(r)])
    assert (res.code, res.out, res.err) == (2, b"", f"ireval: {msg}\n")
    with pytest.raises(UsageError) as e:
        evaluate(q, r, ["map"], memory_limit=text)
    assert str(e.value) == msg.replace("--memory-limit ", "memory_limit=")


def test_default_memory_limit_is_a_share_of_the_machine():
    limit = spill.default_memory_limit()
    assert spill.MEMORY_FLOOR <= limit <= spill.MEMORY_CAP
    total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    assert limit <= max(total // 4, spill.MEMORY_FLOOR)


# ---- errors: the in-memory path's message, the earliest line over all partitions ----------------


def _errors(tmp: Path) -> dict[str, tuple[Path, Path, str]]:
    q = write(tmp / "q", "".join(f"{t} 0 d{d} {d % 2}\n" for t in range(1, 30) for d in range(3)))
    rows = [f"{t} Q0 d{d} 1 {d / 10} r" for t in range(1, 30) for d in range(5)]
    random.Random(3).shuffle(rows)
    cases = {}
    # duplicates in several topics (so in several partitions): the earliest repeating line
    dup = [*rows[:40], rows[100], *rows[40:120], rows[7], rows[30], *rows[120:]]
    cases["dup"] = (q, write(tmp / "dup", "\n".join(dup) + "\n"), "")
    bad = [*rows[:90], "7 Q0 d9 1 x r", *rows[90:], "8 Q0 d9"]
    cases["bad"] = (q, write(tmp / "bad", "\n".join(bad) + "\n"), "")
    missing = [row for row in rows if not row.startswith(("12 ", "4 "))]
    cases["missing"] = (q, write(tmp / "missing", "\n".join(missing) + "\n"), "")
    both_ = [*missing[:50], missing[60], *missing[50:]]  # a duplicate and missing topics: missing first
    cases["missing+dup"] = (q, write(tmp / "mdup", "\n".join(both_) + "\n"), "")
    qdup = write(tmp / "qdup", q.read_text() + "17 0 d1 1\n3 0 d0 0\n")
    cases["qrels-dup"] = (qdup, write(tmp / "r", "\n".join([*rows, rows[5]]) + "\n"), "")
    cases["unjudged-dup"] = (q, write(tmp / "ud", "\n".join([*rows, "99 Q0 x 1 1 r", "99 Q0 x 1 1 r"]) + "\n"), "")
    return cases


@pytest.mark.parametrize("case", ["dup", "bad", "missing", "missing+dup", "qrels-dup", "unjudged-dup"])
@pytest.mark.parametrize("opts", [{}, {"complete": True}, {"max_docs": 2}, {"compat": "9.0.8"}])
def test_errors_are_the_in_memory_paths(tmp_path, tmpdir_env, monkeypatch, case, opts):
    q, r, _ = _errors(tmp_path)[case]

    def outcome(**kw):
        try:
            ev = evaluate(q, r, ["all_trec"], **opts, **kw)
        except (InputError, TemporaryFilesError) as exc:
            return type(exc), str(exc)
        return None, trec(ev)

    whole = outcome(stream=False)
    for parts in ("5", "29"):
        monkeypatch.setenv("IREVAL_TEST_SPILL_PARTITIONS", parts)
        assert outcome(stream=True, memory_limit="1K") == whole
    monkeypatch.delenv("IREVAL_TEST_SPILL_PARTITIONS")
    assert outcome(stream=True, memory_limit="1K", chunk_bytes=100) == whole
    assert list(tmpdir_env.iterdir()) == []


def test_error_messages_exact(tmp_path, tmpdir_env):
    cases = _errors(tmp_path)
    expect = {
        "dup": (DuplicateDocError, "{r}:102: document 'd{d}' is retrieved twice for topic '{t}' (first at line 41)"),
        # the whole file's fields are checked before any score (the bad score is on line 91)
        "bad": (
            InputError,
            "{r}:147: expected at least 6 fields (qid iter docno rank score runid), got 3; "
            "for an MS MARCO run (qid docno rank) use --run-format msmarco",
        ),
        "missing": (
            MissingTopicError,
            "{r}: topic '12' is judged in {q} but has no results in the run (use complete=True to score missing topics as 0)",
        ),
        "qrels-dup": (DuplicateDocError, "{q}: document 'd1' is judged twice for topic '17' (first at line 50)"),
    }
    for case, (cls, msg) in expect.items():
        q, r, _ = cases[case]
        with pytest.raises(cls) as e:
            evaluate(q, r, ["map"], stream=True, memory_limit="1K")
        if case == "dup":
            t, _, d = r.read_text().splitlines()[40].split()[:3]
            msg = msg.replace("{t}", t).replace("{d}", d[1:])
        if case == "qrels-dup":
            msg = msg.replace("{q}:", "{q}:88:")
        assert str(e.value) == msg.format(q=q, r=r)


def test_only_query_is_read_whole_with_the_same_messages(tmp_path, tmpdir_env, spilled):
    q, r, _ = _errors(tmp_path)["missing"]
    whole, ooc = both(q, r, ["map"], only_query="5")
    assert trec(ooc) == trec(whole)
    for qid in ("12", "77"):
        msgs = []
        for kw in ({"stream": False}, {"stream": True, "memory_limit": "1K"}):
            with pytest.raises((InputError, Exception)) as e:
                evaluate(q, r, ["map"], only_query=qid, **kw)
            msgs.append(str(e.value))
        assert msgs[0] == msgs[1]


# ---- the command line: every output format, and the temporary directory -----------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["-q", "-m", "all_trec"],
        ["-q", "-c", "-m", "all_trec", "-m", "auc", "-m", "gauc", "-m", "err", "-m", "pfound", "-m", "ndcg_cut.5"],
        ["-c", "-M", "5", "-J", "-l", "2", "-N", "40", "-m", "all_trec"],
        ["-q", "-c", "--ties", "rank", "-m", "map", "-m", "ndcg"],
        ["-q", "-c", "--ties", "input", "-m", "P.5", "-m", "recip_rank"],
        ["-q", "-c", "--compat", "9.0.8", "-m", "all_trec"],
        ["-q", "-c", "-m", "all_trec", "--format", "json"],
        ["-c", "-m", "map", "-m", "gauc", "--format", "parquet"],
    ],
)
def test_cli_byte_identical(cli, tmp_path, tmpdir_env, spilled, args):
    q, r = _random_files(tmp_path, 13)
    whole = cli([*args, "--no-stream", str(q), str(r)])
    ooc = cli([*args, "--stream", "--memory-limit", "2K", str(q), str(r)])
    assert (ooc.code, ooc.err) == (whole.code, whole.err)
    assert whole.code == (0 if "-c" in args else 2)  # without -c: the judged topics missing from the run
    if "json" in args:  # the options record everything but the limit: identical too
        assert json.loads(ooc.out) == json.loads(whole.out)
    assert ooc.out == whole.out
    assert spilled
    piped = cli([*args, "--memory-limit", "2K", str(q), "-"], stdin=r.read_bytes())
    assert (piped.code, piped.err) == (whole.code, whole.err.replace(str(r), "<stdin>"))
    if "parquet" not in args and "json" not in args:  # (they record the run's path)
        assert piped.out == whole.out
    assert list(tmpdir_env.iterdir()) == []


def test_full_disk_is_one_line_and_no_output_file(cli, tmp_path, tmpdir_env, monkeypatch):
    """ENOSPC while writing partitions: one line naming the directory, exit 2, no output
    file, the temporary directory removed."""
    import pyarrow as pa

    q, r = _random_files(tmp_path, 1)
    made = []
    real_mkdtemp = __import__("tempfile").mkdtemp

    def mkdtemp(**kw):
        made.append(real_mkdtemp(**kw))
        return made[-1]

    monkeypatch.setattr("tempfile.mkdtemp", mkdtemp)
    written = [0]

    class Full:
        def __init__(self, path, mode):
            self.f = pa.OSFile(path, mode)

        def write(self, data):
            written[0] += 1
            if written[0] > 3:
                raise OSError(errno.ENOSPC, "No space left on device")
            return self.f.write(data)

        def __getattr__(self, name):
            return getattr(self.f, name)

    monkeypatch.setattr(spill, "_open_partition", lambda path: pa.PythonFile(Full(path, "wb"), mode="w"))
    out = tmp_path / "out.txt"
    res = cli(["-q", "-c", "-m", "map", "--stream", "--memory-limit", "1K", "--output", str(out), str(q), str(r)])
    assert (res.code, res.out) == (2, b"")
    assert res.err == (
        f"ireval: cannot write the run's temporary partitions in {made[0]} (No space left on device); "
        "set TMPDIR to a file system with more room, or raise --memory-limit\n"
    )
    assert not out.exists()
    assert list(tmpdir_env.iterdir()) == []


def _subprocess_env(tmpdir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("IREVAL_TEST_")}
    env.update(TMPDIR=str(tmpdir), PYTHONDONTWRITEBYTECODE="1", **extra)
    return env


def test_file_too_large_in_a_subprocess(tmp_path, tmpdir_env):
    """A real limit on file sizes (RLIMIT_FSIZE, SIGXFSZ ignored: writes fail with EFBIG)."""
    import resource

    q, r = _random_files(tmp_path, 4, topics=80)
    out = tmp_path / "out.txt"

    def limit_files():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))

    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "irevalcli",
            "-q",
            "-m",
            "map",
            "-c",
            "--stream",
            "--memory-limit",
            "1K",
            "--output",
            str(out),
            str(q),
            str(r),
        ],
        env=_subprocess_env(tmpdir_env, IREVAL_TEST_SPILL_PARTITIONS="2"),
        capture_output=True,
        preexec_fn=limit_files,
        timeout=120,
    )
    assert (res.returncode, res.stdout) == (2, b"")
    err = res.stderr.decode()
    pattern = re.escape(
        f"ireval: cannot write the run's temporary partitions in {tmpdir_env}/ireval-spill-@ (File too large); "
        "set TMPDIR to a file system with more room, or raise --memory-limit\n"
    ).replace("@", "[a-z0-9_]{8}")
    assert re.fullmatch(pattern, err), err
    assert not out.exists()
    assert list(tmpdir_env.iterdir()) == []


@pytest.mark.parametrize(
    ("sig", "code", "line"), [(signal.SIGTERM, 143, "terminated"), (signal.SIGINT, 130, "interrupted")]
)
def test_signal_mid_partitioning_removes_the_temporary_files(tmp_path, tmpdir_env, sig, code, line):
    """SIGTERM (or Ctrl-C) while the partitions are written: exit 143 (130), one line, and
    nothing left under TMPDIR. A test hook slows the pass so the signal lands in it."""
    q, r = _random_files(tmp_path, 9, topics=80)
    text = r.read_bytes()
    big = tmp_path / "big"
    big.write_bytes(text * (3_000_000 // len(text) + 1))  # several 1 MiB chunks
    out = tmp_path / "out.txt"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "irevalcli",
            "-m",
            "map",
            "-c",
            "--stream",
            "--memory-limit",
            "1K",
            "--output",
            str(out),
            str(q),
            str(big),
        ],
        env=_subprocess_env(tmpdir_env, IREVAL_TEST_SPILL_DELAY="1"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while not list(tmpdir_env.glob("ireval-spill-*/part-*.arrow")):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.02)
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert (proc.returncode, stdout, stderr.decode()) == (code, b"", f"ireval: {line}\n")
    assert not out.exists()
    assert list(tmpdir_env.iterdir()) == []


def test_input_error_removes_the_temporary_files(cli, tmp_path, tmpdir_env, spilled):
    q, r, _ = _errors(tmp_path)["dup"]
    res = cli(["-m", "map", "--stream", "--memory-limit", "1K", str(q), str(r)])
    assert res.code == 2 and res.err.startswith(f"ireval: {r}:102: document ")
    assert spilled and list(tmpdir_env.iterdir()) == []


def test_help_mentions_the_limit_without_importing_arrow():
    res = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys\nfrom irevalcli.commands.main import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print('pyarrow' in sys.modules, 'pandas' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert "--memory-limit SIZE" in res.stdout
    assert res.stdout.rstrip().endswith("False False")


@pytest.mark.parametrize(
    ("sig", "code", "line"), [(signal.SIGTERM, 143, "terminated"), (signal.SIGINT, 130, "interrupted")]
)
def test_a_signal_as_the_spill_directory_is_made_leaves_nothing(
    cli, tmp_path, tmpdir_env, monkeypatch, sig, code, line
):
    """The signal lands just after mkdtemp made the directory: it is held, and raised at the
    end of that block, which used to be outside the clean-up (the empty directory stayed
    under TMPDIR)."""
    import tempfile

    real = tempfile.mkdtemp

    def mkdtemp_then_signal(**kw):
        path = real(**kw)
        os.kill(os.getpid(), sig)
        for _ in range(1000):  # give the interpreter every chance to run the handler here
            pass
        return path

    monkeypatch.setattr(tempfile, "mkdtemp", mkdtemp_then_signal)
    q, r = _random_files(tmp_path, 3)
    res = cli(["-c", "-m", "map", "--stream", "--memory-limit", "1K", str(q), str(r)])
    assert (res.code, res.out, res.err) == (code, b"", f"ireval: {line}\n")
    assert list(tmpdir_env.iterdir()) == []


def test_no_temporary_directory_is_one_line(cli, tmp_path, tmpdir_env, monkeypatch):
    """TMPDIR not writable: one line naming it, exit 2; the API names memory_limit."""
    import tempfile

    def refuse(**kw):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(tempfile, "mkdtemp", refuse)
    q, r = _random_files(tmp_path, 3)
    res = cli(["-c", "-m", "map", "--stream", "--memory-limit", "1K", str(q), str(r)])
    msg = (
        f"cannot create a temporary directory for the run's partitions under {tmpdir_env} (Permission denied); "
        "set TMPDIR to a writable directory, or raise --memory-limit"
    )
    assert (res.code, res.out, res.err) == (2, b"", f"ireval: {msg}\n")
    with pytest.raises(TemporaryFilesError) as e:
        evaluate(q, r, ["map"], complete=True, stream=True, memory_limit="1K")
    assert str(e.value) == msg.replace("raise --memory-limit", "raise memory_limit")


def test_freed_memory_is_given_back_only_once_the_process_has_grown(monkeypatch):
    """After each partition, memory goes back to the system (a heap walk, and page faults
    for the next partition) only when the process is TRIM_SLACK larger than after the
    first partition; always where the resident size cannot be read."""
    released: list[int] = []
    sizes = iter([100 << 20, (100 << 20) + spill.TRIM_SLACK, (101 << 20) + spill.TRIM_SLACK, 90 << 20])
    now = {"rss": 0}

    def resident():
        now["rss"] = next(sizes)
        return now["rss"]

    monkeypatch.setattr(spill, "_resident_bytes", resident)
    monkeypatch.setattr(spill, "_release", lambda: released.append(now["rss"]))
    trim = spill._Trimmer()
    for _ in range(4):
        trim()
    assert released == [(101 << 20) + spill.TRIM_SLACK]  # the bound stays where the first set it

    monkeypatch.setattr(spill, "_resident_bytes", lambda: 0)  # no /proc: every time
    released.clear()
    trim = spill._Trimmer()
    trim()
    trim()
    assert len(released) == 2
