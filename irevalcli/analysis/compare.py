"""What ``ireval compare`` decides, as a library: runs scored on the judged topics,
aligned per topic, and compared with a baseline by paired statistics.

Every run is evaluated by :func:`irevalcli.api.evaluate` on the judged topics
of the qrels with ``complete=True`` (trec_eval's ``-c``): a topic a run has no
results for scores 0 and counts, and is reported. The statistics over the
per-topic scores come from :mod:`irevalcli.analysis.stats` (scipy).

:func:`compare` is the public entry point (``irevalcli.compare``); it returns a
:class:`CompareReport`, whose :meth:`~CompareReport.to_dict` is the command's JSON.
Scoring (:func:`score_run` and its helpers) is shared with :mod:`irevalcli.analysis.gate`.
Nothing here imports click.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import InputError, NoQueriesError, UsageError
from ..io.arrow import decode_id
from ..measures.registry import SUMMARIES

if TYPE_CHECKING:
    import numpy as np

    from ..io.trec import Qrels, Run
    from ..measures.names import Request
    from ..settings import EvalSettings

# Aggregates whose summary is a sum over topics (num_ret, num_rel_ret, TP ...), not a mean.
SUMMED = tuple(name for name, s in SUMMARIES.items() if s.over_topics == "sum")


# ---------------------------------------------------------------- scoring


@dataclass
class Scored:
    """One run's per-topic scores on the judged topics, and what it lacked."""

    name: str  # path as given on the command line ("-" for standard input)
    sha256: str
    runid: str
    qids: list[str]
    values: dict[str, np.ndarray]  # label -> per-topic scores aligned with qids
    missing: list[str]  # judged topics the run has no results for (scored 0)
    unjudged: int  # topics of the run that are not in the qrels (ignored)
    summaries: dict[str, float] = field(default_factory=dict)  # label -> the measure's own summary
    aggs: dict[str, str] = field(default_factory=dict)  # label -> how the measure summarises
    directions: dict[str, str] = field(default_factory=dict)  # label -> higher | lower | none
    # label -> why its mean cannot count every judged topic (a missing topic it cannot score)
    unscorable: dict[str, str] = field(default_factory=dict)

    def mean(self, label: str) -> float:
        """The measure's own summary, as the main command prints it under ``-c``.

        Not a plain re-average: ``auc`` averages over the topics that have a value,
        ``gauc`` weighs them, ``num_ret`` sums. NaN when the measure has no value.
        """
        if label in self.summaries:
            return float(self.summaries[label])
        return mean(self.values[label])

    def source(self) -> dict[str, Any]:
        return {
            "path": self.name,
            "sha256": self.sha256,
            "runid": self.runid,
            "missing_topics": list(self.missing),
            "unjudged_topics": self.unjudged,
        }


def mean(values: np.ndarray) -> float:
    """Mean over topics with trec_eval's left-to-right sum: equals its ``-c`` summary."""
    import numpy as np

    if len(values) == 0:
        return math.nan
    return float(np.cumsum(values, dtype=np.float64)[-1]) / len(values)


def comparable_labels(spec: str, *, where: str | None = None) -> tuple[list[Request], list[str]]:
    """Resolve one measure spec to the requests and labels that have numeric per-topic values.

    ``where`` names the spec in the error message (default ``-m SPEC``).
    """
    from ..measures.names import resolve

    requests = [r for r in resolve([spec]) if r.measure.per_query and r.measure.kind != "str"]
    if not requests:
        raise UsageError(
            f"{where or '-m ' + spec}: no per-topic values to compare (measures such as runid, num_q "
            "and gm_map have only a summary)"
        )
    labels = [label for r in requests for label in r.labels]
    return requests, labels


def measure_batches(specs: Sequence[str]) -> tuple[list[list[str]], list[str]]:
    """Group specs so that no measure root is asked twice in one ``evaluate`` call.

    trec_eval keeps only the first parameters given for a measure; ``-m P.5 -m P.10``
    here means both, so the two go to separate evaluations. Returns the batches and
    every label once, in the order asked.
    """
    batches: list[tuple[set[str], list[str]]] = []
    labels: list[str] = []
    for spec in specs:
        requests, spec_labels = comparable_labels(spec)
        roots = {r.measure.name for r in requests}
        for roots_in, members in batches:
            if not roots & roots_in:
                roots_in.update(roots)
                members.append(spec)
                break
        else:
            batches.append((set(roots), [spec]))
        labels.extend(label for label in spec_labels if label not in labels)
    return [members for _, members in batches], labels


