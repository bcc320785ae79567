"""ranx: Qrels.from_file/Run.from_file (kind="trec"), evaluate().

map is ranx's "map"; ndcg_cut.10 is ranx's "ndcg@10" (trec_eval's linear gains).
all_trec is the closest list of ranx metrics (P, recall, map@k, ndcg@k at
trec_eval's cutoffs, mrr, r-precision, bpref, hits).
ranx breaks score ties by its own rule, not trec_eval's docno order.
"""

from __future__ import annotations

from _common import emit, parse_args
from ranx import Qrels, Run, evaluate

CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
TREC = {"map": "map", "ndcg_cut.10": "ndcg@10", "ndcg_cut_10": "ndcg@10"}
LABEL = {"map": "map", "ndcg@10": "ndcg_cut_10"}


def metrics(names: list[str]) -> list[str]:
    if "all_trec" in names:
        out = ["map", "ndcg", "mrr", "r-precision", "bpref", "hits", "ndcg@10"]
        for k in CUTS:
            out += [f"precision@{k}", f"recall@{k}", f"map@{k}", f"ndcg@{k}"]
        return list(dict.fromkeys(out))
    return [TREC[n] for n in names]


def main() -> None:
    a = parse_args()
    qrels = Qrels.from_file(a.qrels, kind="trec")
    run = Run.from_file(a.run, kind="trec")
    ms = metrics(a.m)
    summary = evaluate(qrels, run, ms, make_comparable=True)
    if len(ms) == 1:
        summary = {ms[0]: summary}
    per_query = None
    if a.q:
        per_query = {LABEL.get(m, m): {q: float(v) for q, v in run.scores[m].items()} for m in ms}
    emit(per_query, {LABEL.get(m, m): float(v) for m, v in summary.items()})


if __name__ == "__main__":
    main()
