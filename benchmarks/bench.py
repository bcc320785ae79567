"""Time ireval against C trec_eval, pytrec_eval, ir_measures and ranx, and check they agree.

Every tool runs as its own process, the way a user runs it. For each
(workload, collection) the tools are run in turn, and the whole round is
repeated ``--reps`` times (interleaved, so drift in the machine's state hits
every tool alike; the tool order rotates each round). Before the timed rounds
each command runs ``--warmup`` times (page cache, ranx's numba cache); the
first of those is reported as "first run".

Measured per run, for the child process only (``os.wait4``):
  wall   time.perf_counter() from spawn to reaping
  CPU    user + sys of the child (its ru_utime + ru_stime)
  RSS    the child's peak resident set (ru_maxrss)

Agreement: each tool's summary ``map`` and ``ndcg_cut_10`` are compared with
ireval's full-precision JSON output to 1e-9. When pytrec_eval or ir_measures
differ, they are compared with ``ireval --compat 9.0.8`` (trec_eval 9.0.8 keeps
scores as float32, so scores equal in float32 tie); agreement there is
reported as such. C trec_eval's stdout is compared with ireval's: byte for
byte, else every (measure, topic) value both print, with ireval's output and
then with ``ireval --compat 9.0.8``'s (the C binary ``make
benchmarks/bin/trec_eval`` fetches is trec_eval 9.0.4, see
drivers/fetch_trec_eval.py).

    python benchmarks/bench.py                                   # everything, full size
    python benchmarks/bench.py --scale 0.25 --reps 5 --write     # RESULTS.md
    python benchmarks/bench.py --collections msmarco --tools ireval --reps 3
"""

from __future__ import annotations

import argparse
import filecmp
import hashlib
import json
import math
import os
import platform
import re
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
sys.path.insert(0, str(HERE))

import generate  # noqa: E402
from drivers import fetch_trec_eval  # noqa: E402

TOOLS = ("ireval", "ireval_stream", "trec_eval", "pytrec_eval", "ir_measures", "ranx")
COLLECTIONS = tuple(generate.SPECS)
WORKLOADS = {
    "map_ndcg": ["-m", "map", "-m", "ndcg_cut.10"],
    "all_trec_q": ["-m", "all_trec", "-q"],
    "help": ["--help"],
}
WORKLOAD_TITLE = {"map_ndcg": "-m map -m ndcg_cut.10", "all_trec_q": "-m all_trec -q", "help": "--help (start-up)"}
CHECKED = ("map", "ndcg_cut_10")
REF_DISTS = ["pytrec-eval-terrier", "pytrec-eval", "ir-measures", "ranx", "numba", "numpy"]
TOL = 1e-9


# --------------------------------------------------------------------------
# processes


@dataclass
class Sample:
    wall: float
    cpu: float
    rss_mib: float
    rc: int
    timed_out: bool = False
    sys: float = 0.0  # the kernel's part of ``cpu`` (page faults, copies from the page cache)


# Every tool runs with Python allowed to cache bytecode, as an installed package has it
# (pip compiles at install). With PYTHONDONTWRITEBYTECODE set, as in some containers,
# an editable ireval would recompile its sources on every run (~45 ms).
RUN_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


# Each command is started by a small launcher process, not by this one. A process's peak RSS
# (wait4's ru_maxrss) counts the memory of the process image it replaced at exec: a child
# forked (or vforked) from this benchmark, 65+ MiB once pandas is loaded, reported C
# trec_eval's 7-35 MiB as 65 MiB. The launcher (python -S -I, nothing imported) forks and
# execs the command, reaps it with wait4 and reports wall, CPU (and the kernel's part of it)
# and peak RSS; its own few MiB (LAUNCHER_FLOOR_MIB, measured once) are the floor under every
# figure.
LAUNCHER = r"""
import os, signal, sys, time
out = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
err = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
timeout, cmd = float(sys.argv[3]), sys.argv[4:]
t0 = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.dup2(out, 1)
    os.dup2(err, 2)
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    try:
        os.execvp(cmd[0], cmd)
    finally:
        os._exit(127)
killed = []
def on_alarm(*_):
    killed.append(1)
    os.kill(pid, signal.SIGKILL)
signal.signal(signal.SIGALRM, on_alarm)
signal.setitimer(signal.ITIMER_REAL, timeout)
_, status, ru = os.wait4(pid, 0)
wall = time.perf_counter() - t0
print(wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss, os.waitstatus_to_exitcode(status), len(killed), ru.ru_stime)
"""


