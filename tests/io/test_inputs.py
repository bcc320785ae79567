"""Input formats: detection, every reader, exact errors, and the round trip: the same
run and qrels in every input format give byte-identical results."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from irevalcli import evaluate
from irevalcli.api import load_qrels, load_run
from irevalcli.errors import DuplicateDocError, InputError, UsageError
from irevalcli.io.tabular import (
    default_runid,
    detect,
    expand_runs,
    parse_column_map,
    parse_qrels_source,
    parse_run_source,
    streamable,
)
from irevalcli.io.trec import Source
from irevalcli.output.formatters import format_trec
from tests.conftest import TREC_EVAL, write

QRELS = "1 0 a 1\n1 0 b 0\n1 0 c 2\n2 0 a 1\n2 0 d 1\n"
RUN = "1 Q0 a 1 3.0 r1\n1 Q0 b 2 2.0 r1\n1 Q0 c 3 1.0 r1\n2 Q0 d 1 5.0 r1\n2 Q0 e 2 4.0 r1\n"


def src(text: str | bytes, name: str = "f") -> Source:
    return Source(name=name, data=text.encode() if isinstance(text, str) else text, sha256="")


def zstd(data: bytes) -> bytes:
    return pa.compress(data, codec="zstd", asbytes=True)


# ---------------------------------------------------------------- the round trip


def _trec_frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    """trec_eval's own test run (1500 lines, odd spacing, tied scores) and qrels, split in plain Python."""
    rows = [line.split() for line in (TREC_EVAL / "results.test").read_text().splitlines()]
    run = pd.DataFrame(rows, columns=["qid", "iter", "docno", "rank", "score", "runid"])
    run["score"] = run["score"].astype(float)
    run["rank"] = run["rank"].astype(int)
    qrows = [line.split() for line in (TREC_EVAL / "qrels.test").read_text().splitlines()]
    qrels = pd.DataFrame(qrows, columns=["qid", "iter", "docno", "rel"])
    qrels["rel"] = qrels["rel"].astype(int)
    return run, qrels


@pytest.fixture(scope="module")
def every_format(tmp_path_factory):
    """The same run and qrels written in every input format (by pandas/pyarrow, not by ireval)."""
    d = tmp_path_factory.mktemp("formats")
    run, qrels = _trec_frames()
    text = (TREC_EVAL / "results.test").read_bytes()
    qtext = (TREC_EVAL / "qrels.test").read_bytes()
    runs = {
        "trec": d / "run.txt",
        "gzip": d / "run.gz.data",
        "bzip2": d / "run.bz",
        "xz": d / "run.x",
        "zstd": d / "run.zst",
        "tsv": d / "run.tsv",
        "csv": d / "run.csv",
        "jsonl": d / "run.jsonl",
        "parquet": d / "run.parquet",
        "tsv.zst": d / "run.tsv.zst",
        "jsonl.gz": d / "run.jsonl.gz",
    }
    runs["trec"].write_bytes(text)
    runs["gzip"].write_bytes(gzip.compress(text))
    runs["bzip2"].write_bytes(bz2.compress(text))
    runs["xz"].write_bytes(lzma.compress(text))
    runs["zstd"].write_bytes(zstd(text))
    run.to_csv(runs["tsv"], sep="\t", index=False)
    run.sample(frac=1.0, random_state=7).to_csv(runs["csv"], index=False)  # row order must not matter
    run.to_json(runs["jsonl"], orient="records", lines=True)
    run.astype({"qid": "category"}).to_parquet(runs["parquet"])  # a dictionary-encoded column too
    runs["tsv.zst"].write_bytes(zstd(runs["tsv"].read_bytes()))
    runs["jsonl.gz"].write_bytes(gzip.compress(runs["jsonl"].read_bytes()))
    qs = {
        "trec": d / "qrels.txt",
        "zstd": d / "qrels.zst",
        "tsv": d / "qrels.tsv",
        "csv": d / "qrels.csv",
        "jsonl": d / "qrels.jsonl",
        "parquet": d / "qrels.parquet",
    }
    qs["trec"].write_bytes(qtext)
    qs["zstd"].write_bytes(zstd(qtext))
    qrels.to_csv(qs["tsv"], sep="\t", index=False)
    qrels.to_csv(qs["csv"], index=False)
    qrels.to_json(qs["jsonl"], orient="records", lines=True)
    qrels.astype({"qid": "int64"}).to_parquet(qs["parquet"])  # numeric topic ids are written in decimal
    return runs, qs


