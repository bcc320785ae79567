"""``ireval plot``: the image files are written, valid and reproducible (no pixel comparisons)."""

from __future__ import annotations

import struct
import sys
import xml.etree.ElementTree as ET

import pytest

from tests.conftest import DATA

pytest.importorskip("matplotlib")

GOLDEN = DATA / "golden"


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data[12:16] == b"IHDR" and data[-8:-4] == b"IEND"
    return struct.unpack(">II", data[16:24])


def test_pr_png(cli, tmp_path):
    out = tmp_path / "pr.png"
    res = cli(["plot", "pr", "qrels.txt", "bm25.txt", "dense_v2.txt", "--output", out, "--dpi", "50"], cwd=GOLDEN)
    assert (res.code, res.out, res.err) == (0, b"", "")
    w, h = png_size(out.read_bytes())
    assert 200 < w < 500 and 150 < h < 400


def test_diff_svg_is_valid_and_reproducible(cli, tmp_path):
    one, two = tmp_path / "d1.svg", tmp_path / "d2.svg"
    for out in (one, two):
        res = cli(
            ["plot", "diff", "qrels.txt", "bm25.txt", "dense_v2.txt", "-m", "ndcg_cut.10", "--output", out], cwd=GOLDEN
        )
        assert res.code == 0, res.err
    root = ET.fromstring(one.read_bytes())
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert one.read_bytes() == two.read_bytes()


def test_pdf_for_a_paper_is_reproducible(cli, tmp_path):
    one, two = tmp_path / "pr1.pdf", tmp_path / "pr2.pdf"
    for out in (one, two):
        res = cli(["plot", "pr", "qrels.txt", "bm25.txt", "dense_v2.txt", "--output", out], cwd=GOLDEN)
        assert (res.code, res.out, res.err) == (0, b"", "")
    data = one.read_bytes()
    assert data.startswith(b"%PDF-") and data.rstrip().endswith(b"%%EOF")
    assert data == two.read_bytes()
    assert b"/CreationDate" not in data and b"/Producer" not in data and b"Matplotlib" not in data
    # --format pdf to standard output; refused on a terminal (binary), as PNG is
    res = cli(["plot", "diff", "qrels.txt", "bm25.txt", "dense_v2.txt", "--format", "pdf", "--output", "-"], cwd=GOLDEN)
    assert res.code == 0 and res.out.startswith(b"%PDF-")
    # a .pdf name now says pdf: a command that writes text refuses it (as .png), never writes text into it
    res = cli(["qrels.txt", "bm25.txt", "--output", tmp_path / "scores.pdf"], cwd=GOLDEN)
    assert (res.code, res.out) == (2, b"") and res.err == (
        f"ireval: --output {tmp_path / 'scores.pdf'}: the name says pdf, which ireval does not write "
        "(formats: trec, json, parquet, csv, markdown, latex, table); give a name that matches the format\n"
    )
    assert not (tmp_path / "scores.pdf").exists()


