"""The benchmark harness's own logic (benchmarks/bench.py, benchmarks/shapes.py): the generated
sections of RESULTS.md are replaced, never appended; verdicts against the issue's targets,
including a reference stopped at its time limit. No timing is asserted here."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.fixture(scope="module")
def harness():
    sys.path.insert(0, str(BENCH))
    try:
        import bench
        import shapes

        yield bench, shapes
    finally:
        sys.path.remove(str(BENCH))


def test_write_section_replaces_in_place(harness, tmp_path):
    bench, _ = harness
    p = tmp_path / "R.md"
    p.write_text("# Title\n\nintro\n\n## history\nold figures\n")
    bench.write_section(p, "shapes", "## Shapes\nfirst")
    bench.write_section(p, "bench", "## Tools\none")
    once = p.read_text()
    bench.write_section(p, "shapes", "## Shapes\nsecond")
    bench.write_section(p, "bench", "## Tools\ntwo")
    twice = p.read_text()
    assert twice == once.replace("first", "second").replace("one", "two")
    assert twice.count("## Shapes") == 1 and twice.count("## Tools") == 1
    # the order of SECTIONS, after the title; the rest of the file kept as it was
    assert twice.index("## Tools") < twice.index("## Shapes") < twice.index("intro")
    assert twice.endswith("## history\nold figures\n")


def test_write_section_new_file(harness, tmp_path):
    bench, _ = harness
    p = tmp_path / "new.md"
    bench.write_section(p, "scale shapes", "## Scale\nx")
    bench.write_section(p, "scale shapes", "## Scale\ny")
    text = p.read_text()
    assert text.count("## Scale") == 1 and "y" in text and "\nx\n" not in text


def test_write_section_drops_the_old_whole_file_report(harness, tmp_path):
    bench, _ = harness
    p = tmp_path / "R.md"
    p.write_text(
        "# ireval benchmark results\n\nCommand: `python benchmarks/bench.py --write`  \n\n## Machine\n\n- cpu\n\n"
        "## Collections (seed 1)\n\n| a |\n\n## Results\n\n| b |\n\nNotes:\n\n- n\n\n## Compared by hand\n\nkeep\n"
    )
    bench.write_section(p, "bench", "## Every tool\nnew")
    text = p.read_text()
    assert text.startswith("# ireval benchmark results\n")
    assert "## Machine" not in text and "Command: `python benchmarks/bench.py --write`" not in text
    assert text.index("## Every tool") < text.index("## Compared by hand\n\nkeep\n")


def _args(release: str = "10.0") -> argparse.Namespace:
    return argparse.Namespace(te_release=release)


def _shape(shapes, ireval_walls, ref_walls, killed_after=0.0):
    a = shapes.Cmd("ireval", [], walls=ireval_walls, cpus=ireval_walls, rss=[100.0])
    b = shapes.Cmd("C trec_eval", [], walls=ref_walls, cpus=ref_walls, rss=[50.0])
    if killed_after:
        b.error, b.killed_after = f"killed after {killed_after:.0f} s", killed_after
    return shapes.Shape("big", "t", [a, b], [])


def test_verdicts(harness):
    _, shapes = harness
    t = shapes.Target("time", "ireval", "C trec_eval", "<= 0.02", needs="10.")
    assert shapes.verdict(_shape(shapes, [1.0, 1.2, 5.0], [100.0]), t, _args())[3] == "PASS"  # median 1.2
    assert shapes.verdict(_shape(shapes, [3.0], [100.0]), t, _args())[3] == "MISS"
    # against another release than the target's: no verdict
    assert shapes.verdict(_shape(shapes, [1.0], [100.0]), t, _args("9.0.4"))[3].startswith("n/a")
    # the reference stopped at its limit: the ratio is a bound, a verdict only when the bound decides it
    _, value, _, v = shapes.verdict(_shape(shapes, [10.0], [], killed_after=1800.0), t, _args())
    assert value.startswith("<") and v == "PASS"
    assert shapes.verdict(_shape(shapes, [100.0], [], killed_after=1800.0), t, _args())[3].startswith("?")
    mem = shapes.Target("memory", "ireval", "C trec_eval", "<= 0.4")
    assert shapes.verdict(_shape(shapes, [1.0], [1.0]), mem, _args())[1:] == ("2.00", "", "MISS")


def test_meets(harness):
    _, shapes = harness
    assert shapes.meets(3_000_000.0, ">= 3000000") and not shapes.meets(2_999_999.0, ">= 3000000")
    assert shapes.meets(0.99, "< 1") and not shapes.meets(1.0, "< 1")


def test_per_command_runs(harness):
    _, shapes = harness
    assert shapes.Cmd("a", []).runs(reps=3, warmup=1) == 4
    assert shapes.Cmd("te", [], reps=1, warmup=False).runs(reps=3, warmup=1) == 1


def test_spread_gives_each_rounds_ratio(harness):
    _, shapes = harness
    shape = _shape(shapes, [1.2, 1.0, 3.0], [1.0, 2.0, 2.0])
    shape.targets = [
        shapes.Target("time", "ireval", "C trec_eval", "<= 1.2"),
        shapes.Target("memory", "ireval", "C trec_eval", "<= 0.4"),  # (not a time: no spread)
    ]
    # rounds: 1.2 / 1.0, 1.0 / 2.0, 3.0 / 2.0; the ratio of the medians (1.2 / 2.0) is none of them
    assert shapes.spread(shape) == ["big: ireval / C trec_eval, round by round: 0.50 to 1.50 (median 1.20, 3 rounds)"]
    shape.cmds[0].syss, shape.cmds[1].syss = [0.2, 0.3, 0.25], [0.1, 0.7, 0.4]
    assert shapes.spread(shape)[0].endswith("(median 1.20, 3 rounds); sys 0.20-0.30 s against 0.10-0.70 s")
    shape.cmds[1].walls = [5.0]  # one timed run of the reference (C trec_eval on the big run): no rounds to pair
    assert shapes.spread(shape) == []


def test_launcher_reports_the_kernels_part_of_the_cpu(harness, tmp_path):
    bench, _ = harness
    out = tmp_path / "out"
    # reading a file the kernel copies: sys time, a part of the CPU time
    s = bench.run_once([sys.executable, "-c", "open(__import__('sys').executable, 'rb').read()"], str(out), 60.0)
    assert s.rc == 0 and not s.timed_out
    assert 0.0 <= s.sys <= s.cpu
