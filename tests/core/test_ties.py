"""--ties docno|input|rank: how documents with equal scores are ordered.

docno (the default) is trec_eval's rule: descending docno, bytewise. input is ranx's and
TF-Ranking's: the order of the lines in the run file. rank orders by the run's rank column
ascending instead of the score (equal ranks: score descending, then docno descending). Every measure sees the ranking the
rule makes (it is made once, when the table is built), in every command that ranks.
"""

from __future__ import annotations

import json
import random
import warnings

import numpy as np
import pandas as pd
import pytest

from irevalcli import evaluate
from irevalcli.output.formatters import format_trec
from tests.conftest import write

# every score is 1.0 (a real case); the run file lists d1 d3 d2, and d1 is the only relevant one.
# docno rule: d3 d2 d1 (descending) -> d1 at rank 3; input rule: d1 d3 d2 -> d1 at rank 1.
QRELS = "1 0 d1 1\n1 0 d2 0\n1 0 d3 0\n2 0 e1 0\n2 0 e2 2\n"
RUN = "1 Q0 d1 1 1.0 r\n1 Q0 d3 2 1.0 r\n1 Q0 d2 3 1.0 r\n2 Q0 e2 1 1.0 r\n2 Q0 e1 2 1.0 r\n"
# topic 2: e2 (relevant) before e1 in the file; docno rule puts e2 first too (e2 > e1)
MEASURES = ["-m", "recip_rank", "-m", "P.1", "-m", "map", "-m", "ndcg_cut.1", "-m", "bpref"]

WANT = {
    "docno": (
        "recip_rank            \t1\t0.3333\nP_1                   \t1\t0.0000\n"
        "recip_rank            \t2\t1.0000\nP_1                   \t2\t1.0000\n"
        "recip_rank            \tall\t0.6667\nP_1                   \tall\t0.5000\n"
    ),
    "input": (
        "recip_rank            \t1\t1.0000\nP_1                   \t1\t1.0000\n"
        "recip_rank            \t2\t1.0000\nP_1                   \t2\t1.0000\n"
        "recip_rank            \tall\t1.0000\nP_1                   \tall\t1.0000\n"
    ),
}


@pytest.mark.parametrize("rule", ["docno", "input"])
def test_all_scores_tied_by_hand(cli, tmp_path, rule):
    q, r = write(tmp_path / "q", QRELS), write(tmp_path / "r", RUN)
    res = cli(["-q", "--ties", rule, "-m", "recip_rank", "-m", "P.1", str(q), str(r)])
    assert res.code == 0 and res.err == ""
    assert res.out.decode() == WANT[rule]


def test_default_is_docno_and_every_measure_follows_the_rule(cli, tmp_path):
    q, r = write(tmp_path / "q", QRELS), write(tmp_path / "r", RUN)
    plain = cli([*MEASURES, str(q), str(r)]).out
    assert cli(["--ties", "docno", *MEASURES, str(q), str(r)]).out == plain
    ev = {
        rule: evaluate(q, r, ["all_trec", "arp", "opa", "P_ret.1", "ndcg_exp_cut.1"], ties=rule).results.summary
        for rule in ("docno", "input")
    }
    # topic 1 moves d1 from rank 3 to rank 1; topic 2 is the same under both rules
    assert ev["docno"]["map"] == pytest.approx((1 / 3 + 1) / 2) and ev["input"]["map"] == 1.0
    assert ev["docno"]["arp"] == pytest.approx((3 + 2) / 3) and ev["input"]["arp"] == pytest.approx(3 / 3)
    assert ev["docno"]["ndcg_exp_cut_1"] == 0.5 and ev["input"]["ndcg_exp_cut_1"] == 1.0
    assert ev["docno"]["bpref"] == 0.5 and ev["input"]["bpref"] == 1.0
    # measures that do not look at the order agree
    for m in ("num_ret", "num_rel", "num_rel_ret", "set_P", "set_F"):
        assert ev["docno"][m] == ev["input"][m]


