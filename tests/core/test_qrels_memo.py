"""Issue 22 item 1 (many runs in one call): the qrels-side work kept under the qrels object
(core.memo) gives every run the values a fresh reading of the qrels gives it."""

from __future__ import annotations

import gc
import random
from pathlib import Path

import numpy as np
import pytest

from irevalcli.core import memo


def _qrels(rng: random.Random, numeric: bool) -> str:
    lines = []
    for t in range(1, 9):
        for d in rng.sample(range(400), rng.randint(1, 30)):
            doc = str(d * 7 + 1) if numeric else f"D{d:03d}"
            lines.append(f"{t} 0 {doc} {rng.choice([0, 0, 1, 2, 3, -1])}")
    rng.shuffle(lines)  # (not grouped by topic: the blocks of its topic column are many)
    return "\n".join(lines) + "\n"


def _run(rng: random.Random, numeric: bool, topics: list[int], docs: range, runid: str) -> str:
    lines = []
    for t in topics:
        for i, d in enumerate(rng.sample(docs, rng.randint(1, 40))):
            doc = str(d * 7 + 1) if numeric else f"D{d:03d}"
            lines.append(f"{t} Q0 {doc} {i + 1} {rng.choice([1.0, 2.0, rng.random()]):.4f} {runid}")
    return "\n".join(lines) + "\n"


def _runs(tmp_path: Path, numeric: bool, seed: int) -> tuple[Path, list[Path]]:
    """The qrels and runs whose topics and docnos differ run to run: every judged topic, some
    missing (scored under -c), topics nobody judged, docnos beyond the judged ones (another
    numeric bound, another dictionary) and none of the judged ones."""
    rng = random.Random(seed)
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(_qrels(rng, numeric))
    shapes = [
        (list(range(1, 9)), range(400)),
        (list(range(1, 9)), range(100000, 100050)),  # nothing judged retrieved, larger ids
        ([1, 2, 3], range(400)),  # topics missing
        ([2, 5, 9, 10], range(2000)),  # unjudged topics 9, 10; missing ones
        (list(range(8, 0, -1)), range(50)),  # topics in another order, fewer docnos
        (list(range(1, 9)), range(400)),
    ]
    runs = []
    for i, (topics, docs) in enumerate(shapes):
        path = tmp_path / f"run{i}.txt"
        path.write_text(_run(rng, numeric, topics, docs, f"run{i}"))
        runs.append(path)
    return qrels, runs


OPTIONS = [
    ["-c"],
    ["-c", "-M", "5"],
    ["-c", "-l", "2"],
    ["-c", "-J"],
    ["-c", "-N", "1000", "-m", "utility.1,-1,0,0"],
    ["-c", "--compat", "9.0.8"],
    ["-c", "-R", "qrels_jg", "-m", "qrels_jg"],
    ["-c", "--ties", "input"],
    # gain tables: level=gain pairs (a negative level among them), rescaled gains, ideal lists
    ["-c", "-m", "ndcg.1=3,2=9,-1=2", "-m", "G.0=1,3=0.5", "-m", "rbp.p=0.5,1=0.5", "-m", "ndcg_rel", "-m", "Rndcg"],
]


@pytest.mark.parametrize("numeric", [True, False])
@pytest.mark.parametrize("options", OPTIONS, ids=" ".join)
def test_runs_of_one_call_score_as_each_run_alone(cli, tmp_path, numeric, options):
    qrels, runs = _runs(tmp_path, numeric, seed=len(options) + numeric)
    measures = [] if "-m" in options else ["-m", "all_trec"]
    together = cli(["-q", *measures, *options, qrels, *runs])
    assert together.code == 0, together.err
    blocks = []
    for i, path in enumerate(runs):
        memo._MEMO.clear()  # each run alone: nothing kept from another
        alone = cli(["-q", *measures, *options, qrels, path])
        assert alone.code == 0, alone.err
        blocks.append(f"==> {path} (runid run{i}) <==\n".encode() + alone.out)
    assert together.out == b"\n".join(blocks)


def test_a_missing_topic_is_refused_after_runs_that_have_every_topic(cli, tmp_path):
    qrels, runs = _runs(tmp_path, True, seed=3)
    got = cli(["-m", "map", qrels, runs[0], runs[2]])
    assert got.code == 2
    assert "topic '4' is judged" in got.err and str(runs[2]) in got.err


def test_once_keeps_a_value_while_its_object_lives():
    class Obj:
        pass

    calls = []
    a = Obj()
    assert memo.once(a, "x", lambda: calls.append(1) or 41) == 41
    assert memo.once(a, "x", lambda: calls.append(1) or 42) == 41
    assert memo.once(a, "y", lambda: 7) == 7
    assert len(calls) == 1
    key = id(a)
    del a
    gc.collect()
    assert key not in memo._MEMO
    b = Obj()
    assert memo.once(b, "x", lambda: 43) == 43  # another object: its own value
    assert memo.once(5, "x", lambda: 44) == 44  # an object without weak references: not kept
    assert memo.once(5, "x", lambda: 45) == 45