def run_once(cmd: list[str], stdout_path: str, timeout: float, env: dict | None = None) -> Sample:
    """Run ``cmd`` through the launcher (see LAUNCHER) and return what it cost."""
    launcher = [sys.executable, "-S", "-I", "-c", LAUNCHER, stdout_path, stdout_path + ".err", str(timeout)]
    done = subprocess.run([*launcher, *cmd], capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0 or not done.stdout.strip():
        raise RuntimeError(f"launcher failed for {cmd}: {done.stderr.strip()}")
    wall, cpu, rss_kib, rc, killed, sys_cpu = done.stdout.split()
    return Sample(
        wall=float(wall),
        cpu=float(cpu),
        rss_mib=int(rss_kib) / 1024.0,
        rc=int(rc),
        timed_out=killed != "0",
        sys=float(sys_cpu),
    )


def launcher_floor_mib() -> float:
    """The launcher's own peak RSS: no figure measured through it can be below this."""
    return run_once(["true"], os.devnull, 60.0).rss_mib


# --------------------------------------------------------------------------
# the generated sections of RESULTS.md and SCALE_RESULTS.md

# the order of the generated sections in a file: a missing one goes after the one before it
SECTIONS = ("bench", "shapes", "scale shapes")


def _markers(name: str) -> tuple[str, str]:
    return (
        f"<!-- generated: {name}: begin (make bench / benchmarks/README.md; replaced at each --write) -->",
        f"<!-- generated: {name}: end -->",
    )


def _without_legacy(text: str) -> str:
    """RESULTS.md as bench.py wrote it whole before the sections (its title, ``Command:``,
    ``## Machine``, ``## Collections``, ``## Results`` and their notes, then the hand-written
    sections): that first block goes, the title and the rest stay. Anything else: unchanged."""
    title = "# ireval benchmark results\n"
    if not text.startswith(title + "\nCommand: `python benchmarks/bench.py"):
        return text
    own = ("## Machine", "## Collections", "## Results")
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines[1:], 1):
        if line.startswith("## ") and not line.startswith(own):
            return title + "\n" + "".join(lines[i:])
    return title


def write_section(path: Path, name: str, text: str) -> None:
    """Replace the section ``name`` of ``path`` (between its markers) by ``text``; the rest of
    the file stays as it is. A file without that section gets it after the generated section
    before it in SECTIONS, else after its title (a first line ``# ...``), else at its top."""
    begin, end = _markers(name)
    block = f"{begin}\n\n{text.strip()}\n\n{end}\n"
    old = path.read_text() if path.exists() else ""
    if name == "bench" and begin not in old:
        old = _without_legacy(old)
    if begin in old and end in old[old.index(begin) :]:
        head, _, rest = old.partition(begin)
        tail = rest.partition(end)[2].lstrip("\n")
    else:
        at = 0
        for prev in reversed(SECTIONS[: SECTIONS.index(name)] if name in SECTIONS else ()):
            mark = _markers(prev)[1]
            if mark in old:
                at = old.index(mark) + len(mark)
                break
        else:
            if old.startswith("# "):
                at = old.find("\n") if "\n" in old else len(old)
        head, tail = old[:at].rstrip("\n"), old[at:].lstrip("\n")
        head += "\n\n" if head else ""
    new = head + block + ("\n" + tail if tail else "")
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(new)
    tmp.replace(path)


# --------------------------------------------------------------------------
# tools


@dataclass
class Tool:
    name: str
    argv: list[str]  # command prefix
    version: str
    note: str = ""  # trec_eval: its release number, e.g. "9.0.4"

    def command(self, workload: str, qrels: Path, run: Path) -> list[str] | None:
        if workload == "help":
            if self.name == "ireval":  # not ireval_stream: the same start-up
                return [*self.argv, "--help"]
            if self.name == "trec_eval":
                return [*self.argv, "-h"]
            return None
        return [*self.argv, *WORKLOADS[workload], str(qrels), str(run)]


def trec_eval_tool(exe: str) -> Tool:
    """C trec_eval at ``exe``, with its version and where it came from."""
    r = subprocess.run([exe, "-v"], check=False, capture_output=True, text=True)
    first = ((r.stderr or r.stdout).strip().splitlines() or ["trec_eval (no version)"])[0]
    m = re.search(r"version\s+(\S+)", first)
    release = m.group(1) if m else "?"
    with open(exe, "rb") as fh:
        digest = hashlib.sha256(fh.read()).hexdigest()
    if digest == fetch_trec_eval.BINARY_SHA256:
        origin = f"C, from {fetch_trec_eval.PYSERINI.replace('==', ' ')}'s Anserini jar"
    else:
        origin = f"C, {exe}"
    return Tool("trec_eval", [exe], f"trec_eval {release} ({origin})", note=release)


def _ref_version(python: str, module: str, dist: str) -> str | None:
    """The version of ``dist`` if ``python`` can import ``module``."""
    code = f"import importlib.metadata as m, {module}; print(m.version({dist!r}))"
    try:
        r = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return r.stdout.strip() if r.returncode == 0 else None