@pytest.fixture(scope="module")
def reference():
    ev = evaluate(TREC_EVAL / "qrels.test", TREC_EVAL / "results.test", ["all_trec"])
    out = format_trec(ev.results, per_query=True)
    assert out == (TREC_EVAL / "out.test.aq").read_bytes()  # the reference is trec_eval's own output
    return out


@pytest.mark.parametrize(
    "run_fmt", ["trec", "gzip", "bzip2", "xz", "zstd", "tsv", "csv", "jsonl", "parquet", "tsv.zst", "jsonl.gz"]
)
def test_every_run_format_gives_identical_results(every_format, reference, run_fmt):
    runs, qs = every_format
    ev = evaluate(qs["trec"], runs[run_fmt], ["all_trec"])
    assert format_trec(ev.results, per_query=True) == reference


@pytest.mark.parametrize("qrels_fmt", ["zstd", "tsv", "csv", "jsonl", "parquet"])
def test_every_qrels_format_gives_identical_results(every_format, reference, qrels_fmt):
    runs, qs = every_format
    ev = evaluate(qs[qrels_fmt], runs["parquet"], ["all_trec"])
    assert format_trec(ev.results, per_query=True) == reference


def test_every_format_through_the_cli(cli, every_format):
    runs, qs = every_format
    want = cli(["-q", "-m", "all_trec", qs["trec"], runs["trec"]]).out
    for path in runs.values():
        res = cli(["-q", "-m", "all_trec", qs["jsonl"], path])
        assert (res.code, res.err, res.out) == (0, "", want), path


def test_stdin_in_every_format(cli, every_format):
    runs, qs = every_format
    want = cli(["-m", "all_trec", qs["trec"], runs["trec"]]).out
    for key in ("zstd", "csv", "jsonl", "parquet"):
        res = cli(["-m", "all_trec", qs["trec"], "-"], stdin=runs[key].read_bytes())
        assert (res.code, res.out) == (0, want), key


def test_msmarco_run_ranks_as_given(tmp_path, every_format, reference):
    """A run reduced to 'qid docno rank' (ranks as trec_eval ranks it) scores the same."""
    runs, qs = every_format
    full = load_run(runs["trec"])
    ev = evaluate(qs["trec"], full, ["all_trec"])
    run, _ = _trec_frames()
    run = run.sort_values(["qid", "score", "docno"], ascending=[True, False, False])
    run["rank"] = run.groupby("qid").cumcount() + 1
    path = tmp_path / "STANDARD.tsv"
    run[["qid", "docno", "rank"]].to_csv(path, sep="\t", index=False, header=False)
    ms = evaluate(qs["trec"], load_run(path, fmt="msmarco"), ["all_trec"])
    assert ms.run.runid == "STANDARD"  # from the file name
    assert format_trec(ms.results, per_query=True) == format_trec(ev.results, per_query=True) == reference


def test_msmarco_scores_and_errors(tmp_path):
    run = parse_run_source(src("q1\td1\t1\nq1\td2\t2\nq1 d3 3\n", "dev.run.tsv"), fmt="msmarco")
    assert run.score.tolist() == [-1.0, -2.0, -3.0] and run.runid == "dev.run"
    with pytest.raises(InputError) as err:
        parse_run_source(src("q1 d1 1\nq1 d2 2 x\n"), fmt="msmarco")
    assert str(err.value) == "f:2: expected 3 fields (qid docno rank), got 4"
    with pytest.raises(InputError) as err:
        parse_run_source(src("q1 d1 1\nq1 d2 two\n"), fmt="msmarco")
    assert str(err.value) == "f:2: rank 'two' is not a number"


