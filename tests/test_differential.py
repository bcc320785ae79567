"""Differential tests: ireval against pytrec_eval, per query, on random small inputs.

pytrec_eval (the ``pytrec-eval-terrier`` wheel) embeds NIST trec_eval **9.0.8**, while ireval
follows **10.0**. Every way the two legitimately differ is handled explicitly below, never by a
loose tolerance: per-query values must be *identical* (``==``, or both NaN).

Known 9.0.8 / 10.0 differences and how this file handles each:

(1) float32 scores. pytrec_eval passes scores as doubles, but 9.0.8 stores them in a ``float``
    and ranks on that, so scores that differ only beyond float32 precision tie (and the tie
    is broken by docno descending). 10.0 ranks on doubles. The random generator therefore
    draws scores from multiples of 1/64 in [-4, 4] (plus, sometimes, 0.0/-0.0 and +-inf):
    exactly representable in float32, so two scores are equal in float32 iff they are equal
    in float64. ``test_float32_ties_*`` cover scores that are equal in float32 but not in
    float64: in 10.0 mode the difference is asserted, and with ``compat="9.0.8"`` full
    agreement is asserted.

(2) Judged topics missing from the run. 10.0 stops with an error unless ``-c``; 9.0.8 (and so
    pytrec_eval) skips them silently, and pytrec_eval reports only topics present in both the
    run and the qrels. ireval is run with ``complete=True``; only the topics pytrec_eval
    reports are compared (``-c`` does not change the value of a topic that has results), and
    the reported topic set itself is asserted. Under ``compat="9.0.8"`` ireval is run
    without ``complete`` and must report exactly pytrec_eval's topics.
    ``test_missing_topic_*`` pins the difference itself.

(3) iprec_at_recall / 11pt_avg recall points: 10.0 uses K = lround(x*R), 9.0.8 uses
    K = trunc(x*R + 0.9). In 10.0 mode these measures are compared only on topics where the
    two rules give the same K for every recall point of the measure (computed per topic and
    per relevance level by ``k_rules_agree``); with ``compat="9.0.8"`` on every topic.
    A guard asserts the filter both keeps and drops topics, so it is not vacuous.

(4) Found while writing these tests (pytrec_eval / 9.0.8 specifics):
    a. ``runid`` and ``relstring`` have no numeric per-topic value; pytrec_eval reports a
       meaningless 0.0 for both. Not compared.
    b. ``num_q`` is reported as 1.0 per topic by pytrec_eval (ireval has no per-topic num_q):
       asserted == 1.0, and ireval's summary num_q is compared in the summary test.
    c. ``gm_map`` / ``gm_bpref`` per topic are pytrec_eval's accumulator values,
       ln(max(v, 1e-5)); ireval prints no per-topic line for them. They are compared with
       ``math.log(max(v, 1e-5))`` of ireval's per-topic map / bpref, and ireval's summary with
       exp(mean) of pytrec_eval's values.
    d. ``relevance_level`` must be >= 1 for a meaningful comparison: pytrec_eval rejects 0
       ("Argument relevance_level should be positive"), and a negative level is accepted but
       makes the C code index its rel_levels array out of bounds (wrong values such as
       num_rel = 0 for level -1, and a segfault on the random cases). Levels 1, 2, 3 and 5
       (above every label) are compared.
    e. A topic whose qrels are all negative (pooled but unjudged only) leaves trec_eval's
       per-topic level count uninitialised/stale; pytrec_eval then returns garbage or hangs
       (observed: an endless loop when such a topic is the first one evaluated). ireval uses
       the sane values (R = 0). Such topics are generated in the qrels but never put in the
       run, so pytrec_eval never evaluates them.
    f. pytrec_eval's Python wrapper rewrites parameterised measure names: it only accepts
       digits/dots, sorts the parameters as *strings* and removes duplicates (so
       ``utility.2,-1,0,0`` or gain pairs such as ``ndcg.1=3`` cannot be expressed and real
       lists lose their order). The parameterised test calls the extension class
       ``pytrec_eval_ext.RelevanceEvaluator`` directly, which hands the text to trec_eval
       verbatim, and passes the identical text to ireval.
    g. pytrec_eval exposes neither ``-c``, ``-M`` nor ``-N`` (it fixes average_complete=0,
       max docs = LONG_MAX, num_docs_in_coll=0, matching ireval's defaults), so only
       ``relevance_level`` and ``judged_docs_only_flag`` (-J) are varied.
    h. rbp, rbp_resid and unj do not exist in 9.0.8 (not in pytrec_eval.supported_measures),
       so ireval is asked for exactly pytrec_eval's measure list, not ``all_trec``.
    i. A topic's per-topic values in pytrec_eval are keyed by pytrec_eval's own labels:
       cutoff measures (P_5, iprec_at_recall_0.10, ...) by the same label ireval prints, but
       measures with a parameter list (11pt_avg, utility, set_F, ndcg with pairs, ...) by the
       bare root name, whereas ireval labels them ``root_<params>``. ``column_lookup`` maps a
       pytrec_eval key to ireval's column by label, else by (unique) root.

Speed: per-topic values do not depend on other topics, so many random cases are concatenated
into one input (topics ``s<seed>:<qid>``) and evaluated with one call per configuration. The
default run compares 150 cases (~2,000 shared topics) in 8 configurations (-l 1/2/3/5, with and
without -J) in both modes; ``test_many_seeds`` (markers ``differential`` and ``slow``) does
2,000 more cases: ``pytest -m differential``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pytest

pytrec_eval = pytest.importorskip("pytrec_eval")
pytrec_eval_ext = pytest.importorskip("pytrec_eval_ext")

from irevalcli import evaluate  # noqa: E402 (after the skips: the references are optional)
from irevalcli.errors import IrevalError, MissingTopicError  # noqa: E402

# Every measure pytrec_eval supports, requested with its default parameters (4h).
SUPPORTED = sorted(pytrec_eval.supported_measures)

# Parameterised requests, passed verbatim to trec_eval 9.0.8 and to ireval (4f). Each root
# appears once: trec_eval uses only the first parameter string given for a measure.
PARAMETERISED = [
    "P.1,2,3,7,50",
    "recall.1,4,8",
    "map_cut.1,3,6",
    "ndcg_cut.1,2,3,7",
    "relative_P.1,3,9",
    "success.2,3,20",
    "iprec_at_recall.0.05,0.25,0.33,0.45,0.75",
    "Rprec_mult.0.1,0.5,1.5,3",
    "11pt_avg.0.75,0.25,0.5",  # a real list: kept in the given (unsorted) order
    "set_F.0.5,2",
    "utility.2,-1,-0.5,1",
    "ndcg.0=0,1=1,2=3,3=7,4=15",
    "G.1=2,4=0",
    "Rndcg.1=1,2=2,3=5",
    "ndcg_rel.2=1,3=10,1=-1",
    "binG",
    "bpref",
    "infAP",
]

# Recall points of the K-rule measures (3), by pytrec_eval key. iprec_at_recall keys carry
# their point ("iprec_at_recall_0.10" -> 0.1, parsed exactly as atof would read the 2-decimal
# parameter); 11pt_avg's points come from the request.
DEFAULT_11PT = tuple(i / 10 for i in range(11))  # == trec_eval's literals 0.0, 0.1, ..., 1.0
PARAM_11PT = (0.75, 0.25, 0.5)

LEVELS = (1, 2, 3, 5)  # relevance levels >= 1 only (4d); 5 is above every generated label

# Docnos chosen so that byte-wise descending tie-breaking matters: case, digits vs letters,
# prefixes, numeric-looking strings, punctuation and non-ASCII (compared as UTF-8 bytes).
DOC_POOL = [
    "a", "b", "B", "Z", "zz", "ZZ", "m", "d1", "d10", "d2", "d9", "D3", "9", "10", "100",
    "0", "00", "ab", "abc", "a-b", "a_b", "x.1", "q#1", "é1", "ü", "Ωmega", "doc-01", "doc-1",
]  # fmt: skip
QID_POOL = [
    "1", "2", "3", "9", "10", "11", "20", "100", "301", "0301", "q1", "q2", "Q1", "a", "b",
    "B", "t_1", "t-1", "x", "xx", "7", "8", "12", "13", "14", "15", "16", "17", "18", "19",
    "21", "22",
]  # fmt: skip


# --------------------------------------------------------------------------------------------
# random cases


@dataclass
class Case:
    """A qrels/run pair, as DataFrames for ireval and as dicts for pytrec_eval."""

    label: str
    qrels: pd.DataFrame  # qid, docno, rel
    run: pd.DataFrame  # qid, docno, score
    qrels_dict: dict[str, dict[str, int]]
    run_dict: dict[str, dict[str, float]]

    @property
    def common_topics(self) -> set[str]:
        return set(self.qrels_dict) & set(self.run_dict)

    def describe(self, qid: str) -> str:
        """The topic's qrels and run lines in trec format: a minimal reproduction."""
        q = self.qrels[self.qrels.qid == qid]
        r = self.run[self.run.qid == qid]
        lines = [f"# {self.label}, topic {qid!r}", "# qrels"]
        lines += [f"{a} 0 {b} {c}" for a, b, c in q.itertuples(index=False)]
        lines.append("# run (scores as repr of the double)")
        lines += [f"{a} Q0 {b} 0 {c!r} run" for a, b, c in r.itertuples(index=False)]
        return "\n".join(lines)