def find_tools(args: argparse.Namespace) -> tuple[list[Tool], list[str]]:
    """The tools that can run here, and a note for each one that cannot."""
    tools: list[Tool] = []
    missing: list[str] = []
    want = args.tools
    if "ireval" in want:
        exe = args.ireval
        r = subprocess.run([exe, "--version"], capture_output=True, text=True)
        tools.append(Tool("ireval", [exe], (r.stdout or r.stderr).strip()))
    if "ireval_stream" in want:
        exe = args.ireval
        h = subprocess.run([exe, "--help"], capture_output=True, text=True).stdout
        if "--stream" in h:
            r = subprocess.run([exe, "--version"], capture_output=True, text=True)
            tools.append(Tool("ireval_stream", [exe, "--stream"], (r.stdout or r.stderr).strip() + " --stream"))
        else:
            missing.append("ireval_stream: this ireval has no --stream option")
    if "trec_eval" in want:
        fetched = HERE / "bin" / "trec_eval"
        exe = args.trec_eval or shutil.which("trec_eval") or (str(fetched) if fetched.exists() else None)
        if exe:
            tools.append(trec_eval_tool(exe))
        else:
            missing.append(
                "trec_eval: not on PATH, no --trec-eval given and no benchmarks/bin/trec_eval "
                "(`make benchmarks/bin/trec_eval` fetches one)"
            )
    py = args.ref_python
    for name, dist in (("pytrec_eval", "pytrec-eval-terrier"), ("ir_measures", "ir-measures"), ("ranx", "ranx")):
        if name not in want:
            continue
        v = _ref_version(py, name, dist) if py else None
        if v is None and name == "pytrec_eval":
            v = _ref_version(py, name, "pytrec-eval") if py else None
        if v is None:
            missing.append(f"{name}: not importable by {py}")
            continue
        tools.append(Tool(name, [py, str(HERE / "drivers" / f"run_{name}.py")], f"{name} {v}"))
    return tools, missing


# --------------------------------------------------------------------------
# agreement


def parse_summary(path: str) -> dict[str, float]:
    """``label<ws>all<ws>value`` lines of a trec-format (or driver) output."""
    out: dict[str, float] = {}
    with open(path, "rb") as fh:
        for line in fh:
            parts = line.split()
            if len(parts) == 3 and parts[1] == b"all":
                lab = parts[0].decode()
                if lab in CHECKED:
                    try:
                        out[lab] = float(parts[2])
                    except ValueError:
                        pass
    return out


def ireval_reference(ireval: str, workload: str, qrels: Path, run: Path, compat: str | None) -> dict[str, float] | None:
    """ireval's full-precision summary (JSON) for the checked measures."""
    cmd = [ireval, "-m", "map", "-m", "ndcg_cut.10", "--format", "json", str(qrels), str(run)]
    if compat:
        cmd[1:1] = ["--compat", compat]
    r = subprocess.run(cmd, capture_output=True)
    if r.returncode != 0:
        return None
    return {k: float(v) for k, v in json.loads(r.stdout)["summary"].items() if k in CHECKED}


def compare(got: dict[str, float], ref: dict[str, float] | None) -> tuple[bool, float]:
    if ref is None or not got:
        return False, float("nan")
    worst = 0.0
    for k in CHECKED:
        if k not in got or k not in ref:
            return False, float("nan")
        worst = max(worst, abs(got[k] - ref[k]))
    return worst <= TOL, worst


# --------------------------------------------------------------------------
# the run