def test_three_fields_suggest_msmarco():
    with pytest.raises(InputError) as err:
        parse_run_source(src("q1\td1\t1\n"))
    assert str(err.value) == (
        "f:1: expected at least 6 fields (qid iter docno rank score runid), got 3; "
        "for an MS MARCO run (qid docno rank) use --run-format msmarco"
    )


# ---------------------------------------------------------------- detection


@pytest.mark.parametrize(
    "data,fmt",
    [
        (b"1 Q0 a 1 2 r\n", "trec"),
        (b"1\tQ0\ta\t1\t2\tr\n", "trec"),
        (b"qid\tdocno\tscore\n1\ta\t2\n", "tsv"),
        (b"query_id,doc_id,score\n1,a,2\n", "csv"),
        (b'"qid","docno","rel"\n1,a,2\n', "csv"),
        (b"QID\tDOCNO\tREL\n", "tsv"),
        (b'\n  {"qid": 1}\n', "jsonl"),
        (b"PAR1....PAR1", "parquet"),
        (b"PAR1x Q0 a 1 2 r\n", "trec"),  # a topic id starting with PAR1: no Parquet footer
        (b"PAR1\n", "trec"),
        (b"qid docno score\n", "trec"),  # a header needs tabs or commas
    ],
)
def test_detect(data, fmt):
    assert detect(data) == fmt


def test_detect_with_mapped_names():
    assert detect(b"topic_no\tdoc\tsim\n") == "trec"
    assert detect(b"topic_no\tdoc\tsim\n", {"qid": "topic_no", "docno": "doc"}) == "tsv"


def test_streaming_only_for_trec_text(tmp_path, every_format):
    runs, _ = every_format
    assert streamable(runs["trec"]) and streamable(runs["gzip"]) and streamable(runs["xz"])
    assert streamable(runs["zstd"])  # Arrow's zstd stream decompresses it chunk by chunk
    for key in ("tsv", "csv", "jsonl", "parquet", "jsonl.gz"):
        assert not streamable(runs[key]), key
    assert not streamable(runs["trec"], "msmarco") and not streamable("-")


def test_forced_stream_on_other_formats_reads_whole(every_format, reference):
    runs, qs = every_format
    for key in ("parquet", "zstd", "jsonl"):  # zstd TREC text streams; the same numbers either way
        ev = evaluate(qs["trec"], runs[key], ["all_trec"], stream=True)
        assert format_trec(ev.results, per_query=True) == reference


# ---------------------------------------------------------------- tabular readers


def test_tsv_aliases_extra_columns_and_runid():
    run = parse_run_source(src("query_id\tdoc_id\tQ0\tscore\trun_id\n1\ta\tx\t1.5\tA\n2\tb#1\ty\t-2\tB\n"))
    assert run.qid.to_pylist() == [b"1", b"2"] and run.docno.to_pylist() == [b"a", b"b#1"]
    assert run.score.tolist() == [1.5, -2.0] and run.runid == "B"
    assert run.lineno.tolist() == [2, 3]


def test_runid_defaults_to_file_name():
    assert parse_run_source(src("qid,docno,score\n1,a,1\n", "runs/bm25.csv.zst")).runid == "bm25"
    assert default_runid("<stdin>") == "stdin" and default_runid("dir/x.run.gz") == "x"


def test_column_mapping():
    cmap = parse_column_map(["qid=topic,docno=doc", "score=sim"])
    assert cmap == {"qid": "topic", "docno": "doc", "score": "sim"}
    data = "topic\tdoc\tsim\tscore\n7\td1\t0.5\t9\n"
    run = parse_run_source(src(data), columns=cmap)
    assert run.score.tolist() == [0.5]  # the mapped column wins over one named 'score'


