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
from typing import TYPE_CHECKING, Any

from .cells import csv_text_cell, latex_escape, markdown_cell
from .tables import dump_json, fmt_p, fmt_value, markdown_table, plain_table

if TYPE_CHECKING:
    from ..analysis.compare import AllPairsReport, PairComparison

WIDTH = 80  # plain text fits an 80-column terminal
CORRECTED = {"holm": "Holm-corrected", "bonferroni": "Bonferroni-corrected", "none": "uncorrected"}
CORRECTION_NAMES = {"holm": "Holm correction", "bonferroni": "Bonferroni correction", "none": "no correction"}


def _test_text(report: AllPairsReport) -> str:
    from ..analysis.stats import TEST_NAMES

    o = report.options
    text = TEST_NAMES[o["test"]]
    if o["test"] == "randomization":
        text += f" ({o['permutations']} permutations, seed {o['seed']})"
    return text


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


def _pair_rows(report: AllPairsReport) -> list[list[str]]:
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
    return rows


PAIR_HEADERS = ("Measure", "Pair", "Mean 1st", "Mean 2nd", "W/T/L", "p", "p raw")
PAIR_RIGHT = (False, False, True, True, True, True, True)


def _notes(report: AllPairsReport) -> list[str]:
    o = report.options
    inputs = report.inputs
    n = report.topics
    notes = [
        f"{n} topics judged in {inputs['qrels']['path']}; a topic missing from a run scores 0.",
        f"p: {_test_text(report)}, two-sided, {CORRECTED[o['correction']]} over {_comparisons(report)};"
        f" * p < {o['alpha']:g}.",
        "W/T/L: topics where the pair's first run is better / equal / worse, by the measure's direction"
        " (- for a measure without one).",
        "A letter after a mean: significantly better than the run with that letter.",
    ]
    for src in inputs["runs"]:
        miss = src["missing_topics"]
        if miss:
            shown = " ".join(miss[:10]) + (" ..." if len(miss) > 10 else "")
            notes.append(f"{src['path']} has no results for {len(miss)} of {n} topics (scored 0): {shown}")
        if src["unjudged_topics"]:
            k = src["unjudged_topics"]
            notes.append(
                f"{src['path']} has {k} topic{'s' if k != 1 else ''} not judged in {inputs['qrels']['path']} (ignored)"
            )
    return notes


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
    cells = [
        [
            fmt_value(report.mean(m, i)) + (f" {marks}" if (marks := _marks(report, m, i)) else "")
            for i in range(len(report.runs))
        ]
        for m in report.measures
    ]
    first = max([len("Measure")] + [len(m) for m in report.measures])
    widths = [max([len(x)] + [len(row[i]) for row in cells]) for i, x in enumerate(report.letters)]
    for group in _column_groups(first, widths):
        out.append("\n")
        out.append(
            plain_table(
                ("Measure", *(report.letters[i] for i in group)),
                [[m, *(row[i] for i in group)] for m, row in zip(report.measures, cells)],
                (False, *(True for _ in group)),
            )
        )
    out.append("\n" + plain_table(PAIR_HEADERS, _pair_rows(report), PAIR_RIGHT))
    out.append("\n")
    for note in _notes(report):
        out.append("\n".join(textwrap.wrap(note, WIDTH, break_long_words=False, break_on_hyphens=False)) + "\n")
    return "".join(out).encode("utf-8", "surrogateescape")


def format_markdown(report: AllPairsReport) -> bytes:
    headers = ["", "Run", *report.measures]
    rows = []
    best = {m: report.best(m) for m in report.measures}
    for i, (x, r) in enumerate(zip(report.letters, report.runs)):
        row = [x, r]
        for m in report.measures:
            v = fmt_value(report.mean(m, i))
            cell = f"**{v}**" if i in best[m] else v
            marks = _marks(report, m, i)
            row.append(cell + (f"<sup>{marks}</sup>" if marks else ""))
        rows.append(row)
    out = [
        "### ireval compare: every run against every other\n\n",
        markdown_table(headers, rows, (False, False, *(True for _ in report.measures))),
        "\n",
        markdown_table(PAIR_HEADERS, _pair_rows(report), PAIR_RIGHT),
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
        f"({latex_escape(_test_text(report))}, two-sided, {CORRECTION_NAMES[o['correction']]} over "
        f"{_comparisons(report)}, $p < {o['alpha']:g}$)."
    )


def format_latex(report: AllPairsReport) -> bytes:
    """A booktabs table: one row per run (its letter, its name, its value of each measure),
    the best value of each measure in bold, superscript letters for significance, and a
    caption naming the test and the correction. Needs ``\\usepackage{booktabs}``."""
    best = {m: report.best(m) for m in report.measures}
    lines = [
        r"\begin{table}",
        r"\centering",
        r"\caption{" + latex_caption(report) + "}",
        r"\begin{tabular}{ll" + "r" * len(report.measures) + "}",
        r"\toprule",
        " & Run & " + " & ".join(latex_escape(m) for m in report.measures) + r" \\",
        r"\midrule",
    ]
    for i, (x, r) in enumerate(zip(report.letters, report.runs)):
        cells = []
        for m in report.measures:
            v = fmt_value(report.mean(m, i))
            cell = r"\textbf{" + v + "}" if i in best[m] else v
            marks = _marks(report, m, i)
            cells.append(cell + ("$^{" + marks + "}$" if marks else ""))
        lines.append(f"{x} & {latex_escape(r)} & " + " & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return ("\n".join(lines) + "\n").encode("utf-8", "surrogateescape")


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


def _csv_cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, (int, float)):
        return repr(v)
    return csv_text_cell(str(v))


def format_csv(report: AllPairsReport) -> bytes:
    """One row per pair and measure (the matrix, long), full precision."""
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_FIELDS)
    for p in report.pairs:
        w.writerow([_csv_cell(getattr(p, f)) for f in CSV_FIELDS])
    return buf.getvalue().encode("utf-8", "surrogateescape")


def format_all_pairs(report: AllPairsReport, fmt: str) -> bytes:
    if fmt == "json":
        return dump_json(report.to_dict())
    return {"table": format_plain, "markdown": format_markdown, "latex": format_latex, "csv": format_csv}[fmt](report)
