"""Values that overflow or fail to convert before the check that would name them are refused
by that check: one line, exit 2, never an internal error (issue 21 item 13). Measure spellings
(ir_measures' @k, arguments, ranx's -lN), relstring's k, and fsspec URLs that cannot be read."""

from __future__ import annotations

import zipfile

import pytest

from tests.conftest import DATA

GOLDEN = DATA / "golden"
HUGE = "99999999999999999999"


@pytest.mark.parametrize(
    ("spec", "why"),
    [
        (f"P@{HUGE}", f"cutoff '{HUGE}' is out of range"),
        (f"nDCG@{HUGE}", f"cutoff '{HUGE}' is out of range"),
        (f"ERR@{HUGE}", f"cutoff '{HUGE}' is out of range"),
        (f"Judged@{HUGE}", f"cutoff '{HUGE}' is out of range"),
        (f"precision@{HUGE}", f"cutoff '{HUGE}' is out of range"),
        (f"ndcg-l{HUGE}", f"level '{HUGE}' is out of range"),
        (f"AP(rel={HUGE})", f"the value '{HUGE}' is out of range"),
        (f"RBP(p=0.5,rel={HUGE})", f"the value '{HUGE}' is out of range"),
        ("RBP(p=1e400)", "the value '1e400' is out of range"),
        ("SetF(beta=1e400)", "the value '1e400' is out of range"),
        ("nDCG(gains={0:0,1:1e400})", "the value '1e400' is out of range"),
        (f"nDCG(gains={{{HUGE}:1}})", f"the value '{HUGE}' is out of range"),
        (f"P.{HUGE}", f"cutoff '{HUGE}' is out of range"),
        ("P.9223372036854775808", "cutoff '9223372036854775808' is out of range"),
    ],
)
def test_huge_measure_parameters_are_one_line(cli, spec, why):
    res = cli(["-m", spec, "qrels.txt", "bm25.txt"], cwd=GOLDEN)
    assert (res.code, res.out, res.err) == (2, b"", f"ireval: {spec}: {why}\n")


# Every real argument of a spelling is read one way (spellings.number_arg / number_opts): a
# number, finite. Before, seven builders took float() of the value, so inf and nan reached the
# measures and came out as -inf, -nan or a huge negative number, exit 0.
@pytest.mark.parametrize(
    ("spec", "why"),
    [
        ("RBP(p=inf)", "p=inf is out of range"),
        ("RBP(p=nan)", "p=nan is not a number"),
        ("RBP(p=1.5)", "p=1.5 is not in [0, 1)"),
        ("RBP(p=-0.5)", "p=-0.5 is not in [0, 1)"),
        ("SetF(beta=inf)", "beta=inf is out of range"),
        ("SetF(beta=nan)", "beta=nan is not a number"),
        ("F(beta=nan)@5", "beta=nan is not a number"),
        ("INST(T=inf)", "T=inf is out of range"),
        ("INST(T=nan)", "T=nan is not a number"),
        ("INST(T=1,min_rel=nan)", "min_rel=nan is not a number"),
        ("pFound(p_break=nan)", "p_break=nan is not a number"),
        ("alpha_nDCG(alpha=nan)@10", "alpha=nan is not a number"),
    ],
)
def test_real_arguments_of_spellings_are_finite_numbers(cli, spec, why):
    res = cli(["-m", spec, "qrels.txt", "bm25.txt"], cwd=GOLDEN)
    assert (res.code, res.out, res.err) == (2, b"", f"ireval: {spec}: {why}\n")


def test_trec_eval_s_own_rbp_parameter_stays_as_trec_eval_reads_it(cli):
    """rbp.p=-1 is trec_eval 10.0's own grammar, which takes any number: the line is the 10.0
    binary's (trec_eval -m rbp.p=-1 on these files). Only ireval's spellings refuse p outside
    [0, 1)."""
    res = cli(["-m", "rbp.p=-1", "qrels.txt", "bm25.txt"], cwd=GOLDEN)
    assert (res.code, res.out) == (0, b"rbp_p=-1              \tall\t1.0000\n")


def test_the_largest_long_cutoff_still_evaluates(cli):
    res = cli(["-m", "P@9223372036854775807", "qrels.txt", "bm25.txt"], cwd=GOLDEN)
    assert (res.code, res.err) == (0, "")
    assert res.out == b"P@9223372036854775807 \tall\t0.0000\n"


def test_gate_names_a_huge_cutoff_too(cli):
    res = cli(["gate", "qrels.txt", "dense_v2.txt", "--baseline", "bm25.txt", "--min", f"P@{HUGE}=0.1"], cwd=GOLDEN)
    assert (res.code, res.out, res.err) == (2, b"", f"ireval: P@{HUGE}: cutoff '{HUGE}' is out of range\n")


def test_relstring_beyond_any_ranking_shows_all_of_it(cli):
    huge = cli(["-q", "-m", f"relstring.{HUGE}", "qrels.txt", "bm25.txt"], cwd=GOLDEN)
    thousand = cli(["-q", "-m", "relstring.1000", "qrels.txt", "bm25.txt"], cwd=GOLDEN)
    assert (huge.code, huge.err) == (0, "")
    values = [line.split(b"\t")[1:] for line in huge.out.splitlines()]
    assert values == [line.split(b"\t")[1:] for line in thousand.out.splitlines()]