def score_run(
    qrels: Qrels,
    run: Run | str,
    batches: list[list[str]],
    labels: list[str],
    *,
    options: EvalSettings | None = None,
) -> Scored:
    """Evaluate ``run`` on every judged topic and keep the per-topic scores of ``labels``
    (``options``: :func:`scoring_settings`' by default)."""
    import pyarrow.compute as pc

    from ..api import evaluate
    from ..measures.catalog import load

    registry = load()
    values: dict[str, Any] = {}
    summaries: dict[str, float] = {}
    aggs: dict[str, str] = {}
    roots: dict[str, str] = {}
    # one table for every batch: evaluate() resolves each batch as its own -m list
    try:
        ev = evaluate(qrels, run, batches, options=options or scoring_settings())
    except NoQueriesError:
        if isinstance(run, str):  # (--engine dask: read on the cluster)
            raise
        raise _no_topic_in_common(qrels, run, {decode_id(q) for q in pc.unique(run.qid).to_pylist()}) from None
    evaluated = ev.run  # the run (with --engine dask: its topics, one row each)
    qids = ev.results.qids
    for col in ev.results.columns:
        if col.label in labels and col.label not in values and col.per_query is not None and col.kind != "str":
            values[col.label] = col.per_query
            summaries[col.label] = math.nan if col.summary is None else float(col.summary)
            aggs[col.label] = registry[col.root].agg.name
            roots[col.label] = col.root
    run_topics = {decode_id(q) for q in pc.unique(evaluated.qid).to_pylist()}
    judged = set(qids)
    if not run_topics & judged:
        raise _no_topic_in_common(qrels, evaluated, run_topics)
    if ev.results.judged_retrieved == 0:  # document qrels against a passage run: every value 0, "no drop"
        from ..api import nothing_judged

        raise InputError("-" if evaluated.name == "<stdin>" else evaluated.name, nothing_judged(qrels.name))
    missing = [q for q in qids if q not in run_topics]
    unscorable: dict[str, str] = {}
    if missing:
        where = [i for i, q in enumerate(qids) if q not in run_topics]
        for label in labels:
            why = _score_unanswered(registry[roots[label]], label, values, summaries, where)
            if why:
                unscorable[label] = why
    return Scored(
        name="-" if evaluated.name == "<stdin>" else evaluated.name,
        sha256=evaluated.sha256,
        runid=evaluated.runid,
        qids=qids,
        values={label: values[label] for label in labels},
        missing=missing,
        unjudged=len(run_topics - judged),
        summaries={label: summaries[label] for label in labels},
        aggs={label: aggs[label] for label in labels},
        directions={label: registry[roots[label]].direction for label in labels},
        unscorable=unscorable,
    )


def _no_topic_in_common(qrels: Qrels, run: Run, run_topics: set[str]) -> InputError:
    return InputError(
        run.name,
        f"none of its {len(run_topics)} topics is judged in {qrels.name}: "
        "the topics do not line up (wrong qrels file?)",
    )


def _score_unanswered(
    measure: Any, label: str, values: dict[str, Any], summaries: dict[str, float], where: list[int]
) -> str | None:
    """Give the judged topics at ``where`` (which the run has no results for) what the
    measure's declaration says they score, and its summary with them; or say why it cannot.

    ``unanswered="value"``: what the measure computed on the empty ranking stays (a NaN
    there comes from the qrels, as for ``auc`` on a topic without a non-relevant document,
    and any run scores it so: tests/measures/test_directions.py checks that no measure declared so is
    NaN on an empty ranking of a topic with graded relevant and non-relevant judgements);
    a number: that value, and the mean or sum again over every judged topic; ``"refuse"``:
    nothing can stand for the topic.
    """
    import numpy as np

    rule = measure.unanswered
    if rule == "refuse":
        return f"{label} cannot score a topic without results (it has no value on an empty ranking)"
    if rule == "value":
        return None
    v = np.array(values[label], dtype=np.float64)
    v[where] = float(rule)
    values[label] = v
    summaries[label] = float(v.sum()) if measure.agg.over_topics == "sum" else mean(v)
    return None


