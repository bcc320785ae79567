"""ir_measures' habits (issue 25 item 3): a blank-separated list in one -m is several
measures, in every spelling and every command; parameters on a measure that takes none are
an error naming the measure meant; outside trec text, results follow the order asked."""

from __future__ import annotations

import io
import json

import pytest

from irevalcli.errors import MeasureParamError
from tests.conftest import DATA, TREC_EVAL

EXAMPLES = DATA.parent.parent / "examples"

QR = ["qrels.test", "results.test"]


# ---- the grammar -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "specs"),
    [
        (["ndcg_cut.10 map"], ["ndcg_cut.10", "map"]),
        (["AP nDCG@10"], ["AP", "nDCG@10"]),
        (["  map\tP.5  "], ["map", "P.5"]),  # any run of blanks, ends trimmed
        (["map", "P.5 P.10"], ["map", "P.5", "P.10"]),
        # blanks inside parentheses and braces belong to the spelling
        (["nDCG(gains={0:1, 1:4})@10 P@5"], ["nDCG(gains={0:1, 1:4})@10", "P@5"]),
        (["RBP(p=0.8, rel=2) map"], ["RBP(p=0.8, rel=2)", "map"]),
        # next to a comma a blank is part of the parameters, as trec_eval's atol reads them
        (["P.5, 10 map"], ["P.5, 10", "map"]),
        (["P.5 ,10"], ["P.5 ,10"]),
        ([""], [""]),  # left as it is: an unknown measure, as before
        (["   "], ["   "]),
    ],
)
def test_split_specs(given, specs):
    from irevalcli.measures.names import split_specs

    assert split_specs(given) == specs


def test_every_spelling_in_one_list():
    """trec names, output labels, nicknames, ir_measures', ranx's and ireval's spellings."""
    from irevalcli.measures.names import resolve

    one = [lb for r in resolve(["map ndcg_cut_10 set nDCG@10 ndcg@5 rbp.95 pFound@10"]) for lb in r.labels]
    apart = [
        lb
        for r in resolve(["map", "ndcg_cut_10", "set", "nDCG@10", "ndcg@5", "rbp.95", "pFound@10"])
        for lb in r.labels
    ]
    assert one == apart
    assert {"map", "ndcg_cut_10", "set_F", "nDCG@10", "ndcg@5", "rbp.95", "pFound@10"} <= set(one)


# ---- the eval command --------------------------------------------------------------------


def test_one_list_is_the_measures_given_apart_byte_for_byte(cli):
    apart = cli(["-q", "-m", "ndcg_cut.10", "-m", "map", *QR], cwd=TREC_EVAL)
    one = cli(["-q", "-m", "ndcg_cut.10 map", *QR], cwd=TREC_EVAL)
    assert apart.code == one.code == 0
    assert one.out == apart.out
    # trec text keeps trec_eval's order: map before ndcg_cut_10 whatever the order asked
    summary = [line.split("\t")[0].strip() for line in one.out.decode().splitlines() if "\tall\t" in line]
    assert summary == ["map", "ndcg_cut_10"]


def test_ir_measures_list_is_accepted(cli):
    res = cli(["-m", "AP nDCG@10", *QR], cwd=TREC_EVAL)
    assert res.code == 0, res.err
    trec = cli(["-m", "map ndcg_cut.10", *QR], cwd=TREC_EVAL).out.decode().splitlines()
    mine = res.out.decode().splitlines()
    assert [line.split("\t")[0].strip() for line in mine] == ["AP", "nDCG@10"]
    assert [line.split("\t")[1:] for line in mine] == [line.split("\t")[1:] for line in trec]


def test_a_blank_after_a_comma_is_trec_eval_s_reading(cli):
    """trec_eval reads -m 'P.5, 10' as P.5,10 (atol skips the blank): same bytes."""
    res = cli(["-m", "P.5, 10", *QR], cwd=TREC_EVAL)
    assert res.code == 0, res.err
    assert res.out == cli(["-m", "P.5,10", *QR], cwd=TREC_EVAL).out


def test_repeated_cutoffs_in_one_list_get_the_note(cli):
    res = cli(["-m", "P.5 P.10", *QR], cwd=TREC_EVAL)
    assert res.code == 0
    assert res.out == cli(["-m", "P.5", *QR], cwd=TREC_EVAL).out
    assert res.err == (
        "ireval: note: -m P.10 ignored: trec_eval keeps the first parameters given for a measure "
        "(-m P.5); write -m P.5,10\n"
    )


