"""ireval's own read and parse of a run, alone: the chunks a streamed evaluation reads, cut
where topics begin and parsed in its two threads (``irevalcli.engine.stream.ParsedChunks``),
with nothing judged and nothing scored. Beside the msmarco shape's pyarrow CSV read, it shows
how much of ireval's time is its parse, checks included, and how much is the evaluation.

The process is set up as the ``ireval`` command sets up its own (``commands.main.own_process``:
the same allocators, one BLAS thread, the same collector threshold, the light
``pyarrow.compute``) and ends as it does, without the interpreter's teardown."""

from __future__ import annotations

import sys

from irevalcli.commands import process
from irevalcli.commands.main import own_process

own_process()

from irevalcli.engine.stream import ChunkReader, ParsedChunks  # noqa: E402  (numpy and pyarrow: after the set-up)

rows = 0
with ParsedChunks(ChunkReader(sys.argv[1], hash=False), sys.argv[1]) as batches:
    for batch, _lengths, _topics, _scored in batches:
        rows += len(batch)
print(rows)
process.exit_now(0)