@pytest.mark.parametrize(
    "specs,message",
    [
        (["qid"], "--column qid: expected ROLE=NAME, e.g. qid=query_id (roles: qid, docno, score, rel, runid, rank)"),
        (["qi=x"], "--column qi=x: unknown role 'qi' (did you mean 'qid'? roles: qid, docno, score, rel, runid, rank)"),
        (["qid=a", "qid=b"], "--column qid: given twice (a, b)"),
    ],
)
def test_column_mapping_errors(specs, message):
    with pytest.raises(UsageError) as err:
        parse_column_map(specs)
    assert str(err.value) == message


def test_blank_lines_keep_line_numbers():
    text = "qid,docno,score\n1,a,1\n\n1,b,2\n\n\n1,c,x\n"
    with pytest.raises(InputError) as err:
        parse_run_source(src(text, "r.csv"))
    assert str(err.value) == "r.csv:7: score 'x' is not a number"
    run = parse_run_source(src(text.replace(",x", ",3"), "r.csv"))
    assert run.lineno.tolist() == [2, 4, 7]


def test_quoted_csv_fields():
    run = parse_run_source(src('qid,docno,score\n1,"doc, with comma",1\n1,"say ""hi""",2\n'))
    assert run.docno.to_pylist() == [b"doc, with comma", b'say "hi"']


@pytest.mark.parametrize(
    "name,text,message",
    [
        (
            "r.tsv",
            "qid\tdocno\ts\n1\ta\t1\n",
            "r.tsv: no 'score' column for the run (columns: qid, docno, s); name one with --column score=NAME",
        ),
        ("r.csv", "qid,docno,score\n1,a,1\n1,b\n", "r.csv:3: expected 3 CSV fields (as in the header), got 2"),
        ("r.csv", "qid,docno,score\n1,a,1\n1,,2\n", "r.csv:3: empty docno"),
        ("r.csv", "qid,docno,score\n1,a,nan\n", "r.csv:2: score 'nan' cannot be ranked"),
        (
            "r.jsonl",
            '{"qid": "1", "docno": "a", "score": 1}\n{"qid": "1", "docno": "b" "score": 2}\n',
            "r.jsonl:2: not valid JSON (Expecting ',' delimiter)",
        ),
        (
            "r.jsonl",
            '{"qid": "1", "docno": "a", "score": 1}\n\n{"qid": "1", "docno": "b"}\n',
            "r.jsonl:3: no score value",
        ),
        (
            "r.jsonl",
            '{"qid": "1", "docno": "a", "score": 1}\n{"qid": 2, "docno": "b", "score": 1}\n',
            "r.jsonl:2: 'qid' is a number here but a string on line 1",
        ),
        (
            "r.jsonl",
            '{"qid": "1", "docno": "a", "score": 1}\n[1, 2]\n',
            "r.jsonl:2: expected a JSON object, got an array",
        ),
        (
            "r.jsonl",
            '{"qid": "1", "docno": {"id": 3}, "score": 1}\n',
            "r.jsonl:1: 'docno' is an object; expected a string or a number",
        ),
        ("r.jsonl", '{"qid": "1", "docno": "a", "score": "high"}\n', "r.jsonl:1: score 'high' is not a number"),
    ],
)
def test_run_errors_name_file_and_line(name, text, message):
    with pytest.raises(InputError) as err:
        parse_run_source(src(text, name))
    assert str(err.value) == message


def test_qrels_errors_name_file_and_line():
    with pytest.raises(InputError) as err:
        parse_qrels_source(src("qid\tdocno\trel\n1\ta\t1\n1\tb\t1.5\n", "q.tsv"))
    assert (
        str(err.value)
        == "q.tsv:3: relevance label '1.5' is not an integer (trec_eval would truncate it; ireval refuses)"
    )
    with pytest.raises(InputError) as err:
        parse_qrels_source(src("qid\tdocno\tscore\n1\ta\t1\n", "q.tsv"))
    assert str(err.value) == (
        "q.tsv: no 'rel' column for the qrels (columns: qid, docno, score); name one with --column rel=NAME"
    )


