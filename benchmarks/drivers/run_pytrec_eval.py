"""pytrec_eval (trec_eval 9.0.8 inside): parse_qrel/parse_run, RelevanceEvaluator, aggregate."""

from __future__ import annotations

import pytrec_eval
from _common import emit, parse_args


def main() -> None:
    a = parse_args()
    with open(a.qrels) as f:
        qrel = pytrec_eval.parse_qrel(f)
    with open(a.run) as f:
        run = pytrec_eval.parse_run(f)
    measures = set(pytrec_eval.supported_measures) if "all_trec" in a.m else set(a.m)
    ev = pytrec_eval.RelevanceEvaluator(qrel, measures)
    res = ev.evaluate(run)  # qid -> {label: value}
    labels = sorted({k for r in res.values() for k in r})
    per_query = None
    if a.q:
        per_query = {lab: {q: r[lab] for q, r in sorted(res.items())} for lab in labels}
    summary = {lab: pytrec_eval.compute_aggregated_measure(lab, [r[lab] for r in res.values()]) for lab in labels}
    emit(per_query, summary)


if __name__ == "__main__":
    main()
