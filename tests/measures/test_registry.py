"""The measure registry: documentation, labels, output order, and hand-test coverage.

Every registered measure must be documented, produce unique labels, print in
trec_eval 10.0's measure-table order, and be requested by name in a hand-computed
test (tests/measures/test_measures.py for standard qrels; prefs_* / *_avgjg in their own
test files), so a new measure cannot land without one.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from irevalcli import evaluate
from irevalcli.errors import IrevalError
from irevalcli.measures.catalog import load
from irevalcli.measures.names import resolve
from irevalcli.measures.registry import NICKNAMES

TESTS = Path(__file__).parent

# trec_eval 10.0's measure table (measures.c), which fixes the output order
TREC_EVAL_TABLE = [
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
    "iprec_at_recall",
    "P",
    "relstring",
    "recall",
    "infAP",
    "gm_bpref",
    "Rprec_mult",
    "utility",
    "11pt_avg",
    "binG",
    "G",
    "dcg",
    "ideal_dcg",
    "ndcg",
    "ndcg_rel",
    "Rndcg",
    "ndcg_cut",
    "map_cut",
    "relative_P",
    "success",
    "set_P",
    "set_relative_P",
    "set_recall",
    "set_map",
    "set_F",
    "num_nonrel_judged_ret",
    "prefs_num_prefs_poss",
    "prefs_num_prefs_ful",
    "prefs_num_prefs_ful_ret",
    "prefs_simp",
    "prefs_pair",
    "prefs_avgjg",
    "prefs_avgjg_Rnonrel",
    "prefs_simp_ret",
    "prefs_pair_ret",
    "prefs_avgjg_ret",
    "prefs_avgjg_Rnonrel_ret",
    "prefs_simp_imp",
    "prefs_pair_imp",
    "prefs_avgjg_imp",
    "map_avgjg",
    "P_avgjg",
    "Rprec_mult_avgjg",
    "yaap",
    "rbp",
    "rbp_resid",
    "unj",
]

# the standard-qrels measures trec_eval 10.0 registers (table minus prefs_* and *_avgjg)
STANDARD = [m for m in TREC_EVAL_TABLE if not m.startswith("prefs_") and not m.endswith("_avgjg")]

REGISTRY = load()
REL_FORMATS = ("qrels", "qrels_jg", "prefs", "qrels_prefs")


def _formats(name: str) -> list[str]:
    return sorted(REGISTRY[name].rel_formats)


def test_every_standard_measure_is_registered() -> None:
    assert [m for m in STANDARD if m not in REGISTRY] == []


def test_trec_eval_measures_come_first() -> None:
    # ireval's own measures are registered after every measure of trec_eval's table
    names = list(REGISTRY)
    own = [i for i, m in enumerate(names) if m not in TREC_EVAL_TABLE]
    assert all(m in REGISTRY for m in TREC_EVAL_TABLE)
    assert own == list(range(len(TREC_EVAL_TABLE), len(names)))


@pytest.mark.parametrize("name", list(REGISTRY))
def test_docstring(name: str) -> None:
    doc = REGISTRY[name].doc
    assert doc.strip(), f"{name} has no docstring"


def test_registry_order_is_trec_eval_table_order() -> None:
    rank = {m: i for i, m in enumerate(TREC_EVAL_TABLE)}
    names = list(REGISTRY)
    assert names == sorted(names, key=lambda m: rank.get(m, len(rank)))


def test_request_order_is_table_order_not_command_line_order() -> None:
    names = [m for m in REGISTRY if "qrels" in REGISTRY[m].rel_formats and m in TREC_EVAL_TABLE]
    roots = [r.measure.name for r in resolve(list(reversed(names)))]
    assert roots == [m for m in TREC_EVAL_TABLE if m in names]


def test_output_order_of_an_evaluation() -> None:
    qrels = pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "rel": [1, 0]})
    run = pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "score": [2.0, 1.0]})
    e = evaluate(qrels, run, ["unj.5", "ndcg", "P.20,5,10", "map", "runid", "iprec_at_recall.0.5,0.1", "num_q"])
    assert [c.label for c in e.results.columns] == [
        "runid",
        "num_q",
        "map",
        "iprec_at_recall_0.10",
        "iprec_at_recall_0.50",
        "P_5",
        "P_10",
        "P_20",
        "ndcg",
        "unj_5",
    ]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("P.20,5,10", ["P_5", "P_10", "P_20"]),  # integer cutoffs sorted ascending
        ("success.10,1", ["success_1", "success_10"]),
        ("iprec_at_recall.1,.25,0", ["iprec_at_recall_0.00", "iprec_at_recall_0.25", "iprec_at_recall_1.00"]),
        ("Rprec_mult.2,0.5", ["Rprec_mult_0.50", "Rprec_mult_2.00"]),
        ("11pt_avg.0.5,0.1", ["11pt_avg_0.5,0.1"]),  # real lists keep the raw text
        ("utility.2,-1,0,0", ["utility_2,-1,0,0"]),
        ("ndcg.1=3,2=9", ["ndcg_1=3,2=9"]),
        ("relstring.3", ["relstring_3"]),
        ("ndcg_cut.10,20,23.4", ["ndcg_cut_10", "ndcg_cut_20", "ndcg_cut_23"]),
    ],
)
def test_parameter_labels(spec: str, expected: list[str]) -> None:
    [req] = resolve([spec])
    assert req.labels == expected


def _labels(specs: list[str], rel_format: str = "qrels") -> list[str]:
    return [label for req in resolve(specs, rel_format=rel_format) for label in req.labels]


@pytest.mark.parametrize("rel_format", REL_FORMATS)
def test_labels_unique_within_a_request(rel_format: str) -> None:
    names = [m for m in REGISTRY if rel_format in REGISTRY[m].rel_formats]
    if not names:
        pytest.skip(f"no measure for -R {rel_format} registered yet")
    labels = _labels(names, rel_format)
    assert [lab for lab, n in Counter(labels).items() if n > 1] == []


@pytest.mark.parametrize("nick", ["official", "set", "all_trec"])
def test_labels_unique_within_nicknames(nick: str) -> None:
    labels = _labels([nick, "dcg", "ideal_dcg", "yaap"])
    assert [lab for lab, n in Counter(labels).items() if n > 1] == []


NICKNAMES_10 = {
    "official": "runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank iprec_at_recall P",
    "set": "runid num_q num_ret num_rel num_rel_ret utility set_P set_recall set_relative_P set_map set_F",
    "all_trec": "runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank iprec_at_recall P "
    "relstring recall unj rbp rbp_resid infAP gm_bpref utility 11pt_avg ndcg relative_P Rprec_mult success "
    "map_cut ndcg_cut ndcg_rel Rndcg binG G set_P set_recall set_relative_P set_map set_F num_nonrel_judged_ret",
}


@pytest.mark.parametrize("nick", list(NICKNAMES_10))
def test_nickname_members(nick: str) -> None:
    assert sorted(NICKNAMES[nick]) == sorted(NICKNAMES_10[nick].split())


def _requested_measures(paths: list[Path]) -> set[str]:
    """Measures named by a string constant in ``paths`` (``map``, ``P.5``, ``ndcg_cut_10``...)."""
    found: set[str] = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
                continue
            text = node.value
            if text.partition(".")[0] in NICKNAMES or not text or len(text) > 200:
                continue
            for rel_format in REL_FORMATS:
                try:
                    found.update(r.measure.name for r in resolve([text], rel_format=rel_format, hints=False))
                except IrevalError:
                    continue
                break
    return found


def test_every_standard_measure_has_a_hand_test() -> None:
    # trec_eval's measures in test_measures.py, ireval's own in test_extra_measures.py
    in_measures = _requested_measures([TESTS / "test_measures.py"])
    in_extra = _requested_measures([TESTS / "test_extra_measures.py"])
    missing = [
        m
        for m in REGISTRY
        if "qrels" in REGISTRY[m].rel_formats and m not in (in_measures if m in TREC_EVAL_TABLE else in_extra)
    ]
    assert missing == [], f"measures without a hand-computed test: {missing}"


def test_every_other_format_measure_has_a_hand_test() -> None:
    """prefs_* and *_avgjg (-R prefs / qrels_jg) are tested outside test_measures.py."""
    others = sorted(p for p in TESTS.parent.rglob("test_*.py") if p.name != "test_registry.py")
    elsewhere = _requested_measures(others)
    missing = [m for m in REGISTRY if "qrels" not in REGISTRY[m].rel_formats and m not in elsewhere]
    assert missing == [], f"measures without a hand-computed test in tests/: {missing}"
