"""Issue 22's five shapes, each against what a user would pick instead, with the ratio.

    python benchmarks/shapes.py [--reps 3] [--trec-eval PATH] [--log-users 50000] [--only dl,log]

| shape | ireval | reference | target |
| --- | --- | --- | --- |
| dl | `-q -m all_trec`, DL size | `python -c "import numpy, pyarrow.csv, pyarrow.compute"`; C trec_eval | <= 1.3x the import floor |
| dl50 | `-q -m all_trec QRELS run1 ... run50` (50 variants of the DL run) | fifty calls of C trec_eval, one per run (one `sh` loop) | <= 0.5x |
| startup | `ireval --help`, `ireval -v` | (none) | <= 0.1 s each |
| robust04 | `-m map -m ndcg_cut.10` | C trec_eval | <= 1.0x |
| msmarco | `-m map -m ndcg_cut.10`, 7M lines | one pyarrow CSV read of qid, docno, score (2 threads) | <= 1.2x |
| api_robust04, api_msmarco | `evaluate(qrels_df, run_df)` | pytrec_eval from the same DataFrames | <= 0.5x time, <= 1x memory; <= 1.5x the path |
| log | `--labelled` on one Parquet file (local engine) | benchmarks/log_baseline.py | faster; >= 3M rows/s at 50M rows; memory <= 2x Arrow size |

Every command is its own process (bench.run_once: wall, user+sys CPU, peak RSS by wait4);
the commands of a shape run in turn, the round repeated ``--reps`` times in rotated order
after one warm-up. For the API shapes the time is the evaluation's own (from the DataFrames,
or the paths, to the summary), measured inside the process by drivers/frames.py; memory is the
process's peak. The machine's load average is printed: on a shared machine read the ratios
and CPU times, not the wall seconds. Agreement: the API tools' and the log tools' summaries
are compared with ireval's to 1e-9 (pytrec_eval keeps scores as float32: a difference is
reported, not hidden).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / "data"
sys.path.insert(0, str(HERE))

from bench import RUN_ENV, launcher_floor_mib, run_once  # noqa: E402

PY = sys.executable
LOG_MEASURES = ["-m", "gauc", "-m", "auc", "-m", "ndcg_cut.10", "-m", "recip_rank"]
SHAPES = ("dl", "dl50", "startup", "robust04", "msmarco", "api_robust04", "api_msmarco", "log")


@dataclass
class Cmd:
    label: str
    argv: list[str]
    inner: bool = False  # the time to report is the JSON eval_wall / eval_cpu it prints
    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)
    rss: list[float] = field(default_factory=list)
    out: str = ""
    error: str = ""

    def wall(self) -> float:
        return statistics.median(self.walls) if self.walls else float("nan")

    def cpu(self) -> float:
        return statistics.median(self.cpus) if self.cpus else float("nan")

    def peak(self) -> float:
        return max(self.rss) if self.rss else float("nan")


@dataclass
class Shape:
    name: str
    title: str
    cmds: list[Cmd]
    ratios: list[tuple[str, str, str, str]]  # (what, numerator label, denominator label, target)
    rows: int = 0
    notes: list[str] = field(default_factory=list)


def ensure(which: str) -> Path:
    d = DATA / which
    if not (d / "info.json").exists():
        subprocess.run([PY, str(HERE / "generate.py"), "--which", which], check=True)
    return d


def ensure_log(users: int) -> Path:
    d = DATA / f"implog-u{users}-i100"
    if not (d / "single.parquet").exists():
        cmd = [PY, str(HERE / "scale.py"), "gen", "--users", str(users), "--items", "100", "--layouts", "hive,single"]
        subprocess.run(cmd, check=True)
    return d / "single.parquet"


DL50_RUNS = 50


def dl_variants(d: Path, out: Path, count: int = DL50_RUNS) -> list[Path]:
    """``count`` variants of the DL run in ``out``: each line's score moved by a seeded
    Gaussian (sd 0.5), so every run ranks differently and no two outputs are alike."""
    import random

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


def build(args: argparse.Namespace, tmp: str) -> list[Shape]:
    ireval = args.ireval
    te = args.trec_eval
    shapes: list[Shape] = []
    want = set(args.only.split(",")) if args.only else set(SHAPES)
    if "dl" in want:
        d = ensure("dl")
        cmds = [
            Cmd("ireval", [ireval, "-q", "-m", "all_trec", str(d / "qrels.txt"), str(d / "run.txt")]),
            Cmd("import floor", [PY, "-c", "import numpy, pyarrow.csv, pyarrow.compute"]),
        ]
        ratios = [("time", "ireval", "import floor", "<= 1.3")]
        if te:
            cmds.append(Cmd("C trec_eval", [te, "-q", "-m", "all_trec", str(d / "qrels.txt"), str(d / "run.txt")]))
            ratios.append(("time", "ireval", "C trec_eval", ""))
        shapes.append(Shape("dl", "DL size (43 x 1000), `-q -m all_trec`, start-up included", cmds, ratios))
    if "dl50" in want:
        d = ensure("dl")
        runs = [str(p) for p in dl_variants(d, Path(tmp))]
        qrels = str(d / "qrels.txt")
        cmds = [Cmd(f"ireval, {len(runs)} runs", [ireval, "-q", "-m", "all_trec", qrels, *runs])]
        ratios = []
        if te:
            loop = 'q=$1; t=$2; shift 2; for r in "$@"; do "$t" -q -m all_trec "$q" "$r" || exit 1; done'
            cmds.append(Cmd(f"C trec_eval x {len(runs)}", ["sh", "-c", loop, "sh", qrels, te, *runs]))
            ratios = [("time", cmds[0].label, cmds[1].label, "<= 0.5")]
        shapes.append(Shape("dl50", f"{len(runs)} DL-size runs in one call, `-q -m all_trec`", cmds, ratios))
    if "startup" in want:
        cmds = [Cmd("ireval --help", [ireval, "--help"]), Cmd("ireval -v", [ireval, "-v"])]
        shapes.append(Shape("startup", "start-up: `ireval --help`, `ireval -v` (target <= 0.1 s each)", cmds, []))
    if "robust04" in want:
        d = ensure("robust04")
        cmds = [Cmd("ireval", [ireval, "-m", "map", "-m", "ndcg_cut.10", str(d / "qrels.txt"), str(d / "run.txt")])]
        ratios = []
        if te:
            cmds.append(
                Cmd("C trec_eval", [te, "-m", "map", "-m", "ndcg_cut.10", str(d / "qrels.txt"), str(d / "run.txt")])
            )
            ratios = [("time", "ireval", "C trec_eval", "<= 1.0"), ("memory", "ireval", "C trec_eval", "")]
        shapes.append(
            Shape("robust04", "Robust04 size (249 x 1000, 311k qrels), `-m map -m ndcg_cut.10`", cmds, ratios)
        )
    if "msmarco" in want:
        d = ensure("msmarco")
        cmds = [
            Cmd("ireval", [ireval, "-m", "map", "-m", "ndcg_cut.10", str(d / "qrels.txt"), str(d / "run.txt")]),
            Cmd("pyarrow CSV read", [PY, str(HERE / "drivers" / "csv_read.py"), str(d / "run.txt")]),
        ]
        shapes.append(
            Shape(
                "msmarco",
                "7M-line MS MARCO run, `-m map -m ndcg_cut.10`",
                cmds,
                [("time", "ireval", "pyarrow CSV read", "<= 1.2")],
            )
        )
    for c in ("robust04", "msmarco"):
        if f"api_{c}" not in want:
            continue
        d = ensure(c)
        frames = str(HERE / "drivers" / "frames.py")
        files = [str(d / "qrels.txt"), str(d / "run.txt")]
        cmds = [
            Cmd("evaluate(DataFrames)", [PY, frames, "ireval", *files], inner=True),
            Cmd("evaluate(paths)", [PY, frames, "ireval_path", *files], inner=True),
            Cmd("evaluate(object DataFrames)", [PY, frames, "ireval", *files, "--dtype", "object"], inner=True),
        ]
        ratios = [
            ("time", "evaluate(DataFrames)", "evaluate(paths)", "<= 1.5"),
            ("time", "evaluate(object DataFrames)", "evaluate(paths)", "<= 1.5"),
        ]
        if args.ref_python:
            cmds.append(Cmd("pytrec_eval(DataFrames)", [args.ref_python, frames, "pytrec_eval", *files], inner=True))
            ratios = [
                ("time", "evaluate(DataFrames)", "pytrec_eval(DataFrames)", "<= 0.5"),
                ("memory", "evaluate(DataFrames)", "pytrec_eval(DataFrames)", "<= 1.0"),
                *ratios,
            ]
        shapes.append(Shape(f"api_{c}", f"Python API on DataFrames, {c} (`map`, `ndcg_cut.10`)", cmds, ratios))
    if "log" in want:
        single = ensure_log(args.log_users)
        cmds = [
            Cmd("ireval --labelled", [ireval, *LOG_MEASURES, "--format", "json", "--labelled", str(single)]),
            Cmd("pyarrow+numpy script", [PY, str(HERE / "log_baseline.py"), str(single)]),
        ]
        shape = Shape(
            "log",
            f"impression log, one Parquet file, {args.log_users:,} users x 100, `-m gauc -m auc -m ndcg_cut.10 -m recip_rank`",
            cmds,
            [
                ("time", "ireval --labelled", "pyarrow+numpy script", "< 1"),
                ("memory", "ireval --labelled", "pyarrow+numpy script", ""),
            ],
        )
        shape.rows = args.log_users * 100
        code = "import pyarrow.parquet as pq, sys; print(pq.read_table(sys.argv[1]).nbytes)"
        r = subprocess.run([PY, "-c", code, str(single)], capture_output=True, text=True, check=True)
        shape.notes.append(f"arrow_bytes={int(r.stdout)}")
        shapes.append(shape)
    return shapes


def measure(shapes: list[Shape], reps: int, warmup: int, tmp: str) -> None:
    for shape in shapes:
        for i in range(warmup + reps):
            k = i % len(shape.cmds)
            for cmd in shape.cmds[k:] + shape.cmds[:k]:
                if cmd.error:
                    continue
                path = os.path.join(tmp, f"{shape.name}-{cmd.label}.out".replace(" ", "_").replace("/", "_"))
                s = run_once(cmd.argv, path, 3600.0, env=RUN_ENV)
                if s.rc != 0 or s.timed_out:
                    err = Path(path + ".err").read_text(errors="replace").strip().splitlines()
                    cmd.error = "timeout" if s.timed_out else f"exit {s.rc}: {err[-1] if err else ''}"
                    continue
                cmd.out = Path(path).read_text(errors="replace")
                wall, cpu = s.wall, s.cpu
                if cmd.inner:
                    got = json.loads(cmd.out.strip().splitlines()[-1])
                    wall, cpu = got["eval_wall"], got["eval_cpu"]
                tag = "warm-up" if i < warmup else "timed"
                print(
                    f"  {shape.name:<13} {cmd.label:<28} {wall:8.3f} s  cpu {cpu:8.3f} s  rss {s.rss_mib:8.1f} MiB ({tag})",
                    file=sys.stderr,
                    flush=True,
                )
                if i >= warmup:
                    cmd.walls.append(wall)
                    cmd.cpus.append(cpu)
                    cmd.rss.append(s.rss_mib)


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


def agreement(shape: Shape) -> list[str]:
    ref = _summary(shape.cmds[0])
    notes = []
    for cmd in shape.cmds[1:]:
        got = _summary(cmd)
        if not got or not ref:
            continue
        common = sorted(ref.keys() & got.keys())
        worst = max((abs(ref[k] - got[k]) for k in common), default=float("nan"))
        verdict = "agree" if worst <= 1e-9 else "DIFFER"
        notes.append(
            f"{cmd.label} vs {shape.cmds[0].label}: {', '.join(common)} {verdict} (largest difference {worst:.1e})"
        )
    return notes


def render(shapes: list[Shape], args: argparse.Namespace, load: tuple[str, str]) -> str:
    out = [
        "## Issue 22 shapes (`benchmarks/shapes.py`)",
        "",
        f"Median of {args.reps} interleaved runs after {args.warmup} warm-up; load average (1/5/15 min) before "
        f"{load[0]}, after {load[1]}. Wall and CPU (user+sys) in seconds, peak RSS in MiB; for the API "
        "shapes the time is the evaluation's own, measured in the process (drivers/frames.py). Every "
        f"command is started by a small launcher (bench.LAUNCHER), whose {launcher_floor_mib():.0f} MiB are "
        "the floor under every peak RSS (a child of this benchmark itself inherited its 65+ MiB).",
        "",
        "| shape | command | wall (s) | CPU (s) | peak RSS (MiB) |",
        "|---|---|---:|---:|---:|",
    ]
    for shape in shapes:
        for cmd in shape.cmds:
            if cmd.error:
                out.append(f"| {shape.name} | {cmd.label} | {cmd.error} | | |")
            else:
                out.append(f"| {shape.name} | {cmd.label} | {cmd.wall():.3f} | {cmd.cpu():.3f} | {cmd.peak():.0f} |")
    out += ["", "| shape | ratio | wall | CPU | target |", "|---|---|---:|---:|---|"]
    for shape in shapes:
        by = {c.label: c for c in shape.cmds}
        for what, num, den, target in shape.ratios:
            a, b = by[num], by[den]
            if a.error or b.error:
                continue
            if what == "memory":
                out.append(f"| {shape.name} | memory {num} / {den} | {a.peak() / b.peak():.2f} | | {target} |")
            else:
                out.append(
                    f"| {shape.name} | {num} / {den} | {a.wall() / b.wall():.2f} | {a.cpu() / b.cpu():.2f} | {target} |"
                )
        if shape.rows:
            c = shape.cmds[0]
            arrow = next((int(n.split("=")[1]) for n in shape.notes if n.startswith("arrow_bytes=")), 0)
            out.append(
                f"| {shape.name} | rows/s, {c.label} | {shape.rows / c.wall():,.0f} | {shape.rows / c.cpu():,.0f} | >= 3,000,000 |"
            )
            if arrow:
                out.append(
                    f"| {shape.name} | memory {c.label} / Arrow table ({arrow / 2**20:,.0f} MiB) | {c.peak() * 2**20 / arrow:.2f} | | <= 2 |"
                )
    notes = [n for s in shapes for n in agreement(s)]
    missing = [f"{s.name}: {c.label}: {c.error}" for s in shapes for c in s.cmds if c.error]
    if notes or missing:
        out += ["", *(f"- {n}" for n in notes + missing)]
    out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--only", default="", help="comma list of " + ", ".join(SHAPES))
    ap.add_argument("--ireval", default=str(ROOT / ".venv" / "bin" / "ireval"))
    fetched = HERE / "bin" / "trec_eval"
    ap.add_argument(
        "--trec-eval", dest="trec_eval", default=str(fetched) if fetched.exists() else shutil.which("trec_eval")
    )
    ref = HERE / ".venv-ref" / "bin" / "python"
    ap.add_argument("--ref-python", default=str(ref) if ref.exists() else None, help="python with pytrec_eval")
    ap.add_argument("--log-users", type=int, default=50_000, help="impression log users (x 100 rows; 500000: 50M rows)")
    args = ap.parse_args(argv)
    tmp = tempfile.mkdtemp(prefix="ireval-shapes-")
    before = "/".join(f"{x:.2f}" for x in os.getloadavg())
    try:
        shapes = build(args, tmp)
        measure(shapes, args.reps, args.warmup, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    after = "/".join(f"{x:.2f}" for x in os.getloadavg())
    if not args.trec_eval:
        print("shapes: no C trec_eval (--trec-eval PATH): dl and robust04 without it", file=sys.stderr)
    sys.stdout.write(render(shapes, args, (before, after)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
