"""``ireval compare --all-pairs`` as text: the means with significance letters, every pair's
wins/ties/losses and p-values, as plain text (within 80 columns), Markdown, LaTeX (the table
a paper prints), CSV or JSON.

Each run has a letter (a, b, c ...). A letter after a run's value of a measure says that the
run is significantly better than the run with that letter on that measure (its corrected
p-value is below alpha and its summary is better, as the measure's direction says); the
best value of a measure is bold in Markdown and LaTeX. A measure without a direction
(``num_ret``) has no best value, no letters and no wins or losses.
"""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

from .cells import latex_escape, markdown_cell
from .tables import (
    CORRECTED,
    Cell,
    Entry,
    Table,
    dump_json,
    fmt_p,
    fmt_value,
    input_notes,
    paired_test_text,
    render_csv,
    render_latex,
    render_markdown,
    render_plain,
    value_cell,
)

if TYPE_CHECKING:
    from ..analysis.compare import AllPairsReport, PairComparison

WIDTH = 80  # plain text fits an 80-column terminal
CORRECTION_NAMES = {"holm": "Holm correction", "bonferroni": "Bonferroni correction", "none": "no correction"}


def _comparisons(report: AllPairsReport) -> str:
    n = len(report.runs)
    k = report.options["comparisons"]
    pairs = n * (n - 1) // 2
    m = len(report.measures)
    return (
        f"{k} comparison{'s' if k != 1 else ''} ({pairs} pair{'s' if pairs != 1 else ''} x "
        f"{m} measure{'s' if m != 1 else ''})"
    )


def _marks(report: AllPairsReport, measure: str, run: int) -> str:
    return "".join(report.letters[j] for j in report.beats(measure, run))


def _wtl(p: PairComparison) -> str:
    return "-" if p.wins is None else f"{p.wins}/{p.ties}/{p.losses}"


def _pair_table(report: AllPairsReport) -> Table:
    alpha = report.options["alpha"]
    rows = []
    for m in report.measures:
        first = True
        for p in report.pairs:
            if p.measure != m:
                continue
            rows.append(
                [
                    m if first else "",
                    f"{p.letter_a} vs {p.letter_b}",
                    fmt_value(p.mean_a),
                    fmt_value(p.mean_b),
                    _wtl(p),
                    fmt_p(p.p_value) + ("*" if p.significant(alpha) else ""),
                    fmt_p(p.p_value_raw),
                ]
            )
            first = False
    return Table(("Measure", "Pair", "Mean 1st", "Mean 2nd", "W/T/L", "p", "p raw"), rows, "llrrrrr")


def _means_table(report: AllPairsReport) -> Table:
    """A row per run (its letter, its name, its mean of each measure): the best mean of a
    measure bold, the letters of the runs it is significantly better than as marks."""
    best = {m: report.best(m) for m in report.measures}
    rows: list[list[Entry]] = [
        [x, r, *(Cell(fmt_value(report.mean(m, i)), i in best[m], _marks(report, m, i)) for m in report.measures)]
        for i, (x, r) in enumerate(zip(report.letters, report.runs))
    ]
    return Table(["", "Run", *report.measures], rows, "ll" + "r" * len(report.measures), caption=latex_caption(report))


def _notes(report: AllPairsReport) -> list[str]:
    o = report.options
    inputs = report.inputs
    n = report.topics
    notes = [
        f"{n} topics judged in {inputs['qrels']['path']}; a topic missing from a run scores 0.",
        f"p: {paired_test_text(report.options)}, two-sided, {CORRECTED[o['correction']]} over {_comparisons(report)};"
        f" * p < {o['alpha']:g}.",
        "W/T/L: topics where the pair's first run is better / equal / worse, by the measure's direction"
        " (- for a measure without one).",
        "A letter after a mean: significantly better than the run with that letter.",
    ]
    return notes + input_notes(inputs["runs"], n, inputs["qrels"]["path"])


