"""Issue 22's five shapes, each against what a user would pick instead, with the ratio and
whether it meets the issue's target.

    python benchmarks/shapes.py [--reps 3] [--trec-eval PATH] [--only dl,log] [--quick] [--write]

| shape | ireval | reference | target |
| --- | --- | --- | --- |
| dl | `-q -m all_trec`, DL size | `python -c "import numpy, pyarrow.csv, pyarrow.compute"`; C trec_eval | <= 1.3x the import floor |
| dl50 | `-q -m all_trec QRELS run1 ... run50` (50 variants of the DL run) | fifty calls of C trec_eval, one per run (one `sh` loop) | <= 0.5x |
| startup | `ireval --help`, `ireval -v` | (none) | <= 0.1 s each |
| robust04 | `-m map -m ndcg_cut.10` | C trec_eval | <= 1.0x; peak <= 150 MiB |
| msmarco | `-m map -m ndcg_cut.10`, 7M lines | one pyarrow CSV read of qid, docno, score (2 threads); C trec_eval (memory, one run); ireval's parse alone (drivers/parse_alone.py: shown, no verdict) | <= 1.2x; memory <= 0.4x trec_eval's |
| big | `-m map -m ndcg_cut.10`, 10M lines / 100k topics, grouped by topic and shuffled | C trec_eval 10.0 on the shuffled run, one run (it takes many minutes) | <= 0.02x |
| api_robust04, api_msmarco | `evaluate(qrels_df, run_df)` | pytrec_eval from the same DataFrames | <= 0.5x time, <= 1x memory; <= 1.5x the path |
| log | `--labelled` on one Parquet file, 5M rows (local engine) | benchmarks/log_baseline.py | faster |
| log50 | the same, 50M rows | benchmarks/log_baseline.py | faster; >= 3M rows/s; <= 17 s; peak <= 2x the table's Arrow size |

Every command is its own process (bench.run_once: wall, user+sys CPU and its sys part, peak
RSS by wait4); the commands of a shape run in turn, the round repeated ``--reps`` times in
rotated order after ``--warmup`` warm-up rounds, and each time ratio is also given round by
round (lowest, median, highest: :func:`spread`). A command can run fewer times than that (C trec_eval on
the big run: one timed run, no warm-up, killed after ``--slow-timeout`` seconds; the 50M-row
log's commands: ``--log50-reps`` runs, no warm-up). For the API shapes the time is the
evaluation's own (from the DataFrames, or the paths, to the summary), measured inside the
process by drivers/frames.py; memory is the process's peak. The machine's load average is
printed: on a shared machine read the ratios and CPU times, not the wall seconds. Agreement:
the API tools' and the log tools' summaries are compared with ireval's to 1e-9 (pytrec_eval
keeps scores as float32: a difference is reported, not hidden).

``--write`` replaces the generated section of benchmarks/RESULTS.md (every shape but big and
log50) and of benchmarks/SCALE_RESULTS.md (big and log50) between their markers
(bench.write_section); the rest of those files is left as it is. ``--quick`` checks the
harness in a few minutes on scaled-down data (see QUICK); its figures are not results, so
it writes nothing unless ``--write-quick`` says so.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / "data"
sys.path.insert(0, str(HERE))

from bench import RUN_ENV, launcher_floor_mib, run_once, trec_eval_tool, write_section  # noqa: E402

PY = sys.executable
LOG_MEASURES = ["-m", "gauc", "-m", "auc", "-m", "ndcg_cut.10", "-m", "recip_rank"]
MAP_NDCG = ["-m", "map", "-m", "ndcg_cut.10"]
SHAPES = ("dl", "dl50", "startup", "robust04", "msmarco", "api_robust04", "api_msmarco", "log", "big", "log50")
SCALE_SHAPES = ("big", "log50")  # written into SCALE_RESULTS.md, the others into RESULTS.md
SCALED = ("robust04", "msmarco", "big")  # the collections --scale can shrink
LOG_COLUMNS = ["qid", "docno", "score", "rel"]  # what `--labelled` reads of the Parquet file
SECTION = "shapes"  # the marked section of RESULTS.md (bench.write_section)
SCALE_SECTION = "scale shapes"  # ... and of SCALE_RESULTS.md
# --quick: every shape, scaled down, one timed run each, no warm-up (a few minutes; checks
# the harness end to end, the figures mean nothing)
QUICK = {
    "reps": 1,
    "warmup": 0,
    "scale": "robust04=0.1,msmarco=0.01,big=0.01",
    "log_users": 2_000,
    "log50_users": 5_000,
}


@dataclass
class Cmd:
    label: str
    argv: list[str]
    inner: bool = False  # the time to report is the JSON eval_wall / eval_cpu it prints
    reps: int | None = None  # at most this many timed runs (None: --reps)
    warmup: bool = True  # also run in the warm-up rounds
    timeout: float | None = None  # seconds per run (None: --timeout)
    expect: float = 1.0  # about how long one run takes, idle (seconds, at the data's size): the estimate
    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)
    syss: list[float] = field(default_factory=list)  # the kernel's part of each CPU time (nan: inner)
    rss: list[float] = field(default_factory=list)
    own: list[float] = field(default_factory=list)  # inner: the evaluation's own peak (MiB above the DataFrames)
    out: str = ""
    error: str = ""
    killed_after: float = 0.0  # timed out: it takes longer than this (a bound for the ratios)

    def wall(self) -> float:
        return statistics.median(self.walls) if self.walls else float("nan")

    def cpu(self) -> float:
        return statistics.median(self.cpus) if self.cpus else float("nan")

    def sys(self) -> float:
        return statistics.median(self.syss) if self.syss else float("nan")

    def peak(self) -> float:
        return max(self.rss) if self.rss else float("nan")

    def runs(self, reps: int, warmup: int) -> int:
        return (warmup if self.warmup else 0) + min(reps, self.reps if self.reps is not None else reps)


@dataclass
class Target:
    """One line of the ratio table. ``what``: ``time`` (num's median wall / den's; CPU beside),
    ``memory`` (peak RSS num / den), ``own`` (the evaluation's own peak above the DataFrames,
    num / den: drivers/frames.py's eval_peak_mib), ``wall`` (num's wall, s), ``peak`` (num's peak RSS, MiB),
    ``rows/s`` (the shape's rows / num's wall) or ``arrow`` (num's peak RSS / the table's Arrow size).
    ``target``: the issue's bound, ``"<= 1.3"``, ``"< 1"``, ``">= 3000000"``, or "" (shown, no verdict).
    ``needs``: the C trec_eval release the target is stated against (e.g. "10."): another
    release gives no verdict."""

    what: str
    num: str
    den: str = ""
    target: str = ""
    needs: str = ""


@dataclass
class Shape:
    name: str
    title: str
    cmds: list[Cmd]
    targets: list[Target]
    rows: int = 0  # rows of the input (the logs): rows/s
    arrow_bytes: int = 0  # the log's Arrow size as ireval reads it
    notes: list[str] = field(default_factory=list)

    def cmd(self, label: str) -> Cmd:
        return next(c for c in self.cmds if c.label == label)


# --------------------------------------------------------------------------
# data


def data_dir(which: str, scale: float) -> Path:
    import generate

    d = generate.data_dir(which, scale)
    if not (d / "info.json").exists():
        cmd = [PY, str(HERE / "generate.py"), "--which", which, "--scale", str(scale)]
        subprocess.run(cmd, check=True, stdout=sys.stderr)
    return d


def shuffled_run(d: Path, scale: float) -> Path:
    """The big run's lines in random order: ``scale.py shuffle``'s data/big-shuffled/run.txt at
    full size, else a seeded shuffle written beside the scaled collection."""
    if scale == 1.0:
        path = DATA / "big-shuffled" / "run.txt"
        if not path.exists():
            subprocess.run([PY, str(HERE / "scale.py"), "shuffle"], check=True, stdout=sys.stderr)
        return path
    path = d / "run-shuffled.txt"
    if not path.exists():
        lines = (d / "run.txt").read_bytes().splitlines(keepends=True)
        random.Random(20261124).shuffle(lines)
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(b"".join(lines))
        tmp.rename(path)
    return path


def ensure_log(users: int) -> Path:
    d = DATA / f"implog-u{users}-i100"
    if not (d / "single.parquet").exists():
        cmd = [PY, str(HERE / "scale.py"), "gen", "--users", str(users), "--items", "100", "--layouts", "single"]
        subprocess.run(cmd, check=True, stdout=sys.stderr)  # it prints a JSON summary
    return d / "single.parquet"


def log_size(path: Path) -> tuple[int, int]:
    """(rows, Arrow bytes) of a labelled Parquet file: ``Table.nbytes`` of its qid, docno, score
    and rel columns read by ``pyarrow.parquet.ParquetFile.read``, as ireval's ``--labelled``
    reads them (io/tabular.py ``_read_parquet``). In a child process: it holds the whole table."""
    code = (
        "import sys, pyarrow.parquet as pq\n"
        "t = pq.ParquetFile(sys.argv[1]).read(columns=sys.argv[2:])\n"
        "print(t.num_rows, t.nbytes)"
    )
    r = subprocess.run([PY, "-c", code, str(path), *LOG_COLUMNS], capture_output=True, text=True, check=True)
    rows, nbytes = r.stdout.split()
    return int(rows), int(nbytes)


DL50_RUNS = 50


def dl_variants(d: Path, out: Path, count: int = DL50_RUNS) -> list[Path]:
    """``count`` variants of the DL run in ``out``: each line's score moved by a seeded
    Gaussian (sd 0.5), so every run ranks differently and no two outputs are alike."""
    lines = (d / "run.txt").read_text().splitlines()
    paths = []
    for i in range(count):
        rnd = random.Random(i)
        rows = []
        for line in lines:
            q, it, doc, rank, score, _ = line.split()
            rows.append(f"{q} {it} {doc} {rank} {float(score) + rnd.gauss(0.0, 0.5):.4f} run{i}\n")
        path = out / f"run{i:02d}.txt"
        path.write_text("".join(rows))
        paths.append(path)
    return paths


# --------------------------------------------------------------------------
# the shapes


def parse_scale(text: str) -> dict[str, float]:
    """``msmarco=0.01,big=0.01`` (the others at 1), or one number for all of SCALED."""
    out = {c: 1.0 for c in SCALED}
    if not text:
        return out
    if "=" not in text:
        return {c: float(text) for c in SCALED}
    for item in text.split(","):
        name, _, val = item.partition("=")
        if name not in SCALED:
            raise ValueError(f"--scale: {name!r} is not one of {', '.join(SCALED)}")
        out[name] = float(val)
    return out


def build(args: argparse.Namespace, tmp: str, *, dry: bool = False) -> list[Shape]:
    """The shapes to run. ``dry``: only the commands and their estimates (no data is made)."""
    ireval = args.ireval
    te = args.trec_eval
    te_label = f"C trec_eval {args.te_release}" if te else "C trec_eval"
    shapes: list[Shape] = []
    want = args.want
    sc = args.scales

    def coll(which: str) -> Path:
        return (generate_dir if dry else data_dir)(which, sc.get(which, 1.0))

    if "dl" in want:
        d = coll("dl")
        q, r = str(d / "qrels.txt"), str(d / "run.txt")
        cmds = [
            Cmd("ireval", [ireval, "-q", "-m", "all_trec", q, r], expect=0.3),
            Cmd("import floor", [PY, "-c", "import numpy, pyarrow.csv, pyarrow.compute"], expect=0.2),
        ]
        targets = [Target("time", "ireval", "import floor", "<= 1.3")]
        if te:
            cmds.append(Cmd(te_label, [te, "-q", "-m", "all_trec", q, r], expect=0.06))
            targets.append(Target("time", "ireval", te_label))
        shapes.append(Shape("dl", "DL size (43 x 1000), `-q -m all_trec`, start-up included", cmds, targets))
    if "dl50" in want:
        d = coll("dl")
        runs = [str(p) for p in dl_variants(d, Path(tmp))] if not dry else [f"run{i}" for i in range(DL50_RUNS)]
        qrels = str(d / "qrels.txt")
        label = f"ireval, {len(runs)} runs"
        cmds = [Cmd(label, [ireval, "-q", "-m", "all_trec", qrels, *runs], expect=1.5)]
        targets = [Target("time", label, f"{te_label} x {len(runs)}", "<= 0.5")]
        if te:
            loop = 'q=$1; t=$2; shift 2; for r in "$@"; do "$t" -q -m all_trec "$q" "$r" || exit 1; done'
            cmds.append(Cmd(f"{te_label} x {len(runs)}", ["sh", "-c", loop, "sh", qrels, te, *runs], expect=2.5))
        shapes.append(Shape("dl50", f"{len(runs)} DL-size runs in one call, `-q -m all_trec`", cmds, targets))
    if "startup" in want:
        cmds = [Cmd("ireval --help", [ireval, "--help"], expect=0.07), Cmd("ireval -v", [ireval, "-v"], expect=0.06)]
        targets = [Target("wall", "ireval --help", "", "<= 0.1"), Target("wall", "ireval -v", "", "<= 0.1")]
        shapes.append(Shape("startup", "start-up: `ireval --help`, `ireval -v`", cmds, targets))
    if "robust04" in want:
        d, f = coll("robust04"), sc["robust04"]
        files = [str(d / "qrels.txt"), str(d / "run.txt")]
        cmds = [Cmd("ireval", [ireval, *MAP_NDCG, *files], expect=0.1 + 0.4 * f)]
        targets = [Target("time", "ireval", te_label, "<= 1.0"), Target("peak", "ireval", "", "<= 150")]
        if te:
            cmds.append(Cmd(te_label, [te, *MAP_NDCG, *files], expect=0.4 * f))
            targets.append(Target("memory", "ireval", te_label))
        shapes.append(
            Shape(
                "robust04", f"Robust04 size (249 x 1000 at scale 1; here {f:g}), `-m map -m ndcg_cut.10`", cmds, targets
            )
        )
    if "msmarco" in want:
        d, f = coll("msmarco"), sc["msmarco"]
        files = [str(d / "qrels.txt"), str(d / "run.txt")]
        cmds = [
            Cmd("ireval", [ireval, *MAP_NDCG, *files], expect=0.2 + 1.0 * f),
            Cmd("pyarrow CSV read", [PY, str(HERE / "drivers" / "csv_read.py"), files[1]], expect=0.2 + 0.4 * f),
            # ireval's own chunked read and parse, nothing scored: how much of ireval's time is
            # the parse (its checks included) and how much the evaluation (no verdict)
            Cmd("ireval's parse alone", [PY, str(HERE / "drivers" / "parse_alone.py"), files[1]], expect=0.2 + 0.4 * f),
        ]
        targets = [
            Target("time", "ireval", "pyarrow CSV read", "<= 1.2"),
            Target("time", "ireval's parse alone", "pyarrow CSV read"),
            Target("memory", "ireval", te_label, "<= 0.4"),
        ]
        if te:  # for its memory: one run is enough
            cmds.append(Cmd(te_label, [te, *MAP_NDCG, *files], reps=1, warmup=False, expect=7.0 * f))
        shapes.append(
            Shape("msmarco", f"7M-line MS MARCO run at scale 1 (here {f:g}), `-m map -m ndcg_cut.10`", cmds, targets)
        )
    for c in ("robust04", "msmarco"):
        if f"api_{c}" not in want:
            continue
        d, f = coll(c), sc[c]
        frames = str(HERE / "drivers" / "frames.py")
        files = [str(d / "qrels.txt"), str(d / "run.txt")]
        per = {"robust04": 2.0, "msmarco": 12.0}[c] * f + 1.0  # the process: DataFrame reading included
        cmds = [
            Cmd("evaluate(DataFrames)", [PY, frames, "ireval", *files], inner=True, expect=per),
            Cmd("evaluate(paths)", [PY, frames, "ireval_path", *files], inner=True, expect=per),
            Cmd(
                "evaluate(object DataFrames)",
                [PY, frames, "ireval", *files, "--dtype", "object"],
                inner=True,
                expect=per,
            ),
        ]
        targets = [
            Target("time", "evaluate(DataFrames)", "pytrec_eval(DataFrames)", "<= 0.5"),
            Target("memory", "evaluate(DataFrames)", "pytrec_eval(DataFrames)", "<= 1.0"),
            Target("own", "evaluate(DataFrames)", "pytrec_eval(DataFrames)"),
            Target("time", "evaluate(DataFrames)", "evaluate(paths)", "<= 1.5"),
            Target("time", "evaluate(object DataFrames)", "evaluate(paths)", "<= 1.5"),
        ]
        if args.ref_python:
            cmds.append(
                Cmd(
                    "pytrec_eval(DataFrames)",
                    [args.ref_python, frames, "pytrec_eval", *files],
                    inner=True,
                    expect=per * 1.5,
                )
            )
        shapes.append(
            Shape(f"api_{c}", f"Python API on DataFrames, {c} at scale {f:g} (`map`, `ndcg_cut.10`)", cmds, targets)
        )
    if "big" in want:
        d, f = coll("big"), sc["big"]
        qrels = str(d / "qrels.txt")
        inputs = {"grouped": str(d / "run.txt"), "shuffled": str(shuffled_run(d, f)) if not dry else "run-shuffled.txt"}
        cmds, targets = [], []
        for order, run in inputs.items():
            cmds.append(Cmd(f"ireval, {order}", [ireval, *MAP_NDCG, qrels, run], expect=0.3 + BIG_SECONDS[order] * f))
        for order, run in inputs.items() if te else ():
            # trec_eval 10.0 takes many minutes here: one run, no warm-up, and a time limit (it
            # compares every run topic with every qrels topic: a tenth of the topics, ~1/100 the time)
            per = TE_BIG_SECONDS.get(args.te_release[:2] + order[0], 30.0)
            cmds.append(
                Cmd(
                    f"{te_label}, {order}",
                    [te, *MAP_NDCG, qrels, run],
                    reps=1,
                    warmup=False,
                    timeout=args.slow_timeout,
                    expect=min(args.slow_timeout, per * f * f + 0.5),
                )
            )
        for order in inputs:
            targets.append(Target("time", f"ireval, {order}", f"{te_label}, {order}", "<= 0.02", needs="10."))
        targets.append(Target("memory", "ireval, shuffled", f"{te_label}, shuffled"))
        shapes.append(
            Shape(
                "big",
                f"{10_000_000 * f:,.0f} lines / {100_000 * f:,.0f} topics (`big` at scale {f:g}), `-m map -m ndcg_cut.10`, "
                "grouped by topic (data/big/run.txt) and the same lines shuffled (data/big-shuffled/run.txt); C "
                "trec_eval once on each",
                cmds,
                targets,
            )
        )
    for name, users in (("log", args.log_users), ("log50", args.log50_users)):
        if name not in want:
            continue
        single = ensure_log(users) if not dry else Path(f"implog-u{users}-i100/single.parquet")
        rows = users * 100
        sec = 4e-7 * rows + 0.5  # ireval and the baseline, idle, about the same
        big = name == "log50"  # a minute or more per run: --log50-reps runs, no warm-up
        reps, warm = (args.log50_reps, False) if big else (None, True)
        cmds = [
            Cmd(
                "ireval --labelled",
                [ireval, *LOG_MEASURES, "--format", "json", "--labelled", str(single)],
                reps=reps,
                warmup=warm,
                expect=sec,
            ),
            Cmd(
                "pyarrow+numpy script",
                [PY, str(HERE / "log_baseline.py"), str(single)],
                reps=reps,
                warmup=warm,
                expect=sec,
            ),
        ]
        targets = [
            Target("time", "ireval --labelled", "pyarrow+numpy script", "< 1"),
            Target("memory", "ireval --labelled", "pyarrow+numpy script"),
        ]
        targets += [
            Target("wall", "ireval --labelled", "", "<= 17" if big else ""),
            Target("rows/s", "ireval --labelled", "", ">= 3000000" if big else ""),
            Target("arrow", "ireval --labelled", "", "<= 2" if big else ""),
        ]
        shape = Shape(
            name,
            f"impression log, one Parquet file, {users:,} users x 100 = {rows:,} rows, "
            "`--labelled -m gauc -m auc -m ndcg_cut.10 -m recip_rank --format json` (local engine)",
            cmds,
            targets,
        )
        if not dry:
            shape.rows, shape.arrow_bytes = log_size(single)
        shapes.append(shape)
    return shapes


# idle seconds on the full `big` run (for the estimate only). ireval, by line order; C trec_eval,
# by release and line order: 10.0 compares every run topic with every qrels topic (100,000^2),
# 9.0.4 does not (10.0-rc3, 2026-11-28: 285 s CPU on the grouped run, 341 s on the shuffled one)
BIG_SECONDS = {"grouped": 9.0, "shuffled": 13.0}
TE_BIG_SECONDS = {"10g": 290.0, "10s": 345.0, "9.g": 27.0, "9.s": 27.0}


def generate_dir(which: str, scale: float) -> Path:
    import generate

    return generate.data_dir(which, scale)


def estimate(shapes: list[Shape], reps: int, warmup: int) -> float:
    """Seconds the runs should take on an idle machine (each command's ``expect`` x its runs)."""
    return sum(c.expect * c.runs(reps, warmup) for s in shapes for c in s.cmds)


# --------------------------------------------------------------------------
# measuring


def measure(shapes: list[Shape], args: argparse.Namespace, tmp: str) -> None:
    reps, warmup = args.reps, args.warmup
    for shape in shapes:
        for i in range(warmup + reps):
            k = i % len(shape.cmds)
            for cmd in shape.cmds[k:] + shape.cmds[:k]:
                if cmd.error:
                    continue
                if i < warmup and not cmd.warmup:
                    continue
                if i >= warmup and cmd.reps is not None and len(cmd.walls) >= cmd.reps:
                    continue
                path = os.path.join(tmp, f"{shape.name}-{cmd.label}.out".replace(" ", "_").replace("/", "_"))
                limit = cmd.timeout or args.timeout
                s = run_once(cmd.argv, path, limit, env=RUN_ENV)
                if s.rc != 0 or s.timed_out:
                    err = Path(path + ".err").read_text(errors="replace").strip().splitlines()
                    if s.timed_out:
                        cmd.error = f"killed after {limit:.0f} s"
                        cmd.killed_after = limit
                    else:
                        cmd.error = f"exit {s.rc}: {err[-1] if err else ''}"
                    print(f"  {shape.name:<13} {cmd.label:<28} {cmd.error}", file=sys.stderr, flush=True)
                    continue
                cmd.out = Path(path).read_text(errors="replace")
                wall, cpu, sys_cpu = s.wall, s.cpu, s.sys
                own = None
                if cmd.inner:
                    got = json.loads(cmd.out.strip().splitlines()[-1])
                    wall, cpu, own = got["eval_wall"], got["eval_cpu"], got.get("eval_peak_mib")
                    sys_cpu = float("nan")  # (the process's, not the evaluation's own)
                tag = "warm-up" if i < warmup else "timed"
                print(
                    f"  {shape.name:<13} {cmd.label:<28} {wall:8.3f} s  cpu {cpu:8.3f} s  rss {s.rss_mib:8.1f} MiB ({tag})",
                    file=sys.stderr,
                    flush=True,
                )
                if i >= warmup:
                    cmd.walls.append(wall)
                    cmd.cpus.append(cpu)
                    cmd.syss.append(sys_cpu)
                    cmd.rss.append(s.rss_mib)
                    if own is not None:
                        cmd.own.append(own)


def _summary(cmd: Cmd) -> dict[str, float]:
    """The summary a command printed: ireval's JSON document, or a driver's last JSON line."""
    try:
        got = json.loads(cmd.out)
    except ValueError:
        try:
            got = json.loads(cmd.out.strip().splitlines()[-1])
        except (ValueError, IndexError):
            return {}
    if not isinstance(got, dict):
        return {}
    return {k: float(v) for k, v in got.get("summary", {}).items() if v is not None}


def _frames(cmd: Cmd) -> list | None:
    """The DataFrames' column types a drivers/frames.py command printed (None: paths, or none)."""
    try:
        got = json.loads(cmd.out.strip().splitlines()[-1]) if cmd.inner and cmd.out.strip() else {}
    except ValueError:
        return None
    return got.get("frames") if isinstance(got, dict) else None


def agreement(shape: Shape) -> list[str]:
    """The summaries (JSON) of the shape's commands against its first command's, to 1e-9; and
    each C trec_eval output against ireval's on the same input, byte for byte."""
    notes = []
    by = {c.label: c for c in shape.cmds}
    for cmd in shape.cmds:
        if not cmd.label.startswith("C trec_eval") or " x " in cmd.label or not cmd.out:
            continue
        mine = by.get("ireval" + (", " + cmd.label.split(", ", 1)[1] if ", " in cmd.label else ""))
        if mine is None or not mine.out:
            continue
        if mine.out == cmd.out:
            notes.append(f"{shape.name}: {cmd.label}'s output is byte-identical to {mine.label}'s")
        else:
            a, b = mine.out.count("\n"), cmd.out.count("\n")
            why = " (as expected of 9.x: benchmarks/README.md, Agreement)" if " 9." in cmd.label else ""
            notes.append(
                f"{shape.name}: {cmd.label}'s output is NOT byte-identical to {mine.label}'s ({b:,} lines against {a:,}){why}"
            )
    # the tools compared on "the same DataFrames" (not the object-column variant) read them alike
    kinds = {c.label: _frames(c) for c in shape.cmds if c.label.endswith("(DataFrames)") and _frames(c)}
    first = next(iter(kinds), None)
    for label, got in kinds.items():
        if first is not None and label != first:
            same = (
                "the same column types"
                if got == kinds[first]
                else f"NOT the same column types ({got} against {kinds[first]})"
            )
            notes.append(f"{shape.name}: {label} read DataFrames of {same} as {first}")
    ref = _summary(shape.cmds[0])
    for cmd in shape.cmds[1:]:
        got = _summary(cmd)
        if not got or not ref:
            continue
        common = sorted(ref.keys() & got.keys())
        worst = max((abs(ref[k] - got[k]) for k in common), default=float("nan"))
        verdict = "agree" if worst <= 1e-9 else "DIFFER"
        notes.append(
            f"{shape.name}: {cmd.label} vs {shape.cmds[0].label}: {', '.join(common)} {verdict} "
            f"(largest difference {worst:.1e})"
        )
    return notes


# --------------------------------------------------------------------------
# verdicts


def meets(value: float, target: str) -> bool:
    op, _, bound = target.partition(" ")
    b = float(bound)
    return {"<=": value <= b, "<": value < b, ">=": value >= b, ">": value > b}[op]


def _num(x: float, what: str) -> str:
    if what == "rows/s":
        return f"{x:,.0f}"
    if what == "peak":
        return f"{x:.0f} MiB"
    if what == "wall":
        return f"{x:.3f} s"
    return f"{x:.2f}" if x >= 0.1 else f"{x:.3f}"


def _fmt_target(t: Target) -> str:
    if not t.target:
        return ""
    op, _, bound = t.target.partition(" ")
    b = float(bound)
    unit = {"wall": " s", "peak": " MiB", "rows/s": " rows/s"}.get(t.what, "x")
    return f"{op} {b:,.0f}{unit}" if b >= 1000 else f"{op} {b:g}{unit}"


def verdict(shape: Shape, t: Target, args: argparse.Namespace) -> tuple[str, str, str, str]:
    """(what, value, CPU value, verdict) of one target line."""
    a = shape.cmd(t.num)
    b = next((c for c in shape.cmds if c.label == t.den), None) if t.den else None
    what = {
        "time": f"{t.num} / {t.den}",
        "memory": f"peak RSS {t.num} / {t.den}",
        "own": f"the evaluation's own peak, {t.num} / {t.den}",
        "wall": f"wall of {t.num}",
        "peak": f"peak RSS of {t.num}",
        "rows/s": f"rows/s, {t.num}",
        "arrow": f"peak RSS of {t.num} / the table's Arrow size ({shape.arrow_bytes / 2**20:,.0f} MiB)",
    }[t.what]
    if t.den and b is None:
        return what, "", "", "n/a: no " + (t.den or "reference").split(",")[0] + " (" + _missing(t, args) + ")"
    if t.needs and not args.te_release.startswith(t.needs):
        na = f"n/a: the target is against trec_eval {t.needs}x, this is {args.te_release}"
    else:
        na = ""
    if a.error and not (a.walls and t.what in ("time", "wall", "rows/s")):
        return what, "", "", f"n/a: {t.num} {a.error}"
    cpu = ""
    bound = ""  # "<" or ">" when the value is a bound (a command was killed after its time limit)
    if t.what == "time":
        if b is not None and b.killed_after and not b.walls:
            value, bound = a.wall() / b.killed_after, "<"
        elif b is not None and b.error:
            return what, "", "", f"n/a: {t.den} {b.error}"
        else:
            assert b is not None
            value, cpu = a.wall() / b.wall(), _num(a.cpu() / b.cpu(), "time")
    elif t.what == "memory":
        assert b is not None
        if b.error:
            return what, "", "", f"n/a: {t.den} {b.error}"
        value = a.peak() / b.peak()
    elif t.what == "own":
        assert b is not None
        if b.error or not a.own or not b.own:
            return what, "", "", f"n/a: {t.den} {b.error or 'no eval_peak_mib (not Linux)'}"
        value = max(a.own) / max(b.own)
    elif t.what == "wall":
        value, cpu = a.wall(), _num(a.cpu(), "wall")
    elif t.what == "peak":
        value = a.peak()
    elif t.what == "rows/s":
        value, cpu = shape.rows / a.wall(), _num(shape.rows / a.cpu(), "rows/s") + " per CPU-s"
    else:  # arrow
        value = a.peak() * 2**20 / shape.arrow_bytes if shape.arrow_bytes else float("nan")
    shown = bound + _num(value, t.what)
    if not t.target or math.isnan(value):
        return what, shown, cpu, ""
    if na:
        return what, shown, cpu, na
    if bound == "<" and not meets(value, t.target):
        return what, shown, cpu, "? (the reference was stopped before it finished)"
    return what, shown, cpu, "PASS" if meets(value, t.target) else "MISS"


def _missing(t: Target, args: argparse.Namespace) -> str:
    if "trec_eval" in t.den:
        return "--trec-eval PATH / TREC_EVAL="
    if "pytrec_eval" in t.den:
        return "--ref-python: benchmarks/.venv-ref"
    return "not run"


# --------------------------------------------------------------------------
# the report


def render(shapes: list[Shape], args: argparse.Namespace, meta: dict[str, str], scale_part: bool) -> str:
    """The tables of ``shapes`` (a section of RESULTS.md, or of SCALE_RESULTS.md: ``scale_part``)."""
    title = "Issue 22's scale shapes: the 10M-line run and the 50M-row log" if scale_part else "Issue 22's shapes"
    out = [
        f"## {title} (`benchmarks/shapes.py`, generated)",
        "",
        f"Command: `{meta['command']}`  ",
        f"Date: {meta['date']}; ireval at git {meta['git']}; {meta['elapsed']}.",
        "",
        f"- Machine: {meta['machine']}; load average (1/5/15 min) before {meta['load_before']}, after "
        f"{meta['load_after']} (other work on the machine inflates wall times much more than CPU times).",
        f"- References: {meta['refs']}.",
        f"- Median of {args.reps} interleaved runs after {args.warmup} warm-up round(s), unless the runs column "
        "says fewer. Wall and CPU (user+sys; of it sys: the kernel's part, pages faulted in and cleared, "
        "copies from the page cache) in seconds, peak RSS in MiB, each command's own (started by a small "
        f"launcher, bench.LAUNCHER, whose {meta['floor']} MiB are the floor under every peak). For the API shapes "
        "the time is the evaluation's own, measured in the process (drivers/frames.py). Each time ratio is also "
        "given round by round under the tables (its two commands run one after the other in each round).",
    ]
    if any(s.arrow_bytes for s in shapes):
        out.append(
            "- The log's Arrow size is `pyarrow.parquet.ParquetFile(path).read(columns=[qid, docno, score, rel])"
            ".nbytes`: the table as ireval's `--labelled` reads it (io/tabular.py `_read_parquet`, no dictionary "
            "columns); rows/s is the log's rows over ireval's median wall time."
        )
    if args.quick:
        out.append("- **`--quick`: scaled-down data, one run each: a check of the harness, not figures.**")
    out += [
        "",
        "Shapes:",
        "",
        *(f"- **{s.name}**: {s.title}" for s in shapes),
        "",
        "| shape | command | runs | wall (s) | CPU (s) | of it sys (s) | peak RSS (MiB) |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for shape in shapes:
        for cmd in shape.cmds:
            if not cmd.walls:
                out.append(f"| {shape.name} | {cmd.label} | 0 | {cmd.error or 'not run'} | | | |")
            else:
                sys_cpu = "" if math.isnan(cmd.sys()) else f"{cmd.sys():.3f}"
                out.append(
                    f"| {shape.name} | {cmd.label} | {len(cmd.walls)} | {cmd.wall():.3f} | "
                    f"{cmd.cpu():.3f} | {sys_cpu} | {cmd.peak():.0f} |"
                )
    out += ["", "| shape | ratio | value | CPU | target | verdict |", "|---|---|---:|---:|---|---|"]
    for shape in shapes:
        for t in shape.targets:
            what, value, cpu, v = verdict(shape, t, args)
            out.append(f"| {shape.name} | {what} | {value} | {cpu} | {_fmt_target(t)} | {v} |")
    notes = [n for s in shapes for n in agreement(s)]
    notes += [n for s in shapes for n in spread(s)]
    notes += [f"{s.name}: {c.label}: {c.error}" for s in shapes for c in s.cmds if c.error]
    if notes:
        out += ["", *(f"- {n}" for n in notes)]
    out.append("")
    return "\n".join(out)


def spread(shape: Shape) -> list[str]:
    """For each time ratio whose two commands ran in the same rounds: the ratio round by round
    (each round runs the shape's commands one after the other), lowest, median and highest, and
    the range of each command's sys time. A ratio of medians hides how far one round's can be
    from another's on a shared machine, and the kernel's part is the one that varies most."""
    notes = []
    for t in shape.targets:
        if t.what != "time" or not t.den:
            continue
        a = shape.cmd(t.num)
        b = next((c for c in shape.cmds if c.label == t.den), None)
        if b is None or a.inner or b.inner or len(a.walls) < 2 or len(a.walls) != len(b.walls):
            continue
        per = sorted(x / y for x, y in zip(a.walls, b.walls))
        note = (
            f"{shape.name}: {t.num} / {t.den}, round by round: {per[0]:.2f} to {per[-1]:.2f} "
            f"(median {statistics.median(per):.2f}, {len(per)} rounds)"
        )
        if all(not math.isnan(x) for x in a.syss + b.syss) and a.syss and b.syss:
            note += f"; sys {min(a.syss):.2f}-{max(a.syss):.2f} s against {min(b.syss):.2f}-{max(b.syss):.2f} s"
        notes.append(note)
    return notes


def summary_lines(shapes: list[Shape], args: argparse.Namespace) -> list[str]:
    """One line per target: the shape, the ratio, the target and PASS / MISS (stderr)."""
    lines = []
    for shape in shapes:
        for t in shape.targets:
            if not t.target:
                continue
            what, value, _, v = verdict(shape, t, args)
            lines.append(f"  {shape.name:<13} {what:<70} {value:>12}  target {_fmt_target(t):<18} {v}")
    return lines


def _git() -> str:
    try:
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no", "--", "irevalcli"],
            capture_output=True,
            text=True,
        )
        return head.stdout.strip() + (" (irevalcli/ with uncommitted changes)" if dirty.stdout.strip() else "")
    except OSError:
        return "?"


def _machine() -> str:
    from bench import machine

    m = machine()
    return f"{m['cpu']}, {m['cores']} cores, RAM {m['ram']}, Python {m['python']}"


def minutes(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds >= 90 else f"{seconds:.0f} s"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3, help="timed runs per command (default 3)")
    ap.add_argument("--warmup", type=int, default=1, help="untimed rounds first (default 1)")
    ap.add_argument("--only", default="", help="comma list of " + ", ".join(SHAPES) + " (default: all)")
    ap.add_argument("--skip", default="", help="comma list of shapes to leave out")
    ap.add_argument("--ireval", default=str(ROOT / ".venv" / "bin" / "ireval"))
    fetched = HERE / "bin" / "trec_eval"
    ap.add_argument(
        "--trec-eval",
        dest="trec_eval",
        default=str(fetched) if fetched.exists() else shutil.which("trec_eval"),
        help="C trec_eval (the big shape's target is against 10.0; default benchmarks/bin/trec_eval, 9.0.4)",
    )
    ref = HERE / ".venv-ref" / "bin" / "python"
    ap.add_argument("--ref-python", default=str(ref) if ref.exists() else None, help="python with pytrec_eval")
    ap.add_argument("--scale", default="", help="robust04=F,msmarco=F,big=F: fractions of those collections' topics")
    ap.add_argument("--log-users", type=int, default=50_000, help="the log shape's users x 100 rows (default 50000)")
    ap.add_argument(
        "--log50-users", type=int, default=500_000, help="the log50 shape's users (default 500000: 50M rows)"
    )
    ap.add_argument(
        "--log50-reps", type=int, default=1, help="timed runs of each log50 command, no warm-up (default 1)"
    )
    ap.add_argument("--timeout", type=float, default=3600.0, help="seconds per run (default 3600)")
    ap.add_argument(
        "--slow-timeout", type=float, default=1800.0, help="seconds for C trec_eval's one run of big (default 1800)"
    )
    ap.add_argument("--quick", action="store_true", help="scaled-down data, 1 run each: check the harness (QUICK)")
    ap.add_argument("--estimate", action="store_true", help="print the estimated duration and stop")
    ap.add_argument(
        "--write", action="store_true", help="replace the generated sections of RESULTS.md, SCALE_RESULTS.md"
    )
    ap.add_argument("--write-quick", action="store_true", help="with --quick: write anyway")
    ap.add_argument("--results", default=str(HERE / "RESULTS.md"))
    ap.add_argument("--scale-results", default=str(HERE / "SCALE_RESULTS.md"))
    args = ap.parse_args(argv)
    if args.quick:
        given = set(a.split("=")[0].replace("_", "-") for a in (argv if argv is not None else sys.argv[1:]))
        for k, v in QUICK.items():
            if "--" + k.replace("_", "-") not in given:
                setattr(args, k, v)
    try:
        args.scales = parse_scale(args.scale)
    except ValueError as exc:
        ap.error(str(exc))
    want = [s for s in (args.only.split(",") if args.only else SHAPES) if s]
    for s in want + [s for s in args.skip.split(",") if s]:
        if s not in SHAPES:
            ap.error(f"unknown shape {s!r} (known: {', '.join(SHAPES)})")
    args.want = [s for s in want if s not in args.skip.split(",")]
    args.te_release = trec_eval_tool(args.trec_eval).note if args.trec_eval else ""
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    expected = estimate(build(args, "", dry=True), args.reps, args.warmup)
    print(f"shapes: {', '.join(args.want)}; about {minutes(expected)} on an idle machine", file=sys.stderr, flush=True)
    if args.estimate:
        print(f"{expected:.0f}")
        return 0
    if not args.trec_eval:
        print("shapes: no C trec_eval (--trec-eval PATH): no ratio against it", file=sys.stderr)
    tmp = tempfile.mkdtemp(prefix="ireval-shapes-")
    t0 = time.time()
    before = "/".join(f"{x:.2f}" for x in os.getloadavg())
    try:
        shapes = build(args, tmp)
        measure(shapes, args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    elapsed = time.time() - t0
    refs = [f"C trec_eval {args.te_release} (`{args.trec_eval}`)" if args.trec_eval else "no C trec_eval"]
    refs.append(f"pytrec_eval in `{args.ref_python}`" if args.ref_python else "no pytrec_eval")
    meta = {
        "command": " ".join(shlex.quote(a) for a in ["python", "benchmarks/shapes.py", *(argv or sys.argv[1:])]),
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "git": _git(),
        "elapsed": f"took {minutes(elapsed)} (estimated {minutes(expected)})",
        "machine": _machine(),
        "load_before": before,
        "load_after": "/".join(f"{x:.2f}" for x in os.getloadavg()),
        "refs": "; ".join(refs),
        "floor": f"{launcher_floor_mib():.0f}",
    }
    main_part = [s for s in shapes if s.name not in SCALE_SHAPES]
    scale_part = [s for s in shapes if s.name in SCALE_SHAPES]
    texts = []
    if main_part:
        texts.append((args.results, SECTION, render(main_part, args, meta, False)))
    if scale_part:
        texts.append((args.scale_results, SCALE_SECTION, render(scale_part, args, meta, True)))
    sys.stdout.write("\n".join(t for _, _, t in texts))
    print(f"shapes: took {minutes(elapsed)} (estimated {minutes(expected)}); against the targets:", file=sys.stderr)
    for line in summary_lines(shapes, args):
        print(line, file=sys.stderr)
    if args.write and args.quick and not args.write_quick:
        print(
            "shapes: --quick: RESULTS.md and SCALE_RESULTS.md not written (--write-quick writes them)", file=sys.stderr
        )
    elif args.write:
        for path, name, text in texts:
            write_section(Path(path), name, text)
            print(f"shapes: wrote the {name!r} section of {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
