"""QRELS (and --subtopics) given as an ir_datasets id, through the `datasets` extra.

Offline: the datasets are registered here with ir_datasets' own registry, their judgements
in local files (LocalDownload), and one whose file would be downloaded from a port on the
loopback address where nothing listens (a machine without network, as ir_datasets meets
it). IR_DATASETS_HOME is a temporary directory. No test touches the network.

Hand-computed: topic 1 judges a relevant (1), b not; topic 2 judges c relevant (2), d not.
The run ranks b, a for topic 1 (AP 1/2) and c first for topic 2 (AP 1): MAP 0.75.
"""

from __future__ import annotations

import hashlib
import json
import socket
import subprocess
import sys

import pytest

ir_datasets = pytest.importorskip("ir_datasets")

QRELS = "1 0 a 1\n1 0 b 0\n2 0 c 2\n2 0 d 0\n"
RUN = "1 Q0 b 1 2.0 r\n1 Q0 a 2 1.0 r\n2 Q0 c 1 3.0 r\n"
SUBTOPICS = "1 1 a 1\n1 2 b 1\n2 1 c 1\n"
MAP = b"map                   \tall\t0.7500\n"
ADHOC, NO_QRELS, DIVERSITY, REMOTE = (
    "ireval-test/adhoc",
    "ireval-test/no-qrels",
    "ireval-test/diversity",
    "ireval-test/remote",
)


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """ir_datasets' home, and the test datasets registered once for this process."""
    home = tmp_path_factory.mktemp("irds-home")
    data = tmp_path_factory.mktemp("irds-data")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("IR_DATASETS_HOME", str(home))
        mp.setenv("IR_DATASETS_DL_TRIES", "1")
        from ir_datasets.formats import TrecQrels, TrecSubQrels, TsvQueries
        from ir_datasets.util import Download, LocalDownload, RequestsDownload

        (data / "qrels.txt").write_text(QRELS)
        (data / "subtopics.txt").write_text(SUBTOPICS)
        (data / "queries.tsv").write_text("1\tfirst\n2\tsecond\n")
        with socket.socket() as s:  # a loopback port where nothing listens
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        remote = Download([RequestsDownload(f"http://127.0.0.1:{port}/qrels")], cache_path=str(home / "remote" / "q"))
        datasets = {
            ADHOC: ir_datasets.Dataset(TrecQrels(LocalDownload(data / "qrels.txt"), {})),
            NO_QRELS: ir_datasets.Dataset(TsvQueries(LocalDownload(data / "queries.tsv"))),
            DIVERSITY: ir_datasets.Dataset(TrecSubQrels(LocalDownload(data / "subtopics.txt"), {})),
            REMOTE: ir_datasets.Dataset(TrecQrels(remote, {})),
        }
        for name, ds in datasets.items():
            if name not in list(ir_datasets.registry):
                ir_datasets.registry.register(name, ds)
        yield home


@pytest.fixture
def files(tmp_path, home):
    (tmp_path / "run.txt").write_text(RUN)
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "subtopics.txt").write_text(SUBTOPICS)
    return tmp_path


def test_an_id_reads_the_datasets_qrels(cli, files):
    for spec in (ADHOC, "irds:" + ADHOC):
        res = cli(["-m", "map", spec, "run.txt"], cwd=files)
        assert (res.code, res.out, res.err) == (0, MAP, "")
    assert cli(["-m", "map", "qrels.txt", "run.txt"], cwd=files).out == MAP  # the same judgements as a file


def test_the_json_records_the_id_and_the_sha256(cli, files):
    res = cli(["-m", "map", ADHOC, "run.txt", "--format", "json"], cwd=files)
    assert res.code == 0
    doc = json.loads(res.out)
    # the text ir_datasets exports (qid iter docno rel), here byte for byte the file it came from
    assert doc["inputs"]["qrels"] == {"path": "irds:" + ADHOC, "sha256": hashlib.sha256(QRELS.encode()).hexdigest()}