def test_json_records_the_rule(cli, tmp_path):
    q, r = write(tmp_path / "q", QRELS), write(tmp_path / "r", RUN)
    for rule in ("docno", "input"):
        doc = json.loads(cli(["--format", "json", "--ties", rule, "-m", "map", str(q), str(r)]).out)
        assert doc["options"]["ties"] == rule


def test_unknown_rule_is_a_usage_error(cli, tmp_path):
    q, r = write(tmp_path / "q", QRELS), write(tmp_path / "r", RUN)
    res = cli(["--ties", "inptu", str(q), str(r)])
    assert res.code == 2 and res.out == b""
    assert "'inptu' is not one of 'docno', 'input'" in res.err and "(did you mean 'input'?)" in res.err


def test_library_refuses_unknown_rule_and_prefs():
    from irevalcli.errors import UsageError

    with pytest.raises(UsageError) as e:
        evaluate("q", "r", ["map"], ties="score")
    assert str(e.value) == "ties='score': unknown tie rule (known: docno, input, rank)"
    with pytest.raises(UsageError) as e:
        evaluate("q", "r", ["prefs_simp"], rel_format="prefs", ties="input")
    assert str(e.value) == "ties='input' applies to rel_format='qrels' judgements, not rel_format='prefs'"


def _tied_files(tmp_path, seed):
    rng = random.Random(seed)
    qrels, run = [], []
    for t in range(rng.randint(1, 12)):
        qid = f"q{t}"
        docs = rng.sample(range(80), rng.randint(1, 30))
        for d in docs:
            if rng.random() < 0.6:
                qrels.append(f"{qid} 0 D{d} {rng.choice([0, 0, 1, 2])}")
        run.extend(f"{qid} Q0 D{d} 0 {rng.choice([1.0, 2.0, 2.0, 3.0])} r" for d in docs)  # grouped, many ties
    qrels.append("zz 0 D1 1")
    return write(tmp_path / "q", "\n".join(qrels) + "\n"), write(tmp_path / "r", "\n".join(run) + "\n")


@pytest.mark.parametrize("seed", range(6))
def test_streamed_and_whole_agree_under_input_ties(tmp_path, seed):
    q, r = _tied_files(tmp_path, seed)
    for rule in ("docno", "input"):
        whole = evaluate(q, r, ["all_trec", "arp", "opa"], stream=False, complete=True, ties=rule)
        for chunk in (60, 500):
            streamed = evaluate(
                q, r, ["all_trec", "arp", "opa"], stream=True, chunk_bytes=chunk, complete=True, ties=rule
            )
            assert format_trec(whole.results, per_query=True) == format_trec(streamed.results, per_query=True)


@pytest.mark.parametrize("seed", range(4))
def test_input_rule_is_a_stable_sort_by_score(tmp_path, seed):
    """Under --ties input the ranking is a stable sort of the file by descending score: the
    same numbers as the file rewritten in that order and distinct scores."""
    q, r = _tied_files(tmp_path, seed)
    lines = r.read_text().splitlines()
    by_topic: dict[str, list[str]] = {}
    for line in lines:
        by_topic.setdefault(line.split()[0], []).append(line)
    rewritten = []
    for rows in by_topic.values():
        ordered = sorted(rows, key=lambda s: -float(s.split()[4]))  # stable
        rewritten.extend(f"{s.split()[0]} Q0 {s.split()[2]} 0 {len(ordered) - i} r" for i, s in enumerate(ordered))
    r2 = write(tmp_path / "r2", "\n".join(rewritten) + "\n")
    a = evaluate(q, r, ["all_trec"], complete=True, ties="input").results
    b = evaluate(q, r2, ["all_trec"], complete=True).results
    assert format_trec(a, per_query=True) == format_trec(b, per_query=True)