def _case_rows(
    seed: int, values: Sequence[float] | None, prefix: str
) -> tuple[list[tuple[str, str, int]], list[tuple[str, str, float]]]:
    rng = np.random.default_rng(seed)
    n_topics = int(rng.integers(1, 31))
    qids = [prefix + str(q) for q in rng.choice(QID_POOL, size=n_topics, replace=False)]
    graded = bool(rng.random() < 0.5)
    labels = [-1, 0, 0, 1, 2, 3, 4] if graded else [-1, 0, 0, 1, 1]
    if values is None:
        # (1): multiples of 1/64 in [-4, 4] are exact in float32, so float32 ties == float64 ties.
        # A handful of values per case makes ties heavy; sometimes every score is the same.
        k = rng.choice(np.arange(-256, 257), size=int(rng.integers(1, 7)), replace=False)
        values = [float(v) / 64.0 for v in k]
        if rng.random() < 0.2:  # signed zeros compare equal: a tie broken by docno
            values += [0.0, -0.0]
        if rng.random() < 0.1:  # infinities are the same in float32 and float64
            values += [math.inf, -math.inf]

    qrows: list[tuple[str, str, int]] = []
    rrows: list[tuple[str, str, float]] = []
    for q in qids:
        own = [f"{q}-{i}" for i in range(50)]  # docnos judged/retrieved for this topic only
        judged = [str(d) for d in rng.choice(DOC_POOL + own[:25], size=int(rng.integers(1, 21)), replace=False)]
        kind = rng.random()
        all_negative = 0.15 <= kind < 0.20  # (4e): pooled-but-unjudged labels only
        mine = []
        for d in judged:
            lab = int(rng.choice(labels))
            if kind < 0.15:  # R = 0 at every level: only 0 / -1 labels
                lab = min(lab, 0)
            mine.append((q, d, -1 if all_negative else lab))
        if not all_negative and all(r < 0 for _, _, r in mine):
            mine.append((q, "zero-judged", 0))  # keep it evaluable by pytrec_eval (4e)
        qrows += mine
        depth = int(rng.integers(0, 61))
        if all_negative or rng.random() < 0.12:
            depth = 0  # (2): judged but absent from the run; always so for all-negative topics (4e)
        # retrieved docs: judged ones, shared unjudged ones (label -1) and this topic's own
        pool = list(dict.fromkeys(judged + DOC_POOL + own))
        for d in rng.choice(pool, size=min(depth, len(pool)), replace=False):
            rrows.append((q, str(d), float(rng.choice(values))))
    for i in range(int(rng.integers(0, 3))):  # run topics absent from the qrels
        for d in rng.choice(DOC_POOL, size=int(rng.integers(1, 6)), replace=False):
            rrows.append((f"{prefix}runonly{i}", str(d), float(rng.choice(values))))
    return qrows, rrows


