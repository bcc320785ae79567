"""``ireval pool`` on a hand-made example: depth-N union per topic, deduplicated, judged
pairs left out, per-run contribution counts."""

from __future__ import annotations

import pytest

from irevalcli.api import load_qrels, load_run
from irevalcli.commands.pool import build_pool, pool_bytes
from irevalcli.errors import DuplicateDocError, OutputError
from tests.conftest import write

# Run A ranks by score; its rank column is deliberately wrong (ignored, as trec_eval does).
RUN_A = """\
1 Q0 d1 9 9.0 A
1 Q0 d2 8 8.0 A
1 Q0 d3 7 7.0 A
2 Q0 d9 1 5.0 A
"""
# Run B: d3 and d4 tie in topic 1; ties go to the larger docno first, so d4 ranks above d3.
RUN_B = """\
1 Q0 d3 1 9.0 B
1 Q0 d4 2 9.0 B
1 Q0 d1 3 1.0 B
2 Q0 d8 1 5.0 B
2 Q0 d9 2 4.0 B
3 Q0 d7 1 1.0 B
"""
JUDGED = "1 0 d1 1\n2 0 d8 0\n"

# By hand, depth 2:
#   A: topic 1 -> d1, d2; topic 2 -> d9                          (3 documents)
#   B: topic 1 -> d4, d3; topic 2 -> d8, d9; topic 3 -> d7        (5 documents)
#   union: 1: d1 d2 d3 d4 | 2: d8 d9 | 3: d7                      (7 documents)
#   unique: A: d1, d2 (d9 is shared) = 2; B: d3, d4, d8, d7 = 4
POOL_2 = "1 0 d1 -1\n1 0 d2 -1\n1 0 d3 -1\n1 0 d4 -1\n2 0 d8 -1\n2 0 d9 -1\n3 0 d7 -1\n"


def qrels_for(tmp_path):
    return write(tmp_path / "q.txt", "1 0 y 1\n2 0 x 1\n")


@pytest.fixture
def runs(tmp_path):
    return write(tmp_path / "a.txt", RUN_A), write(tmp_path / "b.txt", RUN_B), write(tmp_path / "j.txt", JUDGED)


def test_pool_by_hand(runs):
    a, b, _ = runs
    pool = build_pool([load_run(a), load_run(b)], depth=2)
    assert pool_bytes(pool).decode() == POOL_2
    assert [(c.runid, c.topics, c.pooled, c.unique, c.judged) for c in pool.runs] == [
        ("A", 2, 3, 2, 0),
        ("B", 3, 5, 4, 0),
    ]
    assert (len(pool), pool.topics, pool.judged) == (7, 3, 0)


def test_depth_one_and_deep(runs):
    a, b, _ = runs
    one = build_pool([load_run(a), load_run(b)], depth=1)
    assert pool_bytes(one, "0").decode() == "1 0 d1 0\n1 0 d4 0\n2 0 d8 0\n2 0 d9 0\n3 0 d7 0\n"
    deep = build_pool([load_run(a), load_run(b)], depth=1000)
    assert pool_bytes(deep).decode() == POOL_2  # depth 2 already held every document
    # A: d1 d2 d3 d9, only d2 its own; B: d3 d4 d1 d8 d9 d7, its own d4 d8 d7
    assert [(c.pooled, c.unique) for c in deep.runs] == [(4, 1), (6, 3)]


def test_judged_pairs_left_out(runs):
    a, b, j = runs
    pool = build_pool([load_run(a), load_run(b)], depth=2, qrels=load_qrels(j))
    assert pool_bytes(pool).decode() == "1 0 d2 -1\n1 0 d3 -1\n1 0 d4 -1\n2 0 d9 -1\n3 0 d7 -1\n"
    # A's d1 and B's d8 were judged: A pools d2, d9 (unique d2); B pools d4, d3, d9, d7 (unique d3, d4, d7)
    assert [(c.pooled, c.unique, c.judged) for c in pool.runs] == [(2, 1, 1), (4, 3, 1)]
    assert pool.judged == 2


def test_cli(cli, runs, tmp_path):
    a, b, j = runs
    res = cli(["pool", a, b, "--depth", "2"])
    assert res.code == 0 and res.out.decode() == POOL_2
    assert res.err == (
        "pool: 7 documents to judge over 3 topics from 2 runs at depth 2\n"
        f"{'run'.ljust(len(str(a)))}  runid  topics  pooled  unique  judged\n"
        f"{a}  A           2       3       2       0\n"
        f"{b}  B           3       5       4       0\n"
    )
    out, counts = tmp_path / "pool.qrels", tmp_path / "counts.csv"
    res = cli(["pool", a, b, "-k", "2", "--qrels", j, "--label", "0", "--output", out, "--counts", counts, "--quiet"])
    assert (res.code, res.out, res.err) == (0, b"", "")
    assert out.read_text() == "1 0 d2 0\n1 0 d3 0\n1 0 d4 0\n2 0 d9 0\n3 0 d7 0\n"
    assert counts.read_text() == f"run,runid,topics,pooled,unique,judged\n{a},A,2,2,1,1\n{b},B,3,4,3,1\n"


