"""Datasets read as single files are (issue 21, item 16).

- An empty part (an empty Parquet file as Spark and Dask write for an empty partition, an
  empty text file, a CSV with only its header, TREC text with only comments) adds no rows;
  it never makes the dataset "have no results". A dataset whose every part is empty does.
- A dataset member is read exactly as the same file alone: the same rows, the same errors.
- A layout (hive directories included) is read the same whatever its files' format.
- What one format refuses, the others refuse too: a repeated column.
"""

from __future__ import annotations

import json

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

QRELS = b"1 0 a 1\n1 0 b 0\n1 0 c 1\n2 0 a 1\n2 0 d 1\n3 0 e 1\n"
ROWS = [  # qid, docno, score
    ("1", "a", 3.0),
    ("1", "b", 2.0),
    ("1", "c", 1.0),
    ("2", "d", 5.0),
    ("2", "a", 4.0),
    ("3", "x", 2.0),
    ("3", "e", 1.0),
]
MEASURES = ["-m", "map", "-m", "num_ret", "-m", "P.2", "-q"]


def _write(path, rows, fmt, *, cols=("qid", "docno", "score")):
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [dict(zip(("qid", "docno", "score"), r)) for r in rows]
    rows = [{c: r[c] for c in cols} for r in rows]
    if fmt == "parquet":
        types = {"qid": pa.string(), "docno": pa.string(), "score": pa.float64()}
        pq.write_table(pa.table({c: pa.array([r[c] for r in rows], types[c]) for c in cols}), path)
    elif fmt in ("csv", "tsv"):
        d = "," if fmt == "csv" else "\t"
        path.write_text(d.join(cols) + "\n" + "".join(d.join(str(r[c]) for c in cols) + "\n" for r in rows))
    elif fmt == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    else:  # trec
        path.write_text("".join(f"{r['qid']} Q0 {r['docno']} 1 {r['score']} run\n" for r in rows))