def make_case(seeds: Sequence[int], *, score_values: Sequence[float] | None = None) -> Case:
    """One random qrels/run pair per seed, concatenated into one input (topics ``s<seed>:<qid>``).

    Per-topic values do not depend on other topics, so a batch of seeds costs one ireval and one
    pytrec_eval call instead of one per seed; the qid prefix names the seed that made a topic.
    ``score_values`` overrides the score alphabet (see (1)).
    """
    qrows: list[tuple[str, str, int]] = []
    rrows: list[tuple[str, str, float]] = []
    for seed in seeds:
        case_qrels, case_run = _case_rows(seed, score_values, prefix=f"s{seed}:")
        qrows += case_qrels
        rrows += case_run
    if not rrows:  # an empty run is an input error in ireval; keep one run-only line
        rrows.append(("runonly-x", "a", 1.0))
    qd: dict[str, dict[str, int]] = {}
    for q, d, rel in qrows:
        qd.setdefault(q, {})[d] = rel
    rd: dict[str, dict[str, float]] = {}
    for q, d, s in rrows:
        rd.setdefault(q, {})[d] = s
    for q in set(qd) & set(rd):
        assert max(qd[q].values()) >= 0, "(4e): an all-negative topic must never be in the run"
    return Case(
        f"seeds {seeds[0]}..{seeds[-1]}" if len(seeds) > 1 else f"seed {seeds[0]}",
        pd.DataFrame(qrows, columns=["qid", "docno", "rel"]),
        pd.DataFrame(rrows, columns=["qid", "docno", "score"]),
        qd,
        rd,
    )


