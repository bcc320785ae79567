"""trec_eval 10.0's own test cases (copied from NIST's test suite with its notice,
tests/data/trec_eval/NOTICE-trec_eval.md): ireval must print exactly the expected bytes."""

from __future__ import annotations

import shlex

import pytest

from tests.conftest import TREC_EVAL

CASES = [line.split("\t") for line in (TREC_EVAL / "CASES.tsv").read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("name,args,expected", CASES, ids=[c[0] for c in CASES])
def test_case_is_byte_identical(cli, name, args, expected):
    res = cli(shlex.split(args), cwd=TREC_EVAL)
    assert res.err == ""
    assert res.code == 0
    assert res.out == (TREC_EVAL / expected).read_bytes()


def test_every_case_is_listed():
    assert len(CASES) == 15
    for _, _, expected in CASES:
        assert (TREC_EVAL / expected).exists()


# ---- --compat 9.0.8: golden outputs of the real trec_eval 9.0.8 -----------------------------------
# (tests/data/compat_9_0_8/README.md says how they were made; tests/make_compat_goldens.py
# regenerates them from a trec_eval 9.0.8 binary, which is not in the repository)

COMPAT_908 = TREC_EVAL.parent / "compat_9_0_8"
CASES_908 = [line.split("\t") for line in (COMPAT_908 / "CASES.tsv").read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("name,args,expected", CASES_908, ids=[c[0] for c in CASES_908])
def test_compat_908_is_byte_identical_to_trec_eval_908(cli, name, args, expected):
    res = cli(["--compat", "9.0.8", *shlex.split(args)], cwd=COMPAT_908)
    assert (res.code, res.err) == (0, "")
    assert res.out == (COMPAT_908 / expected).read_bytes()


def test_compat_908_matrix_covers_every_flag():
    assert len(CASES_908) == 89
    used = {tok for _, args, _ in CASES_908 for tok in shlex.split(args)}
    assert {"-q", "-c", "-l", "-M", "-J", "-N", "all_trec"} <= used


def test_compat_908_num_rel_under_c_counts_topics_without_results():
    """trec_eval 9.0.8, like 10.0, sums num_rel over every judged topic under -c (issue 14)."""
    out = (COMPAT_908 / "out.small.avg.c").read_bytes()
    assert b"num_rel               \tall\t74\n" in out


# ---- deliberate differences from trec_eval 10.0 (README "Differences"), checked with its binary --


def test_fractional_gains_do_not_depend_on_their_order(cli, tmp_path):
    """trec_eval 10.0 prints 0.0000 for ndcg.1=0.5 and 1.0000 for ndcg.0=0,1=0.5 (its gain sort
    compares integer parts); ireval's ideal ranking is the ideal one in every order."""
    (tmp_path / "q").write_text("1 0 a 1\n1 0 b 0\n2 0 c 1\n")
    (tmp_path / "r").write_text("1 Q0 a 1 2.0 r\n1 Q0 b 2 1.0 r\n2 Q0 c 1 1 r\n")
    for spec in ("ndcg.1=0.5", "ndcg.0=0,1=0.5", "ndcg.1=0.5,0=0"):
        for compat in ("10.0", "9.0.8"):
            res = cli(["--compat", compat, "-m", spec, "q", "r"], cwd=tmp_path)
            label = spec.replace(".", "_", 1)
            assert (res.code, res.err, res.out) == (0, "", f"{label:<22}\tall\t1.0000\n".encode())
