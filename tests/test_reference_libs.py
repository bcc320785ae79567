"""Differential tests: friendly spellings against the libraries that define them.

Each ir_measures spelling is evaluated by ir_measures (its default providers:
pytrec_eval, gdeval, cwl_eval, pyndeval, judged, msmarco, accuracy, compat) and each
ranx spelling by ranx, on random judgements and runs, and compared per query
with ireval given the same spelling.

Ties: every run here has distinct scores (exact in float32 too), because the
libraries break ties differently from trec_eval (docno descending): ir_measures'
judged/msmarco/pyndeval/compat providers by docno ascending, cwl_eval by input order, ranx by an
unstable sort.

Tolerances: 1e-9, except gdeval's numbers (ERR@k and nDCG(dcg=exp-log2)@k),
which it prints with 5 decimals: 5e-6 there.

The ir_measures tests take a few seconds and run by default (skipped when the
reference libraries are not installed; the measures added later run two seeds by default and
the other four with ``-m slow``); the ranx one is marked ``slow`` and
``differential`` (ranx compiles its numba kernels on first use, ~10 s).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from irevalcli import evaluate

ir_measures = pytest.importorskip("ir_measures")

SEEDS = range(6)
# the measures added for issue 16: two seeds in the default run, the other four with -m slow
NEW_SEEDS = [*range(2), *(pytest.param(s, marks=[pytest.mark.slow, pytest.mark.differential]) for s in range(2, 6))]


def make(seed: int, *, nq: int = 7, max_label: int = 4, negative: bool = False):
    """Random qrels and run: numeric topics (gdeval and ndeval need them), distinct scores;
    every topic has a relevant (label >= 2) and a judged non-relevant document."""
    rng = np.random.default_rng(seed)
    q, r = [], []
    for t in range(1, nq + 1):
        docs = [f"d{i:03d}" for i in range(40)]
        judged = rng.choice(40, size=int(rng.integers(6, 25)), replace=False)
        labels = rng.choice(np.arange(0, max_label + 1), size=len(judged), p=_label_p(max_label))
        labels[0], labels[1] = rng.integers(2, max_label + 1), 0
        if negative:
            labels[rng.random(len(labels)) < 0.1] = -1
            labels[0] = max(labels[0], 2)
        for d, lab in zip(judged, labels):
            q.append((str(t), docs[d], int(lab)))
        ret = rng.choice(40, size=int(rng.integers(3, 35)), replace=False)
        ret = np.unique(np.concatenate((ret, judged[:2])))  # the relevant and the non-relevant one
        scores = rng.permutation(len(ret)) * 2 + 1
        for d, s in zip(ret, scores):
            r.append((str(t), docs[d], float(s)))
    qrels = pd.DataFrame(q, columns=["qid", "docno", "rel"])
    run = pd.DataFrame(r, columns=["qid", "docno", "score"])
    return qrels, run


def _label_p(max_label: int) -> np.ndarray:
    w = np.array([6.0] + [3.0 / (i + 1) for i in range(max_label)])
    return w / w.sum()


def ireval_values(qrels, run, specs, **kw) -> dict[tuple[str, str], float]:
    ev = evaluate(qrels, run, specs, **kw)
    pq = ev.per_query
    return {(q, m): v for q, m, v in zip(pq["qid"], pq["measure"], pq["value"])}


def im_values(qrels, run, specs, subtopics=None):
    qrel_items = [ir_measures.Qrel(a, b, int(c)) for a, b, c in qrels.itertuples(index=False)]
    if subtopics is not None:
        qrel_items = [ir_measures.Qrel(a, c, int(d), b) for a, b, c, d in subtopics.itertuples(index=False)]
    run_items = [ir_measures.ScoredDoc(a, b, float(c)) for a, b, c in run.itertuples(index=False)]
    parsed = {spec: ir_measures.parse_measure(spec) for spec in specs}
    back = {str(m): spec for spec, m in parsed.items()}
    out: dict[tuple[str, str], float] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # one call per measure: ir_measures' pytrec_eval provider can put a judged_only
        # measure in the same evaluator as plain ones, and then (depending on set order,
        # so on the hash seed) counts judged documents only for all of them
        for m in parsed.values():
            for metric in ir_measures.iter_calc([m], qrel_items, run_items):
                out[(metric.query_id, back[str(metric.measure)])] = float(metric.value)
    return out


def compare(ours, theirs, specs, tol=1e-9, missing_ok=()):
    assert theirs, "the library computed nothing"
    for spec in specs:
        keys = [k for k in theirs if k[1] == spec]
        assert keys, f"{spec}: the library gave no value"
        for k in keys:
            assert k in ours, f"{spec} {k[0]}: no ireval value"
            assert math.isclose(ours[k], theirs[k], rel_tol=0, abs_tol=tol), (spec, k[0], ours[k], theirs[k])
        # topics ireval scores that the library leaves out must be documented
        ours_only = {q for q, m in ours if m == spec} - {q for q, _ in keys}
        if spec not in missing_ok:
            assert not ours_only, f"{spec}: ir_measures has no value for topics {sorted(ours_only)}"


# ---- ir_measures ----------------------------------------------------------------


def test_every_ir_measures_name_and_parameter_is_accepted():
    from irevalcli.measures.spellings import FAMILIES

    for name, m in ir_measures.measures.registry.items():
        assert name in FAMILIES, name
        # every parameter ir_measures declares (cutoff is @k; IPrec's recall is its @x; SetRelP is relative=True)
        declared = set(m.SUPPORTED_PARAMS) - {"cutoff", "recall", "relative" if name == "SetRelP" else ""}
        assert declared <= set(FAMILIES[name].args), (name, declared - set(FAMILIES[name].args))


PYTREC = [
    "P@5",
    "P(rel=2)@5",
    "P@30",
    "R@10",
    "R@100",
    "AP",
    "AP@10",
    "AP(rel=2)",
    "RR",
    "nDCG",
    "nDCG@10",
    "nDCG@3",
    "Rprec",
    "Rprec(rel=2)",
    "Success@1",
    "Success@5",
    "SetP",
    "SetRelP",
    "SetR",
    "SetF",
    "SetF(beta=0.5)",
    "SetAP",
    "Bpref",
    "IPrec@0.5",
    "IPrec@0.3",
    "NumRet",
    "NumRet(rel=1)",
    "NumRel",
    "P(judged_only=True)@5",
    "nDCG(judged_only=True)@10",
    "AP(judged_only=True)",
]


@pytest.mark.parametrize("seed", SEEDS)
def test_pytrec_eval_backed(seed):
    qrels, run = make(seed)
    compare(ireval_values(qrels, run, PYTREC), im_values(qrels, run, PYTREC), PYTREC)


@pytest.mark.parametrize("seed", NEW_SEEDS)
def test_pytrec_eval_backed_spellings(seed):
    # MAP is ir_measures' alias of AP (a separate call: both print as "AP" there); gains= relabels
    # the qrels before pytrec_eval's ndcg
    qrels, run = make(seed)
    for specs in (
        ["MAP", "MAP@10"],
        [
            "nDCG(gains={0:1,1:4})@10",
            "nDCG(gains={0:1,1:4})",
            "nDCG(gains={2:9,4:1})@5",
            "nDCG(gains={0:1,1:4},judged_only=True)@10",
        ],
    ):
        compare(ireval_values(qrels, run, specs), im_values(qrels, run, specs), specs)


@pytest.mark.parametrize("seed", NEW_SEEDS)
def test_set_measures_at_k_are_the_set_measures_of_the_top_k(seed):
    # ir_measures parses SetP@k but no provider computes it: its SetP of the run cut at k
    qrels, run = make(seed)
    for k in (1, 5, 12):
        top = run.sort_values(["qid", "score"], ascending=[True, False]).groupby("qid").head(k)
        specs = {
            f"SetP@{k}": "SetP",
            f"SetR@{k}": "SetR",
            f"SetF(beta=2.0)@{k}": "SetF(beta=2.0)",
            f"SetAP@{k}": "SetAP",
            f"SetRelP@{k}": "SetRelP",
            f"SetP(rel=2)@{k}": "SetP(rel=2)",
        }
        ours = ireval_values(qrels, run, list(specs))
        theirs = {(q, at): v for at, plain in specs.items() for (q, m), v in im_values(qrels, top, [plain]).items()}
        compare(ours, theirs, list(specs))


@pytest.mark.parametrize("seed", SEEDS)
def test_msmarco_rr_and_judged(seed):
    qrels, run = make(seed, negative=True)
    specs = ["RR@10", "RR@3", "RR(rel=2)@10", "Judged@5", "Judged@10", "Judged@50"]
    compare(ireval_values(qrels, run, specs), im_values(qrels, run, specs), specs)


@pytest.mark.parametrize("seed", SEEDS)
def test_gdeval_err_and_exp_ndcg(seed):
    # gdeval prints 5 decimals; labels go up to its fixed maximum of 4
    qrels, run = make(seed)
    specs = ["ERR@20", "ERR@5", "nDCG(dcg='exp-log2')@10", "nDCG(dcg='exp-log2')@5"]
    compare(ireval_values(qrels, run, specs), im_values(qrels, run, specs), specs, tol=5e-6 + 1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_cwl_eval_rbp_and_inst(seed):
    qrels, run = make(seed)
    specs = [
        "RBP(rel=1)",
        "RBP(rel=2,p=0.9)",
        "RBP(rel=1,p=0.5)",
        "INST(max_rel=4)",
        "INST(T=2.0,max_rel=4)",
        "INST(T=3.0,min_rel=1,max_rel=3)",
    ]
    compare(ireval_values(qrels, run, specs), im_values(qrels, run, specs), specs)


CWL = [
    "BPM(max_rel=4)@10",
    "BPM(T=2.0,max_rel=4)@5",
    "BPM(T=0.5,min_rel=1,max_rel=3)@20",
    "SDCG(max_rel=4)@10",
    "SDCG(min_rel=1,max_rel=3)@5",
    "INSQ(max_rel=4)",
    "INSQ(T=3.0,min_rel=1,max_rel=3)",
    "NERR8(max_rel=4)@10",
    "NERR8(min_rel=1,max_rel=3)@3",
    "NERR9(max_rel=4)@10",
    "NERR9(max_rel=4)@50",
    "NERR10(max_rel=4)",
    "NERR10(p=0.5,min_rel=1,max_rel=3)",
    "NERR11(max_rel=4)",
    "NERR11(T=2.0,max_rel=3)",
]


@pytest.mark.parametrize("seed", NEW_SEEDS)
def test_cwl_eval_measures(seed):
    qrels, run = make(seed)
    compare(ireval_values(qrels, run, CWL), im_values(qrels, run, CWL), CWL)


@pytest.mark.parametrize("seed", NEW_SEEDS)
def test_compat(seed):
    qrels, run = make(seed, negative=True)
    specs = ["Compat", "Compat(p=0.8)", "Compat(normalize=False)", "Compat(p=0.5,normalize=False)"]
    compare(ireval_values(qrels, run, specs), im_values(qrels, run, specs), specs)


@pytest.mark.parametrize("seed", SEEDS)
def test_accuracy(seed):
    # ir_measures reports no value for a topic without a relevant retrieved document; ireval
    # reports -nan there. (ir_measures raises ZeroDivisionError when every retrieved document is
    # relevant: make() always retrieves a judged non-relevant one.)
    qrels, run = make(seed)
    specs = ["Accuracy", "Accuracy@5", "Accuracy(rel=2)"]
    ours = ireval_values(qrels, run, specs)
    theirs = im_values(qrels, run, specs)
    compare(ours, theirs, specs, missing_ok=specs)
    for (q, m), v in ours.items():
        if (q, m) not in theirs:
            assert math.isnan(v)


def make_subtopics(seed: int, nq: int = 6):
    rng = np.random.default_rng(100 + seed)
    rows, q, r = [], [], []
    for t in range(1, nq + 1):
        nsub = int(rng.integers(2, 5))
        docs = rng.choice(40, size=int(rng.integers(5, 20)), replace=False)
        best = {}
        for d in docs:
            for s in range(1, nsub + 1):
                if rng.random() < 0.5:
                    lab = int(rng.random() < 0.45)
                    rows.append((str(t), str(s), f"d{d:03d}", lab))
                    best[d] = max(best.get(d, 0), lab)
        if not best:
            rows.append((str(t), "1", f"d{docs[0]:03d}", 1))
            best[docs[0]] = 1
        q.extend((str(t), f"d{d:03d}", v) for d, v in best.items())
        ret = rng.choice(40, size=int(rng.integers(5, 30)), replace=False)
        for d, s in zip(ret, rng.permutation(len(ret)) * 2 + 1):
            r.append((str(t), f"d{d:03d}", float(s)))
    sub = pd.DataFrame(rows, columns=["qid", "subtopic", "docno", "rel"])
    return pd.DataFrame(q, columns=["qid", "docno", "rel"]), pd.DataFrame(r, columns=["qid", "docno", "score"]), sub


@pytest.mark.parametrize("seed", SEEDS)
def test_pyndeval_diversity(seed):
    pytest.importorskip("pyndeval")
    qrels, run, sub = make_subtopics(seed)
    # ndeval's ERR-IA@1 is not normalised (its loop starts at rank 2); ireval normalises every k
    specs = ["alpha_nDCG@5", "alpha_nDCG@10", "alpha_nDCG@20", "ERR_IA@5", "ERR_IA@20", "alpha_nDCG(alpha=0.5)@3"]
    ours = ireval_values(qrels, run, specs, subtopics=sub)
    theirs = im_values(qrels, run, specs, subtopics=sub)
    compare(ours, theirs, specs)


NDEVAL = [
    "nERR_IA@1",
    "nERR_IA@5",
    "nERR_IA@20",
    "alpha_DCG@5",
    "alpha_DCG@20",
    "alpha_DCG(alpha=0.3)@10",
    "NRBP",
    "nNRBP",
    "NRBP(alpha=0.3,beta=0.8)",
    "nNRBP(alpha=0.7,beta=0.9)",
    "AP_IA",
    "P_IA@1",
    "P_IA@5",
    "P_IA@20",
    "StRecall@1",
    "StRecall@5",
    "StRecall@20",
]
# (judged_only=True is not compared: ir_measures 0.4.3's pyndeval provider fails on it, TypeError)


@pytest.mark.parametrize("seed", NEW_SEEDS)
def test_pyndeval_other_measures(seed):
    pytest.importorskip("pyndeval")
    qrels, run, sub = make_subtopics(seed)
    # (ndeval's alpha-DCG@1 is not divided by S, as its ERR-IA@1; ireval divides every k: not compared)
    for specs in (NDEVAL, ["MAP_IA"]):
        compare(ireval_values(qrels, run, specs, subtopics=sub), im_values(qrels, run, specs, subtopics=sub), specs)


# ---- ranx -------------------------------------------------------------------------

RANX = [
    "hits@5",
    "hits",
    "hit_rate@3",
    "hit_rate",
    "precision@5",
    "precision@50",
    "precision",
    "recall@10",
    "recall@10-l2",
    "f1@10",
    "f1",
    "r-precision",
    "mrr",
    "mrr@3",
    "map",
    "map@10",
    "map@100-l2",
    "dcg@10",
    "dcg_burges@10",
    "ndcg@10",
    "ndcg@5-l2",
    "ndcg_burges@10",
    "ndcg_burges@10-l3",
    "ndcg_burges",
    "bpref",
    "rbp.8",
    "rbp.95-l2",
    "map-l2",
    "ndcg-l2",
    "mrr-l3",
]


@pytest.mark.slow
@pytest.mark.differential
@pytest.mark.parametrize("seed", SEEDS)
def test_ranx(seed):
    ranx = pytest.importorskip("ranx")
    qrels, run = make(seed)
    qd: dict = {}
    for a, b, c in qrels.itertuples(index=False):
        qd.setdefault(a, {})[b] = int(c)
    rd: dict = {}
    for a, b, c in run.itertuples(index=False):
        rd.setdefault(a, {})[b] = float(c)
    theirs = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba's type-safety warnings on ranx's kernels (not ours)
        rq, rr = ranx.Qrels(qd), ranx.Run(rd)
        for spec in RANX:
            res = ranx.evaluate(rq, rr, spec, return_mean=False)
            for qid, v in zip(rr.get_query_ids(), np.asarray(res).ravel().tolist()):
                theirs[(qid, spec)] = v
    ours = ireval_values(qrels, run, RANX)
    # bpref: ranx leaves R = 0 or no judged non-relevant undefined; make() avoids both
    compare(ours, theirs, RANX)


def make_tied(seed: int):
    """make()'s judgements with a run whose scores tie often (four distinct values per topic),
    its rows in a random order within each topic."""
    qrels, run = make(seed)
    rng = np.random.default_rng(seed + 100)
    run = run.assign(score=rng.integers(1, 5, size=len(run)).astype(float))
    order = np.lexsort((rng.random(len(run)), run["qid"].astype(int).to_numpy()))
    return qrels, run.iloc[order].reset_index(drop=True)


CWL_TIED = ["RBP(rel=1)", "RBP(rel=2,p=0.9)", "INST(max_rel=4)", *CWL]


@pytest.mark.parametrize("seed", NEW_SEEDS)
def test_cwl_eval_with_ties_under_ties_input(seed):
    """cwl_eval's provider sorts each topic by score with a stable sort: tied documents keep
    their order in the run, which is ireval's --ties input (issue 16)."""
    qrels, run = make_tied(seed)
    assert run.duplicated(["qid", "score"]).any()  # the ties this test is about
    theirs = im_values(qrels, run, CWL_TIED)
    compare(ireval_values(qrels, run, CWL_TIED, ties="input"), theirs, CWL_TIED)
    # and under trec_eval's rule (docno descending) the numbers differ: the ties matter
    ours_docno = ireval_values(qrels, run, CWL_TIED)
    assert any(not math.isclose(ours_docno[k], v, abs_tol=1e-9) for k, v in theirs.items() if k in ours_docno)