@dataclass
class Cell:
    workload: str
    collection: str
    tool: str
    samples: list[Sample] = field(default_factory=list)
    first: Sample | None = None
    agree: str = ""
    error: str = ""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--collections", default=",".join(COLLECTIONS), help="comma list (default: all)")
    ap.add_argument("--workloads", default=",".join(WORKLOADS), help="comma list of " + ", ".join(WORKLOADS))
    ap.add_argument("--tools", default=",".join(TOOLS), help="comma list (default: every one available)")
    ap.add_argument(
        "--scale",
        default="1",
        help="fraction of each collection's queries: one number, or NAME=F,... (others full size)",
    )
    ap.add_argument("--seed", type=int, default=generate.DEFAULT_SEED)
    ap.add_argument("--reps", type=int, default=3, help="timed repetitions (default 3)")
    ap.add_argument("--warmup", type=int, default=1, help="untimed runs first (default 1)")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per run")
    ap.add_argument(
        "--slow",
        type=float,
        default=120.0,
        help="a cell whose first run takes longer than this many seconds is not run again: that run is "
        "its one sample (C trec_eval 10.0 on big takes many minutes; default 120)",
    )
    ap.add_argument(
        "--quick",
        action="store_true",
        help="check the harness in a few minutes: " + QUICK_TEXT + "; shapes.py --quick; writes nothing",
    )
    ap.add_argument("--estimate", action="store_true", help="print the estimated duration (idle machine) and stop")
    ap.add_argument("--ireval", default=str(ROOT / ".venv" / "bin" / "ireval"))
    ap.add_argument("--trec-eval", dest="trec_eval", help="path of a C trec_eval binary")
    default_ref = HERE / ".venv-ref" / "bin" / "python"
    ap.add_argument(
        "--ref-python",
        default=str(default_ref) if default_ref.exists() else sys.executable,
        help="python with pytrec_eval / ir_measures / ranx (default benchmarks/.venv-ref)",
    )
    ap.add_argument("--no-check", action="store_true", help="skip the agreement check")
    ap.add_argument(
        "--shapes",
        action="store_true",
        help="also run benchmarks/shapes.py (issue 22's five shapes and their ratios) and add its table",
    )
    ap.add_argument("--shapes-args", default="", help="more arguments for shapes.py, e.g. '--skip big,log50'")
    ap.add_argument(
        "--write",
        action="store_true",
        help="replace the generated sections of benchmarks/RESULTS.md (and with --shapes, SCALE_RESULTS.md)",
    )
    ap.add_argument("--note", action="append", default=[], help="a line for the report's notes (repeatable)")
    ap.add_argument(
        "--results", default=str(HERE / "RESULTS.md"), help="where --write writes (default benchmarks/RESULTS.md)"
    )
    ap.add_argument("--scale-results", default=str(HERE / "SCALE_RESULTS.md"), help="where shapes.py writes big, log50")
    args = ap.parse_args(argv)
    given = {a.split("=")[0] for a in (argv if argv is not None else sys.argv[1:])}
    if args.quick:
        for key, value in QUICK.items():
            if "--" + key not in given:
                setattr(args, key, value)
    args.tools = [t for t in args.tools.split(",") if t]
    for t in args.tools:
        if t not in TOOLS:
            ap.error(f"--tools: unknown tool {t!r} (known: {', '.join(TOOLS)})")
    collections = [c for c in args.collections.split(",") if c]
    for c in collections:
        if c not in COLLECTIONS:
            ap.error(f"--collections: unknown collection {c!r}")
    workloads = [w for w in args.workloads.split(",") if w]
    for w in workloads:
        if w not in WORKLOADS:
            ap.error(f"--workloads: unknown workload {w!r}")

    try:
        args.scales = parse_scale(args.scale, collections)
    except ValueError as exc:
        ap.error(f"--scale: {exc}")

    tools, missing = find_tools(args)
    for m in missing:
        print(f"bench: skipping {m}", file=sys.stderr)
    by_name = {t.name: t for t in tools}
    baseline = "trec_eval" if "trec_eval" in by_name else "pytrec_eval" if "pytrec_eval" in by_name else None

    # generate in a child process: the children's ru_maxrss starts from this
    # process's own peak (Linux carries it across fork and exec), so keep it small
    data = {}
    for c in collections if set(workloads) - {"help"} else []:
        d = generate.data_dir(c, args.scales[c], args.seed)
        if not (d / "info.json").exists():
            subprocess.run(
                [
                    sys.executable,
                    str(HERE / "generate.py"),
                    "--which",
                    c,
                    "--scale",
                    str(args.scales[c]),
                    "--seed",
                    str(args.seed),
                ],
                check=True,
            )
        data[c] = d
    args.load_before = os.getloadavg()
    args.source_before = _source_digest()
    infos = {c: json.loads((d / "info.json").read_text()) for c, d in data.items()}

    jobs: list[tuple[str, str, Tool, list[str]]] = []
    for w in workloads:
        for c in ["-"] if w == "help" else collections:
            for t in tools:
                where = data.get(c)
                cmd = t.command(w, where / "qrels.txt" if where else Path(), where / "run.txt" if where else Path())
                if cmd is not None:
                    jobs.append((w, c, t, cmd))
    cells = {(w, c, t.name): Cell(w, c, t.name) for w, c, t, _ in jobs}
    tmp = tempfile.mkdtemp(prefix="ireval-bench-")
    out_path = {key: os.path.join(tmp, "-".join(key).replace("/", "_") + ".out") for key in cells}
    t_start = time.time()

    def do(job: tuple[str, str, Tool, list[str]], timed: bool, first: bool) -> None:
        w, c, t, cmd = job
        cell = cells[(w, c, t.name)]
        if cell.error:
            return
        s = run_once(cmd, out_path[(w, c, t.name)], args.timeout, env=RUN_ENV)
        if s.timed_out or s.rc != 0:
            err = Path(out_path[(w, c, t.name)] + ".err").read_text(errors="replace").strip().splitlines()
            cell.error = "timeout" if s.timed_out else f"exit {s.rc}: {err[-1] if err else ''}"
            print(f"bench: {t.name} {w} {c}: {cell.error}", file=sys.stderr)
            return
        if first:
            cell.first = s
        if timed or (first and s.wall > args.slow):
            cell.samples.append(s)  # a slow first run is the cell's one sample (--slow)
        print(
            f"  {w:<10} {c:<9} {t.name:<12} {s.wall:8.3f} s  cpu {s.cpu:8.3f} s  rss {s.rss_mib:8.1f} MiB"
            + ("" if timed else "  (warm-up)"),
            file=sys.stderr,
            flush=True,
        )

    # group the jobs by (workload, collection): each round runs every tool once
    groups: dict[tuple[str, str], list] = {}
    for job in jobs:
        groups.setdefault((job[0], job[1]), []).append(job)
    shapes_cmd = shapes_command(args) if args.shapes else []
    expected = estimate(jobs, infos, args)
    shapes_expected = 0.0
    if shapes_cmd:
        est = subprocess.run([*shapes_cmd, "--estimate"], capture_output=True, text=True, check=True)
        shapes_expected = float(est.stdout.split()[-1])
    print(
        f"bench: {len(jobs)} commands x {args.warmup} + {args.reps} runs: about {expected / 60:.0f} min"
        + (f", then shapes.py about {shapes_expected / 60:.0f} min" if shapes_cmd else "")
        + " on an idle machine (a loaded one takes longer)",
        file=sys.stderr,
        flush=True,
    )
    if args.estimate:
        print(f"{expected + shapes_expected:.0f}")
        return 0
    for group in groups.values():
        for i in range(args.warmup):
            for job in group:
                if i and cells[(job[0], job[1], job[2].name)].samples:
                    continue  # --slow: one run is enough
                do(job, timed=False, first=i == 0)
        for r in range(args.reps):
            k = r % len(group)
            for job in group[k:] + group[:k]:
                cell = cells[(job[0], job[1], job[2].name)]
                if cell.samples and cell.samples[0].wall > args.slow:
                    continue  # --slow: one run is enough
                do(job, timed=True, first=args.warmup == 0 and r == 0)

    import resource

    args.load_after = os.getloadavg()
    args.source_changed = _source_digest() != args.source_before
    if args.source_changed:
        print("bench: WARNING: ireval's source changed while the benchmark ran", file=sys.stderr)
    args.rss_floor = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # before the check reads outputs
    if not args.no_check:
        check(cells, out_path, by_name, data, args, tmp)

    elapsed = time.time() - t_start
    args.elapsed_text = f"total {elapsed / 60:.1f} min (estimated {expected / 60:.0f} min)"
    report = render(cells, tools, missing, baseline, infos, args, elapsed)
    sys.stdout.write(report)
    sys.stdout.flush()
    write = args.write and not args.quick
    if args.write and args.quick:
        print("bench: --quick: RESULTS.md not written (scaled-down data)", file=sys.stderr)
    if write:
        write_section(Path(args.results), "bench", report)
        print(f"bench: wrote the 'bench' section of {args.results}", file=sys.stderr)
    shutil.rmtree(tmp, ignore_errors=True)
    if shapes_cmd:
        sys.stdout.write("\n")
        sys.stdout.flush()
        done = subprocess.run([*shapes_cmd, *(["--write"] if write else [])], check=False)
        if done.returncode != 0:
            print(f"bench: shapes.py failed (exit {done.returncode})", file=sys.stderr)
            return done.returncode
    print(f"bench: everything took {(time.time() - t_start) / 60:.1f} min", file=sys.stderr)
    return 0


