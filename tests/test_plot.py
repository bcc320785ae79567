"""``ireval plot``: the image files are written, valid and reproducible (no pixel comparisons)."""

from __future__ import annotations

import struct
import sys
import xml.etree.ElementTree as ET

import pytest

from .conftest import DATA

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
        res = cli(["plot", "diff", "qrels.txt", "bm25.txt", "dense_v2.txt", "-m", "ndcg_cut.10", "--output", out], cwd=GOLDEN)
        assert res.code == 0, res.err
    root = ET.fromstring(one.read_bytes())
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert one.read_bytes() == two.read_bytes()


def test_data_behind_the_figures():
    from irevalcli.api import load_qrels, load_run
    from irevalcli.plot import pr_curves, topic_diffs

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
            "the name; end it in .png or .svg or give --format png|svg\n"
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
    assert (res.code, res.err) == (2, "ireval: ireval plot needs matplotlib: pip install 'ireval[plot]'\n")
