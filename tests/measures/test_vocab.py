"""The registry's vocabulary as objects (issue 23, item 5): a parameter shape reads, labels and
describes parameters; a summary aggregates per-topic values and describes itself; one reading
of a spec; one rule for a measure given parameters twice."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest

from irevalcli import evaluate
from irevalcli.errors import MeasureParamError
from irevalcli.measures import catalog, names, registry
from irevalcli.measures.reference import describe_names
from irevalcli.measures.registry import (
    DOUBLE_CUTOFFS,
    GEO_MEAN,
    JUDGED_SUM,
    LONG_CUTOFFS,
    MEAN,
    NAN_MEAN,
    NO_PARAMS,
    PAIRS,
    REGISTRY,
    RUN_NAME,
    SHAPES,
    SUM,
    SUMMARIES,
    TOPIC_COUNT,
    WEIGHTED_MEAN,
    Summary,
    Totals,
    measure,
)

P, IPREC, NDCG = REGISTRY["P"], REGISTRY["iprec_at_recall"], REGISTRY["ndcg"]


# ---- parameter shapes -------------------------------------------------------------------


def test_a_shape_parses_labels_and_describes():
    p = LONG_CUTOFFS.parse(P, "10,5", "P.10,5")
    assert p.values == (5, 10) and LONG_CUTOFFS.labels("P", p) == ["P_5", "P_10"]
    assert LONG_CUTOFFS.describe((5, 10)) == "integer cutoffs, default 5,10"
    assert LONG_CUTOFFS.spellings("P") == ["P", "P.k1,k2", "P_k"]
    d = DOUBLE_CUTOFFS.parse(IPREC, "0.5,0.1", "iprec_at_recall.0.5,0.1")
    assert DOUBLE_CUTOFFS.labels("iprec_at_recall", d) == ["iprec_at_recall_0.10", "iprec_at_recall_0.50"]
    g = PAIRS.parse(NDCG, "1=3,2=9", "ndcg.1=3,2=9")
    assert g.values == (("1", 3.0), ("2", 9.0)) and PAIRS.labels("ndcg", g) == ["ndcg_1=3,2=9"]
    assert PAIRS.labels("ndcg", registry.Params((), None)) == ["ndcg"]  # the defaults: the bare name
    assert NO_PARAMS.spellings("map") == ["map"] and NO_PARAMS.describe(()) == "no parameters"
    assert not NO_PARAMS.takes_values and LONG_CUTOFFS.unites and not PAIRS.unites


@pytest.mark.parametrize(
    ("shape", "meas", "text", "message"),
    [
        (LONG_CUTOFFS, P, "0,5", "P.0,5: cutoff 0 is not a positive integer"),
        (LONG_CUTOFFS, P, "5,5", "P.5,5: cutoff 5 is given twice"),
        (LONG_CUTOFFS, P, "0x5", "P.0x5: cutoff '0x5' is hexadecimal; write it in decimal"),
        (DOUBLE_CUTOFFS, IPREC, "abc", "iprec_at_recall.abc: cutoff 'abc' is not a number"),
        (PAIRS, NDCG, "1", "ndcg.1: malformed parameter '1' (expected key=value pairs, e.g. 1=3,2=9)"),
        (NO_PARAMS, REGISTRY["map"], "5", "map.5: map takes no parameters"),
    ],
)
def test_a_shape_says_what_is_wrong(shape, meas, text, message):
    with pytest.raises(MeasureParamError) as err:
        shape.parse(meas, text, f"{meas.name}.{text}")
    assert str(err.value) == message


def test_every_declaration_names_a_shape_and_a_summary_object():
    assert all(m.params in SHAPES.values() and m.agg in SUMMARIES.values() for m in REGISTRY.values())
    assert list(SHAPES) == ["none", "long_cutoffs", "double_cutoffs", "double_params", "pairs"]
    with pytest.raises(TypeError) as err:
        measure("stringly", params="long_cutoffs")(len)  # type: ignore[arg-type]
    assert str(err.value) == (
        "measure stringly: params= takes a ParamShape (LONG_CUTOFFS...), agg= a Summary (MEAN...)"
    )
    assert "stringly" not in REGISTRY


# ---- summaries ---------------------------------------------------------------------------


def _totals(**kw: Any) -> Totals:
    return Totals(**{"topics": 2, "denom": 2, "complete": False, "runid": "r", "judged_relevant": 7, **kw})


def test_summaries_aggregate_as_trec_eval():
    v = np.array([0.5, 0.25])
    assert MEAN.summarize("x", v, None, _totals())[1] == 0.375
    # -c with 4 judged topics: the 2 the run lacks count as 0
    assert MEAN.summarize("x", v, None, _totals(denom=4, complete=True))[1] == 0.1875
    assert SUM.summarize("x", v, None, _totals())[1] == 0.75
    assert JUDGED_SUM.summarize("x", v, None, _totals())[1] == 0.75
    assert JUDGED_SUM.summarize("x", v, None, _totals(complete=True))[1] == 7
    # exp((log 0.5 + log 0.25) / 2) = sqrt(0.125); -c adds log(1e-5) for each topic the run lacks
    assert GEO_MEAN.summarize("x", v, None, _totals())[1] == pytest.approx(math.sqrt(0.125))
    assert GEO_MEAN.summarize("x", v, None, _totals(denom=3, complete=True))[1] == pytest.approx(
        (0.125 * 1e-5) ** (1 / 3)
    )
    assert NAN_MEAN.summarize("x", np.array([0.5, np.nan]), None, _totals())[1] == 0.5
    # weights 3 and 1: (3 * 0.5 + 1 * 0.25) / 4
    assert WEIGHTED_MEAN.summarize("x", v, np.array([3.0, 1.0]), _totals())[1] == 0.4375
    assert TOPIC_COUNT.aggregate(None, None, _totals(denom=5)) == 5 and not TOPIC_COUNT.per_topic
    assert RUN_NAME.aggregate(None, None, _totals()) == "r" and WEIGHTED_MEAN.weighted


def test_under_z_scores_the_values_convert_first_and_a_geometric_mean_converts_its_logs():
    def double(label: str, x: np.ndarray) -> np.ndarray:
        return 2 * x

    v = np.array([0.5, 0.25])
    shown, s = MEAN.summarize("x", v, None, _totals(convert=double))
    assert list(shown) == [1.0, 0.5] and s == 0.75
    shown, s = GEO_MEAN.summarize("x", v, None, _totals(convert=double))
    assert list(shown) == [0.5, 0.25] and s == pytest.approx(0.125)  # exp(log 0.5 + log 0.25)


def test_compare_and_gate_read_how_a_summary_combines_topics():
    assert {n for n, s in SUMMARIES.items() if s.over_topics == "sum"} == {"sum", "judged_sum"}
    assert {n for n, s in SUMMARIES.items() if s.over_topics == "mean"} == {"mean", "nanmean"}
    assert [s.text for s in SUMMARIES.values()] == [
        "mean over topics",
        "sum over topics",
        "geometric mean over topics",
        "mean over the topics that have a value",
        "weighted mean over the topics that have a value",
        "sum over topics",
        "count",
        "text",
        "per topic only",
    ]


class _Median(Summary):
    def aggregate(self, values: Any, weights: Any, at: Totals) -> Any:
        return float(np.median(values))


def test_a_new_summary_kind_is_one_class_and_one_constant():
    """Declared here, used in one declaration: evaluated, summarised and described, nothing
    else changed."""
    saved = dict(REGISTRY)
    median = _Median("median", "median over topics")
    try:

        def median_rr(t: Any, p: Any) -> Any:
            """Reciprocal rank, summarised by its median."""
            return REGISTRY["recip_rank"].func(t, p)

        median_rr.__module__ = "irevalcli.measures.extra"
        measure("median_rr", agg=median)(median_rr)
        catalog.put_everything_in_order()
        q = pd.DataFrame([(q, "a", 1) for q in "123"], columns=["qid", "docno", "rel"])
        ranks = {"1": ["a"], "2": ["x", "a"], "3": ["x", "y", "z", "a"]}  # RR 1, 1/2, 1/4
        r = pd.DataFrame(
            [(q, d, float(9 - i)) for q, docs in ranks.items() for i, d in enumerate(docs)],
            columns=["qid", "docno", "score"],
        )
        assert evaluate(q, r, ["median_rr"]).results.summary == {"median_rr": 0.5}
        assert "  summary: median over topics\n" in describe_names(["median_rr"])
    finally:
        del SUMMARIES["median"]
        REGISTRY.clear()
        REGISTRY.update(saved)


# ---- one reading of a spec, one rule for repeated parameters ------------------------------


def test_one_reading_of_a_spec():
    reg = catalog.load()
    assert names.read_spec("official", reg) == names.TrecSpelling("official", None, None)
    assert names.read_spec("P.5,10", reg) == names.TrecSpelling(None, P, "5,10")
    assert names.read_spec("ndcg_cut_10", reg) == names.TrecSpelling(None, REGISTRY["ndcg_cut"], "10")
    assert names.read_spec("map", reg) == names.TrecSpelling(None, REGISTRY["map"], None)
    assert names.read_spec("rbp.95", reg) is None  # ranx's spelling, not rbp with parameters
    assert names.read_spec("nDCG@10", reg) is None


def test_one_rule_for_repeated_parameters():
    specs = ["P.5", "map", "P_10", "P.5", "ndcg.1=3", "ndcg.1=9"]
    first, notes = names.repeated_parameters(specs, keep="first")
    assert first == ["P.5", "map", "ndcg.1=3", "ndcg.1=9"]
    assert notes == [names.Repeat("P.5", "P_10", "P.5,10")]
    every, same = names.repeated_parameters(specs, keep="all")
    assert every == ["P.5,10", "map", "ndcg.1=3", "ndcg.1=9"] and same == notes
    # a shape whose values do not unite keeps the first parameters given (trec_eval's rule)
    assert [r.labels for r in names.resolve(every)] == [["map"], ["P_5", "P_10"], ["ndcg_1=3"]]
    cuts, _ = names.repeated_parameters(["iprec_at_recall.0.5", "iprec_at_recall.0.1"], keep="all")
    assert cuts == ["iprec_at_recall.0.1,0.5"]


def test_a_spelling_names_a_known_library_which_decides_its_grammar_and_description():
    from irevalcli.measures import spellings

    assert list(spellings.LIBRARIES) == ["ir_measures", "ranx", "ireval", "tf-ranking", "elasticsearch"]
    assert [lib.name for lib in spellings.LIBRARIES.values() if lib.ranx_grammar] == ["ranx"]
    assert spellings.FAMILIES["nDCG"].library.syntax == "ir_measures' syntax"
    with pytest.raises(RuntimeError) as err:
        spellings.spelling("X", style="pyterrier", build=spellings.simple("map"), roots=("map",), definition="x")  # type: ignore[arg-type]
    assert str(err.value) == "spelling X: no library 'pyterrier' (spellings.LIBRARIES)"
    assert "X" not in spellings.FAMILIES