def test_compare_gate_pool_and_curve_take_the_rule(cli, tmp_path):
    q, r = write(tmp_path / "q", QRELS), write(tmp_path / "r", RUN)
    base = write(tmp_path / "r2", RUN.replace("d1 1 1.0", "d1 1 0.5"))  # d1 last under both rules
    for rule, p1 in (("docno", 0.5), ("input", 1.0)):
        doc = json.loads(
            cli(["compare", "--format", "json", "--ties", rule, "-m", "P.1", str(q), str(base), str(r)]).out
        )
        assert doc["options"]["ties"] == rule
        assert doc["baselines"][0]["mean"] == 0.5 and doc["comparisons"][0]["mean"] == p1
        res = cli(["gate", "--format", "json", "--ties", rule, "--min", "P.1=0.75", str(q), str(r)])
        assert res.code == (1 if rule == "docno" else 0)
        assert json.loads(res.out)["options"]["ties"] == rule
        pool = cli(["pool", "--depth", "1", "--quiet", "--ties", rule, str(r)]).out.decode()
        assert pool.splitlines()[0] == ("1 0 d3 -1" if rule == "docno" else "1 0 d1 -1")
        curve = cli(["curve", "--points", "all", "--ties", rule, str(q), str(r)]).out.decode()
        first = "1,3,1.0,0.3333333333333333" if rule == "docno" else "1,1,1.0,1.0"
        assert curve.splitlines()[:2] == ["run,qid,rank,recall,precision", f"{r},{first}"]


def test_gate_config_sets_the_rule(cli, tmp_path):
    q, r = write(tmp_path / "q", QRELS), write(tmp_path / "r", RUN)
    conf = write(tmp_path / "g.toml", f'qrels = "{q}"\nties = "input"\n[min]\n"P.1" = 0.75\n')
    res = cli(["gate", "--format", "json", "--config", str(conf), str(r)])
    assert res.code == 0 and json.loads(res.out)["options"]["ties"] == "input"
    res = cli(["gate", "--format", "json", "--config", str(conf), "--ties", "docno", str(r)])
    assert res.code == 1 and json.loads(res.out)["options"]["ties"] == "docno"


# ---- ranx breaks ties by input order (for short lists: see below) ---------------------------


SPECS = ["mrr", "precision@3", "recall@5", "map", "ndcg@5", "ndcg_burges@10", "hits@3", "map@5-l2"]


@pytest.mark.slow
@pytest.mark.differential
@pytest.mark.parametrize("seed", range(4))
def test_ranx_with_ties(seed):
    """ranx with every score drawn from {1, 2, 3}: ireval --ties input gives ranx's numbers.
    ranx sorts with numba's quicksort, which is stable (input order) only below its
    insertion-sort threshold: lists here have at most 12 documents."""
    ranx = pytest.importorskip("ranx")
    rng = np.random.default_rng(seed)
    q, r = [], []
    for t in range(1, 9):
        docs = rng.choice(60, size=int(rng.integers(2, 13)), replace=False)
        for d in docs:
            q.append((str(t), f"d{d:02d}", int(rng.integers(0, 3))))
        q.append((str(t), "dzz", 1))  # R >= 1 in every topic
        q.append((str(t), "dyy", 0))
        for d in rng.permutation(docs):
            r.append((str(t), f"d{d:02d}", float(rng.integers(1, 4))))
    qrels = pd.DataFrame(q, columns=["qid", "docno", "rel"])
    run = pd.DataFrame(r, columns=["qid", "docno", "score"])
    qd: dict = {}
    for a, b, c in q:
        qd.setdefault(a, {})[b] = c
    rd: dict = {}
    for a, b, c in r:
        rd.setdefault(a, {})[b] = c
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba's type-safety warnings on ranx's kernels
        rq, rr = ranx.Qrels(qd), ranx.Run(rd)
        theirs = {spec: ranx.evaluate(rq, rr, spec, return_mean=False) for spec in SPECS}
    ours = evaluate(qrels, run, SPECS, ties="input").per_query
    got = {(a, m): v for a, m, v in zip(ours["qid"], ours["measure"], ours["value"])}
    for spec, res in theirs.items():
        for qid, v in zip(rr.get_query_ids(), np.asarray(res).ravel().tolist()):
            assert got[(qid, spec)] == pytest.approx(v, abs=1e-9), (qid, spec)