# --------------------------------------------------------------------------------------------
# comparison helpers


def same(a: float, b: float) -> bool:
    """Exact equality, NaN == NaN (0/0 precision of an empty -J ranking is NaN in both)."""
    return a == b or (math.isnan(a) and math.isnan(b))


def lround(v: float) -> int:
    """C lround for v >= 0: round half away from zero, exactly (no v + 0.5 rounding error)."""
    f = math.floor(v)
    return f + 1 if v - f >= 0.5 else f


def k_rules_agree(points: Iterable[float], num_rel: int) -> bool:
    """(3): does 10.0's lround(x*R) equal 9.0.8's trunc(x*R + 0.9) for every recall point?"""
    return all(lround(x * num_rel) == int(x * num_rel + 0.9) for x in points)


def k_points(key: str, pts_11: Sequence[float]) -> tuple[float, ...] | None:
    """The recall points behind a K-rule pytrec_eval key, or None for any other measure."""
    if key.startswith("iprec_at_recall_"):
        return (float(key.rsplit("_", 1)[1]),)
    if key == "11pt_avg":
        return tuple(pts_11)
    return None


def num_rel_at(case: Case, qid: str, level: int) -> int:
    return sum(1 for r in case.qrels_dict[qid].values() if r >= level)


def column_lookup(results: Any) -> dict[str, Any]:
    """(4i): pytrec_eval key -> ireval column, by label, else by unique root."""
    lookup: dict[str, Any] = {c.label: c for c in results.columns}
    roots: dict[str, list[Any]] = {}
    for c in results.columns:
        roots.setdefault(c.root, []).append(c)
    for root, cols in roots.items():
        if root not in lookup and len(cols) == 1:
            lookup[root] = cols[0]
    return lookup


@dataclass
class Mismatch:
    case: Case
    mode: str
    qid: str
    key: str
    ireval: float
    pytrec: float

    def __str__(self) -> str:
        return f"[{self.mode}] topic {self.qid!r} {self.key}: ireval={self.ireval!r} pytrec_eval={self.pytrec!r}"


