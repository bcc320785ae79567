"""Measure-name grammar: spec -> labels, or spec -> exact error."""

from __future__ import annotations

import pytest

from irevalcli.errors import MeasureParamError, UnknownMeasureError
from irevalcli.measures.names import resolve


def labels(*specs, **kw):
    return [lab for r in resolve(list(specs), **kw) for lab in r.labels]


@pytest.mark.parametrize(
    "specs,expected",
    [
        (["P.5,10"], ["P_5", "P_10"]),
        (["P.10,5"], ["P_5", "P_10"]),  # sorted ascending
        (["ndcg_cut.10,20,23.4"], ["ndcg_cut_10", "ndcg_cut_20", "ndcg_cut_23"]),  # atol
        (["iprec_at_recall..10,.5"], ["iprec_at_recall_0.10", "iprec_at_recall_0.50"]),
        (["ndcg.1=3,2=9"], ["ndcg_1=3,2=9"]),
        (["utility.2,-1,0,0"], ["utility_2,-1,0,0"]),
        (["rbp.p=0.8"], ["rbp_p=0.8"]),
        (["relstring.20"], ["relstring_20"]),
        (["11pt_avg..25,.5"], ["11pt_avg_.25,.5"]),
        (["P_5"], ["P_5"]),  # an output label as input
        (["ndcg_cut_10"], ["ndcg_cut_10"]),
        (["iprec_at_recall_0.10"], ["iprec_at_recall_0.10"]),
        (["utility_2,-1,0,0"], ["utility_2,-1,0,0"]),
        (["map", "P.5", "map"], ["map", "P_5"]),
        (["P.5", "P.10"], ["P_5"]),  # only the first parameter string is used
        (["P", "P.10"], ["P_10"]),  # ... the first *parameter string*, not the first mention
        (
            ["official"],
            [
                "runid",
                "num_q",
                "num_ret",
                "num_rel",
                "num_rel_ret",
                "map",
                "gm_map",
                "Rprec",
                "bpref",
                "recip_rank",
                "iprec_at_recall_0.00",
                "iprec_at_recall_0.10",
                "iprec_at_recall_0.20",
                "iprec_at_recall_0.30",
                "iprec_at_recall_0.40",
                "iprec_at_recall_0.50",
                "iprec_at_recall_0.60",
                "iprec_at_recall_0.70",
                "iprec_at_recall_0.80",
                "iprec_at_recall_0.90",
                "iprec_at_recall_1.00",
                "P_5",
                "P_10",
                "P_15",
                "P_20",
                "P_30",
                "P_100",
                "P_200",
                "P_500",
                "P_1000",
            ],
        ),
        (["official", "P.7"], None),  # checked below: params reach a nickname's member
    ],
)
def test_labels(specs, expected):
    got = labels(*specs)
    if expected is None:
        assert "P_7" in got and "P_5" not in got
    else:
        assert got == expected


def test_output_follows_table_order():
    assert labels("ndcg", "map", "num_q") == ["num_q", "map", "ndcg"]


def test_all_trec_set():
    got = labels("all_trec")
    assert got[:2] == ["runid", "num_q"]
    assert got[-5:] == ["rbp", "rbp_resid", "unj_5", "unj_10", "unj_20"]
    assert "dcg" not in got and "yaap" not in got and len(got) == 100  # 99 summary lines + relstring (per topic only)


def test_compat_908_drops_new_measures():
    got = labels("all_trec", compat="9.0.8")
    assert "rbp" not in got and "unj_5" not in got and len(got) == 95


@pytest.mark.parametrize(
    "spec,error,message",
    [
        ("mapp", UnknownMeasureError, "unknown measure 'mapp' (did you mean 'map'?); 'ireval measures' lists them"),
        ("MAp", UnknownMeasureError, "unknown measure 'MAp' (did you mean 'map'?); 'ireval measures' lists them"),
        ("P.", MeasureParamError, "P.: a '.' must be followed by parameters (e.g. P.5,10)"),
        ("P.-5", MeasureParamError, "P.-5: cutoff -5 is not a positive integer"),
        ("P.5,,10", MeasureParamError, "P.5,,10: cutoff '' is not a positive integer"),
        ("iprec_at_recall.x", MeasureParamError, "iprec_at_recall.x: cutoff 'x' is not a number"),
        ("iprec_at_recall.0.5,.5", MeasureParamError, "iprec_at_recall.0.5,.5: cutoff 0.5 is given twice"),
        (
            "ndcg.1==3",
            MeasureParamError,
            "ndcg.1==3: malformed parameter '1==3' (expected key=value pairs, e.g. 1=3,2=9)",
        ),
        ("ndcg.1=3,", MeasureParamError, "ndcg.1=3,: malformed parameter '' (expected key=value pairs, e.g. 1=3,2=9)"),
        ("utility.1", MeasureParamError, "utility.1: utility takes exactly 4 coefficients (a,b,c,d), got 1"),
        (
            "num_nonjudged_ret",
            UnknownMeasureError,
            "unknown measure 'num_nonjudged_ret' (did you mean 'num_nonrel_judged_ret'?); 'ireval measures' lists them",
        ),
    ],
)
def test_errors(spec, error, message):
    with pytest.raises(error) as e:
        resolve([spec])
    assert str(e.value) == message


# The suggestion engine (names.Suggester): every slip class gets a whole spelling that resolves.
@pytest.mark.parametrize(
    "spec,meant",
    [
        ("map,ndcg", "-m map -m ndcg"),  # several measures in one -m
        ("map,P.10", "-m map -m P.10"),
        ("ndcg_cut10", "ndcg_cut.10"),  # the dot before the parameters is missing
        ("P10", "P.10"),
        ("iprec_at_recall0.1", "iprec_at_recall.0.1"),
        ("ndcg_cut,10", "ndcg_cut.10"),  # ... or mistyped
        ("ndcg_cut:10", "ndcg_cut.10"),
        ("NDCG_CUT.10", "ndcg_cut.10"),  # wrong case, parameters kept
        ("NDCG_CUT10", "ndcg_cut.10"),
        ("p.10", "P.10"),
        ("set_f", "set_F"),
        ("ndcg-cut.10", "ndcg_cut.10"),  # '-' for '_'
        ("ap@100", "AP@100"),  # ir_measures' name in the wrong case
        ("ndgc_cut.10", "ndcg_cut.10"),  # misspelt, parameters kept
        ("mapp", "map"),
    ],
)
def test_suggestions_are_whole_spellings_that_resolve(spec, meant):
    with pytest.raises(UnknownMeasureError) as e:
        resolve([spec])
    tail = "? a comma separates parameters, not measures)" if meant.startswith("-m ") else "?)"
    assert str(e.value) == f"unknown measure '{spec}' (did you mean '{meant}'{tail}; 'ireval measures' lists them"
    for part in meant.replace("-m ", "").split():
        resolve([part])  # what is suggested works


def test_no_suggestion_for_nonsense_and_none_outside_compat_908():
    with pytest.raises(UnknownMeasureError) as e:
        resolve(["xyzzy"])
    assert str(e.value) == "unknown measure 'xyzzy'; 'ireval measures' lists them"
    with pytest.raises(UnknownMeasureError) as e:
        resolve(["rbp,map"], compat="9.0.8")  # rbp does not exist there: no '-m rbp -m map'
    assert "-m rbp" not in str(e.value)
