"""``ireval compare``: several runs against a baseline, with paired statistics.

Every run is evaluated by :func:`irevalcli.api.evaluate` on the judged topics
of the qrels with ``complete=True`` (trec_eval's ``-c``): a topic a run has no
results for scores 0 and counts, and is reported. The statistics over the
per-topic scores come from :mod:`irevalcli.analysis.stats` (scipy).

This module also holds what ``ireval gate`` shares with it: scoring several
runs on one set of topics, and rendering a table as plain text or with rich.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import click

from ..analysis.stats import TESTS
from ..errors import InputError, UsageError
from ..io.arrow import decode_id
from ..output.cells import csv_text_cell, latex_escape, markdown_cell
from ..output.files import no_short_output_option
from .options import Decimal, Integer, engine_options, ties_option

if TYPE_CHECKING:
    import numpy as np

    from ..io.trec import Qrels, Run
    from ..measures.names import Request
    from ..settings import EvalSettings

COMPARE_FORMATS = ("table", "json", "markdown", "latex", "csv")
# Aggregates whose summary is a sum over topics (num_ret, num_rel_ret, TP ...), not a mean.
SUMMED = ("sum", "judged_sum")


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
    # one table for every batch: evaluate() resolves each batch as its own -m list
    ev = evaluate(qrels, run, batches, options=options or scoring_settings())
    evaluated = ev.run  # the run (with --engine dask: its topics, one row each)
    qids = ev.results.qids
    for col in ev.results.columns:
        if col.label in labels and col.label not in values and col.per_query is not None and col.kind != "str":
            values[col.label] = col.per_query
            summaries[col.label] = math.nan if col.summary is None else float(col.summary)
            aggs[col.label] = registry[col.root].agg
    run_topics = {decode_id(q) for q in pc.unique(evaluated.qid).to_pylist()}
    judged = set(qids)
    if not run_topics & judged:
        raise InputError(
            evaluated.name,
            f"none of its {len(run_topics)} topics is judged in {qrels.name}: "
            "the topics do not line up (wrong qrels file?)",
        )
    missing = [q for q in qids if q not in run_topics]
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
    )


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
    qrels_path: str, run_paths: Sequence[str], options: EvalSettings | None = None
) -> tuple[Qrels, list[Run]]:
    """Read the qrels once and every run, as ``options`` say (the rank column for
    ``ties="rank"``); at most one of them may be ``-`` (stdin)."""
    from ..api import load_qrels, load_run

    if qrels_path == "-":
        raise UsageError("QRELS cannot be read from standard input; only one run can be '-'")
    if sum(1 for p in run_paths if p == "-") > 1:
        raise UsageError("only one run can be read from standard input ('-')")
    options = options or scoring_settings()
    with options.reading():
        qrels = load_qrels(qrels_path)
        if options.engine == "dask":  # the runs are read on the cluster
            return qrels, list(run_paths)  # type: ignore[arg-type]
        return qrels, [load_run(p) for p in run_paths]


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


@dataclass
class Report:
    """Everything ``ireval compare`` shows, JSON-ready."""

    meta: dict[str, Any]
    comparisons: list[dict[str, Any]]
    baselines: list[dict[str, Any]]  # one per measure: the baseline's mean
    risk: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {**self.meta, "baselines": self.baselines, "comparisons": self.comparisons, "risk": self.risk}


def compare_scores(
    base: Scored,
    runs: Sequence[Scored],
    labels: Sequence[str],
    settings: Settings,
    *,
    risks: Sequence[tuple[RiskSpec, str]] = (),
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str]:
    """Comparison rows (measure-major, runs in order), risk rows and the correction used."""
    from ..analysis import stats

    rows: list[dict[str, Any]] = []
    n = len(base.qids)
    for label in labels:
        y = base.values[label]
        base_mean = base.mean(label)
        for run in runs:
            x = run.values[label]
            d = x - y
            run_mean = run.mean(label)
            diff = run_mean - base_mean
            wins, ties, losses = stats.wins_ties_losses(x, y)
            paired = stats.paired_count(x, y)  # topics where both have a value
            test = stats.paired_test(x, y, settings.test, permutations=settings.permutations, seed=settings.seed)
            low, high = stats.bootstrap_ci(
                d, confidence=settings.confidence, resamples=settings.bootstrap, seed=settings.seed
            )
            if base.aggs.get(label) in SUMMED and low is not None and high is not None:
                # the measure's summary is a sum over topics: so is its difference, and its interval
                low, high = low * paired, high * paired
            worst = sorted((i for i in range(n) if d[i] < 0), key=lambda i: (float(d[i]), run.qids[i]))
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
                    "gsb": stats.gsb(wins, losses, paired),
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
                    "worst": [
                        {"qid": run.qids[i], "value": float(x[i]), "baseline": float(y[i]), "diff": float(d[i])}
                        for i in worst[: settings.worst]
                    ],
                }
            )
    correction = settings.correction or ("holm" if len(rows) > 1 else "none")
    for row, p in zip(rows, stats.adjust([r["p_value_raw"] for r in rows], correction)):
        row["p_value"] = p
    risk_rows: list[dict[str, Any]] = []
    for spec, label in risks:
        for run in runs:
            x, y = run.values[label], base.values[label]
            if spec.kind == "URisk":
                value, p = stats.urisk(x, y, spec.alpha), None
            else:
                res = stats.trisk(x, y, spec.alpha)
                value, p = res.statistic, res.p_value
            risk_rows.append(
                {
                    "run": run.name,
                    "baseline": base.name,
                    "measure": spec.label(label),
                    "risk": spec.kind,
                    "alpha": spec.alpha,
                    "of": label,
                    "value": value,
                    "p_value": p,
                    "topics": n,
                }
            )
    return rows, risk_rows, correction


def _num(v: float | None) -> float | None:
    return v if v is not None and math.isfinite(v) else None


def run_compare(
    qrels_path: str,
    baseline_path: str,
    run_paths: Sequence[str],
    specs: Sequence[str],
    settings: Settings,
    evaluation: EvalSettings | None = None,
) -> Report:
    """Read, evaluate and compare: the library side of ``ireval compare`` (``evaluation``:
    how each run is evaluated, :func:`scoring_settings`' by default)."""
    from ..version import VERSION as __version__

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
        for label in comparable_labels(r.measure, where=f"-m {r.text}")[1]:
            risks.append((r, label))
    measure_specs = plain + [r.measure for r in risk_specs if r.measure not in plain]
    batches, all_labels = measure_batches(measure_specs)
    labels = measure_batches(plain)[1] if plain else []

    evaluation = evaluation or scoring_settings()
    qrels, loaded = load_inputs(qrels_path, [baseline_path, *run_paths], evaluation)
    scored = [score_run(qrels, run, batches, all_labels, options=evaluation) for run in loaded]
    base, runs = scored[0], scored[1:]
    rows, risk_rows, correction = compare_scores(base, runs, labels, settings, risks=risks)
    meta = {
        "ireval": __version__,
        "command": "compare",
        "options": {
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
        },
        "inputs": {
            "qrels": {"path": qrels.name, "sha256": qrels.sha256},
            "baseline": base.source(),
            "runs": [r.source() for r in runs],
        },
        "topics": len(base.qids),
    }
    baselines = [{"baseline": base.name, "measure": label, "mean": _num(base.mean(label))} for label in labels]
    return Report(meta=meta, comparisons=rows, baselines=baselines, risk=risk_rows)


# ---------------------------------------------------------------- rendering helpers


def fmt_value(v: float | None, spec: str = ".4f") -> str:
    """``v`` formatted; "-" for no value (None or NaN). A value that rounds to zero prints
    without a minus sign (-7.7e-18 is "+0.0000", never "-0.0000")."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    text = format(v, spec)
    if text.startswith("-") and not any(ch in "123456789" for ch in text.split("e")[0]) and "inf" not in text:
        text = ("+" if "+" in spec else "") + text[1:]
    return text


def fmt_p(p: float | None) -> str:
    if p is None:
        return "-"
    return "<0.0001" if p < 0.0001 else f"{p:.4f}"


def fmt_pct(v: float | None) -> str:
    return "-" if v is None else fmt_value(v * 100, "+.1f") + "%"


def distinct(a: float, b: float, places: int = 4) -> tuple[str, str]:
    """``a`` and ``b`` with as many decimals as it takes to show how they compare.

    At least ``places`` decimals; more until the printed numbers compare as the
    numbers do (0.28669999 against 0.2867 prints "0.28669999" and "0.2867", not
    "0.2867 < 0.2867"). ``b`` is a threshold: printed as written (shortest repr).
    """
    tb = short(b)
    for p in range(places, 18):
        ta = fmt_value(a, f".{p}f")
        if (float(ta) < float(tb)) == (a < b) and (float(ta) > float(tb)) == (a > b):
            return ta, tb
    return repr(a), tb


def short(v: float) -> str:
    """A threshold as the user wrote it: the shortest repr, without a trailing ".0"."""
    v = float(v)
    if v == 0:
        return "0"
    text = repr(v)
    alt = f"{v:.15g}"  # 0.07 * 100 is 7.000000000000001; show 7
    if float(alt) != v and abs(float(alt) - v) <= 1e-12 * abs(v):
        text = alt
    return text[:-2] if text.endswith(".0") else text


def json_ready(doc: Any) -> Any:
    """``doc`` with every NaN or infinity replaced by None (JSON's null): a value that
    does not exist is written as null, never as the invalid token NaN."""
    if isinstance(doc, float):
        return doc if math.isfinite(doc) else None
    if isinstance(doc, dict):
        return {k: json_ready(v) for k, v in doc.items()}
    if isinstance(doc, (list, tuple)):
        return [json_ready(v) for v in doc]
    return doc


def plain_table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool]) -> str:
    """Columns padded to width, two spaces apart; numbers right-aligned. No trailing blanks."""
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        out = [c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right)]
        return "  ".join(out).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)]) + "\n"


def rich_table(
    title: str,
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    right: Sequence[bool],
    styles: Sequence[str | None] | None = None,
    notes: Sequence[str] = (),
    fold: Sequence[int] = (),
    width: int | None = None,
) -> bytes:
    """The same table drawn by rich for a terminal, as bytes with its escape codes.

    Every cell, the title and the notes are plain text, never rich markup: ids such
    as ``[red]x[/red]`` or ``[/x]`` are shown as they are. Only the columns in ``fold``
    (names, reasons) wrap on a narrow terminal, at spaces (a word longer than the
    column is folded); numbers are never cut. ``width``: the terminal's by default.
    """
    import io

    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    width = width or terminal_width()
    table = Table(title=Text(title), title_justify="left", header_style="bold", box=box.SIMPLE_HEAD, pad_edge=False)
    least = 3 * len(headers) - 1  # edges, separators and inner padding of SIMPLE_HEAD without edge padding
    for i, (h, r) in enumerate(zip(headers, right)):
        justify: Literal["left", "right"] = "right" if r else "left"
        cells = [row[i] for row in rows]
        if i in fold:
            words = [len(w) for c in [h, *cells] for w in c.split()] or [1]
            need = min(max(words), 16)
            table.add_column(Text(h), justify=justify, overflow="fold", min_width=need)
        else:
            need = max([len(h)] + [len(c) for c in cells])
            table.add_column(Text(h), justify=justify, no_wrap=True, min_width=need)
        least += need
    for i, row in enumerate(rows):
        table.add_row(*(Text(c) for c in row), style=styles[i] if styles else None)
    buf = io.StringIO()
    console = Console(
        file=buf,
        force_terminal=True,
        width=max(width, least),
        highlight=False,
        soft_wrap=False,
        markup=False,
        emoji=False,
    )
    console.print(table)
    for note in notes:
        console.print(Text(note))
    return buf.getvalue().encode("utf-8", "surrogateescape")


def terminal_width() -> int:
    import shutil

    return shutil.get_terminal_size((120, 24)).columns


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool]) -> str:
    out = [
        "| " + " | ".join(markdown_cell(h) for h in headers) + " |",
        "|" + "|".join("---:" if r else "---" for r in right) + "|",
    ]
    out += ["| " + " | ".join(markdown_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(out) + "\n"


def dump_json(doc: Any) -> bytes:
    import json

    return (json.dumps(json_ready(doc), indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode(
        "utf-8", "surrogateescape"
    )


def stdout_is_terminal() -> bool:
    try:
        return bool(sys.stdout.isatty())
    except (AttributeError, ValueError):
        return False


# ---------------------------------------------------------------- compare formats

HEADERS = ("Measure", "Run", "Mean", "Diff", "Rel", "W/T/L", "GSB", "CI", "p", "d", "Missing")
RIGHT = (False, False, True, True, True, True, True, False, True, True, True)


def _sig(row: dict[str, Any], alpha: float) -> bool:
    return row["p_value"] is not None and row["p_value"] < alpha


def _ci(row: dict[str, Any]) -> str:
    if row["ci_low"] is None:
        return "-"
    return f"[{fmt_value(row['ci_low'], '+.4f')}, {fmt_value(row['ci_high'], '+.4f')}]"


def _table_rows(report: Report) -> tuple[list[list[str]], list[str | None]]:
    alpha = report.meta["options"]["alpha"]
    rows: list[list[str]] = []
    styles: list[str | None] = []
    n = report.meta["topics"]
    base_missing = len(report.meta["inputs"]["baseline"]["missing_topics"])
    for b in report.baselines:
        rows.append(
            [
                b["measure"],
                f"{b['baseline']} (baseline)",
                fmt_value(b["mean"]),
                "",
                "",
                "",
                "",
                "",
                "",
                "",
                f"{base_missing}/{n}" if base_missing else "0",
            ]
        )
        styles.append("dim")
        for c in report.comparisons:
            if c["measure"] != b["measure"]:
                continue
            star = "*" if _sig(c, alpha) else ""
            rows.append(
                [
                    "",
                    c["run"],
                    fmt_value(c["mean"]),
                    fmt_value(c["mean_diff"], "+.4f"),
                    fmt_pct(c["rel_diff"]),
                    f"{c['wins']}/{c['ties']}/{c['losses']}",
                    fmt_value(c["gsb"], "+.3f"),
                    _ci(c),
                    fmt_p(c["p_value"]) + star,
                    fmt_value(c["effect_size"], "+.2f"),
                    f"{c['missing_topics']}/{n}" if c["missing_topics"] else "0",
                ]
            )
            styles.append(None if not star else ("green" if c["mean_diff"] and c["mean_diff"] > 0 else "red"))
    return rows, styles


def _risk_rows(report: Report) -> list[list[str]]:
    return [[r["measure"], r["run"], fmt_value(r["value"], "+.4f"), fmt_p(r["p_value"])] for r in report.risk]


def _notes(report: Report) -> list[str]:
    from ..analysis.stats import TEST_NAMES

    o = report.meta["options"]
    inputs = report.meta["inputs"]
    n = report.meta["topics"]
    corr = {"holm": "Holm-corrected", "bonferroni": "Bonferroni-corrected", "none": "uncorrected"}[o["correction"]]
    test = TEST_NAMES[o["test"]]
    if o["test"] == "randomization":
        test += f" ({o['permutations']} permutations, seed {o['seed']})"
    notes = [
        f"{n} topics judged in {inputs['qrels']['path']}; a topic missing from a run scores 0.",
        (
            f"p: {test}, two-sided, {corr} over {o['comparisons']} comparison{'s' if o['comparisons'] != 1 else ''};"
            f" * p < {o['alpha']:g}."
        ),
        (
            f"CI: {o['confidence'] * 100:g}% paired bootstrap percentile interval of the mean difference "
            f"({o['bootstrap']} resamples, seed {o['seed']}). GSB: (wins - losses) / topics. "
            "d: mean difference / sd of the differences."
        ),
    ]
    for src in [inputs["baseline"], *inputs["runs"]]:
        miss = src["missing_topics"]
        if miss:
            shown = " ".join(miss[:10]) + (" ..." if len(miss) > 10 else "")
            notes.append(f"{src['path']} has no results for {len(miss)} of {n} topics (scored 0): {shown}")
        if src["unjudged_topics"]:
            k = src["unjudged_topics"]
            notes.append(
                f"{src['path']} has {k} topic{'s' if k != 1 else ''} not judged in {inputs['qrels']['path']} (ignored)"
            )
    for c in report.comparisons:
        if c["worst"]:
            lost = ", ".join(f"{w['qid']} {w['diff']:+.4f}" for w in c["worst"])
            notes.append(f"Lost most ({c['run']}, {c['measure']}): {lost}")
    return notes


def _headers(report: Report) -> tuple[str, ...]:
    return tuple(f"{report.meta['options']['confidence'] * 100:g}% CI" if h == "CI" else h for h in HEADERS)


def format_table(report: Report) -> bytes:
    rows, _ = _table_rows(report)
    out = [plain_table(_headers(report), rows, RIGHT)]
    if report.risk:
        out.append("\n" + plain_table(("Risk", "Run", "Value", "p"), _risk_rows(report), (False, False, True, True)))
    out.append("\n" + "\n".join(_notes(report)) + "\n")
    return "".join(out).encode("utf-8", "surrogateescape")


# On a terminal too narrow for every column, the table is drawn as two: the means with
# their differences and p-values, then the paired statistics.
_MEANS_COLUMNS = (0, 1, 2, 3, 4, 8, 10)  # Measure Run Mean Diff Rel p Missing
_PAIRED_COLUMNS = (0, 1, 5, 6, 7, 9)  # Measure Run W/T/L GSB CI d


def rich_notes(notes: Sequence[str], width: int) -> bytes:
    """Notes wrapped at spaces to the terminal's width, as plain text."""
    import io

    from rich.console import Console
    from rich.text import Text

    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=width, highlight=False, markup=False, emoji=False)
    for note in notes:
        console.print(Text(note))
    return buf.getvalue().encode("utf-8", "surrogateescape")


def visible_width(data: bytes) -> int:
    """The longest line of rendered output, escape codes left out."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", data.decode("utf-8", "surrogateescape"))
    return max((len(line) for line in text.splitlines()), default=0)


def format_rich(report: Report, width: int | None = None) -> bytes:
    width = width or terminal_width()
    rows, styles = _table_rows(report)
    headers = _headers(report)
    title = f"ireval compare: against {report.meta['inputs']['baseline']['path']}"
    data = rich_table(title, headers, rows, RIGHT, styles, fold=(1,), width=width)
    if visible_width(data) > width:
        data = b""
        for cols, name in ((_MEANS_COLUMNS, title), (_PAIRED_COLUMNS, "Paired statistics")):
            data += rich_table(
                name,
                [headers[i] for i in cols],
                [[r[i] for i in cols] for r in rows],
                [RIGHT[i] for i in cols],
                styles,
                fold=(1,),
                width=width,
            )
    if report.risk:
        data += rich_table(
            "Risk-sensitive measures",
            ("Risk", "Run", "Value", "p"),
            _risk_rows(report),
            (False, False, True, True),
            fold=(0, 1),
            width=width,
        )
    return data + rich_notes(_notes(report), width)


def format_markdown(report: Report) -> bytes:
    rows, _ = _table_rows(report)
    out = [
        f"### ireval compare: against `{report.meta['inputs']['baseline']['path']}`\n\n",
        markdown_table(_headers(report), rows, RIGHT),
    ]
    if report.risk:
        out.append("\n" + markdown_table(("Risk", "Run", "Value", "p"), _risk_rows(report), (False, False, True, True)))
    out.append("\n" + "\n".join(f"- {markdown_cell(n)}" for n in _notes(report)) + "\n")
    return "".join(out).encode("utf-8", "surrogateescape")


def format_latex(report: Report) -> bytes:
    """A booktabs tabular; significant differences carry a dagger."""
    alpha = report.meta["options"]["alpha"]
    o = report.meta["options"]
    lines = [
        (
            f"% ireval compare: {o['test']} test, {o['correction']} correction, "
            f"{o['confidence'] * 100:g}% bootstrap CI, seed {o['seed']}"
        ),
        r"\begin{tabular}{llrrrrcr}",
        r"\toprule",
        r"Measure & Run & Mean & $\Delta$ & $\Delta$\% & W/T/L & " + f"{o['confidence'] * 100:g}" + r"\% CI & $p$ \\",
        r"\midrule",
    ]
    for i, b in enumerate(report.baselines):
        if i:
            lines.append(r"\midrule")
        lines.append(
            f"{latex_escape(b['measure'])} & {latex_escape(b['baseline'])} & {fmt_value(b['mean'])} "
            r"& & & & & \\"
        )
        for c in report.comparisons:
            if c["measure"] != b["measure"]:
                continue
            dag = r"$^\dagger$" if _sig(c, alpha) else ""
            lines.append(
                f" & {latex_escape(c['run'])} & {fmt_value(c['mean'])}{dag} & {fmt_value(c['mean_diff'], '+.4f')} & "
                f"{latex_escape(fmt_pct(c['rel_diff']))} & {c['wins']}/{c['ties']}/{c['losses']} & "
                f"{_ci(c)} & {latex_escape(fmt_p(c['p_value']))} " + r"\\"
            )
    if report.risk:
        lines.append(r"\midrule")
        for r in report.risk:
            lines.append(
                f"{latex_escape(r['measure'])} & {latex_escape(r['run'])} & {fmt_value(r['value'], '+.4f')} "
                f"& & & & & {latex_escape(fmt_p(r['p_value']))} " + r"\\"
            )
    lines += [
        r"\bottomrule",
        r"\end{tabular}",
        f"% $^\\dagger$: p < {alpha:g} ({o['test']} test, two-sided, {o['correction']} correction)",
    ]
    return ("\n".join(lines) + "\n").encode("utf-8", "surrogateescape")


CSV_FIELDS = (
    "run",
    "baseline",
    "measure",
    "mean",
    "baseline_mean",
    "mean_diff",
    "rel_diff",
    "wins",
    "ties",
    "losses",
    "gsb",
    "ci_low",
    "ci_high",
    "test",
    "statistic",
    "p_value_raw",
    "p_value",
    "effect_size",
    "topics",
    "missing_topics",
)


def _csv_cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, (int, float)):
        return repr(v)
    return csv_text_cell(str(v))  # a run named =HYPERLINK(...) is text, never a formula


def format_csv(report: Report) -> bytes:
    """One row per comparison, full precision; risk measures follow with their value in ``mean``."""
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_FIELDS)
    for c in report.comparisons:
        w.writerow([_csv_cell(c[f]) for f in CSV_FIELDS])
    for r in report.risk:
        row = {
            "run": r["run"],
            "baseline": r["baseline"],
            "measure": r["measure"],
            "mean": r["value"],
            "test": "t" if r["risk"] == "TRisk" else None,
            "statistic": r["value"] if r["risk"] == "TRisk" else None,
            "p_value_raw": r["p_value"],
            "p_value": r["p_value"],
            "topics": r["topics"],
        }
        w.writerow([_csv_cell(row.get(f)) for f in CSV_FIELDS])
    return buf.getvalue().encode("utf-8", "surrogateescape")


def format_compare(report: Report, fmt: str, *, terminal: bool = False) -> bytes:
    if fmt == "table":
        return format_rich(report) if terminal else format_table(report)
    if fmt == "json":
        return dump_json(report.to_dict())
    return {"markdown": format_markdown, "latex": format_latex, "csv": format_csv}[fmt](report)


# ---------------------------------------------------------------- command


def _positive(ctx: Any, param: Any, value: int) -> int:
    if value is not None and value < 1:
        raise click.BadParameter(f"must be at least 1, got {value}")
    return value


def _probability(ctx: Any, param: Any, value: float | None) -> float | None:
    if value is not None and not 0 < value < 1:
        raise click.BadParameter(f"must be between 0 and 1, got {value:g}")
    return value


COMPARE_EPILOG = """\b
Examples:
  ireval compare qrels.txt base.txt new.txt -m map -m ndcg_cut.10
  ireval compare qrels.txt base.txt a.txt b.txt -m P.10 --test randomization --worst 5
  ireval compare qrels.txt base.txt new.txt -m map -m trisk.5:map --format json

\b
Risk-sensitive measures against the baseline: urisk[.ALPHA]:MEASURE (URisk,
Wang et al. SIGIR 2012) and trisk[.ALPHA]:MEASURE (TRisk, Dincer et al. SIGIR
2014); ALPHA >= 0 weighs losses by 1 + ALPHA (default 1).
"""


@click.command(
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100}, epilog=COMPARE_EPILOG
)
@click.argument("qrels", metavar="QRELS")
@click.argument("baseline", metavar="BASELINE")
@click.argument("runs", metavar="RUN...", nargs=-1, required=True)
@click.option(
    "-m",
    "--measure",
    "measures",
    multiple=True,
    metavar="NAME[.PARAMS]",
    help="Measure to compare on (repeatable; default: map), or a risk measure (see below).",
)
@click.option(
    "--test", type=click.Choice(TESTS), default="t", show_default=True, help="Paired significance test (two-sided)."
)
@click.option(
    "--permutations",
    type=Integer(),
    default=10000,
    show_default=True,
    callback=_positive,
    metavar="N",
    help="Random sign flips for --test randomization (exact when 2^topics <= N).",
)
@click.option(
    "--correction",
    type=click.Choice(["holm", "bonferroni", "none"]),
    default=None,
    help="Multiple-comparison correction over runs x measures [default: holm when more than one].",
)
@click.option(
    "--bootstrap",
    type=Integer(),
    default=10000,
    show_default=True,
    callback=_positive,
    metavar="N",
    help="Bootstrap resamples for the confidence interval of the mean difference.",
)
@click.option(
    "--confidence",
    type=Decimal(),
    default=0.95,
    show_default=True,
    callback=_probability,
    metavar="LEVEL",
    help="Confidence level of the interval.",
)
@click.option(
    "--seed",
    type=Integer(min=0),
    default=0,
    show_default=True,
    metavar="N",
    help="Seed of the bootstrap and randomization test: same inputs and seed, same output.",
)
@click.option(
    "--alpha",
    type=Decimal(),
    default=0.05,
    show_default=True,
    callback=_probability,
    help="Mark differences whose (corrected) p-value is below this.",
)
@click.option(
    "--worst",
    type=Integer(min=0),
    default=0,
    show_default=True,
    metavar="N",
    help="Also list the N topics each run lost most on.",
)
@click.option(
    "-l",
    "--level_for_rel",
    "rel_level",
    type=Integer(),
    default=1,
    metavar="N",
    help="Relevant means a judgement >= N (default 1).",
)
@ties_option()
@click.option(
    "--format",
    "fmt",
    type=click.Choice(COMPARE_FORMATS),
    default=None,
    help="Output format (table: rich on a terminal, plain text otherwise) [default: table, or the one "
    "the --output name says].",
)
@click.option("--output", metavar="PATH", help="Write the output to PATH atomically (default: stdout).")
@no_short_output_option("ireval compare")
@engine_options
@click.option("--debug", is_flag=True, help="Show a traceback for errors.")
def compare_command(
    qrels: str,
    baseline: str,
    runs: tuple[str, ...],
    measures: tuple[str, ...],
    test: str,
    permutations: int,
    correction: str | None,
    bootstrap: int,
    confidence: float,
    seed: int,
    alpha: float,
    worst: int,
    rel_level: int,
    fmt: str | None,
    output: str | None,
    debug: bool,
    ties: str = "docno",
    engine: str = "local",
    scheduler: str | None = None,
    workers: int | None = None,
) -> None:
    """Compare RUNs with BASELINE on the topics judged in QRELS, with paired statistics.

    For each run and measure: the mean, the difference from the baseline,
    wins/ties/losses over topics, GSB, a bootstrap confidence interval of the mean
    difference, a p-value (corrected for several comparisons) and an effect size.
    A topic a run has no results for scores 0, as with trec_eval -c, and is reported.
    """
    from ..output.files import check_not_input, check_output_path, format_for, is_stdout, write_output

    fmt = format_for(output, fmt, COMPARE_FORMATS, "table", command="ireval compare") or "table"
    if not is_stdout(output):  # refused before any work, not after it
        check_output_path(output)  # type: ignore[arg-type]
        check_not_input(output, [qrels, baseline, *runs])
    settings = Settings(
        test=test,
        correction=correction,
        permutations=permutations,
        bootstrap=bootstrap,
        seed=seed,
        confidence=confidence,
        alpha=alpha,
        worst=worst,
    )
    evaluation = scoring_settings(rel_level, ties, engine, scheduler, workers)  # checked before any file is read
    from ..engine.dask_engine import session
    from ..measures.names import split_specs  # -m 'map P.10': two measures

    with session(engine, scheduler, workers):  # --engine dask: one cluster for every run
        report = run_compare(qrels, baseline, runs, split_specs(measures) or ["map"], settings, evaluation)
    terminal = output in (None, "-") and stdout_is_terminal()
    write_output(format_compare(report, fmt, terminal=terminal), output, fmt)
