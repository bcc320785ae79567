"""``ireval compare``: several runs against a baseline, with paired statistics.

What it decides (scoring, per-topic alignment, statistics) is
:mod:`irevalcli.analysis.compare`; this module parses the options and renders the
report as a table (plain or rich), JSON, Markdown, LaTeX or CSV.
"""

from __future__ import annotations

from typing import Any

import click

from ..analysis.compare import (
    CompareReport,
    Scored,
    Settings,
    comparable_labels,
    load_inputs,
    measure_batches,
    run_all_pairs,
    run_compare,
    score_run,
    scoring_settings,
)
from ..analysis.stats import MAX_RESAMPLES, TESTS
from ..errors import UsageError
from ..output.cells import markdown_cell
from ..output.files import no_short_output_option
from ..output.tables import (
    CORRECTED,
    Cell,
    Entry,
    Table,
    distinct,
    dump_json,
    fmt_p,
    fmt_pct,
    fmt_value,
    input_notes,
    paired_test_text,
    render_csv,
    render_latex,
    render_markdown,
    render_plain,
    render_rich,
    rich_notes,
    short,
    stdout_is_terminal,
    terminal_width,
    value_cell,
    visible_width,
)
from .options import (
    Decimal,
    Integer,
    debug_option,
    engine_options,
    measure_option,
    output_option,
    probability,
    rel_level_option,
    ties_option,
)

# What tests and older callers import from here; the code lives in analysis and output.
__all__ = [
    "COMPARE_FORMATS",
    "CompareReport",
    "Scored",
    "Settings",
    "comparable_labels",
    "compare_command",
    "distinct",
    "format_compare",
    "load_inputs",
    "measure_batches",
    "run_compare",
    "score_run",
    "scoring_settings",
    "short",
]

COMPARE_FORMATS = ("table", "json", "markdown", "latex", "csv")
Report = CompareReport | dict[str, Any]


def _doc(report: Report) -> dict[str, Any]:
    """The report as its JSON-ready dict (what every renderer reads)."""
    return report.to_dict() if isinstance(report, CompareReport) else report


# ---------------------------------------------------------------- compare formats

HEADERS = ("Measure", "Run", "Mean", "Diff", "Rel", "W/T/L", "GSB", "CI", "p", "d", "Missing")
ALIGN = "llrrrrrlrrr"


def _sig(row: dict[str, Any], alpha: float) -> bool:
    return row["p_value"] is not None and row["p_value"] < alpha


def _wtl(row: dict[str, Any]) -> str:
    """Wins/ties/losses; "-" for a measure without a direction (num_ret)."""
    if row["wins"] is None:
        return "-"
    return f"{row['wins']}/{row['ties']}/{row['losses']}"


def _better(row: dict[str, Any]) -> bool:
    """Whether the run's mean is better than the baseline's, as the measure's direction says."""
    diff = row["mean_diff"] or 0
    return diff < 0 if row.get("direction") == "lower" else diff > 0


def _ci(row: dict[str, Any]) -> str:
    if row["ci_low"] is None:
        return "-"
    return f"[{fmt_value(row['ci_low'], '+.4f')}, {fmt_value(row['ci_high'], '+.4f')}]"


def _table_rows(report: Report) -> tuple[list[list[str]], list[str | None]]:
    """The main table's cells and a rich style per row (dim baselines, green/red significant rows)."""
    doc = _doc(report)
    alpha = doc["options"]["alpha"]
    rows: list[list[str]] = []
    styles: list[str | None] = []
    n = doc["topics"]
    base_missing = len(doc["inputs"]["baseline"]["missing_topics"])
    for b in doc["baselines"]:
        rows.append([b["measure"], f"{b['baseline']} (baseline)", fmt_value(b["mean"]), *[""] * 7])
        rows[-1].append(f"{base_missing}/{n}" if base_missing else "0")
        styles.append("dim")
        for c in doc["comparisons"]:
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
                    _wtl(c),
                    fmt_value(c["gsb"], "+.3f"),
                    _ci(c),
                    fmt_p(c["p_value"]) + star,
                    fmt_value(c["effect_size"], "+.2f"),
                    f"{c['missing_topics']}/{n}" if c["missing_topics"] else "0",
                ]
            )
            styles.append(None if not star else ("green" if _better(c) else "red"))
    return rows, styles


def _table(report: Report) -> Table:
    """The means, differences and paired statistics: one row per baseline and run, by measure."""
    doc = _doc(report)
    rows, styles = _table_rows(report)
    headers = tuple(f"{doc['options']['confidence'] * 100:g}% CI" if h == "CI" else h for h in HEADERS)
    title = f"ireval compare: against {doc['inputs']['baseline']['path']}"
    return Table(headers, rows, ALIGN, title=title, styles=styles, fold=(1,))


