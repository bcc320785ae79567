"""trec_eval 10.0's own test cases (copied from NIST's test suite with its notice,
tests/data/trec_eval/NOTICE-trec_eval.md): ireval must print exactly the expected bytes."""

from __future__ import annotations

import shlex

import pytest

from .conftest import TREC_EVAL

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