def test_an_existing_file_wins(cli, files):
    (files / "ireval-test").mkdir()
    (files / "ireval-test" / "adhoc").write_text("1 0 a 1\n")  # topic 1 only: AP 1/2
    res = cli(["-m", "map", ADHOC, "run.txt"], cwd=files)
    assert (res.code, res.out) == (0, b"map                   \tall\t0.5000\n")
    res = cli(["-m", "map", "irds:" + ADHOC, "run.txt"], cwd=files)  # irds: always means the id
    assert (res.code, res.out) == (0, MAP)


def test_every_command_that_takes_qrels_takes_an_id(cli, files):
    for args in (
        ["compare", "{q}", "run.txt", "run.txt", "-m", "map", "--format", "json"],
        ["gate", "{q}", "run.txt", "--min", "map=0.7", "--format", "markdown"],  # (text wraps at 80 columns)
        ["curve", "{q}", "run.txt"],
        ["pool", "run.txt", "--qrels", "{q}", "--depth", "2"],
    ):
        by_id = cli([a.format(q=ADHOC) for a in args], cwd=files)
        by_file = cli([a.format(q="qrels.txt") for a in args], cwd=files)
        named = "irds:" + ADHOC
        assert by_id.code == 0, (args, by_id.err)
        # the same output, naming the id where the file's name was
        assert (by_id.code, by_id.out.replace(named.encode(), b"qrels.txt"), by_id.err.replace(named, "qrels.txt")) == (
            by_file.code,
            by_file.out,
            by_file.err,
        ), args
    compare = cli(["compare", ADHOC, "run.txt", "run.txt", "-m", "map", "--format", "json"], cwd=files)
    assert named.encode() in compare.out


def test_a_gate_config_names_an_id(cli, files):
    (files / "gate.toml").write_text(f'qrels = "{ADHOC}"\n[min]\nmap = 0.7\n')
    res = cli(["gate", "--config", "gate.toml", "run.txt"], cwd=files)
    assert (res.code, res.err) == (0, "")


def test_subtopics_from_an_id(cli, files):
    by_file = cli(["-m", "alpha_ndcg_cut.10", "--subtopics", "subtopics.txt", "qrels.txt", "run.txt"], cwd=files)
    by_id = cli(["-m", "alpha_ndcg_cut.10", "--subtopics", DIVERSITY, "qrels.txt", "run.txt"], cwd=files)
    assert by_file.code == 0 and by_id.code == 0 and by_id.out == by_file.out
    assert by_id.out.startswith(b"alpha_ndcg_cut_10     \tall\t")


def test_the_python_api_takes_an_id(files):
    from irevalcli import evaluate

    ev = evaluate(ADHOC, str(files / "run.txt"), "map")
    assert ev.summary.set_index("measure").loc["map", "value"] == 0.75
    assert ev.qrels.name == "irds:" + ADHOC


# ---- every failure is one line, exit 2 ------------------------------------------------------


def test_unknown_id_suggests_the_nearest(cli, files):
    res = cli(["-m", "map", "ireval-test/adhok", "run.txt"], cwd=files)
    assert (res.code, res.out) == (2, b"")
    assert res.err == (
        "ireval: ireval-test/adhok: cannot read qrels file: no such file, nor an ir_datasets id "
        "(did you mean 'ireval-test/adhoc'?)\n"
    )
    res = cli(["-m", "map", "irds:ireval-test/adhok", "run.txt"], cwd=files)
    assert res.err == (
        "ireval: irds:ireval-test/adhok: unknown ir_datasets id (did you mean 'ireval-test/adhoc'?) "
        "('ir_datasets list' lists the ids)\n"
    )


def test_a_missing_file_is_still_a_missing_file(cli, files):
    res = cli(["-m", "map", "qrels-2019.txt", "run.txt"], cwd=files)
    assert (res.code, res.err) == (2, "ireval: qrels-2019.txt: cannot read qrels file: no such file\n")
    # a bare word near no id: a missing file, said as before ir_datasets was asked
    res = cli(["-m", "map", "nope", "run.txt"], cwd=files)
    assert (res.code, res.err) == (2, "ireval: nope: cannot read qrels file: no such file\n")
    res = cli(["-m", "map", "--subtopics", "nope", "-m", "alpha_ndcg_cut.10", "qrels.txt", "run.txt"], cwd=files)
    assert (res.code, res.err) == (2, "ireval: nope: cannot read subtopic qrels file: no such file\n")