def report(mismatches: list[Mismatch], limit: int = 15) -> str:
    keys = sorted({m.key for m in mismatches})
    shown = ", ".join(keys[:20]) + (f", ... ({len(keys)} measures)" if len(keys) > 20 else "")
    lines = [f"{len(mismatches)} per-topic mismatches in {shown}; first {min(limit, len(mismatches))}:"]
    lines += [str(m) for m in mismatches[:limit]]
    first = mismatches[0]
    lines += ["", "minimal reproduction of the first:", first.case.describe(first.qid)]
    return "\n".join(lines)


def compare_per_topic(
    case: Case,
    pt: dict[str, dict[str, float]],
    results: Any,
    *,
    level: int,
    mode: str,
    k_filter: bool,
    pts_11: Sequence[float] = DEFAULT_11PT,
    stats: dict[str, int] | None = None,
) -> list[Mismatch]:
    """Compare every pytrec_eval per-topic value with ireval's; return the mismatches."""
    # (2): pytrec_eval reports exactly the topics that are in both the run and the qrels.
    assert set(pt) == case.common_topics, f"{case.label}: pytrec_eval topics differ"
    index = {q: i for i, q in enumerate(results.qids)}
    lookup = column_lookup(results)
    out: list[Mismatch] = []
    for qid, values in pt.items():
        i = index[qid]
        num_rel = num_rel_at(case, qid, level)
        for key, want in values.items():
            if key in ("runid", "relstring"):  # (4a)
                continue
            if key == "num_q":  # (4b)
                assert want == 1.0
                continue
            if key in ("gm_map", "gm_bpref"):  # (4c)
                got = math.log(max(float(lookup[key[3:]].per_query[i]), 1e-5))
            else:
                got = float(lookup[key].per_query[i])
            points = k_points(key, pts_11)
            if k_filter and points is not None:  # (3)
                agree = k_rules_agree(points, num_rel)
                if stats is not None:
                    stats["kept" if agree else "dropped"] += 1
                if not agree:
                    continue
            if not same(got, want):
                out.append(Mismatch(case, mode, qid, key, got, want))
    return out


def run_pytrec(case: Case, measures: Iterable[str], level: int, judged_only: bool, *, raw: bool = False) -> Any:
    if raw:  # (4f): the extension class takes the measure text verbatim
        ev = pytrec_eval_ext.RelevanceEvaluator(case.qrels_dict, set(measures), level, int(judged_only))
    else:
        ev = pytrec_eval.RelevanceEvaluator(case.qrels_dict, set(measures), level, judged_only)
    return ev.evaluate(case.run_dict)


def check_10(case: Case, level: int, judged_only: bool) -> tuple[list[Mismatch], dict[str, int]]:
    """10.0 mode: all supported measures, then the parameterised ones; K filter on (3)."""
    mode = f"10.0 -l{level}{' -J' if judged_only else ''}"
    stats = {"kept": 0, "dropped": 0}
    out: list[Mismatch] = []
    for measures, raw, pts in ((SUPPORTED, False, DEFAULT_11PT), (PARAMETERISED, True, PARAM_11PT)):
        pt = run_pytrec(case, measures, level, judged_only, raw=raw)
        # (2): complete=True, so judged topics missing from the run are not an error; their
        # placeholder rows are simply not looked at.
        res = evaluate(case.qrels, case.run, measures, complete=True, rel_level=level, judged_only=judged_only)
        out += compare_per_topic(
            case, pt, res.results, level=level, mode=f"{mode} {'params' if raw else 'defaults'}",
            k_filter=True, pts_11=pts, stats=stats,
        )  # fmt: skip
    return out, stats


