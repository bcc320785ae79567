"""Fetch a C trec_eval binary from PyPI, reproducibly: the one inside pyserini's Anserini jar.

No package registry ships trec_eval 10.0 as an executable. The pyserini 1.6.0
source distribution on PyPI carries Anserini's fat jar, and that jar carries
prebuilt C trec_eval 9.0.4 binaries (``trec_eval/trec_eval-linux-amd64``,
which Anserini runs for its own evaluations). This script downloads the sdist
with pip (hash-pinned), reads the tar.gz as a stream until it reaches the jar,
spools only the jar to a temporary file, takes the one binary out of it and
checks its digest:

    python benchmarks/drivers/fetch_trec_eval.py benchmarks/bin/trec_eval
    python benchmarks/drivers/fetch_trec_eval.py OUT --sdist pyserini-1.6.0.tar.gz   # no download

Linux x86-64 only (the jar's other binary is for macOS).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

PYSERINI = "pyserini==1.6.0"
SDIST_NAME = "pyserini-1.6.0.tar.gz"
SDIST_SHA256 = "e34761d700b33613c26bc61113effc6d65598dee6ada28a33214f79350f833f4"
JAR = "pyserini-1.6.0/pyserini/resources/jars/anserini-1.7.1-fatjar.jar"
MEMBER = "trec_eval/trec_eval-linux-amd64"
BINARY_SHA256 = "a282ee9c22966f306c4bcbbfda9142ff22f371012a2994782194e6afdadbe6e4"
VERSION = "trec_eval version 9.0.4"


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def download(tmp: Path) -> Path:
    """``pip download`` the sdist into ``tmp``; pip checks its hash before using it."""
    req = tmp / "requirements.txt"
    req.write_text(f"{PYSERINI} --hash=sha256:{SDIST_SHA256}\n")
    cmd = [
        sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", "pyserini",
        "--require-hashes", "-r", str(req), "-d", str(tmp),
    ]  # fmt: skip
    print("fetch_trec_eval:", " ".join(cmd), file=sys.stderr, flush=True)
    subprocess.run(cmd, check=True)
    return tmp / SDIST_NAME


def extract(sdist: Path, out: Path, tmp: Path) -> None:
    jar = tmp / "anserini.jar"
    # "r|gz": one pass over the compressed stream, stopping at the jar; nothing else is written
    with tarfile.open(sdist, "r|gz") as tf:
        for m in tf:
            if m.name == JAR:
                src = tf.extractfile(m)
                assert src is not None
                with open(jar, "wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
                break
        else:
            raise SystemExit(f"fetch_trec_eval: {JAR} not in {sdist}")
    part = out.with_name(out.name + ".part")
    with zipfile.ZipFile(jar) as zf, zf.open(MEMBER) as src, open(part, "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    jar.unlink()
    got = sha256(part)
    if got != BINARY_SHA256:
        part.unlink()
        raise SystemExit(f"fetch_trec_eval: {MEMBER} has sha256 {got}, expected {BINARY_SHA256}")
    part.chmod(0o755)
    os.replace(part, out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path, help="where to put the binary, e.g. benchmarks/bin/trec_eval")
    ap.add_argument("--sdist", type=Path, help=f"an already downloaded {SDIST_NAME} (skips pip)")
    args = ap.parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="fetch-trec-eval-") as t:
        tmp = Path(t)
        if args.sdist:
            if sha256(args.sdist) != SDIST_SHA256:
                raise SystemExit(f"fetch_trec_eval: {args.sdist} is not {SDIST_NAME} (sha256 differs)")
            sdist = args.sdist
        else:
            sdist = download(tmp)
        extract(sdist, args.out, tmp)
    r = subprocess.run([str(args.out), "-v"], check=False, capture_output=True, text=True)
    version = (r.stderr or r.stdout).strip()
    print(f"fetch_trec_eval: {args.out}: {version}", file=sys.stderr)
    return 0 if version == VERSION else 1


if __name__ == "__main__":
    sys.exit(main())