def test_plot_data_takes_the_rule(cli, tmp_path):
    from irevalcli.api import load_qrels, load_run
    from irevalcli.commands.plot import pr_curves, topic_diffs

    q, r = write(tmp_path / "q", QRELS), write(tmp_path / "r", RUN)
    base = write(tmp_path / "r2", RUN.replace("d1 1 1.0", "d1 1 0.5"))
    q, r, base = load_qrels(q), load_run(r), load_run(base)
    # topic 1 at recall 1: precision 1/3 (docno rule, d1 third) or 1 (input rule); topic 2: 1
    for rule, p in (("docno", (1 / 3 + 1) / 2), ("input", 1.0)):
        ((_, levels, precisions),) = pr_curves(q, [r], ties=rule)
        assert levels[-1] == 1.0 and precisions[-1] == pytest.approx(p)
        label, qids, diffs = topic_diffs(q, base, r, "P.1", ties=rule)
        assert label == "P_1" and dict(zip(qids, diffs))["1"] == (1.0 if rule == "input" else 0.0)
    res = cli(
        ["plot", "pr", "--ties", "sideways", str(tmp_path / "q"), str(tmp_path / "r"), "-o", str(tmp_path / "x.png")]
    )
    assert res.code == 2 and "'sideways' is not one of 'docno', 'input'" in res.err


# ---- --ties rank: the run's rank column orders the documents ---------------------------------

RQRELS = "1 0 d1 1\n1 0 d2 0\n1 0 d3 0\n2 0 e1 0\n2 0 e2 2\n3 0 f1 1\n3 0 f2 0\n"
# topic 1: ranks d3=1, d1=2, d2=2 (d2 scores higher) -> d3 d2 d1: d1 at rank 3
#          by score: d2 (2.0) d1 (1.0) d3 (0.5) -> d1 at rank 2
# topic 2: equal ranks and scores -> docno descending: e2 e1 (e2 relevant)
# topic 3: ranks say f1 first, scores say f2 first
RRUN = (
    "1 Q0 d1 2 1.0 r\n1 Q0 d3 1 0.5 r\n1 Q0 d2 2 2.0 r\n2 Q0 e1 1 1.0 r\n2 Q0 e2 1 1.0 r\n"
    "3 Q0 f1 1 0.1 r\n3 Q0 f2 2 0.9 r\n"
)
RWANT = {
    "rank": (
        "recip_rank            \t1\t0.3333\nrecip_rank            \t2\t1.0000\n"
        "recip_rank            \t3\t1.0000\nrecip_rank            \tall\t0.7778\n"
    ),
    "docno": (
        "recip_rank            \t1\t0.5000\nrecip_rank            \t2\t1.0000\n"
        "recip_rank            \t3\t0.5000\nrecip_rank            \tall\t0.6667\n"
    ),
}


@pytest.mark.parametrize("rule", ["rank", "docno"])
def test_rank_rule_by_hand(cli, tmp_path, rule):
    q, r = write(tmp_path / "q", RQRELS), write(tmp_path / "r", RRUN)
    res = cli(["-q", "--ties", rule, "-m", "recip_rank", str(q), str(r)])
    assert res.code == 0 and res.err == ""
    assert res.out.decode() == RWANT[rule]