def test_an_error_after_the_note_is_the_only_line(cli, tmp_path):
    """The note about ignored parameters is said once the runs are evaluated: when the
    evaluation fails, its error is the one line (found by test_fuzz)."""
    (tmp_path / "q").write_text("1 0 d1 0\n")
    (tmp_path / "r").write_text("1 Q0 d1 0 1 run\n")
    res = cli(["-R", "qrels_jg", "-m", "Rprec_mult.0", "-m", "Rprec_mult.1", "q", "r"], cwd=tmp_path)
    assert (res.code, res.out) == (2, b"")
    assert res.err == (
        "ireval: measure 'Rprec_mult' cannot be computed from -R qrels_jg judgements (it needs -R qrels); "
        "with -R qrels_jg use -m qrels_jg\n"
    )


# ---- the order asked, outside trec text ---------------------------------------------------


def test_json_follows_the_order_asked(cli):
    res = cli(["-q", "--format", "json", "-m", "ndcg_cut.10 P.5", "-m", "map", *QR], cwd=TREC_EVAL)
    doc = json.loads(res.out)
    assert list(doc["summary"]) == ["ndcg_cut_10", "P_5", "map"]
    assert list(next(iter(doc["per_query"].values()))) == ["ndcg_cut_10", "P_5", "map"]
    assert doc["options"]["measures"] == ["ndcg_cut.10", "P.5", "map"]


def test_a_nickname_keeps_its_members_order_at_its_place(cli):
    res = cli(["--format", "json", "-m", "ndcg_cut.10 set", *QR], cwd=TREC_EVAL)
    labels = list(json.loads(res.out)["summary"])
    members = cli(["-m", "set", *QR], cwd=TREC_EVAL).out.decode().splitlines()
    assert labels == ["ndcg_cut_10", *[line.split("\t")[0].strip() for line in members]]


def test_csv_and_parquet_follow_the_order_asked(cli, tmp_path):
    import csv

    import pyarrow.parquet as pq

    res = cli(["--format", "csv", "-m", "recip_rank map P.5", *QR], cwd=TREC_EVAL)
    header = next(csv.reader(io.StringIO(res.out.decode())))
    assert header == ["run", "runid", "qid", "recip_rank", "map", "P_5"]
    out = tmp_path / "r.parquet"
    assert cli(["-m", "recip_rank map P.5", "--output", out, *QR], cwd=TREC_EVAL).code == 0
    assert pq.read_table(out).column("measure").to_pylist() == ["recip_rank", "map", "P_5"]


def test_markdown_follows_the_order_asked(cli):
    res = cli(["--format", "markdown", "-m", "P.5 map", *QR], cwd=TREC_EVAL)
    assert res.out.decode().splitlines()[0] == "| run | runid | P_5 | map |"


def test_api_takes_a_list_in_one_string_and_keeps_its_order():
    from irevalcli import evaluate

    ev = evaluate(TREC_EVAL / "qrels.test", TREC_EVAL / "results.test", "ndcg_cut.10 map")
    assert list(ev.summary["measure"]) == ["ndcg_cut_10", "map"]
    assert list(dict.fromkeys(ev.per_query["measure"])) == ["ndcg_cut_10", "map"]
    assert [c.label for c in ev.results.columns] == ["map", "ndcg_cut_10"]  # trec_eval's order, for trec text
    listed = evaluate(TREC_EVAL / "qrels.test", TREC_EVAL / "results.test", ["P.5", "recip_rank"])
    assert list(listed.summary["measure"]) == ["P_5", "recip_rank"]


# ---- compare and gate --------------------------------------------------------------------


def test_compare_and_gate_take_a_list(cli):
    apart = cli(["compare", "--format", "json", "-m", "map", "-m", "P.10", *QR, "results.test"], cwd=TREC_EVAL)
    one = cli(["compare", "--format", "json", "-m", "map P.10", *QR, "results.test"], cwd=TREC_EVAL)
    assert one.code == apart.code == 0
    assert json.loads(one.out)["comparisons"] == json.loads(apart.out)["comparisons"]
    gate = cli(
        ["gate", "--format", "json", "--baseline", "results.test", "-m", "map P.10", "--min", "map=0", *QR],
        cwd=TREC_EVAL,
    )
    assert gate.code == 0, gate.err
    assert [m["measure"] for m in json.loads(gate.out)["measures"]] == ["map", "P_10"]