def unanswered_text(sc: Scored, n: int) -> str:
    """ "has no results for 38 of 43 judged topics (2 5 ...)"."""
    shown = " ".join(sc.missing[:5]) + (" ..." if len(sc.missing) > 5 else "")
    return f"has no results for {len(sc.missing)} of {n} judged topics ({shown})"


def scoring_settings(
    rel_level: int = 1,
    ties: str = "docno",
    engine: str = "local",
    scheduler: str | None = None,
    workers: int | None = None,
) -> EvalSettings:
    """What compare and gate evaluate with: every judged topic (a topic a run has no results
    for scores 0, as with ``-c``), relevance level and tie rule as given, on ``engine``."""
    from ..settings import EvalSettings

    return EvalSettings.of(
        complete=True, rel_level=rel_level, ties=ties, engine=engine, scheduler=scheduler, workers=workers
    )


def load_inputs(
    qrels_path: Any, run_paths: Sequence[Any], options: EvalSettings | None = None
) -> tuple[Qrels, list[Run]]:
    """Read the qrels once and every run, as ``options`` say (the rank column for
    ``ties="rank"``); at most one of them may be ``-`` (stdin)."""
    from ..api import load_qrels, load_run

    if isinstance(qrels_path, str) and qrels_path == "-":
        raise UsageError("QRELS cannot be read from standard input; only one run can be '-'")
    if sum(1 for p in run_paths if isinstance(p, str) and p == "-") > 1:
        raise UsageError("only one run can be read from standard input ('-')")
    options = options or scoring_settings()
    hashed, ranks = options.hash_inputs, options.read_ranks
    qrels = load_qrels(qrels_path, hash=hashed)
    if options.engine == "dask":  # the runs are read on the cluster
        return qrels, list(run_paths)
    return qrels, [load_run(p, hash=hashed, ranks=ranks) for p in run_paths]


# ---------------------------------------------------------------- risk measures

_RISK = re.compile(r"^(?P<kind>urisk|trisk)(?:\.(?P<alpha>[^:]+))?:(?P<measure>.+)$", re.IGNORECASE)


@dataclass(frozen=True)
class RiskSpec:
    kind: str  # URisk | TRisk
    alpha: float
    measure: str  # the measure spec it is computed on
    text: str  # as given

    def label(self, of: str) -> str:
        return f"{self.kind}_{self.alpha:g}:{of}"