def shapes_command(args: argparse.Namespace) -> list[str]:
    """shapes.py with this run's repetitions, references, --quick and result files."""
    cmd = [sys.executable, str(HERE / "shapes.py"), "--reps", str(args.reps), "--warmup", str(args.warmup)]
    cmd += ["--results", args.results, "--scale-results", args.scale_results]
    if args.ref_python and args.ref_python != sys.executable:
        cmd += ["--ref-python", args.ref_python]
    if args.trec_eval:
        cmd += ["--trec-eval", args.trec_eval]
    if args.quick:
        cmd.append("--quick")
    return cmd + shlex.split(args.shapes_args)


# rough idle seconds per run: a start-up, plus seconds per million run lines (by tool; C
# trec_eval 10.0 compares every run topic with every qrels topic: seconds per (1000 topics)^2)
RATE = {
    "ireval": (0.3, 0.35),
    "ireval_stream": (0.3, 0.4),
    "trec_eval": (0.01, 1.5),
    "pytrec_eval": (0.3, 1.5),
    "ir_measures": (1.0, 3.0),
    "ranx": (15.0, 3.0),  # numba compiles ranx's functions in each process
}
TE10_PER_KTOPIC2 = 0.028  # 10.0-rc3 on big (100k topics): 285 s CPU
ALL_TREC = {"ireval": 1.5, "ireval_stream": 1.5, "trec_eval": 1.1, "pytrec_eval": 3.0, "ir_measures": 2.0, "ranx": 2.0}


def estimate(jobs: list, infos: dict, args: argparse.Namespace) -> float:
    """About how many seconds the jobs take on an idle machine (a rough model, see RATE)."""
    total = 0.0
    for w, c, t, _ in jobs:
        start, per_m = RATE.get(t.name, (0.5, 2.0))
        if w == "help":
            total += (args.warmup + args.reps) * start
            continue
        lines, topics = infos[c]["run_lines"] / 1e6, infos[c]["queries"] / 1e3
        sec = start + per_m * lines * (ALL_TREC.get(t.name, 1.0) if w == "all_trec_q" else 1.0)
        if t.name == "trec_eval" and t.note.startswith("10"):
            sec += TE10_PER_KTOPIC2 * topics * topics
        runs = 1 if sec > args.slow else args.warmup + args.reps
        total += runs * sec
    return total


# --quick: every tool once on the DL collection (ranx alone takes 10-60 s a run: numba compiles
# its functions in every process), then shapes.py --quick
QUICK = {"collections": "dl", "reps": 1, "warmup": 0}
QUICK_TEXT = "--collections dl --reps 1 --warmup 0"


