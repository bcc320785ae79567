"""Are two versions of ireval byte-identical on the benchmark collections?

Installs each git revision in its own directory under ``--work`` (``git archive``
of the revision, a venv, ``pip install`` of it with the third-party packages
pinned to the versions in the head's venv, so only ireval's code differs), runs
the same command lines with both on the generated collections (generate.py), and
compares the outputs byte for byte. When two outputs differ it says where:

- trec text: the first differing line, and how many lines differ;
- json: the keys (paths such as ``per_query.301.map``) whose values differ,
  and keys present on one side only;
- parquet: the bytes, then the tables (schema, rows, values), the schema's
  key/value metadata and the file's metadata (created_by, row groups), so a
  difference in an embedded version string is told apart from one in the data.

    python benchmarks/identity.py                       # base 9f99c1e vs the working tree's .venv
    python benchmarks/identity.py --base 9f99c1e --head HEAD
    python benchmarks/identity.py --collections dl,robust04 --scale msmarco=0.25,big=0.25

The head defaults to the working tree, run through ``--head-ireval`` (default
``.venv/bin/ireval``, an editable install of it); ``--head REV`` installs a
revision instead, as for the base. Exit status 0: every output identical;
1: some differ; 2: a command failed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import generate  # noqa: E402

DEFAULT_BASE = "9f99c1e"
COLLECTIONS = ("msmarco", "big", "dl", "robust04")

# The command lines compared: name -> (ireval arguments before the files, output kind).
# Output kind: "trec" / "json" / "parquet" to stdout, or "file:EXT" for ``--output OUT.EXT``.
# Edit here to compare more.
VARIANTS: dict[str, tuple[list[str], str]] = {
    "all_trec_q": (["-m", "all_trec", "-q"], "trec"),
    "all_trec_q_c": (["-c", "-m", "all_trec", "-q"], "trec"),
    "official": (["-m", "official"], "trec"),
    "official_q_c": (["-c", "-q", "-m", "official"], "trec"),
    "all_trec_q_stream": (["--stream", "-m", "all_trec", "-q"], "trec"),
    "all_trec_q_908": (["--compat", "9.0.8", "-m", "all_trec", "-q"], "trec"),
    "json": (["-m", "all_trec", "-q", "--format", "json"], "json"),
    "json_c": (["-c", "-m", "all_trec", "-q", "--format", "json"], "json"),
    "parquet": (["-m", "all_trec", "-q", "--format", "parquet"], "parquet"),
    "parquet_c": (["-c", "-m", "all_trec", "-q", "--format", "parquet"], "parquet"),
    "parquet_file": (["-m", "all_trec", "-q", "--format", "parquet"], "file:parquet"),
    "json_file": (["-m", "all_trec", "-q", "--format", "json"], "file:json"),
}


# --------------------------------------------------------------------------
# installing a revision


def pinned_requirements(head_python: str) -> str:
    """``pip freeze`` of the head's venv without ireval: the base gets the same libraries."""
    r = subprocess.run([head_python, "-m", "pip", "freeze", "--exclude-editable"], capture_output=True, text=True)
    lines = [ln for ln in r.stdout.splitlines() if ln and not ln.startswith(("-e ", "ireval")) and " @ " not in ln]
    return "\n".join(lines) + "\n"