def test_data_behind_the_figures():
    from irevalcli.api import load_qrels, load_run
    from irevalcli.commands.plot import pr_curves, topic_diffs

    q = load_qrels(GOLDEN / "qrels.txt")
    a, b = load_run(GOLDEN / "bm25.txt"), load_run(GOLDEN / "dense_v2.txt")
    curves = pr_curves(q, [a, b])
    assert [c[0] for c in curves] == ["bm25", "dense_v2"]
    assert curves[0][1] == [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
    assert curves[1][2][0] == pytest.approx((1 + 1 + 2 / 3) / 3)  # topic 103 starts with a non-relevant d8
    label, qids, diffs = topic_diffs(q, a, b, "map")
    # per topic (see test_formats' goldens): 101 0.5556 -> 1, 102 0.25 -> 1, 103 0.5 -> 0.5833
    assert label == "map" and qids == ["102", "101", "103"]
    assert diffs == pytest.approx([0.75, 1 - 5 / 9, 7 / 12 - 0.5])


def test_format_from_option_and_errors(cli, tmp_path):
    out = tmp_path / "figure"
    res = cli(["plot", "pr", "qrels.txt", "bm25.txt", "--output", out, "--format", "svg"], cwd=GOLDEN)
    assert res.code == 0 and out.read_bytes().lstrip().startswith(b"<?xml")
    res = cli(["plot", "pr", "qrels.txt", "bm25.txt", "--output", tmp_path / "x.gif"], cwd=GOLDEN)
    assert (res.code, res.err) == (
        2,
        (
            f"ireval: --output {tmp_path / 'x.gif'}: cannot tell the image format from "
            "the name; end it in .png, .svg or .pdf or give --format png|svg|pdf\n"
        ),
    )
    res = cli(
        ["plot", "diff", "qrels.txt", "bm25.txt", "dense_v2.txt", "-m", "P", "--output", tmp_path / "d.png"], cwd=GOLDEN
    )
    assert res.code == 2 and res.err.startswith(
        "ireval: -m P: plot diff needs one value per topic, and this gives P_5, P_10,"
    )
    res = cli(["plot"])
    assert res.code == 2 and res.err.startswith("ireval: ireval plot needs a kind: 'pr'")
    assert not (tmp_path / "d.png").exists() and not (tmp_path / "x.gif").exists()


def test_missing_matplotlib_is_a_clear_error(cli, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import fails
    res = cli(["plot", "pr", "qrels.txt", "bm25.txt", "--output", tmp_path / "p.png"], cwd=GOLDEN)
    assert (res.code, res.err) == (2, "ireval: ireval plot needs matplotlib: pip install 'matplotlib>=3.5'\n")


def _plot_subprocess(args, cwd, home):
    import os
    import subprocess
    from pathlib import Path

    exe = Path(sys.executable).parent / "ireval"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MPL", "MATPLOTLIB", "XDG_"))}
    env["HOME"] = str(home)
    return subprocess.run([str(exe), *map(str, args)], cwd=cwd, env=env, capture_output=True, timeout=300, check=False)


def test_matplotlib_configuration_is_isolated(tmp_path):
    """A matplotlibrc in the working directory or in ~/.config changes no byte, and plotting
    writes nothing under HOME (no ~/.cache/matplotlib) and leaves no temporary directory."""
    import shutil
    import tempfile

    for name in ("qrels.txt", "bm25.txt", "dense_v2.txt"):
        shutil.copy(GOLDEN / name, tmp_path / name)
    home = tmp_path / "home"
    home.mkdir()
    before = {
        p.name
        for p in __import__("pathlib").Path(tempfile.gettempdir()).iterdir()
        if p.name.startswith("ireval-matplotlib-")
    }
    args = ["plot", "pr", "qrels.txt", "bm25.txt", "dense_v2.txt", "--output"]
    plain = _plot_subprocess([*args, "plain.svg"], tmp_path, home)
    assert (plain.returncode, plain.stderr) == (0, b"")
    assert list(home.iterdir()) == []
    (tmp_path / "matplotlibrc").write_text("font.size: 30\nlines.linewidth: 9\naxes.facecolor: red\n")
    (home / ".config" / "matplotlib").mkdir(parents=True)
    (home / ".config" / "matplotlib" / "matplotlibrc").write_text("lines.linewidth: 7\n")
    styled = _plot_subprocess([*args, "styled.svg"], tmp_path, home)
    assert (styled.returncode, styled.stderr) == (0, b"")
    assert (tmp_path / "plain.svg").read_bytes() == (tmp_path / "styled.svg").read_bytes()
    assert [p.relative_to(home).as_posix() for p in home.rglob("*")] == [
        ".config",
        ".config/matplotlib",
        ".config/matplotlib/matplotlibrc",
    ]
    after = {
        p.name
        for p in __import__("pathlib").Path(tempfile.gettempdir()).iterdir()
        if p.name.startswith("ireval-matplotlib-")
    }
    assert after <= before


def test_ids_that_are_not_utf8_or_look_like_markup(cli, tmp_path):
    (tmp_path / "q").write_bytes(b"q\xff 0 a 1\nq\xff 0 b 0\n$\\frac$ 0 a 1\n")
    (tmp_path / "a").write_bytes(b"q\xff Q0 a 1 3 r\xfe\nq\xff Q0 b 2 1 r\xfe\n$\\frac$ Q0 a 1 1 r\xfe\n")
    (tmp_path / "b").write_bytes(b"q\xff Q0 a 1 1 _s\nq\xff Q0 b 2 3 _s\n$\\frac$ Q0 a 1 1 _s\n")
    for kind, extra in (("pr", []), ("diff", ["-m", "P.1"])):
        for fmt in ("svg", "png"):
            res = cli(["plot", kind, "q", "a", "b", *extra, "--output", tmp_path / f"{kind}.{fmt}"], cwd=tmp_path)
            assert (res.code, res.err) == (0, ""), (kind, fmt)


def test_output_dash_is_standard_output(cli):
    res = cli(["plot", "pr", "qrels.txt", "bm25.txt", "--format", "svg", "--output", "-"], cwd=GOLDEN)
    assert res.code == 0 and res.err == "" and ET.fromstring(res.out).tag == "{http://www.w3.org/2000/svg}svg"
    assert not (GOLDEN / "-").exists()
    res = cli(["plot", "pr", "qrels.txt", "bm25.txt", "--format", "svg", "--output", "x.png"], cwd=GOLDEN)
    assert (res.code, res.err) == (
        2,
        "ireval: --format svg contradicts --output x.png, whose name says png; "
        "drop --format or give a name that matches it\n",
    )


PLOT_SIGNALLED = r"""
import os, signal, sys, tempfile
from irevalcli.commands.main import entry

real = tempfile.mkdtemp

def mkdtemp_then_signal(**kw):  # the signal lands just after the directory is made
    path = real(**kw)
    if kw.get("prefix") == "ireval-matplotlib-":
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(1000):
            pass
    return path

tempfile.mkdtemp = mkdtemp_then_signal
sys.argv = ["ireval", *sys.argv[1:]]
entry()
"""


def test_a_signal_as_matplotlibs_private_directory_is_made_leaves_nothing(tmp_path):
    """matplotlib's private configuration directory was made before the block that removes
    it: a signal landing in between left it under TMPDIR."""
    import os
    import subprocess

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MPL", "MATPLOTLIB", "IREVAL_TEST_"))}
    env["TMPDIR"] = str(tmp)
    args = ["plot", "pr", "qrels.txt", "bm25.txt", "--output", str(tmp_path / "pr.svg")]
    res = subprocess.run(
        [sys.executable, "-c", PLOT_SIGNALLED, *args], cwd=GOLDEN, env=env, capture_output=True, timeout=300
    )
    assert (res.returncode, res.stdout, res.stderr) == (143, b"", b"ireval: terminated\n")
    assert list(tmp.iterdir()) == [] and not (tmp_path / "pr.svg").exists()


PLOT_NO_WAY_BACK = r"""
import os, sys
from irevalcli.commands.main import entry

real = os.open

def refuse_dot(path, flags, *a, **k):  # a working directory that cannot be opened to come back to
    if path == ".":
        raise PermissionError(13, "Permission denied")
    return real(path, flags, *a, **k)

os.open = refuse_dot
sys.argv = ["ireval", *sys.argv[1:]]
entry()
"""


def test_plot_where_the_working_directory_cannot_be_opened(tmp_path):
    """plot moved into matplotlib's private directory even when it could not open the working
    directory to come back to, then removed the directory it was in: relative paths failed
    ("qrels.txt: no such file"). It now stays where it is."""
    import os
    import shutil
    import subprocess

    for name in ("qrels.txt", "bm25.txt"):
        shutil.copy(GOLDEN / name, tmp_path / name)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MPL", "MATPLOTLIB", "IREVAL_TEST_"))}
    args = ["plot", "pr", "qrels.txt", "bm25.txt", "--output", "pr.svg"]
    res = subprocess.run(
        [sys.executable, "-c", PLOT_NO_WAY_BACK, *args], cwd=tmp_path, env=env, capture_output=True, timeout=300
    )
    assert (res.returncode, res.stderr) == (0, b"")
    assert (tmp_path / "pr.svg").read_bytes().startswith(b"<?xml")
