"""ireval's own read and parse of a run, alone: the chunks a streamed evaluation reads, cut
where topics begin and parsed in its two threads (``irevalcli.engine.stream.ParsedChunks``),
with nothing judged and nothing scored. Beside the msmarco shape's pyarrow CSV read, it shows
how much of ireval's time is its parse, checks included, and how much is the evaluation.

The process is set up as the ``ireval`` command sets up its own (``commands.main.entry``):
the same allocators, one BLAS thread, the same collector threshold, the light
``pyarrow.compute`` and the same exit without the interpreter's teardown."""

from __future__ import annotations

import gc
import os
import sys

from irevalcli.commands import process
from irevalcli.commands.main import ARROW_POOL, BLAS_THREADS, GC_THRESHOLD
from irevalcli.io import lightcompute

gc.set_threshold(*GC_THRESHOLD)
os.environ.setdefault(*ARROW_POOL)
os.environ.setdefault(*BLAS_THREADS)
process.tune_malloc()
lightcompute.install()

from irevalcli.engine.stream import ChunkReader, ParsedChunks  # noqa: E402  (numpy and pyarrow: after the set-up)

rows = 0
with ParsedChunks(ChunkReader(sys.argv[1], hash=False), sys.argv[1]) as batches:
    for batch, _lengths, _topics, _scored in batches:
        rows += len(batch)
print(rows)
process.exit_now(0)