def test_a_dataset_without_qrels(cli, files):
    res = cli(["-m", "map", NO_QRELS, "run.txt"], cwd=files)
    assert (res.code, res.out, res.err) == (
        2,
        b"",
        f"ireval: irds:{NO_QRELS}: the ir_datasets dataset has no qrels (relevance judgements)\n",
    )


def test_subtopics_where_the_dataset_has_none_and_subtopics_as_qrels(cli, files):
    res = cli(["-m", "alpha_ndcg_cut.10", "--subtopics", ADHOC, "qrels.txt", "run.txt"], cwd=files)
    assert (res.code, res.err) == (
        2,
        f"ireval: irds:{ADHOC}: the ir_datasets dataset has no subtopic judgements "
        "(its qrels: query_id, doc_id, relevance, iteration)\n",
    )
    res = cli(["-m", "map", DIVERSITY, "run.txt"], cwd=files)
    assert (res.code, res.err) == (
        2,
        f"ireval: irds:{DIVERSITY}: its qrels judge subtopics (query_id, doc_id, relevance, subtopic_id): "
        "give it as --subtopics, and the topic-level qrels as QRELS\n",
    )


def test_not_downloaded_and_no_network(cli, files, home):
    res = cli(["-m", "map", REMOTE, "run.txt"], cwd=files)
    assert (res.code, res.out) == (2, b"")
    assert res.err == (
        f"ireval: irds:{REMOTE}: the qrels are not on this machine and could not be downloaded (ConnectionError): "
        f"ir_datasets keeps its files in {home / 'ireval-test'} (IR_DATASETS_HOME, default ~/.ir_datasets); "
        f"run 'ir_datasets export {REMOTE} qrels' where there is a network and copy that directory here\n"
    )


def test_without_the_extra(cli, files, monkeypatch):
    monkeypatch.setitem(sys.modules, "ir_datasets", None)  # import ir_datasets -> ImportError
    res = cli(["-m", "map", ADHOC, "run.txt"], cwd=files)
    assert (res.code, res.out, res.err) == (
        2,
        b"",
        f"ireval: {ADHOC}: cannot read qrels file: no such file; as an ir_datasets id it needs the "
        "ir_datasets package: pip install 'ir_datasets>=0.5'\n",
    )
    res = cli(["-m", "map", "irds:" + ADHOC, "run.txt"], cwd=files)
    assert res.err == (
        f"ireval: irds:{ADHOC}: reading an ir_datasets id needs the ir_datasets package: pip install 'ir_datasets>=0.5'\n"
    )


def test_ir_datasets_is_imported_only_for_an_id(files):
    code = (
        "import sys; from irevalcli.commands.main import main; "
        "rc = main(['-m', 'map', 'qrels.txt', 'run.txt']); "
        "print(rc, 'ir_datasets' in sys.modules, file=sys.stderr)"
    )
    res = subprocess.run([sys.executable, "-c", code], cwd=files, capture_output=True, text=True, check=True)
    assert (res.stdout, res.stderr) == (MAP.decode(), "0 False\n")


def test_what_looks_like_an_id(files, monkeypatch):
    from irevalcli.io.irds import is_dataset_id

    monkeypatch.chdir(files)
    (files / "runs").mkdir()
    assert is_dataset_id("msmarco-passage/trec-dl-2019/judged")
    assert is_dataset_id("msmarco-document-v2.1/trec-rag-2024")
    assert is_dataset_id("irds:qrels.txt")  # irds: always means an id
    assert not is_dataset_id("qrels.txt")  # a file (here, an existing one)
    assert not is_dataset_id("missing.txt")  # a file name: a missing file is reported as one
    assert not is_dataset_id("qrels.tsv.gz")
    assert not is_dataset_id("runs/qrels")  # in an existing directory: a missing file
    assert not is_dataset_id("/abs/path")
    assert not is_dataset_id("-")