def check_908(case: Case, level: int, judged_only: bool) -> list[Mismatch]:
    """compat='9.0.8': every measure on every topic, no filtering; missing topics skipped (2)."""
    mode = f"9.0.8 -l{level}{' -J' if judged_only else ''}"
    out: list[Mismatch] = []
    for measures, raw, pts in ((SUPPORTED, False, DEFAULT_11PT), (PARAMETERISED, True, PARAM_11PT)):
        pt = run_pytrec(case, measures, level, judged_only, raw=raw)
        res = evaluate(case.qrels, case.run, measures, rel_level=level, judged_only=judged_only, compat="9.0.8").results
        assert set(res.qids) == case.common_topics, f"{case.label}: compat 9.0.8 topics differ"
        out += compare_per_topic(case, pt, res, level=level, mode=mode, k_filter=False, pts_11=pts)
    return out


# --------------------------------------------------------------------------------------------
# 10.0 mode

# The default run: a batch of 150 random cases (~2,000 evaluated topics) per configuration.
DEFAULT_SEEDS = list(range(1000, 1150))
CASE = make_case(DEFAULT_SEEDS)
CONFIGS = [(lv, j) for lv in LEVELS for j in (False, True)]
CONFIG_IDS = [f"l{lv}{'-J' if j else ''}" for lv, j in CONFIGS]


def test_generator_covers_the_interesting_shapes() -> None:
    """The random cases really contain what the brief asks for, so the comparisons mean something."""
    seen = dict.fromkeys(("R=0", "missing", "run-only", "unjudged", "not-pooled", "graded", "ties", "deep"), 0)
    for q in CASE.common_topics:
        rels, scores = CASE.qrels_dict[q], CASE.run_dict[q]
        seen["R=0"] += not any(r >= 1 for r in rels.values())
        seen["unjudged"] += any(r < 0 and d in scores for d, r in rels.items())
        seen["not-pooled"] += any(d not in rels for d in scores)
        seen["ties"] += len(set(scores.values())) < len(scores)
        seen["deep"] += len(scores) >= 50
        seen["graded"] += any(r >= 2 for r in rels.values())
    seen["missing"] = len(set(CASE.qrels_dict) - set(CASE.run_dict))
    seen["run-only"] = len(set(CASE.run_dict) - set(CASE.qrels_dict))
    assert all(v >= 20 for v in seen.values()), seen


@pytest.mark.parametrize(("level", "judged_only"), CONFIGS, ids=CONFIG_IDS)
def test_10_per_topic(level: int, judged_only: bool) -> None:
    """Every pytrec_eval measure, default and explicit parameters, every shared topic, exactly."""
    mismatches, stats = check_10(CASE, level, judged_only)
    assert not mismatches, report(mismatches)
    # (3): the K-rule filter must keep topics, and (where any topic has R > 0) drop some,
    # otherwise it tests nothing or is not needed
    assert stats["kept"] > 0 and (stats["dropped"] > 0 or level == max(LEVELS)), stats


def aggregate(key: str, values: list[float]) -> float:
    """trec_eval's summary of per-topic values: sums for num_*, exp(mean) for gm_*, else mean."""
    if key.startswith("num_"):
        return math.fsum(values)
    if key.startswith("gm_"):
        return math.exp(math.fsum(values) / len(values))
    return math.fsum(values) / len(values)


def compare_summary(case: Case, pt: dict[str, dict[str, float]], topics: set[str], keys: Iterable[str],
                    **kw: Any) -> list[str]:  # fmt: skip
    """ireval's summary over ``topics`` against trec_eval's aggregation of pytrec_eval's values.

    Tolerance rel/abs 1e-12: only the summation order differs (fsum here, ireval's own there).
    """
    qrels = case.qrels[case.qrels.qid.isin(topics)]
    res = evaluate(qrels, case.run, SUPPORTED, **kw).results
    assert set(res.qids) == topics and res.num_q == len(topics)
    lookup = column_lookup(res)
    out = []
    for key in keys:
        want = aggregate(key, [pt[q][key] for q in topics])
        got = float(lookup[key].summary)
        if not (same(got, want) or math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-12)):
            out.append(f"{key}: ireval={got!r} pytrec_eval={want!r} ({kw})")
    return out