def _rank_files(tmp_path, seed):
    """Grouped runs with random ranks (many equal) and scores (many equal), in random line order."""
    rng = random.Random(seed)
    qrels, run = [], []
    for t in range(rng.randint(1, 10)):
        qid = f"q{t}"
        docs = rng.sample(range(60), rng.randint(1, 25))
        for d in docs:
            if rng.random() < 0.6:
                qrels.append(f"{qid} 0 D{d} {rng.choice([0, 0, 1, 2])}")
        run.extend(f"{qid} Q0 D{d} {rng.choice([1, 2, 2, 3, 7])} {rng.choice([1.0, 2.0, 3.0])} r" for d in docs)
    qrels.append("zz 0 D1 1")
    return write(tmp_path / "q", "\n".join(qrels) + "\n"), write(tmp_path / "r", "\n".join(run) + "\n")


MANY = ["all_trec", "arp", "opa", "rbp.p=0.8", "err", "P_ret.3", "ndcg_exp_cut.5"]


@pytest.mark.parametrize("seed", range(6))
def test_rank_rule_is_a_sort_by_rank_then_score_then_docno(tmp_path, seed):
    """Every measure sees the ranking the rule describes: the same numbers as the file
    rewritten in (rank asc, score desc, docno desc) order with distinct scores."""
    q, r = _rank_files(tmp_path, seed)
    rows = [line.split() for line in r.read_text().splitlines()]
    out = []
    for qid in dict.fromkeys(row[0] for row in rows):
        mine = [row for row in rows if row[0] == qid]
        mine.sort(key=lambda row: row[2], reverse=True)  # docno descending (ASCII ids)
        mine.sort(key=lambda row: -float(row[4]))  # stable: score descending
        mine.sort(key=lambda row: int(row[3]))  # stable: rank ascending
        out.extend(f"{qid} Q0 {row[2]} 0 {len(mine) - i} r" for i, row in enumerate(mine))
    r2 = write(tmp_path / "r2", "\n".join(out) + "\n")
    a = evaluate(q, r, MANY, complete=True, ties="rank").results
    b = evaluate(q, r2, MANY, complete=True).results
    assert format_trec(a, per_query=True) == format_trec(b, per_query=True)


@pytest.mark.parametrize("seed", range(6))
def test_streamed_and_whole_agree_under_rank_ties(tmp_path, seed):
    q, r = _rank_files(tmp_path, seed)
    whole = evaluate(q, r, MANY, stream=False, complete=True, ties="rank")
    for chunk in (60, 500):
        streamed = evaluate(q, r, MANY, stream=True, chunk_bytes=chunk, complete=True, ties="rank")
        assert format_trec(whole.results, per_query=True) == format_trec(streamed.results, per_query=True)


def test_constant_rank_column_ranks_as_trec_eval(tmp_path):
    q, r = _tied_files(tmp_path, 3)  # every rank is 0: equal ranks fall back to score, then docno
    a = evaluate(q, r, ["all_trec"], complete=True, ties="rank").results
    b = evaluate(q, r, ["all_trec"], complete=True).results
    assert format_trec(a, per_query=True) == format_trec(b, per_query=True)


def test_rank_rule_in_json_and_every_command(cli, tmp_path):
    q, r = write(tmp_path / "q", RQRELS), write(tmp_path / "r", RRUN)
    doc = json.loads(cli(["--format", "json", "--ties", "rank", "-m", "recip_rank", str(q), str(r)]).out)
    assert doc["options"]["ties"] == "rank" and doc["summary"]["recip_rank"] == pytest.approx(7 / 9)
    doc = json.loads(cli(["compare", "--format", "json", "--ties", "rank", "-m", "P.1", str(q), str(r), str(r)]).out)
    assert doc["options"]["ties"] == "rank" and doc["baselines"][0]["mean"] == pytest.approx(2 / 3)
    res = cli(["gate", "--format", "json", "--ties", "rank", "--min", "P.1=0.6", str(q), str(r)])
    assert res.code == 0 and json.loads(res.out)["options"]["ties"] == "rank"
    assert cli(["gate", "--ties", "docno", "--min", "P.1=0.6", str(q), str(r)]).code == 1  # P.1 = 1/3
    conf = write(tmp_path / "g.toml", f'qrels = "{q}"\nties = "rank"\n[min]\n"P.1" = 0.6\n')
    res = cli(["gate", "--format", "json", "--config", str(conf), str(r)])
    assert res.code == 0 and json.loads(res.out)["options"]["ties"] == "rank"
    pool = cli(["pool", "--depth", "1", "--quiet", "--ties", "rank", str(r)]).out.decode()
    assert pool.splitlines() == ["1 0 d3 -1", "2 0 e2 -1", "3 0 f1 -1"]
    curve = cli(["curve", "--points", "all", "--ties", "rank", str(q), str(r)]).out.decode()
    assert curve.splitlines()[1] == f"{r},1,3,1.0,0.3333333333333333"


