"""Issue 21 item 5: qrels and a run with no topic in common (DL 2020 qrels against a DL 2019 run)
is an error with or without -c, in every command and the API; following the old hint "use -c to
score missing topics as 0" printed map 0.0000 and exit 0."""

from __future__ import annotations

import pytest

import irevalcli
from irevalcli.errors import NoQueriesError
from tests.conftest import write

QRELS = "9 0 a 1\n9 0 b 0\n10 0 c 1\n"
RUN = "1 Q0 a 1 3 r\n2 Q0 c 1 2 r\n"


@pytest.fixture
def files(tmp_path):
    return write(tmp_path / "q.txt", QRELS), write(tmp_path / "r.txt", RUN)


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["-c"],
        ["-c", "--stream"],
        ["-c", "-q", "-m", "map", "-m", "num_q"],
        ["-c", "-R", "qrels_jg", "-m", "map_avgjg"],
        ["curve", "-c"],
        ["curve"],
    ],
    ids=lambda a: " ".join(a) or "plain",
)
def test_no_shared_topic_is_an_error_with_or_without_c(cli, files, args):
    q, r = files
    cmd = [*args[:1], *args[1:], str(q), str(r)] if args[:1] == ["curve"] else [*args, str(q), str(r)]
    res = cli(cmd)
    assert (res.code, res.out) == (2, b"")
    assert res.err == f"ireval: {r}: the run shares no topic with {q}: nothing to evaluate\n"
    assert "use -c" not in res.err


def test_the_api_refuses_it_with_complete_true(files):
    q, r = files
    for complete in (True, False):
        with pytest.raises(NoQueriesError, match=r"the run shares no topic with .*: nothing to evaluate$"):
            irevalcli.evaluate(str(q), str(r), "map", complete=complete)


def test_one_shared_topic_still_scores_the_others_as_zero(cli, files, tmp_path):
    q, _ = files
    r = write(tmp_path / "r2.txt", "9 Q0 a 1 3 r\n")
    res = cli(["-c", "-m", "map", "-m", "num_q", str(q), str(r)])
    assert res.code == 0 and res.out == b"num_q                 \tall\t2\nmap                   \tall\t0.5000\n"
    res = cli(["-m", "map", str(q), str(r)])  # the hint is offered where -c has something to score
    assert res.err.endswith("(use -c to score missing topics as 0)\n")