@pytest.mark.parametrize(("level", "judged_only"), [(1, False), (2, True)], ids=["l1", "l2-J"])
def test_10_summary(level: int, judged_only: bool) -> None:
    """Summary lines, on qrels restricted to the shared topics so that no -c is needed (2).

    Covers num_q and gm_map / gm_bpref, which have no per-topic value in ireval (4b, 4c).
    iprec_at_recall / 11pt_avg are summarised over the topics where the K rules agree at
    every default point (3); everything else over all shared topics.
    """
    pt = run_pytrec(CASE, SUPPORTED, level, judged_only)
    common = CASE.common_topics
    keys = [k for k in pt[next(iter(common))] if k not in ("runid", "relstring")]
    kw = {"rel_level": level, "judged_only": judged_only}
    failures = compare_summary(CASE, pt, common, [k for k in keys if k_points(k, ()) is None], **kw)
    agreeing = {q for q in common if k_rules_agree(DEFAULT_11PT, num_rel_at(CASE, q, level))}
    assert 0 < len(agreeing) < len(common)
    failures += compare_summary(CASE, pt, agreeing, [k for k in keys if k_points(k, ()) is not None], **kw)
    assert not failures, "\n".join(failures)


def test_missing_topic_is_skipped_by_pytrec_but_an_error_in_10() -> None:
    """(2) pinned: 9.0.8 skips a judged topic without results; 10.0 needs -c."""
    qrels = pd.DataFrame([("1", "a", 1), ("2", "b", 1)], columns=["qid", "docno", "rel"])
    run = pd.DataFrame([("1", "a", 1.0)], columns=["qid", "docno", "score"])
    pt = pytrec_eval.RelevanceEvaluator({"1": {"a": 1}, "2": {"b": 1}}, {"map"}).evaluate({"1": {"a": 1.0}})
    assert pt == {"1": {"map": 1.0}}
    with pytest.raises(MissingTopicError):
        evaluate(qrels, run, ["map"])
    res = evaluate(qrels, run, ["map"], complete=True).results
    assert res.qids == ["1", "2"]
    assert list(column_lookup(res)["map"].per_query) == [1.0, 0.0]


def test_iprec_k_rule_is_a_real_difference_in_10_mode() -> None:
    """(3) pinned: R = 2, x = 0.6: lround(1.2) = 1 but trunc(1.2 + 0.9) = 2."""
    qd = {"1": {"a": 1, "b": 1}}
    rd = {"1": {"a": 2.0, "x": 1.0}}
    pt = pytrec_eval.RelevanceEvaluator(qd, {"iprec_at_recall"}).evaluate(rd)["1"]
    qrels = pd.DataFrame([("1", "a", 1), ("1", "b", 1)], columns=["qid", "docno", "rel"])
    run = pd.DataFrame([("1", "a", 2.0), ("1", "x", 1.0)], columns=["qid", "docno", "score"])
    res = evaluate(qrels, run, ["iprec_at_recall"]).results
    got = column_lookup(res)["iprec_at_recall_0.60"].per_query[0]
    assert (pt["iprec_at_recall_0.60"], got) == (0.0, 1.0)
    assert not k_rules_agree([0.6], 2)


# --------------------------------------------------------------------------------------------
# float32 ties (1)

# Scores in [0.5, 2) plus offsets far below float32's half-ulp there (2**-25): distinct as
# doubles, equal as floats. 0 is avoided on purpose: 2**-45 itself is representable in float32.
F32_BASES = (0.5, 0.75, 1.0, 1.25, 1.5)
F32_VALUES = tuple(b + j * 2.0**-45 for b in F32_BASES for j in range(4))


def test_float32_tie_values_are_what_they_claim() -> None:
    v64 = np.array(F32_VALUES, dtype=np.float64)
    assert len(np.unique(v64)) == len(F32_VALUES)
    assert len(np.unique(v64.astype(np.float32))) == len(F32_BASES)


