"""Friendly names: ir_measures' and ranx's syntax (and ireval's own) -> one canonical measure."""

from __future__ import annotations

import json

import pytest

from irevalcli.errors import MeasureParamError, UnknownMeasureError
from irevalcli.measures.names import parse_friendly as parse
from irevalcli.measures.names import resolve
from irevalcli.measures.reference import describe
from irevalcli.measures.spellings import BIG
from tests.conftest import TREC_EVAL


def target(spec):
    f = parse(spec)
    assert f is not None, spec
    t = f.target
    return (t.root, t.values, dict(t.opts), ([t.view] if t.view else []) + list(t.views))


@pytest.mark.parametrize(
    "spec,expected",
    [
        # ir_measures
        ("nDCG@10", ("ndcg_cut", (10,), {}, [])),
        ("nDCG", ("ndcg", (), {}, [])),
        ("NDCG@5", ("ndcg_cut", (5,), {}, [])),
        ("P(rel=2)@5", ("P", (5,), {}, [("level", 2)])),
        ("P@5", ("P", (5,), {}, [])),
        ("AP", ("map", (), {}, [])),
        ("AP@100", ("map_cut", (100,), {}, [])),
        ("MAP", ("map", (), {}, [])),
        ("MAP@100", ("map_cut", (100,), {}, [])),
        ("nDCG(gains={0:1,1:4})@10", ("ndcg_cut", (10,), {}, [("gains", ((0, 1), (1, 4)))])),
        (
            "nDCG(gains={ 1: 3 , 2:9 }, judged_only=True)",
            ("ndcg", (), {}, [("gains", ((1, 3), (2, 9))), ("judged", 0)]),
        ),
        ("SetP@5", ("set_P", (), {}, [("top", 5)])),
        ("SetP(rel=2)@5", ("set_P", (), {}, [("top", 5), ("level", 2)])),
        ("SetR@10", ("set_recall", (), {}, [("top", 10)])),
        ("SetF(beta=0.5)@3", ("set_F", (0.5,), {}, [("top", 3)])),
        ("SetAP@3", ("set_map", (), {}, [("top", 3)])),
        ("SetRelP@3", ("set_relative_P", (), {}, [("top", 3)])),
        ("RR", ("recip_rank", (), {}, [])),
        ("RR@10", ("recip_rank_cut", (10,), {}, [])),
        ("MRR@10", ("recip_rank_cut", (10,), {}, [])),
        ("R@100", ("recall", (100,), {}, [])),
        ("Judged@10", ("judged", (10,), {"judged": "in_qrels"}, [])),
        ("Judged", ("judged", (BIG,), {"judged": "in_qrels"}, [])),
        ("ERR@20", ("err_cut", (20,), {"gmax": 4}, [])),
        ("RBP(p=0.8)", ("rbp", (("p", 0.8),), {}, [])),
        ("RBP", ("rbp", (("p", 0.8),), {}, [])),
        ("RBP(rel=2)", ("rbp", (("p", 0.8),), {}, [("binary", 2)])),
        ("nDCG(dcg=exp-log2)@10", ("ndcg_exp_cut", (10,), {}, [])),
        ("nDCG(dcg='exp-log2')@10", ("ndcg_exp_cut", (10,), {}, [])),
        ("nDCG(judged_only=True)@10", ("ndcg_cut", (10,), {}, [("judged", 0)])),
        ("alpha_nDCG@20", ("alpha_ndcg_cut", (20,), {}, [])),
        ("alpha_nDCG(alpha=0.3)@20", ("alpha_ndcg_cut", (20,), {"alpha": 0.3}, [])),
        ("ERR_IA@20", ("err_ia_cut", (20,), {}, [])),
        ("IPrec@0.5", ("iprec_at_recall", (0.5,), {}, [("908", 0)])),
        ("INST(max_rel=3)", ("inst", (("T", 1.0), ("min_rel", 0.0), ("max_rel", 3.0)), {}, [])),
        ("SetF(beta=0.5)", ("set_F", (0.5,), {}, [])),
        ("Accuracy@10", ("auc", (), {"retrieved_only": True, "cutoff": 10}, [])),
        # ranx
        ("ndcg@10", ("ndcg_cut", (10,), {}, [])),
        ("map@100", ("map_cut", (100,), {}, [])),
        ("mrr@10", ("recip_rank_cut", (10,), {}, [])),
        ("mrr", ("recip_rank", (), {}, [])),
        ("ndcg_burges@10", ("ndcg_exp_cut", (10,), {}, [])),
        ("map@100-l2", ("map_cut", (100,), {}, [("drop", 2)])),
        ("map-l2", ("map", (), {}, [("drop", 2)])),
        ("precision", ("set_P", (), {}, [])),
        ("hit_rate", ("success", (BIG,), {}, [])),
        ("f1@10", ("F", (10,), {}, [])),
        ("r-precision", ("Rprec", (), {}, [])),
        ("rbp.95", ("rbp_label", (("p", 0.95),), {}, [])),
        # ireval's own
        ("pFound@10", ("pfound_cut", (10,), {}, [])),
        ("pFound(p_break=0.2)", ("pfound", (("p_break", 0.2),), {}, [])),
        ("pFound(p_break=0.2)@5", ("pfound_cut", (5,), {"p_break": 0.2}, [])),
        ("AUC", ("auc", (), {}, [])),
        ("GAUC(weight=uniform)", ("gauc", (), {"weight": "uniform"}, [])),
        ("CG@10", ("cg_cut", (10,), {}, [])),
        ("R_cap@10", ("relative_P", (10,), {}, [])),
        ("F(beta=2)@10", ("F", (10,), {"beta": 2.0}, [])),
    ],
)
def test_friendly_targets(spec, expected):
    assert target(spec) == expected


