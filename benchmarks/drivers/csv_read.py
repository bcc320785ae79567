"""Issue 22 shape 3's reference: one pyarrow CSV read of the three columns a run's
evaluation needs (qid, docno, score), with pyarrow's threads (2 on the benchmark machine)."""

from __future__ import annotations

import sys

import pyarrow as pa
import pyarrow.csv as csv

table = csv.read_csv(
    sys.argv[1],
    read_options=csv.ReadOptions(column_names=["qid", "q0", "docno", "rank", "score", "runid"], use_threads=True),
    parse_options=csv.ParseOptions(delimiter=" "),
    convert_options=csv.ConvertOptions(
        include_columns=["qid", "docno", "score"],
        column_types={"qid": pa.string(), "docno": pa.string(), "score": pa.float64()},
    ),
)
print(table.num_rows)