def _parquet(tmp_path: Path, name: str, table: pa.Table) -> Path:
    path = tmp_path / name
    pq.write_table(table, path)
    return path


def test_parquet_types_and_row_errors(tmp_path):
    ok = _parquet(tmp_path, "q.parquet", pa.table({"qid": [301, 302], "docno": ["a", "b"], "rel": [1.0, 0.0]}))
    q = load_qrels(ok)
    assert q.qid.to_pylist() == [b"301", b"302"] and q.rel.tolist() == [1, 0]
    frac = _parquet(tmp_path, "f.parquet", pa.table({"qid": ["1", "1"], "docno": ["a", "b"], "rel": [1.0, 1.5]}))
    with pytest.raises(InputError) as err:
        load_qrels(frac)
    assert str(err.value) == (
        f"{frac}: row 2: relevance label '1.5' is not an integer (trec_eval would truncate it; ireval refuses)"
    )
    null = _parquet(tmp_path, "n.parquet", pa.table({"qid": ["1", "1"], "docno": ["a", "b"], "score": [1.0, None]}))
    with pytest.raises(InputError) as err:
        load_run(null)
    assert str(err.value) == f"{null}: row 2: no score value"
    text = _parquet(tmp_path, "t.parquet", pa.table({"qid": ["1"], "docno": ["a"], "score": ["x"]}))
    with pytest.raises(InputError) as err:
        load_run(text)
    assert str(err.value) == f"{text}: row 1: score 'x' is not a number"
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"PAR1 not really PAR1")
    with pytest.raises(InputError) as err:
        load_run(bad)
    assert str(err.value).startswith(f"{bad}: cannot read the Parquet file (")


def test_duplicate_in_tabular_run_names_lines(tmp_path):
    q = write(tmp_path / "q", QRELS)
    r = write(tmp_path / "r.csv", "qid,docno,score\n1,a,3\n2,d,1\n1,a,2\n")
    with pytest.raises(DuplicateDocError) as err:
        evaluate(q, r, ["map"], complete=True)
    assert str(err.value) == f"{r}:4: document 'a' is retrieved twice for topic '1' (first at line 2)"


def test_zstd_truncated(tmp_path):
    path = tmp_path / "r.zst"
    path.write_bytes(zstd(RUN.encode())[:-4])
    with pytest.raises(InputError) as err:
        load_run(path)
    assert str(err.value).startswith(f"{path}: cannot read run file: corrupt or truncated compressed data (")


def test_forced_format_and_unknown_format(tmp_path):
    path = write(tmp_path / "r", "qid\tdocno\tscore\n1\ta\t1\n")
    with pytest.raises(InputError) as err:
        load_run(path, fmt="trec")
    assert str(err.value).startswith(f"{path}:1: expected at least 6 fields (qid iter docno rank score runid), got 3; ")
    with pytest.raises(UsageError) as err2:
        load_run(path, fmt="xml")
    assert str(err2.value) == "--run-format xml: unknown format (known: auto, trec, msmarco, tsv, csv, jsonl, parquet)"


def test_jsonl_numbers_and_mixed_numeric_scores():
    run = parse_run_source(src('{"qid": 1, "docno": 5, "score": 3}\n{"qid": 1, "docno": 6, "score": 2.5}\n'))
    assert run.qid.to_pylist() == [b"1", b"1"] and run.docno.to_pylist() == [b"5", b"6"]
    assert run.score.tolist() == [3.0, 2.5]


# ---------------------------------------------------------------- several runs, globs