# (bare trec_eval names such as map or recall never get here: resolve() takes them first)
@pytest.mark.parametrize("spec", ["P.5", "P_5", "rbp.p=0.8", "mapp", "MAp", "precision.5", "foo@10", "ndcg_cut@10x"])
def test_not_friendly(spec):
    assert parse(spec) is None


def labels(*specs, **kw):
    return [lab for r in resolve(list(specs), **kw) for lab in r.labels]


def test_label_is_the_spelling_typed_and_order_is_registry_order():
    got = labels("nDCG@10", "P(rel=2)@5", "map", "mrr@10", "ndcg_cut.10", "P.5", "pFound@10", "AUC")
    assert got == ["map", "P_5", "P(rel=2)@5", "ndcg_cut_10", "nDCG@10", "pFound@10", "mrr@10", "AUC"]


def test_trec_eval_names_keep_their_meaning():
    assert labels("recall") == [f"recall_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]
    assert labels("recall@10") == ["recall@10"]
    assert labels("map", "map@100") == ["map", "map@100"]
    with pytest.raises(UnknownMeasureError):
        resolve(["MAp"])
    # MAP is ir_measures' alias of AP, printed as typed next to trec_eval's map
    assert labels("MAP", "map", "MAP@10") == ["map", "MAP", "MAP@10"]


def test_duplicates_are_dropped():
    assert labels("nDCG@10", "nDCG@10") == ["nDCG@10"]


@pytest.mark.parametrize(
    "spec,message",
    [
        ("P", None),  # trec_eval's P: default cutoffs, not an error
        ("P(rel=x)@5", "P(rel=x)@5: rel='x' is not an integer"),
        ("P(foo=1)@5", "P(foo=1)@5: P takes no parameter 'foo' (it takes: rel, judged_only)"),
        ("R", None),
        ("Success", None),
        ("Rprec@5", None),  # Rprec@5 is not a trec_eval label: an ir_measures name misused
        ("nDCG(dcg=exp)@10", "nDCG(dcg=exp)@10: dcg='exp' is not one of 'log2', 'exp-log2'"),
        ("nDCG@0", "nDCG@0: cutoff '0' is not a positive integer"),
        ("alpha_nDCG", "alpha_nDCG: alpha_nDCG needs a cutoff, e.g. alpha_nDCG@10"),
        ("GAUC(weight=magic)", "GAUC(weight=magic): weight='magic' is not one of 'judged', 'uniform', 'positives'"),
        ("nDCG(gains={1:-2})@5", "nDCG(gains={1:-2})@5: gains 1:-2: labels and gains must be non-negative integers"),
        ("nDCG(gains={1:2.5})@5", "nDCG(gains={1:2.5})@5: gains 1:2.5: labels and gains must be non-negative integers"),
        ("nDCG(gains=3)@5", "nDCG(gains=3)@5: gains must be a mapping of labels to gains, e.g. gains={0:1,1:4}"),
        ("nDCG(gains={})@5", "nDCG(gains={})@5: gains must be a mapping of labels to gains, e.g. gains={0:1,1:4}"),
        ("nDCG(gains={1})@5", "nDCG(gains={1})@5: cannot read the value '{1}'"),
        (
            "nDCG(gains={1:2},dcg=exp-log2)@5",
            "nDCG(gains={1:2},dcg=exp-log2)@5: gains apply to dcg=log2 only (ir_measures has no exp-log2 with gains)",
        ),
        ("SetP@0", "SetP@0: cutoff '0' is not a positive integer"),
    ],
)
def test_errors(spec, message):
    if message is None:
        try:
            resolve([spec])
        except (MeasureParamError, UnknownMeasureError):
            pass
        return
    with pytest.raises(MeasureParamError) as e:
        resolve([spec])
    assert str(e.value) == message


def test_rprec_takes_no_cutoff():
    with pytest.raises(MeasureParamError) as e:
        resolve(["Rprec(rel=2)@5"])
    assert str(e.value) == "Rprec(rel=2)@5: Rprec takes no cutoff"


def test_describe_says_which_definition_applies():
    text = describe("Judged@10")
    assert text.splitlines()[0] == "Judged@10 -> judged.10: ir_measures' syntax"
    assert "min(k, num_ret)" in text
    assert describe("map@100-l2").splitlines()[0] == "map@100-l2 -> map_cut.100: ranx's syntax"
    assert describe("ERR@20").splitlines()[0] == "ERR@20 -> err_cut.20: ir_measures' syntax"
    assert describe("nope@3") is None


def test_measures_command(cli):
    res = cli(["measures", "nDCG(dcg=exp-log2)@10"])
    assert res.code == 0
    assert res.out.decode().splitlines()[0] == "nDCG(dcg=exp-log2)@10 -> ndcg_exp_cut.10: ir_measures' syntax"
    res = cli(["measures", "err_cut"])
    out = res.out.decode()
    assert res.code == 0 and out.startswith("err_cut: ERR at k:")
    assert "  reference: Chapelle, Metzler, Zhang & Grinspan, CIKM 2009" in out
    assert "  also typed as: ERR (ir_measures)" in out
    res = cli(["measures"])
    listing = res.out.decode()
    assert "pfound_cut" in listing and "ndcg_burges" in listing
    res = cli(["measures", "nDGC@10"])
    assert res.code == 2


def test_json_uses_the_labels_as_typed(cli):
    res = cli(
        [
            "-q",
            "--format",
            "json",
            "-m",
            "nDCG@10",
            "-m",
            "map@100-l2",
            "-m",
            "P(rel=2)@5",
            "qrels.rel_level",
            "results.test",
        ],
        cwd=TREC_EVAL,
    )
    assert res.code == 0, res.err
    doc = json.loads(res.out)
    assert list(doc["summary"]) == ["nDCG@10", "map@100-l2", "P(rel=2)@5"]  # the order asked
    assert list(next(iter(doc["per_query"].values()))) == ["nDCG@10", "map@100-l2", "P(rel=2)@5"]


def test_friendly_names_agree_with_trec_eval_names(cli):
    res = cli(
        [
            "-m",
            "nDCG@10",
            "-m",
            "ndcg_cut.10",
            "-m",
            "AP@100",
            "-m",
            "map_cut.100",
            "-m",
            "RR",
            "-m",
            "recip_rank",
            "qrels.test",
            "results.test",
        ],
        cwd=TREC_EVAL,
    )
    lines = dict(line.split("\t")[0::2] for line in res.out.decode().splitlines())
    assert lines["nDCG@10".ljust(22)] == lines["ndcg_cut_10".ljust(22)]
    assert lines["AP@100".ljust(22)] == lines["map_cut_100".ljust(22)]
    assert lines["RR".ljust(22)] == lines["recip_rank".ljust(22)]


def test_rel_overrides_l_for_that_measure_only(cli):
    a = cli(["-m", "P.5", "-l", "3", "qrels.rel_level", "results.test"], cwd=TREC_EVAL).out.decode().split("\t")[2]
    b = cli(["-m", "P(rel=3)@5", "qrels.rel_level", "results.test"], cwd=TREC_EVAL).out.decode().split("\t")[2]
    assert a == b


def test_measures_command_describes_several_names(cli):
    """``ireval measures auc gauc`` describes each, in order, a blank line between; one
    unknown name is refused before anything is printed."""
    one = [cli(["measures", n]).out.decode() for n in ("auc", "nDCG@10", "official")]
    res = cli(["measures", "auc", "nDCG@10", "official"])
    assert (res.code, res.err) == (0, "")
    assert res.out.decode() == "\n".join(one)
    res = cli(["measures", "auc", "nDGC@10"])
    assert (res.code, res.out) == (2, b"")
    assert res.err.startswith("ireval: unknown measure 'nDGC@10'")
