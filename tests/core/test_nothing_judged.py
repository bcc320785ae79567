"""Issue 21 item 4: qrels that judge nothing the run retrieved (TREC DL 2019 document qrels against
passage runs: every topic id shared, no document) gave 0.0000 everywhere, "no drop", exit 0. The
main command now warns; compare and gate refuse (exit 2) naming the likely cause. The threshold is
none judged at all: sparse qrels (MS MARCO dev judges about one passage per query) make a low judged
share normal, so a share threshold would refuse honest evaluations."""

from __future__ import annotations

import irevalcli
from tests.conftest import write

WHY = (
    "none of the documents it retrieved is judged in qd.txt: the document ids do not line up "
    "(document qrels against a passage run, or another collection's ids?)"
)


def _files(tmp_path):
    write(tmp_path / "qd.txt", "1 0 D1 1\n1 0 D2 0\n2 0 D3 1\n")  # document ids
    write(tmp_path / "passages.txt", "1 Q0 P1 1 3 p\n1 Q0 P2 2 2 p\n2 Q0 P3 1 2 p\n")  # passage ids
    write(tmp_path / "one.txt", "1 Q0 P1 1 3 o\n2 Q0 D3 1 2 o\n")  # one judged document: fine
    return tmp_path


def test_the_main_command_warns(cli, tmp_path):
    d = _files(tmp_path)
    res = cli(["-m", "map", "qd.txt", "passages.txt"], cwd=d)
    assert (res.code, res.out) == (0, b"map                   \tall\t0.0000\n")
    assert res.err == f"ireval: warning: passages.txt: {WHY}\n"
    ok = cli(["-m", "map", "qd.txt", "one.txt"], cwd=d)
    assert (ok.code, ok.err) == (0, "")


def test_compare_and_gate_refuse(cli, tmp_path):
    d = _files(tmp_path)
    for args in (
        ["gate", "qd.txt", "passages.txt", "--min", "map=0"],
        ["gate", "qd.txt", "one.txt", "--baseline", "passages.txt", "--max-drop", "map=0"],
        ["compare", "qd.txt", "one.txt", "passages.txt"],
    ):
        res = cli(args, cwd=d)
        assert (res.code, res.out, res.err) == (2, b"", f"ireval: passages.txt: {WHY}\n"), args
    assert cli(["gate", "qd.txt", "one.txt", "--min", "map=0"], cwd=d).code == 0


def test_the_api_counts_judged_documents_without_adding_columns(tmp_path):
    d = _files(tmp_path)
    ev = irevalcli.evaluate(d / "qd.txt", d / "passages.txt", "map")
    assert ev.results.judged_retrieved == 0 and [c.label for c in ev.results.columns] == ["map"]
    ev = irevalcli.evaluate(d / "qd.txt", d / "one.txt", ["map", "num_rel_ret"])
    assert ev.results.judged_retrieved == 1 and [c.label for c in ev.results.columns] == ["num_rel_ret", "map"]