def test_expand_runs(tmp_path):
    for name in ("b.txt", "a.txt", "c.tsv"):
        write(tmp_path / name, RUN)
    assert expand_runs([str(tmp_path / "*.txt"), "-"]) == [str(tmp_path / "a.txt"), str(tmp_path / "b.txt"), "-"]
    with pytest.raises(InputError) as err:
        expand_runs([str(tmp_path / "*.none")])
    assert str(err.value) == f"{tmp_path / '*.none'}: cannot read run file: no file matches this pattern"
    with pytest.raises(UsageError):
        expand_runs(["-", "-"])


def test_cli_input_options(cli, tmp_path):
    q = write(tmp_path / "q.txt", QRELS)
    r = write(
        tmp_path / "r.tsv",
        "topic\tdoc\tsim\n" + "".join(f"{f[0]}\t{f[2]}\t{f[4]}\n" for f in (line.split() for line in RUN.splitlines())),
    )
    plain = cli(["-m", "map", "-m", "P.5", q, write(tmp_path / "r.txt", RUN)])
    res = cli(["-m", "map", "-m", "P.5", "--column", "qid=topic,docno=doc", "--column", "score=sim", q, r])
    assert (res.code, res.err, res.out) == (0, "", plain.out)
    # topic and doc are recognised names (the header is detected), sim is not
    for args in ([], ["--run-format", "tsv"]):
        res = cli(["-m", "map", *args, q, r])
        assert (res.code, res.out) == (2, b"")
        assert res.err == (
            f"ireval: {r}: no 'score' column for the run (columns: topic, doc, sim); name one with --column score=NAME\n"
        )
    odd = write(tmp_path / "odd.tsv", "topic\tpassage\tsim\n1\ta\t3\n")
    res = cli(["-m", "map", q, odd])
    assert res.err == (
        f"ireval: {odd}:1: expected at least 6 fields (qid iter docno rank score runid), got 3; "
        "is line 1 a header? name its columns with --column, e.g. --column qid=NAME,docno=NAME\n"
    )
    res = cli(["-m", "map", "--run-format", "tsv", q, odd])
    assert res.err == (
        f"ireval: {odd}: no 'docno' column for the run (columns: topic, passage, sim); "
        "name one with --column docno=NAME\n"
    )
    res = cli(["--column", "score", q, r])
    assert res.code == 2 and res.err.startswith("ireval: --column score: expected ROLE=NAME")


def test_dataframe_api_unchanged():
    qrels = pd.read_csv(io.StringIO(QRELS), sep=" ", header=None, names=["qid", "iter", "docno", "rel"])
    run = pd.read_csv(io.StringIO(RUN), sep=" ", header=None, names=["qid", "iter", "docno", "rank", "score", "runid"])
    ev = evaluate(qrels, run, ["map"])
    assert ev.results.summary["map"] == pytest.approx(((1 + 2 / 3) / 2 + 0.5) / 2)


def _calls_while(fn) -> int:
    """How many Python and builtin function calls ``fn()`` makes (a profile hook counts them)."""
    import sys

    count = 0

    def hook(frame, event, arg):
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    sys.setprofile(hook)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return count


