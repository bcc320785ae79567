"""``-l`` at and below 0 against the real trec_eval 10.0 and 9.0.8 (issue 21 item 9): byte
identity holds for every level trec_eval accepts. The expected outputs were printed by the
binaries themselves (tests/make_level_goldens.py says how; the binaries are not in the repo)."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

LEVELS = Path(__file__).resolve().parents[1] / "data" / "levels"
CASES = [line.split("\t") for line in (LEVELS / "CASES.tsv").read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("name,version,args,expected", CASES, ids=[f"{c[1]}.{c[0]}" for c in CASES])
def test_level_is_byte_identical_to_trec_eval(cli, name, version, args, expected):
    compat = ["--compat", "9.0.8"] if version == "908" else []
    res = cli([*compat, *shlex.split(args)], cwd=LEVELS)
    assert (res.code, res.err) == (0, "")
    assert res.out == (LEVELS / expected).read_bytes()


def test_every_level_and_version_is_covered():
    assert len(CASES) == 48
    assert {(c[1], shlex.split(c[2])[1]) for c in CASES} == {
        (v, lv) for v in ("10", "908") for lv in ("-1", "-2", "-3", "0")
    }
