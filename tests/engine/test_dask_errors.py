"""The Dask engine's environment errors are one line and exit 2 (issue 21 items 13 and 15):
schedulers ireval cannot connect to, a local cluster that cannot start (too few open
files, any failure of its own), and a --workers count beyond the documented bound."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import DATA

pytest.importorskip("distributed")

GOLDEN = DATA / "golden"
ARGS = ["-m", "map", "qrels.txt", "bm25.txt", "--engine", "dask"]


def _cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def test_workers_are_bounded(cli):
    cap = 4 * _cpus()
    res = cli([*ARGS, "--workers", "100000"], cwd=GOLDEN)
    assert (res.code, res.out) == (2, b"")
    assert res.err == (
        f"ireval: --workers 100000: a local cluster has at most {cap} workers (4 per CPU, {_cpus()} CPUs here)\n"
    )
    assert cli([*ARGS, "--workers", str(cap + 1)], cwd=GOLDEN).code == 2


def test_workers_bound_in_the_api():
    from irevalcli import evaluate
    from irevalcli.errors import UsageError

    with pytest.raises(UsageError, match=r"at most \d+ workers \(4 per CPU"):
        evaluate(GOLDEN / "qrels.txt", GOLDEN / "bm25.txt", ["map"], engine="dask", workers=10**6)


@pytest.mark.parametrize(
    ("address", "why"),
    [
        ("tls://127.0.0.1:9", "tls:// needs TLS certificates, which ireval takes no option for"),
        ("wss://127.0.0.1:9", "wss:// needs TLS certificates, which ireval takes no option for"),
        ("ucx://127.0.0.1:9", "ucx:// needs UCX"),
        ("inproc://x", "inproc:// names a scheduler inside this process"),
        ("bogus://x", "bogus:// is not a scheme Dask knows"),
    ],
)
def test_schedulers_ireval_cannot_reach_are_one_line(cli, address, why):
    res = cli([*ARGS, "--scheduler", address], cwd=GOLDEN)
    assert (res.code, res.out) == (2, b"")
    assert res.err == f"ireval: --scheduler {address}: {why}; ireval connects to tcp:// and ws:// schedulers\n"


def test_a_local_cluster_that_fails_to_start_is_one_line(cli, monkeypatch):
    import distributed

    def fail(*a, **kw):
        raise RuntimeError("Nanny failed to start.")

    monkeypatch.setattr(distributed, "LocalCluster", fail)
    res = cli([*ARGS, "--workers", "1"], cwd=GOLDEN)
    assert (res.code, res.out, res.err) == (
        2,
        b"",
        "ireval: cannot start a local Dask cluster: Nanny failed to start.\n",
    )


def _nofile(soft: int, hard: int):
    def limit() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

    return limit


def test_too_few_open_files_for_a_local_cluster_is_one_line():
    """ulimit -n 40: two workers would hang, flooding tracebacks; refused before starting."""
    res = subprocess.run(
        [sys.executable, "-m", "irevalcli", *ARGS, "--workers", "2"],
        preexec_fn=_nofile(40, 40),
        capture_output=True,
        text=True,
        cwd=GOLDEN,
        timeout=120,
    )
    assert (res.returncode, res.stdout) == (2, "")
    assert res.stderr == (
        "ireval: cannot start a local Dask cluster of 2 workers: it needs about 64 open files and the limit "
        "is 40 (ulimit -n); raise it, or give fewer --workers\n"
    )


@pytest.mark.slow
def test_a_low_soft_open_files_limit_is_raised_to_what_the_cluster_needs():
    res = subprocess.run(
        [sys.executable, "-m", "irevalcli", *ARGS, "--workers", "2"],
        preexec_fn=_nofile(40, 4096),
        capture_output=True,
        text=True,
        cwd=GOLDEN,
        timeout=300,
    )
    assert (res.returncode, res.stdout, res.stderr) == (0, "map                   \tall\t0.4352\n", "")