def _empty(path, fmt):
    """What an empty partition looks like in each format."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "parquet":
        _write(path, [], "parquet")  # zero rows, the schema kept (as Spark and Dask write it)
    elif fmt in ("csv", "tsv"):
        _write(path, [], fmt)  # the header alone
    elif fmt == "jsonl":
        path.write_bytes(b"")
    else:
        path.write_bytes(b"# nothing in this partition\n")


@pytest.fixture
def base(tmp_path, cli):
    (tmp_path / "q").write_bytes(QRELS)
    _write(tmp_path / "whole.parquet", ROWS, "parquet")
    res = cli([*MEASURES, "q", "whole.parquet"], cwd=tmp_path)
    assert res.code == 0, res.err
    return tmp_path, res.out


FORMATS = ["parquet", "csv", "tsv", "jsonl", "trec"]


def _same(out: bytes, want: bytes) -> bool:
    """The same values (the runid, which is the input's name, aside)."""
    return [line.split(b"\t") for line in out.splitlines() if not line.startswith(b"runid")] == [
        line.split(b"\t") for line in want.splitlines() if not line.startswith(b"runid")
    ]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_an_empty_part_adds_nothing(cli, base, fmt, where):
    d, want = base
    ext = {"trec": "txt"}.get(fmt, fmt)
    parts = [ROWS[:3], ROWS[3:5], ROWS[5:]]
    at = {"first": 0, "middle": 2, "last": 4}[where]
    names = [f"part-{i}.{ext}" for i in range(4)]
    order = [*parts]
    order.insert(at // 2 if where != "last" else 3, None)
    for name, rows in zip(names, order):
        if rows is None:
            _empty(d / "ds" / name, fmt)
        else:
            _write(d / "ds" / name, rows, fmt)
    res = cli([*MEASURES, "q", "ds"], cwd=d)
    assert res.code == 0, res.err
    assert _same(res.out, want)


def test_every_part_empty_is_no_results(cli, base):
    d, _ = base
    _empty(d / "ds" / "part-0.parquet", "parquet")
    _empty(d / "ds" / "part-1.parquet", "parquet")
    res = cli(["-m", "map", "q", "ds"], cwd=d)
    assert (res.code, res.err) == (2, "ireval: ds: the run dataset has no results (every file is empty)\n")


def test_an_empty_qrels_part(cli, base):
    d, want = base
    (d / "qd").mkdir()
    (d / "qd" / "a.txt").write_bytes(QRELS[:24])
    (d / "qd" / "b.txt").write_bytes(b"")
    (d / "qd" / "c.txt").write_bytes(QRELS[24:])
    res = cli([*MEASURES, "qd", "whole.parquet"], cwd=d)
    assert (res.code, res.out) == (0, want)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_hive_layout_is_read_the_same_in_every_format(cli, base, fmt):
    d, want = base
    ext = {"trec": "txt"}.get(fmt, fmt)
    cols = ("qid", "docno", "score") if fmt == "trec" else ("docno", "score")  # TREC lines carry their qid
    for q in ("1", "2", "3"):
        _write(d / "hive" / f"qid={q}" / f"part.{ext}", [r for r in ROWS if r[0] == q], fmt, cols=cols)
    res = cli([*MEASURES, "q", "hive"], cwd=d)
    assert res.code == 0, res.err
    assert _same(res.out, want)


@pytest.mark.parametrize("fmt", ["parquet", "csv", "tsv", "jsonl"])
def test_a_file_column_wins_over_its_hive_directory_in_every_format(cli, base, fmt):
    d, want = base
    for q in ("1", "2", "3"):
        _write(d / "hive" / "qid=9" / f"part-{q}.{fmt}", [r for r in ROWS if r[0] == q], fmt)
    res = cli([*MEASURES, "q", "hive"], cwd=d)
    assert res.code == 0, res.err
    assert _same(res.out, want)


def _repeated(path, fmt):
    if fmt == "parquet":
        t = pa.Table.from_arrays(
            [pa.array(["1"]), pa.array(["a"]), pa.array([1.0]), pa.array([2.0])],
            names=["qid", "docno", "score", "score"],
        )
        pq.write_table(t, path)
    elif fmt == "jsonl":
        path.write_text('{"qid": "1", "docno": "a", "score": 1.0, "score": 2.0}\n')
    else:
        d = "," if fmt == "csv" else "\t"
        path.write_text(d.join(["qid", "docno", "score", "score"]) + "\n" + d.join(["1", "a", "1.0", "2.0"]) + "\n")


@pytest.mark.parametrize("fmt", ["parquet", "csv", "tsv", "jsonl"])
def test_a_repeated_column_is_refused_in_every_format(cli, base, fmt):
    d, _ = base
    _repeated(d / f"rep.{fmt}", fmt)
    res = cli(["-m", "map", "q", f"rep.{fmt}"], cwd=d)
    message = "the column 'score' appears twice (columns: qid, docno, score, score); give each column its own name\n"
    assert (res.code, res.err) == (2, f"ireval: rep.{fmt}: {message}")
    (d / "ds").mkdir()
    _repeated(d / "ds" / f"part.{fmt}", fmt)
    res = cli(["-m", "map", "q", "ds"], cwd=d)
    assert (res.code, res.err) == (2, f"ireval: ds/part.{fmt}: {message}")


BAD = {  # a member's content -> the message the same file alone gets
    "nul": b"1 Q0 a 1 1.0 r\n1 Q0 b\x00 2 0.5 r\n",
    "fields": b"1 Q0 a 1 1.0 r\n1 Q0 b 2\n",
    "score": b"1 Q0 a 1 1.0 r\n1 Q0 b 2 high r\n",
    "bom": b"\xef\xbb\xbf1 Q0 a 1 1.0 r\n",
}


@pytest.mark.parametrize("case", BAD)
def test_a_member_is_refused_as_the_file_alone(cli, base, case):
    d, _ = base
    (d / "ds").mkdir()
    (d / "alone.txt").write_bytes(BAD[case])
    (d / "ds" / "alone.txt").write_bytes(BAD[case])
    alone = cli(["-m", "map", "q", "alone.txt"], cwd=d)
    member = cli(["-m", "map", "q", "ds"], cwd=d)
    assert alone.code == member.code == 2
    assert member.err == alone.err.replace("ireval: alone.txt", "ireval: ds/alone.txt")


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_dataset_of_one_file_is_that_file(cli, base, fmt):
    d, _ = base
    ext = {"trec": "txt"}.get(fmt, fmt)
    _write(d / f"one.{ext}", ROWS, fmt)
    _write(d / "ds" / f"one.{ext}", ROWS, fmt)
    alone = cli([*MEASURES, "q", f"one.{ext}"], cwd=d)
    member = cli([*MEASURES, "q", "ds"], cwd=d)
    assert alone.code == member.code == 0
    assert _same(member.out, alone.out)