def test_float32_ties_are_a_real_difference_in_10_mode() -> None:
    """(1) pinned: 9.0.8 ties 1.0 and nextafter(1.0) and breaks the tie by docno descending."""
    up = float(np.nextafter(1.0, 2.0))
    pt = pytrec_eval.RelevanceEvaluator({"1": {"a": 1, "b": 0}}, {"recip_rank"}).evaluate({"1": {"a": up, "b": 1.0}})
    assert pt["1"]["recip_rank"] == 0.5  # float32 tie -> "b" > "a" ranks first
    qrels = pd.DataFrame([("1", "a", 1), ("1", "b", 0)], columns=["qid", "docno", "rel"])
    run = pd.DataFrame([("1", "a", up), ("1", "b", 1.0)], columns=["qid", "docno", "score"])
    res = evaluate(qrels, run, ["recip_rank"]).results
    assert float(column_lookup(res)["recip_rank"].per_query[0]) == 1.0  # 10.0: doubles, "a" first


@pytest.mark.parametrize(("level", "judged_only"), [(1, False), (2, True)], ids=["l1", "l2-J"])
def test_float32_ties_compat_908(level: int, judged_only: bool) -> None:
    """compat='9.0.8' ranks on float32 scores: full per-topic agreement, no K filter either."""
    case = make_case(list(range(5000, 5060)), score_values=F32_VALUES)
    mismatches = check_908(case, level, judged_only)
    assert not mismatches, report(mismatches)


# --------------------------------------------------------------------------------------------
# compat="9.0.8": everything, with no per-topic filtering at all


@pytest.mark.parametrize(("level", "judged_only"), CONFIGS, ids=CONFIG_IDS)
def test_compat_908_per_topic(level: int, judged_only: bool) -> None:
    """Under compat='9.0.8' missing topics are skipped (2) and K = trunc(x*R + 0.9) (3)."""
    mismatches = check_908(CASE, level, judged_only)
    assert not mismatches, report(mismatches)


def test_compat_908_summary() -> None:
    """Every summary, iprec_at_recall and 11pt_avg included, over all shared topics."""
    pt = run_pytrec(CASE, SUPPORTED, 1, False)
    common = CASE.common_topics
    keys = [k for k in pt[next(iter(common))] if k not in ("runid", "relstring")]
    failures = compare_summary(CASE, pt, common, keys, compat="9.0.8")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("name", ["rbp", "rbp_resid", "unj"])
def test_compat_908_has_no_rbp_or_unj(name: str) -> None:
    """(4h): these measures do not exist in 9.0.8."""
    assert name not in pytrec_eval.supported_measures
    qrels = pd.DataFrame([("1", "a", 1)], columns=["qid", "docno", "rel"])
    run = pd.DataFrame([("1", "a", 1.0)], columns=["qid", "docno", "score"])
    with pytest.raises(IrevalError):
        evaluate(qrels, run, [name], compat="9.0.8")


# --------------------------------------------------------------------------------------------
# many more seeds: excluded from the default run (marked slow as well, since the default
# addopts deselect "slow"); run with `pytest -m differential` or `make test-all`

HEAVY_CHUNKS = [list(range(10_000 + 200 * i, 10_000 + 200 * (i + 1))) for i in range(6)]  # 1,200 seeds


@pytest.mark.slow
@pytest.mark.differential
@pytest.mark.parametrize("seeds", HEAVY_CHUNKS, ids=[f"seeds{c[0]}" for c in HEAVY_CHUNKS])
def test_many_seeds(seeds: list[int]) -> None:
    case = make_case(seeds)
    mismatches: list[Mismatch] = []
    for level, judged_only in CONFIGS:
        mismatches += check_10(case, level, judged_only)[0]
        mismatches += check_908(case, level, judged_only)
    f32 = make_case(seeds[:50], score_values=F32_VALUES)
    mismatches += check_908(f32, 1, False) + check_908(f32, 2, True)
    assert not mismatches, report(mismatches)
