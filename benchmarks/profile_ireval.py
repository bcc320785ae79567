"""Profile one ireval run: time and memory per stage and per measure, plus cProfile's top functions.

Runs ``irevalcli.commands.main.main`` in this process (with the ireval venv's python) and
wraps the pipeline's stage functions and every measure function, so the report
says where the time and the memory go:

    .venv/bin/python benchmarks/profile_ireval.py -- -m map -m ndcg_cut.10 QRELS RUN
    .venv/bin/python benchmarks/profile_ireval.py --top 40 --pstats out.prof -- -m all_trec -q QRELS RUN

stdout of ireval goes to /dev/null (or --stdout PATH). RSS is sampled every
2 ms from /proc/self/statm; "peak" is the highest sample inside the stage.
Stages nest (parse_run contains tokenize), so their times do not add up.
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import io
import os
import pstats
import sys
import threading
import time
from contextlib import redirect_stdout

STAGES = {
    "irevalcli.io.trec": [
        "read_source",
        "parse_qrels",
        "parse_run",
        "tokenize",
        "take_tokens",
        "parse_floats",
        "parse_ints",
        "read_qrels",
        "read_run",
    ],
    "irevalcli.core.table": [
        "build_table",
        "_factorize_sorted",
        "rank_order",
        "seg_accumulate",
        "seg_cumsum_exact",
        "seg_suffix_max",
    ],
    "irevalcli.engine.evaluate": ["evaluate_table"],
    "irevalcli.measures.names": ["resolve"],
    "irevalcli.output.formatters": ["format_trec", "format_json"],
    "irevalcli.api": ["evaluate"],
}

PAGE = os.sysconf("SC_PAGE_SIZE")


class Sampler(threading.Thread):
    def __init__(self, interval: float = 0.002) -> None:
        super().__init__(daemon=True)
        self.interval = interval
        self.samples: list[tuple[float, int]] = []
        self.stop = threading.Event()

    @staticmethod
    def rss() -> int:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * PAGE

    def run(self) -> None:
        while not self.stop.is_set():
            self.samples.append((time.perf_counter(), self.rss()))
            time.sleep(self.interval)

    def peak(self, t0: float, t1: float) -> int:
        return max((r for t, r in self.samples if t0 <= t <= t1), default=0)


EVENTS: list[tuple[str, float, float, int, int]] = []  # name, t0, t1, rss0, rss1


def wrap(name: str, fn):  # type: ignore[no-untyped-def]
    @functools.wraps(fn)
    def inner(*a, **kw):  # type: ignore[no-untyped-def]
        r0 = Sampler.rss()
        t0 = time.perf_counter()
        try:
            return fn(*a, **kw)
        finally:
            t1 = time.perf_counter()
            EVENTS.append((name, t0, t1, r0, Sampler.rss()))

    inner.__wrapped_by_profile__ = True  # type: ignore[attr-defined]
    return inner


def instrument() -> None:
    import importlib

    import irevalcli
    import irevalcli.commands.main  # noqa: F401

    mods = {}
    for modname in [*list(STAGES), "irevalcli.commands.main", "irevalcli.api", "irevalcli.engine.evaluate"]:
        try:
            mods[modname] = importlib.import_module(modname)
        except ImportError:
            pass
    all_mods = [m for n, m in sys.modules.items() if n.startswith("irevalcli") and m is not None]
    for modname, names in STAGES.items():
        mod = mods.get(modname)
        if mod is None:
            continue
        for n in names:
            fn = getattr(mod, n, None)
            if fn is None or getattr(fn, "__wrapped_by_profile__", False):
                continue
            w = wrap(f"{n}", fn)
            for m in all_mods:  # every module that bound the same function
                if getattr(m, n, None) is fn:
                    setattr(m, n, w)
            fm = getattr(sys.modules.get("irevalcli.output.formatters"), "FORMATTERS", None)
            if isinstance(fm, dict):
                for k, v in list(fm.items()):
                    if v is fn:
                        fm[k] = w
    reg = getattr(importlib.import_module("irevalcli.measures.registry"), "REGISTRY", {})
    importlib.import_module("irevalcli.measures")
    for name, meas in reg.items():
        object.__setattr__(meas, "func", wrap(f"measure {name}", meas.func))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--top", type=int, default=25, help="cProfile rows to show")
    ap.add_argument("--pstats", help="write cProfile stats here")
    ap.add_argument("--stdout", default=os.devnull, help="where ireval's output goes")
    ap.add_argument("--no-cprofile", action="store_true", help="stage timings only (no cProfile overhead)")
    ap.add_argument("ireval_args", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    argv = [a for a in args.ireval_args if a != "--"] if args.ireval_args[:1] == ["--"] else args.ireval_args

    t_start = time.perf_counter()
    rss_start = Sampler.rss()
    instrument()
    t_imported = time.perf_counter()
    from irevalcli.commands.main import main as ireval_main

    sampler = Sampler()
    sampler.start()
    prof = None if args.no_cprofile else cProfile.Profile()
    out = open(args.stdout, "w")  # noqa: SIM115 (closed after the timed region)
    t0 = time.perf_counter()
    with redirect_stdout(out):
        # the CLI writes to sys.stdout.buffer
        if prof:
            prof.enable()
        rc = ireval_main(argv)
        if prof:
            prof.disable()
    t1 = time.perf_counter()
    out.close()
    sampler.stop.set()
    sampler.join()
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"ireval {' '.join(argv)}  (exit {rc})")
    print(
        f"imports {t_imported - t_start:.3f} s; run {t1 - t0:.3f} s"
        f"{' (under cProfile)' if prof else ''}; RSS at start {rss_start / 2**20:.0f} MiB, "
        f"peak {peak:.0f} MiB"
    )
    print()
    print(f"{'stage':<34} {'calls':>5} {'time s':>8} {'%run':>6} {'RSS in':>8} {'peak':>8} {'RSS out':>8}  MiB")
    agg: dict[str, list] = {}
    for name, a, b, r0, r1 in EVENTS:
        e = agg.setdefault(name, [0, 0.0, r0, 0, r1, a])
        e[0] += 1
        e[1] += b - a
        e[3] = max(e[3], sampler.peak(a, b), r0, r1)
        e[4] = r1
    total = t1 - t0
    for name, (n, dt, r0, pk, r1, _first) in sorted(agg.items(), key=lambda kv: kv[1][5]):
        print(
            f"{name:<34} {n:>5} {dt:>8.3f} {100 * dt / total:>5.1f}% {r0 / 2**20:>8.0f} {pk / 2**20:>8.0f} "
            f"{r1 / 2**20:>8.0f}"
        )
    if prof:
        s = io.StringIO()
        st = pstats.Stats(prof, stream=s)
        st.sort_stats("tottime").print_stats(args.top)
        print()
        print("\n".join(line for line in s.getvalue().splitlines() if line.strip())[:20000])
        if args.pstats:
            st.dump_stats(args.pstats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