def _risk_table(report: Report) -> Table | None:
    doc = _doc(report)
    if not doc["risk"]:
        return None
    rows = [[r["measure"], r["run"], fmt_value(r["value"], "+.4f"), fmt_p(r["p_value"])] for r in doc["risk"]]
    return Table(("Risk", "Run", "Value", "p"), rows, "llrr", title="Risk-sensitive measures", fold=(0, 1))


def _notes(report: Report) -> list[str]:
    doc = _doc(report)
    o = doc["options"]
    inputs = doc["inputs"]
    n = doc["topics"]
    corr, test = CORRECTED[o["correction"]], paired_test_text(o)
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
    notes += input_notes([inputs["baseline"], *inputs["runs"]], n, inputs["qrels"]["path"])
    for c in doc["comparisons"]:
        if c["worst"]:
            lost = ", ".join(f"{w['qid']} {w['diff']:+.4f}" for w in c["worst"])
            notes.append(f"Lost most ({c['run']}, {c['measure']}): {lost}")
    return notes


def format_table(report: Report) -> bytes:
    out = [render_plain(_table(report))]
    if risk := _risk_table(report):
        out.append("\n" + render_plain(risk))
    out.append("\n" + "\n".join(_notes(report)) + "\n")
    return "".join(out).encode("utf-8", "surrogateescape")


# On a terminal too narrow for every column, the table is drawn as two: the means with
# their differences and p-values, then the paired statistics.
_MEANS_COLUMNS = (0, 1, 2, 3, 4, 8, 10)  # Measure Run Mean Diff Rel p Missing
_PAIRED_COLUMNS = (0, 1, 5, 6, 7, 9)  # Measure Run W/T/L GSB CI d


def format_rich(report: Report, width: int | None = None) -> bytes:
    width = width or terminal_width()
    table = _table(report)
    data = render_rich(table, width)
    if visible_width(data) > width:
        data = render_rich(table.columns(_MEANS_COLUMNS), width)
        data += render_rich(table.columns(_PAIRED_COLUMNS, "Paired statistics"), width)
    if risk := _risk_table(report):
        data += render_rich(risk, width)
    return data + rich_notes(_notes(report), width)


def format_markdown(report: Report) -> bytes:
    doc = _doc(report)
    out = [
        f"### ireval compare: against `{doc['inputs']['baseline']['path']}`\n\n",
        render_markdown(_table(report)),
    ]
    if risk := _risk_table(report):
        out.append("\n" + render_markdown(risk))
    out.append("\n" + "\n".join(f"- {markdown_cell(n)}" for n in _notes(report)) + "\n")
    return "".join(out).encode("utf-8", "surrogateescape")


def format_latex(report: Report) -> bytes:
    """A booktabs tabular; significant differences carry a dagger."""
    doc = _doc(report)
    alpha = doc["options"]["alpha"]
    o = doc["options"]
    level = f"{o['confidence'] * 100:g}"
    headers = [Cell(h, raw=True) for h in ("Measure", "Run", "Mean", r"$\Delta$", r"$\Delta$\%", "W/T/L")]
    headers += [Cell(level + r"\% CI", raw=True), Cell("$p$", raw=True)]
    rows: list[list[Entry]] = []
    sections = set()
    for b in doc["baselines"]:
        if rows:
            sections.add(len(rows))
        rows.append([b["measure"], b["baseline"], fmt_value(b["mean"]), *[None] * 5])
        for c in doc["comparisons"]:
            if c["measure"] != b["measure"]:
                continue
            dag = r"$^\dagger$" if _sig(c, alpha) else ""
            mean = Cell(fmt_value(c["mean"]) + dag, raw=True)
            diff = fmt_value(c["mean_diff"], "+.4f")
            rows.append(["", c["run"], mean, diff, fmt_pct(c["rel_diff"]), _wtl(c), _ci(c), fmt_p(c["p_value"])])
    if doc["risk"]:
        sections.add(len(rows))
        rows += [
            [r["measure"], r["run"], fmt_value(r["value"], "+.4f"), *[None] * 4, fmt_p(r["p_value"])]
            for r in doc["risk"]
        ]
    table = Table(headers, rows, "llrrrrcr", sections=frozenset(sections))
    lines = [
        (
            f"% ireval compare: {o['test']} test, {o['correction']} correction, "
            f"{level}% bootstrap CI, seed {o['seed']}\n"
        ),
        render_latex(table),
        f"% $^\\dagger$: p < {alpha:g} ({o['test']} test, two-sided, {o['correction']} correction)\n",
    ]
    return "".join(lines).encode("utf-8", "surrogateescape")


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


