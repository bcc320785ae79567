"""No input is ever written, and no file makes ireval reach the network.

"No input is ever written" holds for every command and every way of naming an input: on the
command line, in a gate config, as a member of a dataset directory or a quoted glob, as
``--labelled``, ``--subtopics``, ``-Z``, ``--baseline``, ``--qrels``, and standard input
redirected from a file. ``--output`` (and pool's ``--counts``) naming any of them is refused
with exit 2 and one line, and the file is left as it was.

Paths inside a gate config are local files, relative to the config's folder, whatever the
folder and whatever kind of path; a URL in a config is refused unless
``--allow-remote-config-paths`` is given.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

Q = b"1 0 a 1\n1 0 b 0\n2 0 a 1\n2 0 c 1\n"
R = b"1 Q0 a 1 3.0 r1\n1 Q0 b 2 2.0 r1\n2 Q0 a 1 5.0 r1\n2 Q0 c 2 4.0 r1\n"
R2 = b"1 Q0 b 1 3.0 r2\n1 Q0 a 2 2.0 r2\n2 Q0 c 1 5.0 r2\n2 Q0 a 2 4.0 r2\n"
SUB = b"1 1 a 1\n1 2 b 1\n2 1 a 1\n"
Z = b"1 map 0.5 0.1\n2 map 0.5 0.1\n"


def _labelled(path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(
        pa.table({"qid": ["1", "1", "2"], "docno": ["a", "b", "a"], "score": [3.0, 2.0, 5.0], "rel": [1, 0, 1]}),
        path,
    )


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "q").write_bytes(Q)
    (tmp_path / "r").write_bytes(R)
    (tmp_path / "b").write_bytes(R2)
    (tmp_path / "sub").write_bytes(SUB)
    (tmp_path / "z").write_bytes(Z)
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "part-00").write_bytes(R[:32])
    (runs / "part-01").write_bytes(R[32:])
    glob = tmp_path / "g"
    glob.mkdir()
    (glob / "a.txt").write_bytes(R)
    (glob / "b.txt").write_bytes(R2)
    lab = tmp_path / "lab"
    lab.mkdir()
    _labelled(lab / "part-0.parquet")
    cfg = tmp_path / "ci"
    cfg.mkdir()
    (cfg / "q").write_bytes(Q)
    (cfg / "r").write_bytes(R)
    (cfg / "b").write_bytes(R2)
    (cfg / "gate.toml").write_text('qrels = "q"\nrun = "r"\nbaseline = "b"\n[min]\nmap = 0.0\n')
    return tmp_path


# (command, naming kind) -> (arguments, the output that is an input, the input as the message names it)
CASES = {
    ("eval", "path"): (["-m", "map", "q", "r"], "r", "r"),
    ("eval", "qrels"): (["-m", "map", "q", "r"], "q", "q"),
    ("eval", "dataset"): (["-m", "map", "q", "runs"], "runs/part-00", None),
    ("eval", "glob"): (["-m", "map", "q", "g/*.txt"], "g/b.txt", "g/b.txt"),
    ("eval", "labelled"): (["--labelled", "-m", "map", "lab"], "lab/part-0.parquet", None),
    ("eval", "subtopics"): (["--subtopics", "sub", "-m", "alpha_ndcg_cut.5", "q", "r"], "sub", "sub"),
    ("eval", "zscore"): (["-Z", "z", "-m", "map", "q", "r"], "z", "z"),
    ("compare", "baseline"): (["compare", "-m", "map", "q", "b", "r"], "b", "b"),
    ("compare", "dataset"): (["compare", "-m", "map", "q", "b", "runs"], "runs/part-01", None),
    ("gate", "path"): (["gate", "--min", "map=0", "q", "r"], "r", "r"),
    ("gate", "baseline"): (["gate", "--max-drop", "map=1", "--baseline", "b", "q", "r"], "b", "b"),
    ("gate", "config-baseline"): (["gate", "--config", "ci/gate.toml"], "ci/b", "ci/b"),
    ("gate", "config-run"): (["gate", "--config", "ci/gate.toml"], "ci/r", "ci/r"),
    ("gate", "config-qrels"): (["gate", "--config", "ci/gate.toml"], "ci/q", "ci/q"),
    ("gate", "config"): (["gate", "--config", "ci/gate.toml"], "ci/gate.toml", "ci/gate.toml"),
    ("gate", "dataset"): (["gate", "--min", "map=0", "q", "runs"], "runs/part-00", None),
    ("curve", "path"): (["curve", "q", "r"], "r", "r"),
    ("curve", "dataset"): (["curve", "q", "runs"], "runs/part-00", None),
    ("curve", "glob"): (["curve", "q", "g/*.txt"], "g/a.txt", "g/a.txt"),
    ("pool", "path"): (["pool", "--depth", "1", "r"], "r", "r"),
    ("pool", "qrels"): (["pool", "--depth", "1", "--qrels", "q", "r"], "q", "q"),
    ("pool", "dataset"): (["pool", "--depth", "1", "runs"], "runs/part-00", None),
    ("pool", "glob"): (["pool", "--depth", "1", "g/*.txt"], "g/b.txt", "g/b.txt"),
    ("plot", "path"): (["plot", "pr", "--format", "svg", "q", "r"], "r", "r"),
    ("plot", "dataset"): (["plot", "pr", "--format", "svg", "q", "runs"], "runs/part-00", None),
}


def _message(output: str, named: str | None, dataset: str | None) -> str:
    if named is None:
        return (
            f"ireval: --output {output}: is a file of the input dataset {dataset}; writing it would destroy "
            "the input (give another output file)\n"
        )
    return (
        f"ireval: --output {output}: is the input file {named}; writing it would destroy the input "
        "(give another output file)\n"
    )


@pytest.mark.parametrize("command,kind", list(CASES))
def test_no_input_is_ever_written(cli, tree, command, kind):
    if command == "plot":
        pytest.importorskip("matplotlib")
    args, output, named = CASES[(command, kind)]
    before = (tree / output).read_bytes()
    res = cli([*args, "--output", output], cwd=tree)
    dataset = output.split("/")[0]
    assert (res.code, res.err, res.out) == (2, _message(output, named, dataset), b"")
    assert (tree / output).read_bytes() == before
    assert not [p for p in tree.rglob(".ireval-*")]


def test_the_same_commands_write_elsewhere(cli, tree):
    """The cases above are refused for what they name, not because the commands fail."""
    for (command, kind), (args, _, _) in CASES.items():
        if command == "plot" and __import__("importlib").util.find_spec("matplotlib") is None:
            continue
        res = cli([*args, "--output", f"out-{command}-{kind}"], cwd=tree)
        assert res.code in (0, 1), (command, kind, res.err)


def test_a_file_under_a_dataset_not_yet_there_is_no_input(cli, tree):
    res = cli(["-m", "map", "q", "r", "--output", "runs/new"], cwd=tree)
    assert res.code == 0 and (tree / "runs" / "new").exists()


def test_pool_counts_naming_a_dataset_member(cli, tree):
    before = (tree / "runs" / "part-01").read_bytes()
    res = cli(["pool", "--depth", "1", "--counts", "runs/part-01", "runs"], cwd=tree)
    assert res.code == 2
    assert res.err == (
        "ireval: --counts runs/part-01: is a file of the input dataset runs; writing it would destroy the input "
        "(give another output file)\n"
    )
    assert (tree / "runs" / "part-01").read_bytes() == before


@pytest.mark.parametrize("command", [["-m", "map", "q"], ["curve", "q"], ["pool", "--depth", "1"]])
def test_standard_input_redirected_from_the_output_file(tree, command):
    before = (tree / "r").read_bytes()
    with open(tree / "r", "rb") as fh:
        res = subprocess.run(
            [sys.executable, "-m", "irevalcli", *command, "-", "--output", "r"],
            cwd=tree,
            stdin=fh,
            capture_output=True,
            timeout=120,
        )
    assert (res.returncode, res.stderr.decode()) == (2, _message("r", "standard input", None))
    assert (tree / "r").read_bytes() == before


def test_a_symlink_to_a_config_input(cli, tree):
    os.symlink(tree / "ci" / "b", tree / "link")
    res = cli(["gate", "--config", "ci/gate.toml", "--output", "link"], cwd=tree)
    assert (res.code, res.err) == (2, _message("link", "ci/b", None))


# ---------------------------------------------------------------- config paths: one rule, no network


def _gate_json(cli, cwd, args):
    res = cli(["gate", *args, "--format", "json"], cwd=cwd)
    assert res.code == 0, res.err
    return json.loads(res.out)["inputs"]


@pytest.mark.parametrize("spelling", ["r", "./r", "file://r", "sub/../r"])
def test_config_paths_are_relative_to_the_config_folder(cli, tree, spelling):
    (tree / "ci" / "sub").mkdir()
    (tree / "ci" / "gate.toml").write_text(f'qrels = "q"\nrun = "{spelling}"\n[min]\nmap = 0.0\n')
    local = spelling[len("file://") :] if spelling.startswith("file://") else spelling
    want = _gate_json(cli, tree / "ci", ["--config", "gate.toml"])["run"]["path"]
    assert want == local
    got = _gate_json(cli, tree, ["--config", "ci/gate.toml"])["run"]["path"]
    assert got == os.path.join("ci", local)
    got = _gate_json(cli, tree / "runs", ["--config", str(tree / "ci" / "gate.toml")])["run"]["path"]
    assert got == os.path.join(str(tree / "ci"), local)


def test_absolute_and_file_url_paths_in_a_config(cli, tree):
    (tree / "ci" / "gate.toml").write_text(f'qrels = "file://{tree}/q"\nrun = "{tree}/r"\n[min]\nmap = 0.0\n')
    inputs = _gate_json(cli, tree / "runs", ["--config", "../ci/gate.toml"])
    assert (inputs["qrels"]["path"], inputs["run"]["path"]) == (f"{tree}/q", f"{tree}/r")


@pytest.mark.parametrize(
    "url", ["s3://bucket/run.txt", "http://127.0.0.1:9/run.txt", "memory://run.txt", "gcs://b/r", "HTTPS://x/y"]
)
@pytest.mark.parametrize("folder", ["", "ci/"])
def test_a_url_in_a_config_is_refused(cli, tree, url, folder):
    (tree / "ci" / "gate.toml").write_text(f'qrels = "q"\nrun = "{url}"\n[min]\nmap = 0.0\n')
    os.link(tree / "ci" / "gate.toml", tree / "gate.toml") if not (tree / "gate.toml").exists() else None
    config = f"{folder}gate.toml"
    res = cli(["gate", "--config", config], cwd=tree)
    assert (res.code, res.out) == (2, b"")
    assert res.err == (
        f"ireval: {config}: 'run' is the URL {url}; a config file may name local files only (give the URL on "
        "the command line, or --allow-remote-config-paths to read URLs named in config files)\n"
    )


def test_allow_remote_config_paths_reads_the_url_as_given(cli, tree):
    pytest.importorskip("fsspec")
    import fsspec

    fs = fsspec.filesystem("memory")
    fs.pipe("/ireval-test/run.txt", R)
    try:
        (tree / "ci" / "gate.toml").write_text('qrels = "q"\nrun = "memory://ireval-test/run.txt"\n[min]\nmap = 0.0\n')
        refused = cli(["gate", "--config", "ci/gate.toml"], cwd=tree)
        assert refused.code == 2
        ok = _gate_json(cli, tree, ["--config", "ci/gate.toml", "--allow-remote-config-paths"])
        assert ok["run"]["path"] == "memory://ireval-test/run.txt"
    finally:
        fs.rm("/ireval-test", recursive=True)


# ---------------------------------------------------------------- no network, in every command


NETWORK_CASES = {
    "eval": ["-m", "all_trec", "q", "r"],
    "eval-dataset": ["-m", "map", "q", "runs"],
    "eval-labelled": ["--labelled", "-m", "map", "lab"],
    "compare": ["compare", "-m", "map", "q", "b", "r"],
    "gate-config": ["gate", "--config", "ci/gate.toml"],
    "gate-config-url": ["gate", "--config", "ci/net.toml"],
    "gate-dataset": ["gate", "--min", "map=0", "q", "runs"],
    "curve": ["curve", "q", "g/*.txt"],
    "pool": ["pool", "--depth", "2", "runs"],
    "plot": ["plot", "pr", "--format", "svg", "--output", "-", "q", "r"],
}


@pytest.mark.parametrize("case", NETWORK_CASES)
def test_no_command_opens_a_socket(tree, case):
    """The audit hook of tests/test_bad_inputs.py over every command, datasets and configs:
    no socket, no subprocess, no write but the output. A config naming a URL is refused
    before anything connects."""
    from tests.test_bad_inputs import AUDIT

    if case == "plot":
        pytest.importorskip("matplotlib")
    (tree / "ci" / "net.toml").write_text('qrels = "q"\nrun = "http://127.0.0.1:9/run.txt"\n[min]\nmap = 0.0\n')
    r, w = os.pipe()
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", AUDIT_FD=str(w), MPLCONFIGDIR=str(tree / ".mpl"))
    proc = subprocess.Popen(
        [sys.executable, "-c", AUDIT, *NETWORK_CASES[case]],
        cwd=tree,
        env=env,
        pass_fds=(w,),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    os.close(w)
    _, err = proc.communicate(timeout=120)
    report = json.loads(os.read(r, 1 << 20))
    os.close(r)
    assert report["code"] == (2 if case == "gate-config-url" else 0), err
    others = [e for e in report["events"] if e[0] != "write"]
    if case == "plot":  # matplotlib builds its font cache with fc-list once: a process, not the network
        others = [e for e in others if not (e[0] == "subprocess.Popen" and "fc-list" in e[1])]
    assert others == []
    written = [p for kind, p in report["events"] if kind == "write"]
    if case == "plot":  # matplotlib's caches, in the temporary directory
        import tempfile

        assert all(p.startswith((tempfile.gettempdir(), str(tree / ".mpl"))) for p in written), written
    else:
        assert written == []