def _column_groups(first: int, widths: list[int], width: int = WIDTH) -> list[list[int]]:
    """The run columns split into groups that fit ``width`` next to the first column (each
    group has at least one column)."""
    groups: list[list[int]] = [[]]
    used = first
    for i, w in enumerate(widths):
        if groups[-1] and used + 2 + w > width:
            groups.append([])
            used = first
        groups[-1].append(i)
        used += 2 + w
    return groups


def format_plain(report: AllPairsReport) -> bytes:
    """The runs and their letters, the means (a table per group of runs that fits 80 columns),
    the pairs, and notes wrapped at 80 columns."""
    out = ["Runs:\n"]
    out += [f"  {x}  {r}\n" for x, r in zip(report.letters, report.runs)]
    means = _means_table(report)
    runs = range(len(report.runs))
    rows = [[m, *(means.rows[i][2 + k] for i in runs)] for k, m in enumerate(report.measures)]
    table = Table(["Measure", *report.letters], rows, "l" + "r" * len(report.runs))
    first, *widths = table.widths()
    for group in _column_groups(first, widths):
        out.append("\n")
        out.append(render_plain(table.columns([0, *(i + 1 for i in group)])))
    out.append("\n" + render_plain(_pair_table(report)))
    out.append("\n")
    for note in _notes(report):
        out.append("\n".join(textwrap.wrap(note, WIDTH, break_long_words=False, break_on_hyphens=False)) + "\n")
    return "".join(out).encode("utf-8", "surrogateescape")


def format_markdown(report: AllPairsReport) -> bytes:
    out = [
        "### ireval compare: every run against every other\n\n",
        render_markdown(_means_table(report)),
        "\n",
        render_markdown(_pair_table(report)),
        "\n",
        "\n".join(f"- {markdown_cell(n)}" for n in [*_notes(report), "Bold: the best value of each measure."]),
        "\n",
    ]
    return "".join(out).encode("utf-8", "surrogateescape")


def latex_caption(report: AllPairsReport) -> str:
    """The caption: what the table shows, the test and the correction."""
    o = report.options
    measures = ", ".join(latex_escape(m) for m in report.measures)
    return (
        f"{measures} of each run over {report.topics} topics. The best value of each measure is in bold. "
        "A superscript letter marks a value significantly better than the run with that letter "
        f"({latex_escape(paired_test_text(report.options))}, two-sided, {CORRECTION_NAMES[o['correction']]} over "
        f"{_comparisons(report)}, $p < {o['alpha']:g}$)."
    )


def format_latex(report: AllPairsReport) -> bytes:
    """A booktabs table: one row per run (its letter, its name, its value of each measure),
    the best value of each measure in bold, superscript letters for significance, and a
    caption naming the test and the correction. Needs ``\\usepackage{booktabs}``."""
    return render_latex(_means_table(report)).encode("utf-8", "surrogateescape")


CSV_FIELDS = (
    "run_a",
    "run_b",
    "letter_a",
    "letter_b",
    "measure",
    "direction",
    "mean_a",
    "mean_b",
    "wins",
    "ties",
    "losses",
    "test",
    "statistic",
    "p_value_raw",
    "p_value",
    "topics_with_value",
)


def format_csv(report: AllPairsReport) -> bytes:
    """One row per pair and measure (the matrix, long), full precision."""
    rows = [[value_cell(getattr(p, f)) for f in CSV_FIELDS] for p in report.pairs]
    return render_csv(Table(CSV_FIELDS, rows, "l" * len(CSV_FIELDS))).encode("utf-8", "surrogateescape")


def format_all_pairs(report: AllPairsReport, fmt: str) -> bytes:
    if fmt == "json":
        return dump_json(report.to_dict())
    return {"table": format_plain, "markdown": format_markdown, "latex": format_latex, "csv": format_csv}[fmt](report)