def parse_risk(spec: str) -> RiskSpec | None:
    """``urisk[.ALPHA]:MEASURE`` / ``trisk[.ALPHA]:MEASURE`` (ALPHA >= 0, default 1), else None."""
    m = _RISK.match(spec)
    if m is None:
        return None
    kind = "URisk" if m["kind"].lower() == "urisk" else "TRisk"
    alpha = 1.0
    if m["alpha"] is not None:
        if not re.fullmatch(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", m["alpha"]):
            raise UsageError(f"-m {spec}: risk parameter alpha '{m['alpha']}' is not a number")
        alpha = float(m["alpha"])
        if not math.isfinite(alpha) or alpha < 0:
            raise UsageError(f"-m {spec}: risk parameter alpha must be >= 0, got {m['alpha']}")
    return RiskSpec(kind, alpha, m["measure"], spec)


# ---------------------------------------------------------------- comparing


@dataclass
class Settings:
    test: str = "t"
    correction: str | None = None  # None: holm when there is more than one comparison
    permutations: int = 10000
    bootstrap: int = 10000
    seed: int = 0
    confidence: float = 0.95
    alpha: float = 0.05
    worst: int = 0


@dataclass(frozen=True)
class TopicLoss:
    """A topic a run lost on: its value, the baseline's, and the difference."""

    qid: str
    value: float
    baseline: float
    diff: float


@dataclass(frozen=True)
class Comparison:
    """One run against the baseline on one measure."""

    run: str
    baseline: str
    measure: str
    mean: float | None  # None: the measure has no value
    baseline_mean: float | None
    mean_diff: float | None
    rel_diff: float | None
    wins: int | None  # None: the measure has no direction (num_ret), so no topic is won or lost
    ties: int | None
    losses: int | None
    gsb: float | None
    ci_low: float | None
    ci_high: float | None
    test: str
    statistic: float | None
    p_value_raw: float | None
    p_value: float | None  # corrected over every comparison of the report
    effect_size: float | None
    topics: int
    topics_with_value: int
    missing_topics: int
    worst: tuple[TopicLoss, ...] = ()
    direction: str = "higher"  # which way the measure gets better (wins, losses, GSB, worst follow it)

    def significant(self, alpha: float) -> bool:
        return self.p_value is not None and self.p_value < alpha


@dataclass(frozen=True)
class RiskValue:
    """A risk-sensitive measure (URisk, TRisk) of one run against the baseline."""

    run: str
    baseline: str
    measure: str
    risk: str
    alpha: float
    of: str
    value: float | None
    p_value: float | None
    topics: int


@dataclass(frozen=True)
class BaselineMean:
    baseline: str
    measure: str
    mean: float | None


@dataclass(frozen=True)
class CompareReport:
    """Everything ``ireval compare`` shows; :meth:`to_dict` is its JSON."""

    version: str
    options: Mapping[str, Any]
    inputs: Mapping[str, Any]
    topics: int
    baselines: tuple[BaselineMean, ...]
    comparisons: tuple[Comparison, ...]
    risk: tuple[RiskValue, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "ireval": self.version,
            "command": "compare",
            "options": dict(self.options),
            "inputs": dict(self.inputs),
            "topics": self.topics,
            "baselines": [asdict(b) for b in self.baselines],
            "comparisons": [asdict(c) for c in self.comparisons],
            "risk": [asdict(r) for r in self.risk],
        }


def compare_scores(
    base: Scored,
    runs: Sequence[Scored],
    labels: Sequence[str],
    settings: Settings,
    *,
    risks: Sequence[tuple[RiskSpec, str]] = (),
) -> tuple[list[Comparison], list[RiskValue], str]:
    """Comparisons (measure-major, runs in order), risk values and the correction used."""
    from . import stats

    rows: list[dict[str, Any]] = []
    n = len(base.qids)
    for label in labels:
        y = base.values[label]
        base_mean = base.mean(label)
        direction = base.directions.get(label, "higher")
        sign = -1.0 if direction == "lower" else 1.0  # lower is better: a fall is a win
        for run in runs:
            x = run.values[label]
            d = x - y
            run_mean = run.mean(label)
            diff = run_mean - base_mean
            wins, ties, losses = stats.wins_ties_losses(sign * x, sign * y)
            paired = stats.paired_count(x, y)  # topics where both have a value
            gsb = stats.gsb(wins, losses, paired)
            if direction == "none":
                wins = ties = losses = gsb = None  # type: ignore[assignment]
            test = stats.paired_test(x, y, settings.test, permutations=settings.permutations, seed=settings.seed)
            low, high = stats.bootstrap_ci(
                d, confidence=settings.confidence, resamples=settings.bootstrap, seed=settings.seed
            )
            if base.aggs.get(label) in SUMMED and low is not None and high is not None:
                # the measure's summary is a sum over topics: so is its difference, and its interval
                low, high = low * paired, high * paired
            worst = (
                []
                if direction == "none"
                else sorted((i for i in range(n) if sign * d[i] < 0), key=lambda i: (float(sign * d[i]), run.qids[i]))
            )
            rows.append(
                {
                    "run": run.name,
                    "baseline": base.name,
                    "measure": label,
                    "mean": _num(run_mean),
                    "baseline_mean": _num(base_mean),
                    "mean_diff": _num(diff),
                    "rel_diff": _num(stats.ratio(diff, base_mean)),
                    "wins": wins,
                    "ties": ties,
                    "losses": losses,
                    "gsb": gsb,
                    "ci_low": low,
                    "ci_high": high,
                    "test": settings.test,
                    "statistic": test.statistic,
                    "p_value_raw": test.p_value,
                    "p_value": test.p_value,
                    "effect_size": stats.effect_size(d),
                    "topics": n,
                    "topics_with_value": paired,
                    "missing_topics": len(run.missing),
                    "worst": tuple(
                        TopicLoss(run.qids[i], float(x[i]), float(y[i]), float(d[i])) for i in worst[: settings.worst]
                    ),
                    "direction": direction,
                }
            )
    correction = settings.correction or ("holm" if len(rows) > 1 else "none")
    for row, p in zip(rows, stats.adjust([r["p_value_raw"] for r in rows], correction)):
        row["p_value"] = p
    risk_rows: list[RiskValue] = []
    for spec, label in risks:
        for run in runs:
            x, y = run.values[label], base.values[label]
            if base.directions.get(label) == "lower":  # risk weighs losses: a rise is one
                x, y = -x, -y
            if spec.kind == "URisk":
                value, p = stats.urisk(x, y, spec.alpha), None
            else:
                res = stats.trisk(x, y, spec.alpha)
                value, p = res.statistic, res.p_value
            risk_rows.append(
                RiskValue(run.name, base.name, spec.label(label), spec.kind, spec.alpha, label, value, p, n)
            )
    return [Comparison(**row) for row in rows], risk_rows, correction


def _num(v: float | None) -> float | None:
    return v if v is not None and math.isfinite(v) else None


def run_compare(
    qrels: Any,
    baseline: Any,
    runs: Sequence[Any],
    specs: Sequence[str],
    settings: Settings,
    evaluation: EvalSettings | None = None,
) -> CompareReport:
    """Read, evaluate and compare (``evaluation``: how each run is evaluated,
    :func:`scoring_settings`' by default). Inputs are paths or what
    :func:`irevalcli.api.load_qrels` and :func:`~irevalcli.api.load_run` take."""
    from ..version import VERSION

    plain: list[str] = []
    risk_specs: list[RiskSpec] = []
    for spec in specs:
        risk = parse_risk(spec)
        if risk is None:
            plain.append(spec)
        else:
            risk_specs.append(risk)
    # names are checked before any file is read
    risks: list[tuple[RiskSpec, str]] = []
    for r in risk_specs:
        requests, risk_labels = comparable_labels(r.measure, where=f"-m {r.text}")
        undirected = [q.measure.name for q in requests if q.measure.direction == "none"]
        if undirected:
            raise UsageError(
                f"-m {r.text}: {undirected[0]} has no direction (neither a higher nor a lower value is "
                "better), so it has no risk"
            )
        for label in risk_labels:
            risks.append((r, label))
    measure_specs = plain + [r.measure for r in risk_specs if r.measure not in plain]
    batches, all_labels = measure_batches(measure_specs)
    labels = measure_batches(plain)[1] if plain else []

    evaluation = evaluation or scoring_settings()
    qrels, loaded = load_inputs(qrels, [baseline, *runs], evaluation)
    scored = [score_run(qrels, run, batches, all_labels, options=evaluation) for run in loaded]
    for sc in scored:
        for label in labels + [label for _, label in risks]:
            if label in sc.unscorable:
                raise InputError(sc.name, f"{unanswered_text(sc, len(sc.qids))}, and {sc.unscorable[label]}")
    base, others = scored[0], scored[1:]
    rows, risk_rows, correction = compare_scores(base, others, labels, settings, risks=risks)
    options = {
        "measures": list(specs),
        "test": settings.test,
        "alternative": "two-sided",
        "correction": correction,
        "comparisons": len(rows),
        "permutations": settings.permutations if settings.test == "randomization" else None,
        "bootstrap": settings.bootstrap,
        "confidence": settings.confidence,
        "seed": settings.seed,
        "alpha": settings.alpha,
        "rel_level": evaluation.table.rel_level,
        "ties": evaluation.ties,
    }
    inputs = {
        "qrels": {"path": qrels.name, "sha256": qrels.sha256},
        "baseline": base.source(),
        "runs": [r.source() for r in others],
    }
    baselines = tuple(BaselineMean(base.name, label, _num(base.mean(label))) for label in labels)
    return CompareReport(VERSION, options, inputs, len(base.qids), baselines, tuple(rows), tuple(risk_rows))


def compare(  # noqa: PLR0913  public API: its keywords are the command's options
    qrels: Any,
    baseline: Any,
    runs: Any,
    measures: str | Sequence[str] = ("map",),
    *,
    test: str = "t",
    correction: str | None = None,
    permutations: int = 10000,
    bootstrap: int = 10000,
    confidence: float = 0.95,
    seed: int = 0,
    alpha: float = 0.05,
    worst: int = 0,
    rel_level: int = 1,
    ties: str = "docno",
) -> CompareReport:
    """Compare ``runs`` (one or a list) with ``baseline`` on the topics judged in ``qrels``,
    as ``ireval compare`` does; inputs are paths or DataFrames, as :func:`irevalcli.evaluate`
    takes. Raises :class:`irevalcli.errors.IrevalError` (``UsageError`` for a bad option).
    """
    _check_options(test, correction, permutations, bootstrap, seed, worst, confidence, alpha)
    run_list = list(runs) if isinstance(runs, (list, tuple)) else [runs]
    if not run_list:
        raise UsageError("runs: expected at least one run to compare with the baseline")
    specs = [measures] if isinstance(measures, str) else list(measures)
    settings = Settings(test, correction, permutations, bootstrap, seed, float(confidence), float(alpha), worst)
    return run_compare(qrels, baseline, run_list, specs or ["map"], settings, scoring_settings(rel_level, ties))


def _check_options(
    test: str,
    correction: str | None,
    permutations: int,
    bootstrap: int,
    seed: int,
    worst: int,
    confidence: float,
    alpha: float,
) -> None:
    """The API's options, checked as the command's are (a UsageError naming the option)."""
    from .stats import CORRECTIONS, MAX_RESAMPLES, TESTS

    if test not in TESTS:
        raise UsageError(f"test={test!r}: expected one of {', '.join(TESTS)}")
    if correction is not None and correction not in CORRECTIONS:
        raise UsageError(f"correction={correction!r}: expected one of {', '.join(CORRECTIONS)} or None")
    for name, v in (("permutations", permutations), ("bootstrap", bootstrap)):
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= MAX_RESAMPLES:
            raise UsageError(f"{name}={v!r}: expected an integer from 1 to {MAX_RESAMPLES}")
    for name, v in (("seed", seed), ("worst", worst)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise UsageError(f"{name}={v!r}: expected an integer >= 0")
    for name, f in (("confidence", confidence), ("alpha", alpha)):
        if isinstance(f, bool) or not isinstance(f, (int, float)) or not 0 < f < 1:
            raise UsageError(f"{name}={f!r}: expected a number between 0 and 1")


# ---------------------------------------------------------------- every run against every other


@dataclass(frozen=True)
class RunMean:
    """One run's summary of one measure."""

    run: str
    letter: str  # the run's mark in the tables: a, b, c ...
    measure: str
    mean: float | None  # None: the measure has no value


@dataclass(frozen=True)
class PairComparison:
    """Run ``run_a`` against run ``run_b`` (``run_a`` comes first in the order given) on one measure.

    ``wins``: topics where ``run_a`` is better than ``run_b`` as the measure's direction
    says; ``losses``: where it is worse. The two-sided test is symmetric, so one p-value
    serves both orders.
    """

    run_a: str
    run_b: str
    letter_a: str
    letter_b: str
    measure: str
    mean_a: float | None
    mean_b: float | None
    wins: int | None  # None: the measure has no direction (num_ret)
    ties: int | None
    losses: int | None
    test: str
    statistic: float | None
    p_value_raw: float | None
    p_value: float | None  # corrected over every pair and measure of the report
    topics_with_value: int
    direction: str = "higher"

    def significant(self, alpha: float) -> bool:
        return self.p_value is not None and self.p_value < alpha

    def better(self) -> str | None:
        """Which run's summary is better ("a", "b"), or None (equal, no value, no direction)."""
        if self.direction == "none" or self.mean_a is None or self.mean_b is None or self.mean_a == self.mean_b:
            return None
        a_higher = self.mean_a > self.mean_b
        return "a" if a_higher == (self.direction == "higher") else "b"


@dataclass(frozen=True)
class AllPairsReport:
    """Everything ``ireval compare --all-pairs`` shows; :meth:`to_dict` is its JSON.

    ``runs`` in the order given, each with its letter; ``pairs`` measure-major, then
    (first, second) in the order given, first before second.
    """

    version: str
    options: Mapping[str, Any]
    inputs: Mapping[str, Any]
    topics: int
    runs: tuple[str, ...]
    letters: tuple[str, ...]
    measures: tuple[str, ...]
    directions: tuple[str, ...]  # per measure: higher | lower | none
    means: tuple[RunMean, ...]  # measure-major, runs in order
    pairs: tuple[PairComparison, ...]

    def mean(self, measure: str, run: int) -> float | None:
        return self.means[self.measures.index(measure) * len(self.runs) + run].mean

    def pair(self, measure: str, i: int, j: int) -> PairComparison:
        """The comparison of runs ``i`` and ``j`` (in either order) on ``measure``."""
        if i == j:
            raise ValueError("a run is not compared with itself")
        a, b = min(i, j), max(i, j)
        n = len(self.runs)
        k = a * n - a * (a + 1) // 2 + (b - a - 1)  # index of (a, b) among the pairs i < j
        return self.pairs[self.measures.index(measure) * (n * (n - 1) // 2) + k]

    def matrix(self, measure: str) -> list[list[float | None]]:
        """Corrected p-values of ``measure``: row i, column j is run i against run j (None on the diagonal)."""
        n = len(self.runs)
        return [[None if i == j else self.pair(measure, i, j).p_value for j in range(n)] for i in range(n)]

    def beats(self, measure: str, run: int) -> list[int]:
        """The runs ``run`` is significantly better than on ``measure`` (at ``alpha``, by its direction)."""
        alpha = float(self.options["alpha"])
        out = []
        for other in range(len(self.runs)):
            if other == run:
                continue
            p = self.pair(measure, run, other)
            if p.significant(alpha) and p.better() == ("a" if run < other else "b"):
                out.append(other)
        return out

    def best(self, measure: str) -> list[int]:
        """The runs whose summary of ``measure`` is the best (all of them on a tie); none without a direction."""
        k = self.measures.index(measure)
        direction = self.directions[k]
        values = [(i, v) for i in range(len(self.runs)) if (v := self.mean(measure, i)) is not None]
        if direction == "none" or not values:
            return []
        top = (max if direction == "higher" else min)(v for _, v in values)
        return [i for i, v in values if v == top]

    def to_dict(self) -> dict[str, Any]:
        return {
            "ireval": self.version,
            "command": "compare",
            "all_pairs": True,
            "options": dict(self.options),
            "inputs": dict(self.inputs),
            "topics": self.topics,
            "runs": [{"run": r, "letter": x} for r, x in zip(self.runs, self.letters)],
            "measures": [{"measure": m, "direction": d} for m, d in zip(self.measures, self.directions)],
            "means": [asdict(m) for m in self.means],
            "pairs": [asdict(p) for p in self.pairs],
            "matrix": {m: self.matrix(m) for m in self.measures},
            "better_than": {
                m: {self.letters[i]: [self.letters[j] for j in self.beats(m, i)] for i in range(len(self.runs))}
                for m in self.measures
            },
        }


def run_letter(i: int) -> str:
    """The mark of the ``i``-th run: a ... z, then aa, ab ... (as spreadsheet columns, in lower case)."""
    out = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        out = chr(ord("a") + r) + out
    return out


def pair_scores(runs: Sequence[Scored], labels: Sequence[str], settings: Settings) -> tuple[list[PairComparison], str]:
    """Every pair of ``runs`` on every measure (measure-major, pairs i < j in order), with one
    correction over all of them; returns the comparisons and the correction used."""
    from . import stats

    letters = [run_letter(i) for i in range(len(runs))]
    rows: list[dict[str, Any]] = []
    for label in labels:
        direction = runs[0].directions.get(label, "higher")
        sign = -1.0 if direction == "lower" else 1.0
        for i, a in enumerate(runs):
            for j in range(i + 1, len(runs)):
                b = runs[j]
                x, y = a.values[label], b.values[label]
                wins, ties, losses = stats.wins_ties_losses(sign * x, sign * y)
                if direction == "none":
                    wins = ties = losses = None  # type: ignore[assignment]
                test = stats.paired_test(x, y, settings.test, permutations=settings.permutations, seed=settings.seed)
                rows.append(
                    {
                        "run_a": a.name,
                        "run_b": b.name,
                        "letter_a": letters[i],
                        "letter_b": letters[j],
                        "measure": label,
                        "mean_a": _num(a.mean(label)),
                        "mean_b": _num(b.mean(label)),
                        "wins": wins,
                        "ties": ties,
                        "losses": losses,
                        "test": settings.test,
                        "statistic": test.statistic,
                        "p_value_raw": test.p_value,
                        "p_value": test.p_value,
                        "topics_with_value": stats.paired_count(x, y),
                        "direction": direction,
                    }
                )
    correction = settings.correction or ("holm" if len(rows) > 1 else "none")
    for row, p in zip(rows, stats.adjust([r["p_value_raw"] for r in rows], correction)):
        row["p_value"] = p
    return [PairComparison(**row) for row in rows], correction


def run_all_pairs(
    qrels: Any,
    runs: Sequence[Any],
    specs: Sequence[str],
    settings: Settings,
    evaluation: EvalSettings | None = None,
) -> AllPairsReport:
    """Read, evaluate and compare every run with every other (``evaluation``: how each run is
    evaluated, :func:`scoring_settings`' by default)."""
    from ..version import VERSION

    if len(runs) < 2:
        raise UsageError("--all-pairs: expected at least two runs to compare")
    for spec in specs:
        if parse_risk(spec) is not None:
            raise UsageError(
                f"-m {spec}: a risk measure weighs losses against one baseline; --all-pairs has none "
                "(compare without --all-pairs)"
            )
    batches, labels = measure_batches(specs)  # names are checked before any file is read
    evaluation = evaluation or scoring_settings()
    qrels, loaded = load_inputs(qrels, list(runs), evaluation)
    scored = [score_run(qrels, run, batches, labels, options=evaluation) for run in loaded]
    for sc in scored:
        for label in labels:
            if label in sc.unscorable:
                raise InputError(sc.name, f"{unanswered_text(sc, len(sc.qids))}, and {sc.unscorable[label]}")
    pairs, correction = pair_scores(scored, labels, settings)
    letters = tuple(run_letter(i) for i in range(len(scored)))
    options = {
        "measures": list(specs),
        "test": settings.test,
        "alternative": "two-sided",
        "correction": correction,
        "comparisons": len(pairs),
        "permutations": settings.permutations if settings.test == "randomization" else None,
        "seed": settings.seed,
        "alpha": settings.alpha,
        "rel_level": evaluation.table.rel_level,
        "ties": evaluation.ties,
    }
    inputs = {"qrels": {"path": qrels.name, "sha256": qrels.sha256}, "runs": [sc.source() for sc in scored]}
    means = tuple(
        RunMean(sc.name, letters[i], label, _num(sc.mean(label))) for label in labels for i, sc in enumerate(scored)
    )
    return AllPairsReport(
        VERSION,
        options,
        inputs,
        len(scored[0].qids),
        tuple(sc.name for sc in scored),
        letters,
        tuple(labels),
        tuple(scored[0].directions[label] for label in labels),
        means,
        tuple(pairs),
    )


def compare_all_pairs(  # noqa: PLR0913  public API: its keywords are the command's options
    qrels: Any,
    runs: Sequence[Any],
    measures: str | Sequence[str] = ("map",),
    *,
    test: str = "t",
    correction: str | None = None,
    permutations: int = 10000,
    seed: int = 0,
    alpha: float = 0.05,
    rel_level: int = 1,
    ties: str = "docno",
) -> AllPairsReport:
    """Compare every one of ``runs`` (at least two) with every other on the topics judged in
    ``qrels``, as ``ireval compare --all-pairs`` does: for each pair and measure, wins, ties
    and losses and a paired two-sided test, with one correction (Holm by default) over all
    pairs and measures. Inputs are paths or DataFrames, as :func:`irevalcli.evaluate` takes.
    Raises :class:`irevalcli.errors.IrevalError` (``UsageError`` for a bad option).
    """
    _check_options(test, correction, permutations, 1, seed, 0, 0.5, alpha)
    if isinstance(runs, (str, bytes)) or not isinstance(runs, (list, tuple)):
        raise UsageError("runs: expected a list of at least two runs")
    specs = [measures] if isinstance(measures, str) else list(measures)
    settings = Settings(test, correction, permutations, 1, seed, 0.95, float(alpha), 0)
    return run_all_pairs(qrels, list(runs), specs or ["map"], settings, scoring_settings(rel_level, ties))