def test_pool_file_is_a_qrels_file(cli, runs, tmp_path):
    a, b, _ = runs
    out = tmp_path / "pool.qrels"
    cli(["pool", a, b, "--depth", "2", "--label", "1", "--output", out, "--quiet"])
    q = load_qrels(out)
    assert len(q.qid) == 7 and set(q.rel.tolist()) == {1}


def test_pool_from_other_formats(cli, runs, tmp_path):
    a, _, _ = runs
    tsv = write(
        tmp_path / "b.tsv",
        "qid\tdocno\tscore\trunid\n"
        + "".join(f"{f[0]}\t{f[2]}\t{f[4]}\t{f[5]}\n" for f in (line.split() for line in RUN_B.splitlines())),
    )
    res = cli(["pool", a, tsv, "--depth", "2", "--quiet"])
    assert res.out.decode() == POOL_2


def test_errors(cli, runs, tmp_path):
    a, _, _ = runs
    res = cli(["pool", a, "--depth", "0"])
    assert (res.code, res.err) == (2, "ireval: --depth 0: must be at least 1\n")
    res = cli(["pool", a, "--label", "not one"])
    assert (res.code, res.err) == (2, "ireval: --label 'not one': must be one word\n")
    dup = write(tmp_path / "dup.txt", "1 Q0 x 1 2 r\n1 Q0 x 2 1 r\n")
    with pytest.raises(DuplicateDocError) as err:
        build_pool([load_run(dup)], depth=5)
    assert str(err.value) == f"{dup}:2: document 'x' is retrieved twice for topic '1' (first at line 1)"
    # three times: the line named is the first that repeats it, as the evaluation names it
    thrice = write(tmp_path / "thrice.txt", "1 Q0 y 1 3 r\n2 Q0 x 1 3 r\n2 Q0 x 2 2 r\n2 Q0 x 3 1 r\n")
    with pytest.raises(DuplicateDocError) as err:
        build_pool([load_run(thrice)], depth=5)
    assert str(err.value) == f"{thrice}:3: document 'x' is retrieved twice for topic '2' (first at line 2)"
    assert cli(["-m", "map", qrels_for(tmp_path), thrice]).err == f"ireval: {err.value}\n"
    spaced = write(tmp_path / "s.csv", 'qid,docno,score\n1,"a b",1\n')
    with pytest.raises(OutputError) as err2:
        pool_bytes(build_pool([load_run(spaced)], depth=5))
    assert (
        str(err2.value)
        == "cannot write the pool: document id 'a b' contains whitespace, which a qrels file cannot hold"
    )
    res = cli(["pool"])
    assert res.code == 2 and "Missing argument 'RUN...'" in res.err


def test_no_file_is_written_unless_every_file_can_be(cli, runs, tmp_path, monkeypatch):
    """--output and --counts: the second file failing (a full disk when its temporary file is
    made) leaves neither; an old file of either name is left as it was."""
    import tempfile

    a, b, _ = runs
    out, counts = tmp_path / "pool.qrels", tmp_path / "counts.csv"
    out.write_bytes(b"old pool\n")
    real, made = tempfile.mkstemp, []

    def second_fails(*args, **kw):
        if made:
            raise OSError(28, "No space left on device")
        made.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(tempfile, "mkstemp", second_fails)
    res = cli(["pool", a, b, "--output", out, "--counts", counts, "--quiet"])
    monkeypatch.undo()
    assert (res.code, res.out) == (2, b"")
    assert res.err in (
        f"ireval: --output {out}: cannot write (No space left on device)\n",
        f"ireval: --counts {counts}: cannot write (No space left on device)\n",
    )
    assert out.read_bytes() == b"old pool\n" and not counts.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".ireval-")]


def test_counts_to_stdout_when_the_pool_goes_to_a_file(cli, runs, tmp_path):
    a, b, _ = runs
    res = cli(["pool", a, b, "-k", "2", "--output", tmp_path / "p.qrels", "--counts", "-", "--quiet"])
    assert res.code == 0 and res.out.decode().startswith("run,runid,topics,pooled,unique,judged\n")
    assert (tmp_path / "p.qrels").read_text() == POOL_2
    res = cli(["pool", a, b, "--counts", "-"])
    assert (res.code, res.out) == (2, b"")
    assert res.err == (
        "ireval: --counts -: standard output carries the pool; give --output PATH for it or a file name for --counts\n"
    )


def test_counts_csv_neutralises_formula_cells(cli, tmp_path):
    run = write(tmp_path / "=cmd.txt", "1 Q0 d1 1 1.0 @SUM(A1)\n")
    res = cli(["pool", run, "--counts", tmp_path / "c.csv", "--quiet"])
    assert res.code == 0
    assert (tmp_path / "c.csv").read_text() == f"run,runid,topics,pooled,unique,judged\n{run},'@SUM(A1),1,1,1,0\n"
    res = cli(["pool", "=cmd.txt", "--counts", "c2.csv", "--quiet"], cwd=tmp_path)
    assert (tmp_path / "c2.csv").read_text().splitlines()[1] == "'=cmd.txt,'@SUM(A1),1,1,1,0"


def test_counts_report_spells_out_control_characters(cli, tmp_path):
    run = write(tmp_path / "a.txt", "1 Q0 d1 1 1.0 r\x1b[2J\n")
    res = cli(["pool", run])
    assert res.code == 0 and "\x1b" not in res.err and "r\\x1b[2J" in res.err