def format_csv(report: Report) -> bytes:
    """One row per comparison, full precision; risk measures follow with their value in ``mean``.
    A run named =HYPERLINK(...) is text, never a formula."""
    doc = _doc(report)
    rows = [[value_cell(c[f]) for f in CSV_FIELDS] for c in doc["comparisons"]]
    for r in doc["risk"]:
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
        rows.append([value_cell(row.get(f)) for f in CSV_FIELDS])
    return render_csv(Table(CSV_FIELDS, rows, "l" * len(CSV_FIELDS))).encode("utf-8", "surrogateescape")


def format_compare(report: Report, fmt: str, *, terminal: bool = False) -> bytes:
    if fmt == "table":
        return format_rich(report) if terminal else format_table(report)
    if fmt == "json":
        return dump_json(_doc(report))
    return {"markdown": format_markdown, "latex": format_latex, "csv": format_csv}[fmt](report)


# ---------------------------------------------------------------- command


def _positive(ctx: Any, param: Any, value: int) -> int:
    if value is not None and value < 1:
        raise click.BadParameter(f"must be at least 1, got {value}")
    return value


COMPARE_EPILOG = """\b
Examples:
  ireval compare qrels.txt base.txt new.txt -m map -m ndcg_cut.10
  ireval compare qrels.txt base.txt a.txt b.txt -m P.10 --test randomization --worst 5
  ireval compare qrels.txt base.txt new.txt -m map -m trisk.5:map --format json
  ireval compare --all-pairs qrels.txt bm25.txt dense.txt hybrid.txt -m map --format latex

\b
--all-pairs: every run against every other (BASELINE is just the first run): each
run's mean with a letter for each run it is significantly better than, each pair's
wins/ties/losses and p-value, one correction over all pairs x measures.

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
@click.argument("runs", metavar="RUN...", nargs=-1)  # required, after quoted globs expand
@measure_option("Measure to compare on (repeatable; default: map), or a risk measure (see below).")
@click.option(
    "--test", type=click.Choice(TESTS), default="t", show_default=True, help="Paired significance test (two-sided)."
)
@click.option(
    "--permutations",
    type=Integer(max=MAX_RESAMPLES),
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
    type=Integer(max=MAX_RESAMPLES),
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
    callback=probability,
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
    callback=probability,
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
@rel_level_option()
@ties_option()
@click.option(
    "--format",
    "fmt",
    type=click.Choice(COMPARE_FORMATS),
    default=None,
    help="Output format (table: rich on a terminal, plain text otherwise) [default: table, or the one "
    "the --output name says].",
)
@output_option()
@click.option(
    "--all-pairs",
    "all_pairs",
    is_flag=True,
    help="Compare every run with every other (BASELINE is the first run); see below.",
)
@no_short_output_option("ireval compare")
@engine_options
@debug_option
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
    all_pairs: bool = False,
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
    With --all-pairs, every run is compared with every other instead.
    """
    from ..io.tabular import expand_runs
    from ..output.files import check_not_input, check_output_path, format_for, is_stdout, write_output

    # a quoted glob ('runs/*.txt') names its files, sorted, as in the main command; BASELINE
    # is the first of them (with --all-pairs, the first run)
    baseline, *more = expand_runs([baseline, *runs])
    runs = tuple(more)
    if not runs:
        raise click.UsageError("Missing argument 'RUN...'.")
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

    if all_pairs:
        _refuse_with_all_pairs()
        from ..output.allpairs import format_all_pairs

        with session(engine, scheduler, workers):
            pairs = run_all_pairs(qrels, [baseline, *runs], list(measures) or ["map"], settings, evaluation)
        write_output(format_all_pairs(pairs, fmt), output, fmt)
        return
    with session(engine, scheduler, workers):  # --engine dask: one cluster for every run
        report = run_compare(qrels, baseline, runs, split_specs(measures) or ["map"], settings, evaluation)
    terminal = output in (None, "-") and stdout_is_terminal()
    write_output(format_compare(report, fmt, terminal=terminal), output, fmt)


def _refuse_with_all_pairs() -> None:
    """Options about one baseline have no meaning with --all-pairs: refused, never ignored."""
    from click.core import ParameterSource

    ctx = click.get_current_context()
    for name, flag in (("worst", "--worst"), ("bootstrap", "--bootstrap"), ("confidence", "--confidence")):
        if ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, None):
            raise UsageError(f"{flag} is about one baseline; --all-pairs reports no {_WHAT[name]}")


_WHAT = {"worst": "lost topics", "bootstrap": "confidence interval", "confidence": "confidence interval"}