def parse_scale(text: str, collections: list[str]) -> dict[str, float]:
    """``0.25`` (every collection) or ``msmarco=0.25,big=0.1`` (the rest at 1)."""
    if "=" not in text:
        v = float(text)
        if not 0 < v <= 10:
            raise ValueError("must be in (0, 10]")
        return {c: v for c in collections}
    out = {c: 1.0 for c in collections}
    for item in text.split(","):
        name, _, val = item.partition("=")
        if name not in generate.SPECS:
            raise ValueError(f"unknown collection {name!r}")
        out[name] = float(val)
        if not 0 < out[name] <= 10:
            raise ValueError("must be in (0, 10]")
    return out


def parse_values(path: str) -> dict[tuple[bytes, bytes], bytes]:
    """Every ``measure<ws>qid<ws>value`` line of a trec_eval-format output, as printed."""
    out: dict[tuple[bytes, bytes], bytes] = {}
    with open(path, "rb") as fh:
        for line in fh:
            parts = line.split()
            if len(parts) == 3:
                out[(parts[0], parts[1])] = parts[2]
    return out


def _roots(keys) -> str:
    """``iprec_at_recall_0.10, P_5, 11pt_avg`` -> ``11pt_avg, P, iprec_at_recall``."""
    return ", ".join(sorted({re.sub(r"_[0-9.]+$", "", k[0].decode()) for k in keys}))


def compare_values(got: dict, ref: dict) -> tuple[int, list, list]:
    """Values of the (measure, topic) pairs both have: how many, and which differ; pairs only in ``ref``."""
    common = got.keys() & ref.keys()
    differ = [k for k in common if got[k] != ref[k]]
    return len(common), differ, [k for k in ref.keys() - got.keys()]


def check(cells: dict, out_path: dict, by_name: dict, data: dict, args: argparse.Namespace, tmp: str = "") -> None:
    refs: dict[tuple[str, str | None], dict | None] = {}
    args.check_notes = []

    def ireval_out(w: str, c: str, compat: str | None) -> str | None:
        """ireval's trec-format output for the cell: the timed run's file, else a fresh run."""
        if compat is None and (w, c, "ireval") in cells and not cells[(w, c, "ireval")].error:
            return out_path[(w, c, "ireval")]
        path = os.path.join(tmp or tempfile.gettempdir(), f"check-{w}-{c}-{compat or 'plain'}.out")
        cmd = [args.ireval, *(["--compat", compat] if compat else []), *WORKLOADS[w]]
        cmd += [str(data[c] / "qrels.txt"), str(data[c] / "run.txt")]
        with open(path, "wb") as out:
            r = subprocess.run(cmd, check=False, stdout=out, stderr=subprocess.DEVNULL)
        return path if r.returncode == 0 else None

    def check_trec_eval(w: str, c: str, path: str) -> str:
        plain = ireval_out(w, c, None)
        if plain is None:
            return "ireval failed"
        if filecmp.cmp(path, plain, shallow=False):
            return "byte-identical"
        got = parse_values(path)
        n, differ, only_ireval = compare_values(got, parse_values(plain))
        extra = f"; ireval 10.0 alone prints {_roots(only_ireval)}" if only_ireval else ""
        if not differ:
            args.check_notes.append(f"{w} {c}: C trec_eval and ireval agree on all {n:,} values both print{extra}.")
            return f"yes, all {n:,} shared values"
        detail = f"{len(differ):,} of {n:,} values differ from ireval's 10.0 ({_roots(differ)}){extra}"
        old = ireval_out(w, c, "9.0.8")
        if old is not None:
            if filecmp.cmp(path, old, shallow=False):
                args.check_notes.append(f"{w} {c}: byte-identical to `ireval --compat 9.0.8`; {detail}.")
                return "byte-identical to --compat 9.0.8"
            n9, differ9, _ = compare_values(got, parse_values(old))
            if not differ9:
                args.check_notes.append(f"{w} {c}: all {n9:,} shared values as `ireval --compat 9.0.8`; {detail}.")
                return "yes, as 9.0.8"
            detail += f"; {len(differ9):,} of {n9:,} differ from --compat 9.0.8's ({_roots(differ9)})"
        args.check_notes.append(f"{w} {c}: {detail}.")
        return f"DIFFERS: {len(differ):,} of {n:,} values"

    def ref(c: str, compat: str | None) -> dict | None:
        if (c, compat) not in refs:
            refs[(c, compat)] = ireval_reference(
                args.ireval, "map_ndcg", data[c] / "qrels.txt", data[c] / "run.txt", compat
            )
        return refs[(c, compat)]

    for (w, c, t), cell in cells.items():
        if w == "help" or cell.error or not cell.samples:
            continue
        path = out_path[(w, c, t)]
        if t == "trec_eval":
            cell.agree = check_trec_eval(w, c, path)
            continue
        if t == "ireval_stream" and (w, c, "ireval") in cells:
            same = filecmp.cmp(path, out_path[(w, c, "ireval")], shallow=False)
            cell.agree = "byte-identical to ireval" if same else "OUTPUT DIFFERS from ireval"
            continue
        if t == "ireval":
            got = parse_summary(path)
            r = ref(c, None)
            ok = r is not None and all(abs(got.get(k, float("nan")) - r[k]) <= 5e-5 for k in CHECKED)
            cell.agree = "reference" if ok else "trec output != json"
            continue
        got = parse_summary(path)
        ok, diff = compare(got, ref(c, None))
        if ok:
            cell.agree = "yes"
            continue
        if t in ("pytrec_eval", "ir_measures"):
            ok9, _ = compare(got, ref(c, "9.0.8"))
            if ok9:
                cell.agree = "yes, as 9.0.8 (float32 ties)"
                continue
        cell.agree = f"differs by {diff:.1e}" if not math.isnan(diff) else "no summary"
        if t == "ranx":
            cell.agree += " (tie order)"


