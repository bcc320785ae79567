"""ir_measures: read_trec_qrels/read_trec_run, then calc_aggregate (or iter_calc with -q).

all_trec is the part of trec_eval's all_trec that ir_measures can express
(parse_trec_measure); the rest (11pt_avg, G, utility, ...) is skipped.
"""

from __future__ import annotations

from collections import defaultdict

import ir_measures
import pytrec_eval
from _common import emit, parse_args

LABEL = {"AP": "map", "nDCG@10": "ndcg_cut_10"}


def measures(names: list[str]) -> list:
    if "all_trec" in names:
        names = sorted(pytrec_eval.supported_nicknames["all_trec"])
    out = []
    for n in names:
        try:
            out.extend(ir_measures.parse_trec_measure(n))
        except (ValueError, KeyError, NameError):
            pass
    return out


def main() -> None:
    a = parse_args()
    ms = measures(a.m)
    qrels = ir_measures.read_trec_qrels(a.qrels)
    run = ir_measures.read_trec_run(a.run)
    if not a.q:
        agg = ir_measures.calc_aggregate(ms, qrels, run)
        emit(None, {LABEL.get(str(m), str(m)): float(v) for m, v in agg.items()})
        return
    per: defaultdict[str, dict[str, float]] = defaultdict(dict)
    for m in ir_measures.iter_calc(ms, qrels, run):
        per[LABEL.get(str(m.measure), str(m.measure))][m.query_id] = float(m.value)
    summary = {lab: sum(v.values()) / len(v) for lab, v in per.items()}
    emit(per, summary)


if __name__ == "__main__":
    main()