def test_only_the_newest_objects_keep_their_values():
    class Obj:
        pass

    objs = [Obj() for _ in range(memo.SIZE + 3)]
    for i, o in enumerate(objs):
        memo.once(o, "i", lambda i=i: i)
    assert len(memo._MEMO) <= memo.SIZE
    assert memo.once(objs[-1], "i", lambda: -1) == len(objs) - 1
    assert memo.once(objs[0], "i", lambda: -1) == -1  # forgotten: computed again


def test_same_order_is_given_again_only_for_equal_arrays():
    class Obj:
        pass

    o = Obj()
    a, b = np.array([3, 1, 2]), np.array([0, 0, 1])
    assert memo.same_order(o, "k", (a, b), lambda: "first") == "first"
    assert memo.same_order(o, "k", (a.copy(), b.copy()), lambda: "second") == "first"
    a[0] = 4  # the caller changes its array: the kept copy is not changed with it
    assert memo.same_order(o, "k", (a, b), lambda: "third") == "third"
    assert memo.same_order(o, "k", (a, b.astype(np.int32)), lambda: "fourth") == "fourth"
    assert memo.same_order(o, "k", (a, b[:2]), lambda: "fifth") == "fifth"
    assert memo.same_order(o, "k", (a,), lambda: "sixth") == "sixth"


def test_the_next_run_is_read_ahead_and_its_error_comes_in_its_turn(cli, tmp_path, monkeypatch):
    from irevalcli import api

    qrels, runs = _runs(tmp_path, True, seed=5)
    bad = tmp_path / "bad.txt"
    bad.write_text("1 Q0 D1 1 not-a-score r\n")
    made = []
    real = api.ReadAhead.__init__

    def counted(self, path, settings):
        made.append(path)
        real(self, path, settings)

    monkeypatch.setattr(api.ReadAhead, "__init__", counted)
    alone = cli(["-m", "map", qrels, bad])
    got = cli(["-m", "map", qrels, runs[0], bad, runs[5]])
    assert made == [str(bad), str(runs[5])], got.err  # (the first run is read by the first evaluation)
    assert got.code == alone.code == 2
    assert got.err == alone.err and "not-a-score" in got.err
    # an error of the run before it comes first, though the bad run was read meanwhile
    first = cli(["-m", "map", qrels, runs[2], bad])
    assert first.code == 2 and "topic '4' is judged" in first.err and "not-a-score" not in first.err


def test_only_a_regular_file_read_whole_is_read_ahead(tmp_path):
    import gzip

    from irevalcli.api import _reads_whole
    from irevalcli.settings import EvalSettings

    plain = tmp_path / "run.txt"
    plain.write_text("1 Q0 D1 1 1.0 r\n")
    packed = tmp_path / "run.txt.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    s = EvalSettings.of()
    assert _reads_whole(str(plain), s)
    assert not _reads_whole("-", s)
    assert not _reads_whole(str(packed), s)  # streamed
    assert not _reads_whole(str(tmp_path), s)  # a dataset
    assert not _reads_whole(str(tmp_path / "missing.txt"), s)  # (its error is evaluate's)
    assert not _reads_whole(str(plain), EvalSettings.of(stream=True))
    assert not _reads_whole(str(plain), EvalSettings.of(engine="dask"))


def test_gain_tables_are_computed_once_for_the_judgements_and_kept_read_only(tmp_path):
    from irevalcli.api import load_qrels, load_run
    from irevalcli.core.table import EvalOptions, build_table
    from irevalcli.measures import gain

    qrels, runs = _runs(tmp_path, False, seed=11)
    q = load_qrels(str(qrels))
    a, b = (build_table(q, load_run(str(runs[i])), EvalOptions(complete=True)) for i in (0, 5))
    ga, gb = gain.gains(a, ()), gain.gains(b, ())
    assert ga.il_gain is gb.il_gain and ga.K is gb.K  # one ideal list for both runs
    assert ga.ideal_memo is gb.ideal_memo
    assert not gb.il_gain.flags.writeable and not gb.K.flags.writeable
    assert not np.array_equal(ga.nz, gb.nz)  # each run's own row gains
    memo._MEMO.clear()
    fresh = gain.gains(b.derive(), ())
    assert fresh.il_gain is not gb.il_gain
    assert np.array_equal(fresh.il_gain, gb.il_gain) and np.array_equal(fresh.nz_gain, gb.nz_gain)


def test_same_sort_is_given_again_only_for_equal_keys():
    class Obj:
        pass

    calls = []

    def sort(key):
        calls.append(1)
        order = np.argsort(key, kind="stable")
        return order, key[order]

    o = Obj()
    key = np.array([5, 3, 9, 3, 1])
    order, sorted_key = memo.same_sort(o, "k", key, sort)
    assert sorted_key.tolist() == [1, 3, 3, 5, 9] and len(calls) == 1
    again = memo.same_sort(o, "k", key.copy(), sort)
    assert again[0] is order and len(calls) == 1  # equal keys: kept
    for other in (np.array([5, 3, 9, 3, 2]), np.array([3, 5, 9, 3, 1]), key[:4], key.astype(np.int32)):
        got = memo.same_sort(o, "k", other, sort)  # a change anywhere (even a permutation): sorted again
        assert (
            got[1].tolist() == sorted(other.tolist()) and got[0].tolist() == np.argsort(other, kind="stable").tolist()
        )
    assert len(calls) == 5
