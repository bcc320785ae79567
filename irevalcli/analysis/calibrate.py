"""``ireval gate calibrate``: how much reruns of one system differ, and the gate margins
that an unchanged system passes.

Given k >= 3 runs of the same system (reruns, seeds), each scored on every judged topic
as the gate scores a run (a topic without results scores 0), for each measure:

* ``s_run``: the sample standard deviation (n - 1) across the k runs of the measure's
  summary (the value the gate checks);
* ``s_topic``: for every topic, the sample standard deviation across the k runs of its
  value; their mean over the topics (a topic where a run has no value is left out).

Suggested margins (rounded up to 4 decimals, so never below the computed value):

* ``[max_drop]``: ``3 * s_run`` (two reruns' summaries differ by sd ``sqrt(2) * s_run``;
  3 s_run is 2.1 of those, exceeded one-sided in about 1.7% of reruns under normality);
* ``[non_inferior]``: ``3 * sqrt(2) * s_topic / sqrt(n)`` for n topics: three standard
  errors of the mean paired difference between two reruns, whose per-topic difference
  has sd about ``sqrt(2) * s_topic``; only for measures whose summary is a mean.

A measure with no spread (every run scores the same) or without a direction gets a
comment instead of a margin. Nothing here imports click.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import UsageError
from ..measures.registry import SUMMARIES
from .compare import load_inputs, measure_batches, score_run, scoring_settings

MIN_RUNS = 3
DROP_SDS = 3.0  # [max_drop] = DROP_SDS * s_run
NI_SES = 3.0  # [non_inferior] = NI_SES * sqrt(2) * s_topic / sqrt(n)
ZERO = 1e-12  # a spread this small is rounding in equal values: no spread


@dataclass(frozen=True)
class Spread:
    label: str
    direction: str
    agg: str
    means: tuple[float, ...]  # each run's summary
    s_run: float  # sd across the runs of the summary
    s_topic: float  # mean over topics of the per-topic sd across the runs
    topics: int  # topics with a value in every run
    max_drop: float | None
    non_inferior: float | None


@dataclass(frozen=True)
class Calibration:
    qrels: str
    runs: tuple[str, ...]
    topics: int
    spreads: tuple[Spread, ...]


def ceil4(x: float) -> float:
    """``x`` rounded up to 4 decimals (a margin never smaller than computed)."""
    return math.ceil(round(x * 10000, 6)) / 10000


def spread_of(label: str, direction: str, agg: str, means: Sequence[float], per_topic: Any) -> Spread:
    """``per_topic``: a k x n array, one row per run."""
    import numpy as np

    m = np.asarray(means, dtype=np.float64)
    s_run = float(np.std(m, ddof=1)) if not np.isnan(m).any() else math.nan
    v = np.asarray(per_topic, dtype=np.float64)
    full = ~np.isnan(v).any(axis=0)
    n = int(full.sum())
    s_topic = float(np.std(v[:, full], axis=0, ddof=1).mean()) if n else math.nan
    s_run, s_topic = (0.0 if x <= ZERO else x for x in (s_run, s_topic))
    drop = ni = None
    if direction != "none":
        if math.isfinite(s_run) and s_run > 0:
            drop = ceil4(DROP_SDS * s_run)
        if SUMMARIES[agg].over_topics == "mean" and math.isfinite(s_topic) and s_topic > 0:
            ni = ceil4(NI_SES * math.sqrt(2) * s_topic / math.sqrt(n))
    return Spread(label, direction, agg, tuple(float(x) for x in m), s_run, s_topic, n, drop, ni)


def calibrate(
    qrels: Any, runs: Sequence[Any], measures: Sequence[str], *, rel_level: int = 1, ties: str = "docno"
) -> Calibration:
    """Score ``runs`` (k >= 3 runs of one system) and estimate each measure's spread."""
    import numpy as np

    from ..measures.names import split_specs

    if len(runs) < MIN_RUNS:
        raise UsageError(
            f"calibration needs at least {MIN_RUNS} runs of the same system (reruns or seeds), got {len(runs)}"
        )
    if isinstance(measures, str):
        measures = [measures]
    if not measures:
        raise UsageError("no measure to calibrate: give -m MEASURE (repeatable)")
    batches, labels = measure_batches(split_specs(list(measures)))
    options = scoring_settings(rel_level, ties)
    q, loaded = load_inputs(qrels, list(runs), options)
    scored = [score_run(q, r, batches, labels, options=options) for r in loaded]
    spreads = []
    for label in labels:
        first = scored[0]
        spreads.append(
            spread_of(
                label,
                first.directions[label],
                first.aggs[label],
                [sc.mean(label) for sc in scored],
                np.vstack([sc.values[label] for sc in scored]),
            )
        )
    return Calibration(q.name, tuple(sc.name for sc in scored), len(scored[0].qids), tuple(spreads))


def _key(label: str) -> str:
    return label if re.fullmatch(r"[A-Za-z0-9_-]+", label) else json.dumps(label)


def _num(x: float) -> str:
    return "nan" if math.isnan(x) else f"{x:.6f}"


def format_toml(cal: Calibration) -> str:
    """The suggested margins as a TOML fragment, with the spreads in comments."""
    out = [
        f"# ireval gate calibrate: {len(cal.runs)} runs, {cal.topics} topics judged in {cal.qrels}",
        "# s_run: sd (n-1) across the runs of the summary; s_topic: mean over topics of the",
        "# per-topic sd (n-1) across the runs",
    ]
    for s in cal.spreads:
        out.append(f"# {s.label}: s_run {_num(s.s_run)}, s_topic {_num(s.s_topic)}")
    drops = [s for s in cal.spreads if s.max_drop is not None]
    nis = [s for s in cal.spreads if s.non_inferior is not None]
    if drops:
        out += ["", f"[max_drop]  # {DROP_SDS:g} x s_run"]
        out += [f"{_key(s.label)} = {s.max_drop:.4f}" for s in drops]
    if nis:
        out += ["", f"[non_inferior]  # {NI_SES:g} x sqrt(2) x s_topic / sqrt(topics)"]
        out += [f"{_key(s.label)} = {s.non_inferior:.4f}" for s in nis]
    left = [s for s in cal.spreads if s.max_drop is None or s.non_inferior is None]
    if left:
        out.append("")
    for s in left:
        if s.direction == "none":
            why = "no direction, so no drop check"
        elif s.max_drop is None and s.non_inferior is None:
            why = "no run-to-run spread (every run scores the same); choose a margin by what matters"
        elif s.non_inferior is None:
            why = (
                f"no [non_inferior]: its summary is {s.agg}, not a mean over topics"
                if SUMMARIES[s.agg].over_topics != "mean"
                else "no [non_inferior]: no per-topic spread"
            )
        else:
            why = "no [max_drop]: its summary does not vary across the runs"
        out.append(f"# {s.label}: {why}")
    return "\n".join(out) + "\n"
