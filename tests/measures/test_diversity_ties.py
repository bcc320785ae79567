"""alpha_nDCG@k and ERR_IA@k under ir_measures' spellings on tied scores (issue 21 item 10).

pyndeval (ndeval, which ir_measures runs for them) breaks score ties by docno ascending;
ireval ranks every measure as trec_eval does, ties by docno descending. The spellings'
definitions say so and how to get pyndeval's number: a run whose ties are in docno-ascending
order, read with ``--ties input`` (``ties="input"``). Both halves are checked here against
pyndeval itself."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("pyndeval")
pytest.importorskip("ir_measures")

from irevalcli.measures.reference import describe
from tests.test_reference_libs import im_values, ireval_values, make_subtopics

SPECS = ["alpha_nDCG@5", "alpha_nDCG@10", "alpha_nDCG@20", "ERR_IA@5", "ERR_IA@20"]


def _tied(seed: int):
    qrels, run, sub = make_subtopics(seed)
    rng = np.random.default_rng(seed)
    run = run.copy()
    run["score"] = rng.integers(1, 4, size=len(run)).astype(float)  # three score values: many ties
    return qrels, run, sub


def _pyndeval_order(run):
    """The run as pyndeval ranks it: score descending, ties by docno ascending."""
    return run.sort_values(["qid", "score", "docno"], ascending=[True, False, True], kind="stable")


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_ties_input_on_a_docno_ascending_run_is_pyndevals_number(seed):
    qrels, run, sub = _tied(seed)
    theirs = im_values(qrels, run, SPECS, subtopics=sub)
    ours = ireval_values(qrels, _pyndeval_order(run), SPECS, subtopics=sub, ties="input")
    assert theirs
    for key, value in theirs.items():
        assert math.isclose(ours[key], value, rel_tol=0, abs_tol=1e-9), (key, ours[key], value)


def test_by_default_ties_go_trec_eval_s_way_and_differ_from_pyndeval():
    differ = 0
    for seed in range(4):
        qrels, run, sub = _tied(seed)
        theirs = im_values(qrels, run, SPECS, subtopics=sub)
        ours = ireval_values(qrels, run, SPECS, subtopics=sub)
        differ += sum(not math.isclose(ours[k], v, rel_tol=0, abs_tol=1e-9) for k, v in theirs.items())
    assert differ > 0


@pytest.mark.parametrize("spec", ["alpha_nDCG@10", "ERR_IA@10"])
def test_the_definition_says_how_ties_differ_and_how_to_get_pyndeval(spec):
    text = describe(spec)
    assert text is not None
    assert "ties by docno descending (trec_eval's order); pyndeval breaks them by docno ascending" in text
    assert "--ties input" in text