# ---- fsspec URLs that cannot be read: one line naming the URL ----------------------------------------


def test_zip_url_of_a_missing_archive(cli, tmp_path):
    pytest.importorskip("fsspec")
    missing = tmp_path / "nope.zip"
    url = f"zip://run.txt::{missing}"
    res = cli(["-m", "map", GOLDEN / "qrels.txt", url])
    assert (res.code, res.out) == (2, b"")
    assert res.err == f"ireval: {url}: cannot read run dataset: no such file or directory ({missing})\n"


def test_zip_url_of_a_file_that_is_no_archive(cli):
    pytest.importorskip("fsspec")
    url = f"zip://run.txt::{GOLDEN / 'qrels.txt'}"
    res = cli(["-m", "map", GOLDEN / "qrels.txt", url])
    assert (res.code, res.out, res.err) == (
        2,
        b"",
        f"ireval: {url}: cannot read run dataset: BadZipFile: File is not a zip file\n",
    )


def test_zip_url_reads_a_run_inside_an_archive(cli, tmp_path):
    pytest.importorskip("fsspec")
    archive = tmp_path / "runs.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.write(GOLDEN / "bm25.txt", "bm25.txt")
    res = cli(["-m", "map", GOLDEN / "qrels.txt", f"zip://bm25.txt::{archive}"])
    plain = cli(["-m", "map", GOLDEN / "qrels.txt", GOLDEN / "bm25.txt"])
    assert (res.code, res.err, res.out) == (0, "", plain.out)


def test_a_refused_connection_is_one_line(cli, monkeypatch):
    """ftp:// to a port nobody listens on (stood in for: no connection is made in tests)."""
    fsspec = pytest.importorskip("fsspec")

    def refuse(url, **kw):
        raise ConnectionRefusedError(111, "Connection refused")

    monkeypatch.setattr(fsspec.core, "url_to_fs", refuse)
    url = "ftp://127.0.0.1:9/run.txt"
    res = cli(["-m", "map", GOLDEN / "qrels.txt", url])
    assert (res.code, res.out, res.err) == (2, b"", f"ireval: {url}: cannot read run dataset: connection refused\n")


def test_a_backend_failure_while_listing_is_one_line(cli, monkeypatch):
    fsspec = pytest.importorskip("fsspec")
    from fsspec.implementations.memory import MemoryFileSystem

    def broken(self, path, **kw):
        raise RuntimeError("the server said no\n(twice)")

    monkeypatch.setattr(MemoryFileSystem, "isdir", broken)
    assert fsspec  # the memory:// file system is fsspec's own
    res = cli(["-m", "map", GOLDEN / "qrels.txt", "memory://runs/bm25.txt"])
    assert (res.code, res.out, res.err) == (
        2,
        b"",
        "ireval: memory://runs/bm25.txt: cannot read run dataset: RuntimeError: the server said no (twice)\n",
    )


EXAMPLES = DATA.parent.parent / "examples"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["compare", "{q}", "{r}", "{r2}", "-m", "map", "--bootstrap", HUGE],
            f"Invalid value for '--bootstrap': {HUGE} is not in the range x<=10000000 (see 'ireval compare --help')",
        ),
        (
            ["compare", "{q}", "{r}", "{r2}", "-m", "map", "--test", "randomization", "--permutations", "10000001"],
            "Invalid value for '--permutations': 10000001 is not in the range x<=10000000 (see 'ireval compare --help')",
        ),
        (
            ["gate", "{q}", "{r2}", "--baseline", "{r}", "--non-inferior", "map=0.01", "--bootstrap", HUGE],
            f"Invalid value for '--bootstrap': {HUGE} is not in the range 1<=x<=10000000 (see 'ireval gate --help')",
        ),
    ],
    ids=["compare-bootstrap", "compare-permutations", "gate-bootstrap"],
)
def test_resamples_are_bounded_not_run_for_hours(cli, args, message):
    """A huge --bootstrap or --permutations ran until killed (the same class: a value past what
    can be done, refused by the check that names it)."""
    paths = {"q": EXAMPLES / "qrels.txt", "r": EXAMPLES / "run.txt", "r2": EXAMPLES / "run2.txt"}
    res = cli([a.format(**paths) for a in args])
    assert (res.code, res.out, res.err) == (2, b"", f"ireval: {message}\n")


def test_resamples_are_bounded_in_a_gate_config_and_the_api(cli, tmp_path):
    import irevalcli
    from irevalcli.errors import UsageError

    cfg = tmp_path / "g.toml"
    cfg.write_text(
        f'qrels = "{EXAMPLES / "qrels.txt"}"\nbaseline = "{EXAMPLES / "run.txt"}"\nbootstrap = 100000000\n'
        "[non_inferior]\nmap = 0.01\n"
    )
    res = cli(["gate", "--config", str(cfg), str(EXAMPLES / "run2.txt")])
    assert (res.code, res.out) == (2, b"")
    assert res.err == f"ireval: {cfg}: 'bootstrap' must be an integer from 1 to 10000000, got 100000000\n"
    with pytest.raises(UsageError) as e:
        irevalcli.compare(
            EXAMPLES / "qrels.txt", EXAMPLES / "run.txt", [EXAMPLES / "run2.txt"], ["map"], bootstrap=10**8
        )
    assert str(e.value) == "bootstrap=100000000: expected an integer from 1 to 10000000"