def test_gate_config_measures_list(cli, tmp_path):
    cfg = tmp_path / "gate.toml"
    cfg.write_text(
        f'qrels = "{TREC_EVAL / "qrels.test"}"\nbaseline = "{TREC_EVAL / "results.test"}"\n'
        'measures = ["map P.10", "recip_rank"]\n[min]\nmap = 0\n'
    )
    res = cli(["gate", "--format", "json", "--config", cfg, TREC_EVAL / "results.test"])
    assert res.code == 0, res.err
    assert [m["measure"] for m in json.loads(res.out)["measures"]] == ["map", "P_10", "recip_rank"]


# ---- parameters on a measure that takes none ---------------------------------------------


def test_recip_rank_10_names_the_measure_meant(cli):
    res = cli(["-m", "recip_rank.10", *QR], cwd=TREC_EVAL)
    assert (res.code, res.out) == (2, b"")
    assert res.err == (
        "ireval: recip_rank.10: recip_rank takes no parameters (did you mean 'recip_rank_cut.10' or 'RR@10'?)\n"
    )


def test_a_nickname_with_parameters_is_refused(cli):
    res = cli(["-m", "official.5", *QR], cwd=TREC_EVAL)
    assert (res.code, res.out) == (2, b"")
    assert res.err == "ireval: official.5: 'official' is a nickname and takes no parameters; write -m official\n"


def _parameterless():
    from irevalcli.measures.catalog import load

    return sorted(name for name, m in load().items() if not m.params.takes_values)


@pytest.mark.parametrize("name", _parameterless())
@pytest.mark.parametrize("text", ["10", "p=0.5"])
def test_every_parameterless_measure_refuses_parameters(name, text):
    """Every measure that takes no parameters: an error, and each measure it offers instead
    resolves, to that measure (or its cutoff form) at that cutoff."""
    from irevalcli.measures.catalog import load
    from irevalcli.measures.names import resolve

    meas = load()[name]
    compat = sorted(meas.versions)[-1]
    rel_format = sorted(meas.rel_formats)[0]
    spec = f"{name}.{text}"
    with pytest.raises(MeasureParamError) as exc:
        resolve([spec], compat=compat, rel_format=rel_format)
    msg = str(exc.value)
    assert msg.startswith(f"{spec}: {name} takes no parameters")
    if text != "10" or "(did you mean" not in msg:
        assert msg == f"{spec}: {name} takes no parameters; write -m {name}"
        return
    offered = msg.split("(did you mean ")[1].rstrip("?)").split(" or ")
    for o in offered:
        (req,) = resolve([o.strip("'")], compat=compat, rel_format=rel_format)
        assert req.measure.name in (name, f"{name}_cut")
        assert 10 in req.params.values or ("cutoff", 10) in getattr(req.params, "opts", ())


def test_the_registry_has_parameterless_measures():
    names = _parameterless()
    assert {"map", "recip_rank", "num_q", "bpref", "auc"} <= set(names)


_ONE = ["map", "P.5,10", "P_5", "ndcg_cut.10", "nDCG@10", "AP", "P(rel=2)@5", "rbp.95", "map@100-l2", "official"]


@pytest.mark.parametrize("seed", range(20))
def test_a_joined_list_splits_back_into_its_measures(seed):
    """Any measures joined by any runs of blanks split back into the same measures, and
    resolve to the same labels as given one -m each."""
    import random

    from irevalcli.measures.names import resolve, split_specs

    rng = random.Random(seed)
    specs = rng.sample(_ONE, rng.randint(1, len(_ONE)))
    joined = "".join(s + "".join(rng.choice(" \t") for _ in range(rng.randint(1, 3))) for s in specs)
    assert split_specs([joined]) == specs
    assert [lb for r in resolve([joined]) for lb in r.labels] == [lb for r in resolve(specs) for lb in r.labels]


@pytest.mark.parametrize("measures", [["P.5", "P.10"], "P.5 P.10", [["P.5"], ["P.10"]], "P.5 P.5,10"])
def test_the_api_never_drops_a_cutoff_silently(measures):
    """The class of issue 25 item 3 in the Python API: ``evaluate(..., "P.5 P.10")`` kept only
    P_5 (trec_eval's rule for its text, which the API does not print): every cutoff asked."""
    from irevalcli import evaluate

    ev = evaluate(str(EXAMPLES / "qrels.txt"), str(EXAMPLES / "run.txt"), measures)
    assert list(ev.summary.measure) == ["P_5", "P_10"]
    whole = evaluate(str(EXAMPLES / "qrels.txt"), str(EXAMPLES / "run.txt"), "P.5,10")
    assert ev.summary.equals(whole.summary)