def test_reading_is_vectorised_on_a_large_run(tmp_path):
    """Reading 100x more rows makes (almost) no more function calls: no Python per line.

    The work is counted, not timed, so a busy machine cannot make this fail."""
    rng = np.random.default_rng(0)
    calls = {}
    for n in (2_000, 200_000):
        df = pd.DataFrame(
            {"qid": (np.arange(n) // 1000).astype(str), "docno": [f"d{i}" for i in range(n)], "score": rng.random(n)}
        )
        paths = {
            "csv": tmp_path / f"r{n}.csv",
            "jsonl": tmp_path / f"r{n}.jsonl",
            "parquet": tmp_path / f"r{n}.parquet",
        }
        df.to_csv(paths["csv"], index=False)
        df.to_json(paths["jsonl"], orient="records", lines=True)
        df.to_parquet(paths["parquet"])
        for key, path in paths.items():
            got = []
            calls[key, n] = _calls_while(lambda got=got, path=path: got.append(load_run(path)))
            run = got[0]
            assert len(run) == n and run.docno[n - 1].as_py() == f"d{n - 1}".encode()
    for key in ("csv", "jsonl", "parquet"):
        small, large = calls[key, 2_000], calls[key, 200_000]
        # 198,000 more rows; a per-row Python step would add at least that many calls
        assert large - small < 2_000, (key, small, large)


def test_rank_column_ranks_like_the_trec_run(cli, tmp_path):
    """--column rank=NAME derives score = -rank (as --run-format msmarco does): the examples'
    run written as qid,docno,rank scores exactly what the TREC run scores."""
    root = Path(__file__).resolve().parents[2] / "examples"
    lines = (root / "run.txt").read_text().split("\n")
    rows = [line.split() for line in lines if line.strip()]
    (tmp_path / "r.csv").write_text("qid,docno,rank\n" + "".join(f"{r[0]},{r[2]},{r[3]}\n" for r in rows))
    qrels = str(root / "qrels.txt")
    by_rank = cli(["-m", "map", "--column", "rank=rank", qrels, "r.csv"], cwd=tmp_path)
    trec = cli(["-m", "map", qrels, str(root / "run.txt")], cwd=tmp_path)
    assert by_rank.out == trec.out == b"map                   \tall\t0.6594\n"
    backwards = cli(["-m", "map", "--column", "score=rank", qrels, "r.csv"], cwd=tmp_path)
    assert backwards.out != trec.out  # what the old hint led to


# ---- one rule for labels in every format (issue 14 item 8) ---------------------------
# A whole number is a label however it is typed or written (1, 1.0, -1.0, 1e0); a
# fraction is refused with the same message everywhere; in trec_eval's own text formats an
# exponent that changes the value (1e1: atol reads 1) is refused too.

FRACTION = "relevance label '{v}' is not an integer (trec_eval would truncate it; ireval refuses)"
LABEL_CASES = [("1", 1), ("1.0", 1), ("-1.0", -1), ("1e0", 1), ("0.5", None)]


def _label_file(tmp_path: Path, fmt: str, v: str) -> tuple[Path, str]:
    """A two-judgement qrels whose second label is written ``v``; (path, where the error points)."""
    if fmt == "trec":
        p = tmp_path / "q.txt"
        p.write_text(f"1 0 a 1\n1 0 b {v}\n")
        return p, f"{p}:2"
    if fmt in ("csv", "tsv"):
        d = "," if fmt == "csv" else "\t"
        p = tmp_path / f"q.{fmt}"
        p.write_text(f"qid{d}docno{d}rel\n1{d}a{d}1\n1{d}b{d}{v}\n")
        return p, f"{p}:3"
    if fmt in ("jsonl", "jsonl-text"):
        p = tmp_path / "q.jsonl"
        val = f'"{v}"' if fmt == "jsonl-text" else v
        first = '"1"' if fmt == "jsonl-text" else "1"
        p.write_text(f'{{"qid": "1", "docno": "a", "rel": {first}}}\n{{"qid": "1", "docno": "b", "rel": {val}}}\n')
        return p, f"{p}:2"
    p = tmp_path / "q.parquet"
    pq.write_table(pa.table({"qid": ["1", "1"], "docno": ["a", "b"], "rel": [1.0, float(v)]}), p)
    return p, f"{p}: row 2:"


@pytest.mark.parametrize("fmt", ["trec", "csv", "tsv", "jsonl", "jsonl-text", "parquet"])
@pytest.mark.parametrize("v,want", LABEL_CASES)
def test_labels_one_rule_in_every_file_format(tmp_path, fmt, v, want):
    path, where = _label_file(tmp_path, fmt, v)
    if want is None:
        with pytest.raises(InputError) as err:
            load_qrels(path)
        sep = "" if where.endswith(":") else ":"
        assert str(err.value) == f"{where}{sep} " + FRACTION.format(v=v)
    else:
        assert load_qrels(path).rel.tolist() == [1, want]


@pytest.mark.parametrize("kind", ["float", "text", "arrow"])
@pytest.mark.parametrize("v,want", LABEL_CASES)
def test_labels_one_rule_in_dataframes(kind, v, want):
    import pandas as pd

    from irevalcli.api import qrels_from_frame
    from irevalcli.io.judgements import judgements_from_frame
    from irevalcli.io.subtopics import subtopics_from_frame

    col = {"float": [1.0, float(v)], "text": ["1", v], "arrow": pd.array([1.0, float(v)], dtype="double[pyarrow]")}[
        kind
    ]
    frames = [
        (
            lambda: qrels_from_frame(pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "rel": col})).rel,
            "<qrels DataFrame>",
        ),
        (
            lambda: (
                subtopics_from_frame(
                    pd.DataFrame({"qid": ["1", "1"], "subtopic": ["s", "s"], "docno": ["a", "b"], "rel": col})
                ).rel
            ),
            "<subtopics DataFrame>",
        ),
        (
            lambda: (
                judgements_from_frame(
                    pd.DataFrame({"qid": ["1", "1"], "jg": ["j", "j"], "docno": ["a", "b"], "rel": col}), "qrels_jg"
                ).level
            ),
            "<judgements DataFrame>",
        ),
    ]
    for read, name in frames:
        if want is None:
            with pytest.raises(InputError) as err:
                read()
            assert str(err.value) == f"{name}:2: " + FRACTION.format(v=v)
        else:
            assert read().tolist() == [1, want]