def install(rev: str, work: Path, head_python: str) -> str:
    """Install git revision ``rev`` under ``work``; return the path of its ``ireval``."""
    sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", rev], capture_output=True, text=True, check=True)
    full = sha.stdout.strip()
    home = work / full[:12]
    exe = home / "venv" / "bin" / "ireval"
    stamp = home / "installed"
    if stamp.exists() and exe.exists():
        return str(exe)
    shutil.rmtree(home, ignore_errors=True)
    (home / "src").mkdir(parents=True)
    archive = subprocess.Popen(["git", "-C", str(ROOT), "archive", full], stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", str(home / "src")], stdin=archive.stdout, check=True)
    if archive.wait() != 0:
        raise SystemExit(f"identity: git archive {rev} failed")
    subprocess.run([sys.executable, "-m", "venv", str(home / "venv")], check=True)
    constraints = home / "constraints.txt"
    constraints.write_text(pinned_requirements(head_python))
    print(f"identity: installing {rev} ({full[:12]}) into {home}", file=sys.stderr, flush=True)
    subprocess.run(
        [str(home / "venv" / "bin" / "pip"), "install", "-q", "-c", str(constraints), str(home / "src")],
        check=True,
    )
    stamp.write_text(full + "\n")
    return str(exe)


# --------------------------------------------------------------------------
# comparing


def diff_trec(a: bytes, b: bytes) -> str:
    la, lb = a.split(b"\n"), b.split(b"\n")
    n = sum(1 for x, y in zip(la, lb) if x != y) + abs(len(la) - len(lb))
    for i, (x, y) in enumerate(zip(la, lb)):
        if x != y:
            return f"{n} lines differ; first at line {i + 1}: {x.decode()!r} vs {y.decode()!r}"
    return f"{len(la)} vs {len(lb)} lines"


def _flatten(obj: object, prefix: str, out: dict[str, object]) -> None:
    if isinstance(obj, dict):
        for k, v in obj.items():
            _flatten(v, f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            _flatten(v, f"{prefix}[{i}]", out)
    else:
        out[prefix] = obj


def diff_json(a: bytes, b: bytes) -> str:
    fa: dict[str, object] = {}
    fb: dict[str, object] = {}
    try:
        _flatten(json.loads(a), "", fa)
        _flatten(json.loads(b), "", fb)
    except ValueError as exc:
        return f"not both JSON ({exc})"
    only_a = sorted(set(fa) - set(fb))
    only_b = sorted(set(fb) - set(fa))
    changed = sorted(k for k in set(fa) & set(fb) if fa[k] != fb[k] or type(fa[k]) is not type(fb[k]))
    parts = []
    if changed:
        shown = ", ".join(f"{k}: {fa[k]!r} vs {fb[k]!r}" for k in changed[:5])
        parts.append(f"{len(changed)} values differ ({shown}{', ...' if len(changed) > 5 else ''})")
    if only_a:
        parts.append(f"{len(only_a)} keys only in base ({', '.join(only_a[:5])})")
    if only_b:
        parts.append(f"{len(only_b)} keys only in head ({', '.join(only_b[:5])})")
    if not parts:
        # same values, different bytes: key order or number spelling
        parts.append(
            "same keys and values; the text differs (key order: "
            + ("same" if list(fa) == list(fb) else "differs")
            + ")"
        )
    return "; ".join(parts)


def diff_parquet(pa_path: str, pb_path: str) -> str:
    import pyarrow.parquet as pq

    ta, tb = pq.read_table(pa_path), pq.read_table(pb_path)
    parts = []
    if ta.schema.remove_metadata() != tb.schema.remove_metadata():
        parts.append(f"schemas differ: {ta.schema.remove_metadata()} vs {tb.schema.remove_metadata()}")
    elif not ta.equals(tb):
        parts.append(f"tables differ ({ta.num_rows} vs {tb.num_rows} rows)")
        if ta.num_rows == tb.num_rows:
            for name in ta.column_names:
                if not ta[name].equals(tb[name]):
                    parts.append(f"column {name} differs")
    else:
        parts.append("tables equal (schema, rows and values)")
    ma = {k.decode(): v.decode(errors="replace") for k, v in (ta.schema.metadata or {}).items()}
    mb = {k.decode(): v.decode(errors="replace") for k, v in (tb.schema.metadata or {}).items()}
    if ma != mb:
        for k in sorted(k for k in set(ma) | set(mb) if ma.get(k) != mb.get(k)):
            try:  # ireval's metadata is JSON: name the keys inside it
                inner = diff_json(ma.get(k, "{}").encode(), mb.get(k, "{}").encode())
            except ValueError:
                inner = f"{ma.get(k)!r} vs {mb.get(k)!r}"
            parts.append(f"schema metadata {k!r} differs: {inner}")
    else:
        parts.append("schema metadata equal")
    fa, fb = pq.ParquetFile(pa_path).metadata, pq.ParquetFile(pb_path).metadata
    if fa.created_by != fb.created_by:
        parts.append(f"created_by {fa.created_by!r} vs {fb.created_by!r}")
    if fa.num_row_groups != fb.num_row_groups:
        parts.append(f"row groups {fa.num_row_groups} vs {fb.num_row_groups}")
    return "; ".join(parts)


# --------------------------------------------------------------------------


def run(exe: str, args: list[str], kind: str, qrels: Path, runf: Path, out: Path) -> tuple[int, str, float]:
    """Run one command; its output ends up at ``out``. Returns (exit code, stderr tail, seconds)."""
    cmd = [exe, *args]
    if kind.startswith("file:"):
        cmd += ["--output", str(out)]
    cmd += [str(qrels), str(runf)]
    t0 = time.perf_counter()
    with open(out if not kind.startswith("file:") else os.devnull, "wb") as fh:
        r = subprocess.run(cmd, stdout=fh, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    err = r.stderr.decode(errors="replace").strip().splitlines()
    return r.returncode, err[-1] if err else "", time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", default=DEFAULT_BASE, help=f"git revision of the base (default {DEFAULT_BASE})")
    ap.add_argument("--head", default=None, help="git revision of the head (default: the working tree, --head-ireval)")
    ap.add_argument("--head-ireval", default=str(ROOT / ".venv" / "bin" / "ireval"))
    ap.add_argument("--work", default="/tmp/ireval-identity", help="where revisions are installed and outputs kept")
    ap.add_argument("--collections", default=",".join(COLLECTIONS))
    ap.add_argument("--variants", default=",".join(VARIANTS), help="comma list of " + ", ".join(VARIANTS))
    ap.add_argument("--scale", default="1", help="one number or NAME=F,... (others full size), as bench.py")
    ap.add_argument("--seed", type=int, default=generate.DEFAULT_SEED)
    ap.add_argument("--keep", action="store_true", help="keep the outputs (else only those that differ)")
    args = ap.parse_args(argv)

    collections = [c for c in args.collections.split(",") if c]
    variants = [v for v in args.variants.split(",") if v]
    for v in variants:
        if v not in VARIANTS:
            ap.error(f"--variants: unknown {v!r}")
    scales = {c: 1.0 for c in collections}
    if "=" in args.scale:
        for item in args.scale.split(","):
            name, _, val = item.partition("=")
            scales[name] = float(val)
    else:
        scales = {c: float(args.scale) for c in collections}

    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    head_python = str(Path(args.head_ireval).parent / "python")
    base_exe = install(args.base, work / "revs", head_python)
    head_exe = install(args.head, work / "revs", head_python) if args.head else args.head_ireval
    head_desc = args.head or "working tree"
    if not args.head:
        r = subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty"], capture_output=True, text=True)
        head_desc = f"working tree ({r.stdout.strip()})"
    print(f"identity: base {args.base} = {base_exe}\nidentity: head {head_desc} = {head_exe}", flush=True)

    outdir = Path(tempfile.mkdtemp(prefix="out-", dir=work))
    n_same = n_diff = n_fail = 0
    for c in collections:
        d = generate.data_dir(c, scales[c], args.seed)
        if not (d / "info.json").exists():
            subprocess.run(
                [
                    sys.executable,
                    str(HERE / "generate.py"),
                    "--which",
                    c,
                    "--scale",
                    f"{scales[c]:g}",
                    "--seed",
                    str(args.seed),
                ],
                check=True,
            )
        qrels, runf = d / "qrels.txt", d / "run.txt"
        for v in variants:
            vargs, kind = VARIANTS[v]
            ext = kind.split(":")[-1]
            pa_, pb_ = outdir / f"{c}.{v}.base.{ext}", outdir / f"{c}.{v}.head.{ext}"
            ra, ea, ta = run(base_exe, vargs, kind, qrels, runf, pa_)
            rb, eb, tb = run(head_exe, vargs, kind, qrels, runf, pb_)
            label = f"{c:<9} {v:<18}"
            if ra != 0 or rb != 0:
                n_fail += 1
                print(f"{label} FAILED: base exit {ra} {ea!r}; head exit {rb} {eb!r}", flush=True)
                continue
            a, b = pa_.read_bytes(), pb_.read_bytes()
            digest = hashlib.sha256(a).hexdigest()[:12]
            if a == b:
                n_same += 1
                print(f"{label} identical  {len(a):>12,} bytes  sha256 {digest}  ({ta:.1f} s / {tb:.1f} s)", flush=True)
                if not args.keep:
                    pa_.unlink()
                    pb_.unlink()
                continue
            n_diff += 1
            if ext == "json":
                why = diff_json(a, b)
            elif ext == "parquet":
                try:
                    why = diff_parquet(str(pa_), str(pb_))
                except Exception as exc:  # e.g. one side is not Parquet
                    why = f"not both Parquet ({exc})"
            else:
                why = diff_trec(a, b)
            print(f"{label} DIFFERENT  {len(a):,} vs {len(b):,} bytes: {why}", flush=True)
    print(f"identity: {n_same} identical, {n_diff} different, {n_fail} failed (outputs kept in {outdir})")
    if not args.keep and not n_diff and not n_fail:
        shutil.rmtree(outdir, ignore_errors=True)
    return 2 if n_fail else 1 if n_diff else 0


if __name__ == "__main__":
    sys.exit(main())