def test_rank_column_is_read_only_for_the_rank_rule(cli, tmp_path):
    """trec_eval never reads the rank field: junk there is fine unless --ties rank orders by it."""
    q = write(tmp_path / "q", "1 0 a 1\n1 0 b 0\n")
    r = write(tmp_path / "r", "1 Q0 a x 1.0 r\n1 Q0 b 2.5 2.0 r\n")
    assert cli(["-m", "map", str(q), str(r)]).code == 0
    res = cli(["--ties", "rank", "-m", "map", str(q), str(r)])
    assert (res.code, res.out) == (2, b"")
    assert res.err == f"ireval: {r}:1: rank 'x' is not a number\n"
    r = write(tmp_path / "r", "1 Q0 a 1.0 1.0 r\n1 Q0 b 2.5 2.0 r\n")
    res = cli(["--ties", "rank", "-m", "map", str(q), str(r)])
    assert res.err == f"ireval: {r}:2: rank '2.5' is not an integer (trec_eval would truncate it; ireval refuses)\n"


def test_rank_rule_with_tabular_runs_and_dataframes(tmp_path):
    from irevalcli.errors import InputError

    q = write(tmp_path / "q", RQRELS)
    rows = [line.split() for line in RRUN.splitlines()]
    csv = write(
        tmp_path / "r.csv", "qid,docno,rank,score\n" + "".join(f"{a},{c},{d},{e}\n" for a, _, c, d, e, _ in rows)
    )
    want = evaluate(q, write(tmp_path / "r", RRUN), ["recip_rank"], ties="rank").results.summary["recip_rank"]
    assert want == pytest.approx(7 / 9)
    assert evaluate(q, csv, ["recip_rank"], ties="rank").results.summary["recip_rank"] == want
    df = pd.DataFrame(
        {
            "qid": [r[0] for r in rows],
            "docno": [r[2] for r in rows],
            "rank": [float(r[3]) for r in rows],
            "score": [float(r[4]) for r in rows],
        }
    )
    assert evaluate(q, df, ["recip_rank"], ties="rank").results.summary["recip_rank"] == want
    # no score column: --ties rank needs none (equal ranks then go by docno)
    norank = write(tmp_path / "n.csv", "qid,docno,score\n1,d1,1\n")
    with pytest.raises(InputError) as e:
        evaluate(q, norank, ["recip_rank"], ties="rank")
    assert str(e.value) == (
        f"{norank}: no 'rank' column for the run (columns: qid, docno, score); --ties rank "
        "orders by it: name one with --column rank=NAME, or use --ties docno or --ties input"
    )
    with pytest.raises(InputError) as e:
        evaluate(q, df.drop(columns=["rank"]), ["recip_rank"], ties="rank")
    assert str(e.value) == (
        "<run DataFrame>: the run DataFrame has no rank column, which ties='rank' orders by "
        "(columns: qid, docno, score)"
    )
    msm = write(tmp_path / "m.tsv", "".join(f"{a}\t{c}\t{d}\n" for a, _, c, d, _, _ in rows))
    from irevalcli.io.tabular import read_run_file

    run = read_run_file(msm, fmt="msmarco", ranks=True)
    assert run.rank.tolist() == [2, 1, 2, 1, 1, 1, 2]