@pytest.mark.parametrize("rel_format", ["subtopics", "qrels_jg"])
@pytest.mark.parametrize("v,want", [*LABEL_CASES, ("1e1", "10")])
def test_labels_one_rule_in_subtopic_and_jg_files(tmp_path, rel_format, v, want):
    from irevalcli.io.judgements import read_judgements
    from irevalcli.io.subtopics import read_subtopics

    p = tmp_path / "j.txt"
    p.write_text(f"1 s a 1\n1 s b {v}\n")
    read = (
        (lambda: read_subtopics(p).rel) if rel_format == "subtopics" else (lambda: read_judgements(p, "qrels_jg").level)
    )
    if want is None:
        with pytest.raises(InputError) as err:
            read()
        assert str(err.value) == f"{p}:2: " + FRACTION.format(v=v)
    elif want == "10":
        with pytest.raises(InputError) as err:
            read()
        assert str(err.value) == f"{p}:2: relevance label '1e1' is 10, but trec_eval reads it as 1; write 10"
    else:
        assert read().tolist() == [1, want]


def test_label_exponent_is_its_value_outside_trec_text(tmp_path):
    """Only trec_eval's own format has the atol reading to guard: 1e1 is 10 in a CSV."""
    p = tmp_path / "q.csv"
    p.write_text("qid,docno,rel\n1,a,1\n1,b,1e1\n")
    assert load_qrels(p).rel.tolist() == [1, 10]


def test_a_header_name_that_is_not_utf8_is_read(tmp_path):
    """Found by test_readers_long: a CSV header with a byte that is not UTF-8 reached Arrow,
    which takes column names as UTF-8 text, and failed with a UnicodeEncodeError."""
    from irevalcli.errors import InputError
    from irevalcli.io.tabular import parse_run_source
    from irevalcli.io.trec import Source

    run = parse_run_source(Source("r.csv", b"qid,docno,score,\x80extra\n1,a,2.5,x\n", ""))
    assert run.docno.to_pylist() == [b"a"] and run.score.tolist() == [2.5]
    with pytest.raises(InputError) as e:
        parse_run_source(Source("r.csv", b"query_id,\x80qid,docno,score\n", ""))
    assert "r.csv" in str(e.value)