# --------------------------------------------------------------------------
# report


def _fmt_t(x: float) -> str:
    return f"{x:.3f}" if x < 10 else f"{x:.2f}" if x < 100 else f"{x:.1f}"


def machine() -> dict[str, str]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "unknown"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 2**20:.1f} GiB"
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": str(os.cpu_count()),
        "ram": mem,
        "os": platform.platform(),
        "python": platform.python_version(),
    }


def _versions(python: str, dists: list[str]) -> str:
    code = (
        "import importlib.metadata as m\nfor d in %r:\n    try: print(d, m.version(d))\n"
        "    except Exception: pass" % (dists,)
    )
    try:
        r = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60)
        return ", ".join(r.stdout.split("\n")).strip(", ")
    except (OSError, subprocess.TimeoutExpired):
        return "?"


def _source_digest() -> str:
    """A digest of ireval's source files, to notice an edit in the middle of a run."""
    import hashlib

    h = hashlib.sha256()
    for p in sorted((ROOT / "irevalcli").rglob("*.py")):
        h.update(str(p.relative_to(ROOT)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:12]


def _git() -> str:
    try:
        head = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True
        ).stdout.strip()
        return head + (" (with uncommitted changes)" if dirty else "")
    except OSError:
        return "?"


def render(
    cells: dict,
    tools: list[Tool],
    missing: list[str],
    baseline: str | None,
    infos: dict,
    args: argparse.Namespace,
    elapsed: float,
) -> str:
    m = machine()
    ireval_py = str(Path(args.ireval).parent / "python")
    lines = ["## Every tool on every collection (`benchmarks/bench.py`, generated)", ""]
    cmd = " ".join(shlex.quote(a) for a in ["python", "benchmarks/bench.py", *sys.argv[1:]])
    lines += [
        f"Command: `{cmd}`  ",
        f"Date: {datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}; ireval at git {_git()}, "
        f"source digest {args.source_before}; "
        f"{args.reps} timed runs per cell after {args.warmup} warm-up, interleaved (a cell whose first run took "
        f"more than {args.slow:g} s: that run only); {getattr(args, 'elapsed_text', f'total {elapsed / 60:.1f} min')}.",
        *(
            [
                "",
                "**Warning: ireval's source (irevalcli/) changed while this benchmark ran; "
                "its rows mix versions. Rerun.**",
            ]
            if args.source_changed
            else []
        ),
        "",
        "### Machine",
        "",
        f"- CPU: {m['cpu']}, {m['cores']} cores; RAM {m['ram']}; {m['os']}; Python {m['python']}",
        f"- ireval env: {_versions(ireval_py, ['ireval', 'numpy', 'pandas', 'pyarrow', 'click', 'rich'])}",
        f"- reference env ({Path(args.ref_python).parent.parent.name}): {_versions(args.ref_python, REF_DISTS)}",
        f"- load average (1/5/15 min) before: {'/'.join(f'{x:.2f}' for x in args.load_before)}, after: "
        f"{'/'.join(f'{x:.2f}' for x in args.load_after)} (other work on the machine inflates wall time, "
        "CPU time much less)",
        "- tools: " + "; ".join(f"{t.name} = `{t.version}`" for t in tools),
    ]
    for mm in missing:
        lines.append(f"- not run: {mm}")
    unselected = [t for t in TOOLS if t not in args.tools]
    if unselected:
        lines.append(f"- not run (left out with --tools): {', '.join(unselected)}")
    lines += ["", "### Collections (benchmarks/generate.py, seed %d)" % args.seed, ""]
    if infos:
        lines += [
            "| collection | scale | queries | run lines | run MiB | qrels lines | judged/q | relevant/q | tied rows |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for c, i in infos.items():
            lines.append(
                f"| {c} | {i['scale']:g} | {i['queries']:,} | {i['run_lines']:,} | {i['run_bytes'] / 2**20:.0f} | "
                f"{i['qrels_lines']:,} | {i['judged_per_query']:g} | {i['relevant_per_query']:g} | "
                f"{i['rows_tied_with_next']:.1%} |"
            )
    te = next((t for t in tools if t.name == "trec_eval"), None)
    base_txt = {
        "trec_eval": f"C trec_eval {te.note if te else ''}".strip(),
        "pytrec_eval": "pytrec_eval (C trec_eval was not available)",
    }
    lines += [
        "",
        "### Results",
        "",
        f"Median of {args.reps} runs (or the one run of a slow cell); wall and CPU (user+sys) in seconds; peak RSS in MiB; "
        f"ratio = median wall / median wall of **{base_txt.get(baseline or '', 'nothing')}** on the same "
        "cell (below 1 is faster); CPU ratio the same for CPU time, which other work on the machine "
        'inflates much less. "first run" is the first warm-up run (ranx: numba JIT or its cache). '
        '"agrees" compares summary map and ndcg_cut_10 with ireval\'s to 1e-9; for C trec_eval, its whole '
        "output with ireval's (byte for byte, else every value both print; see the notes).",
        "",
    ]
    by_wc: dict[tuple[str, str], list[Cell]] = {}
    for cell in cells.values():
        by_wc.setdefault((cell.workload, cell.collection), []).append(cell)
    lines += [
        "| workload | collection | tool | wall (s) | min-max | CPU (s) | peak RSS (MiB) | ratio | CPU ratio "
        "| first run | agrees |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for (w, c), group in by_wc.items():
        base = next((g for g in group if g.tool == baseline and g.samples), None)
        base_wall = statistics.median(s.wall for s in base.samples) if base else None
        base_cpu = statistics.median(s.cpu for s in base.samples) if base else None
        for cell in group:
            if not cell.samples:
                lines.append(f"| `{WORKLOAD_TITLE[w]}` | {c} | {cell.tool} | {cell.error or 'no run'} | | | | | | | |")
                continue
            walls = [s.wall for s in cell.samples]
            wall = statistics.median(walls)
            cpu = statistics.median(s.cpu for s in cell.samples)
            rss = max(s.rss_mib for s in cell.samples)
            ratio = f"{wall / base_wall:.2f}" if base_wall else "-"
            cpu_ratio = f"{cpu / base_cpu:.2f}" if base_cpu else "-"
            first = _fmt_t(cell.first.wall) if cell.first else "-"
            lines.append(
                f"| `{WORKLOAD_TITLE[w]}` | {c} | {cell.tool} | {_fmt_t(wall)} | {_fmt_t(min(walls))}-"
                f"{_fmt_t(max(walls))} | {_fmt_t(cpu)} | {rss:.0f} | {ratio} | {cpu_ratio} | {first} | {cell.agree} |"
            )
    lines += [
        "",
        "Notes:",
        "",
        "- pytrec_eval, ir_measures and ranx run as small driver scripts (benchmarks/drivers/) that read the "
        "files with the library's own readers, evaluate and print the values, per topic with -q.",
        "- all_trec for ir_measures is the subset of trec_eval's all_trec it can express; for ranx, the "
        "closest ranx metric list. Their all_trec timings are therefore indicative only.",
        "- pytrec_eval and ir_measures embed trec_eval 9.0.8, which keeps scores as float32: where their "
        "numbers differ from ireval's, they are checked against `ireval --compat 9.0.8`.",
        f"- Peak RSS is the child's ru_maxrss from wait4; Linux starts it at the spawning process's peak, "
        f"which was {args.rss_floor:.0f} MiB, so no figure below that is meaningful.",
        "- ranx breaks score ties in its own order, so its values can differ from trec_eval's on tied runs.",
        "- Python tools run with bytecode caching allowed (PYTHONDONTWRITEBYTECODE unset), so the warm-up run "
        "leaves ireval's modules compiled as a pip install would; the reference libraries are installed by pip.",
        *(f"- {n}" for n in args.note),
    ]
    if te:
        lines.append(f"- C trec_eval is `{te.version}`.")
        if te.note.startswith("9."):
            why = ""
            if "pyserini" in te.version:
                why = (
                    ", because no package registry ships a trec_eval 10.0 executable: Debian, PyPI and npm have "
                    "none, and pytrec_eval's wheels embed 9.0.8 as a Python extension. Anserini bundles prebuilt "
                    f"{te.note} binaries in its jar, which pyserini's source distribution on PyPI carries; "
                    "`make benchmarks/bin/trec_eval` takes the Linux one out (benchmarks/drivers/fetch_trec_eval.py, "
                    "hash-checked)"
                )
            lines.append(
                f"  It is {te.note}, not 10.0 (the version ireval reproduces by default){why}. 9.x lacks measures "
                "10.0 added (rbp, rbp_resid, unj), keeps run scores as float32 and computes iprec_at_recall's "
                "cut-off differently, so its output is compared, on the (measure, topic) pairs both print, with "
                "ireval's and then with `ireval --compat 9.0.8`'s."
            )
        notes = getattr(args, "check_notes", [])
        if notes:
            lines.append("  Where its output is not byte-identical to ireval's:")
        for note in notes:
            lines.append(f"  - {note}")
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
