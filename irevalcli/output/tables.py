"""Reports as text: numbers as compare and gate print them, and one table model
(:class:`Table` of :class:`Cell`) drawn by one renderer per format, for eval, compare
(and --all-pairs) and gate alike: plain text, Markdown, LaTeX, CSV, rich for a terminal.
``rich`` is imported inside the functions that draw with it."""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from .cells import csv_text_cell, latex_escape, markdown_cell, one_line_cell


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


@dataclass(frozen=True)
class Cell:
    """One cell of a :class:`Table`: its text and how it stands out.

    ``bold``: the best value (Markdown ``**``, LaTeX ``\\textbf``, rich bold). ``marks``:
    significance letters after the value (plain ``0.25 bc``, Markdown ``<sup>bc</sup>``,
    LaTeX ``$^{bc}$``). ``number``: a number, written as it is in CSV (a text cell that a
    spreadsheet would run as a formula gets a ``'``). ``raw``: LaTeX already, not escaped."""

    text: str
    bold: bool = False
    marks: str = ""
    number: bool = False
    raw: bool = False


def value_cell(v: Any) -> Cell:
    """A value at full precision, as CSV writes it: nothing for None, repr for a number."""
    if v is None:
        return Cell("", number=True)
    if isinstance(v, (int, float)):
        return Cell(repr(v), number=True)
    return Cell(str(v))


Entry = Cell | str | None  # None: no cell at all (LaTeX writes nothing between its ampersands)


def _cell(c: Entry) -> Cell:
    return c if isinstance(c, Cell) else Cell(c or "")


@dataclass(frozen=True)
class Table:
    """A table as every output format draws it: eval's results, compare's and gate's reports.

    ``align``: one letter a column, ``l``, ``r`` or ``c`` (LaTeX's; plain text and rich put
    ``c`` left). ``title``: above a rich table. ``caption``: LaTeX, in a ``table`` float.
    ``notes``: under a rich table. ``styles``: a rich style per row. ``fold``: the columns
    (names, reasons) that wrap on a narrow page; numbers never do. ``sections``: the rows
    that start a section (a rule before them)."""

    headers: Sequence[Entry]
    rows: Sequence[Sequence[Entry]]
    align: str
    title: str = ""
    caption: str = ""
    notes: Sequence[str] = ()
    styles: Sequence[str | None] | None = None
    fold: Sequence[int] = ()
    sections: frozenset[int] = field(default_factory=frozenset)

    @property
    def right(self) -> list[bool]:
        return [a == "r" for a in self.align]

    def widths(self) -> list[int]:
        """Each column's width in plain text: its longest cell or header."""
        cells = [[_plain_text(c) for c in row] for row in [self.headers, *self.rows]]
        return [max(len(row[i]) for row in cells) for i in range(len(self.headers))]

    def columns(self, cols: Sequence[int], title: str | None = None) -> Table:
        """The same table with only the columns ``cols`` (in that order)."""
        return replace(
            self,
            headers=[self.headers[i] for i in cols],
            rows=[[row[i] for i in cols] for row in self.rows],
            align="".join(self.align[i] for i in cols),
            fold=[k for k, i in enumerate(cols) if i in self.fold],
            title=self.title if title is None else title,
        )


def _plain_text(c: Entry) -> str:
    cell = _cell(c)
    return cell.text + (f" {cell.marks}" if cell.marks else "")


def render_plain(table: Table, width: int | None = None) -> str:
    """Columns padded to width, two spaces apart; right-aligned columns right-aligned. No
    trailing blanks.

    ``width``: a table wider than that wraps the cells of its ``fold`` columns at spaces onto
    lines of their own (a word longer than its column is cut), the other columns blank there;
    numbers are never cut."""
    import textwrap

    headers = [_plain_text(h) for h in table.headers]
    rows = [[_plain_text(c) for c in row] for row in table.rows]
    fold, right = list(table.fold), table.right
    widths = table.widths()
    total = sum(widths) + 2 * (len(widths) - 1)
    least = {i: max(8, len(headers[i])) for i in fold}
    while width is not None and total > width:  # the widest folding column gives a column first
        i = max(fold, key=lambda j: widths[j] - least[j], default=None)
        if i is None or widths[i] <= least[i]:
            break  # numbers are never cut: the table stays wider
        widths[i] -= 1
        total -= 1

    def wrapped(cells: Sequence[str]) -> list[list[str]]:
        cols = [
            (textwrap.wrap(c, widths[i], break_on_hyphens=False) or [""]) if i in fold else [c]
            for i, c in enumerate(cells)
        ]
        return [[col[k] if k < len(col) else "" for col in cols] for k in range(max(map(len, cols)))]

    def line(cells: Sequence[str]) -> str:
        out = [c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right)]
        return "  ".join(out).rstrip()

    body = [line(part) for r in rows for part in wrapped(r)]
    return "\n".join([line(headers), line(["-" * w for w in widths]), *body]) + "\n"


def _markdown_text(c: Entry) -> str:
    cell = _cell(c)
    text = markdown_cell(cell.text)
    text = f"**{text}**" if cell.bold else text
    return text + (f"<sup>{markdown_cell(cell.marks)}</sup>" if cell.marks else "")


def render_markdown(table: Table, *, spaced_rule: bool = False) -> str:
    """A GitHub-flavoured Markdown table; ``spaced_rule``: ``| --- | ---: |`` (eval's) rather
    than ``|---|---:|``."""
    rule = ["---:" if r else "---" for r in table.right]
    out = [
        "| " + " | ".join(_markdown_text(h) for h in table.headers) + " |",
        ("| " + " | ".join(rule) + " |") if spaced_rule else ("|" + "|".join(rule) + "|"),
    ]
    out += ["| " + " | ".join(_markdown_text(c) for c in row) + " |" for row in table.rows]
    return "\n".join(out) + "\n"


def _latex_text(c: Cell) -> str:
    text = c.text if c.raw else latex_escape(c.text)
    text = f"\\textbf{{{text}}}" if c.bold else text
    return text + ("$^{" + c.marks + "}$" if c.marks else "")


def _latex_line(cells: Sequence[Entry]) -> str:
    """Cells joined by `` & ``; a missing cell (None) leaves just its ampersand."""
    parts = [None if c is None else _latex_text(_cell(c)) for c in cells]
    line = "" if parts[0] is None else parts[0]
    for p in parts[1:]:
        line += " &" if p is None else f" & {p}"
    return line + r" \\"


def render_latex(table: Table) -> str:
    """A booktabs ``tabular`` (needs ``\\usepackage{booktabs}``), in a ``table`` float with
    its caption when it has one; a rule before each section."""
    lines = [rf"\begin{{tabular}}{{{table.align}}}", r"\toprule", _latex_line(table.headers), r"\midrule"]
    for i, row in enumerate(table.rows):
        if i in table.sections:
            lines.append(r"\midrule")
        lines.append(_latex_line(row))
    lines += [r"\bottomrule", r"\end{tabular}"]
    if table.caption:
        lines = [r"\begin{table}", r"\centering", r"\caption{" + table.caption + "}", *lines, r"\end{table}"]
    return "\n".join(lines) + "\n"


def _csv_text(c: Entry) -> str:
    cell = _cell(c)
    return cell.text if cell.number else csv_text_cell(cell.text)


def render_csv(table: Table) -> str:
    """CSV, one line a row; a text cell a spreadsheet would run as a formula gets a leading
    ``'`` (:func:`irevalcli.output.cells.csv_text_cell`), numbers are written as they are."""
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([_cell(h).text for h in table.headers])
    for row in table.rows:
        w.writerow([_csv_text(c) for c in row])
    return buf.getvalue()


def rich_grid(table: Table, *, terminal: bool = True, widths: Sequence[int] | None = None) -> Any:
    """``table`` as a rich Table: its title, a style per row, bold cells, a section rule.

    Every cell, header and the title are plain text, never rich markup (``[red]x[/red]``
    and ``[/x]`` print as written), kept on one line (:func:`one_line_cell`). ``terminal``:
    rich's simple lines; otherwise ASCII lines without edges (eval's plain table).
    ``widths``: the least width of each column (fold columns wrap at spaces, folding a word
    longer than that; the others never wrap)."""
    from rich import box
    from rich.table import Table as RichTable
    from rich.text import Text

    def text(s: str, style: str = "") -> Any:
        return Text(one_line_cell(s), style=style)

    out = RichTable(
        title=text(table.title) if table.title else None,
        title_justify="left",
        header_style="bold",
        box=box.SIMPLE_HEAD if terminal else box.ASCII2,
        show_edge=terminal,
        pad_edge=False,
    )
    for i, (h, a) in enumerate(zip(table.headers, table.align)):
        justify: Literal["left", "right"] = "right" if a == "r" else "left"
        least = widths[i] if widths else None
        if i in table.fold:
            out.add_column(text(_cell(h).text), justify=justify, overflow="fold", min_width=least)
        else:
            out.add_column(text(_cell(h).text), justify=justify, no_wrap=True, min_width=least)
    for i, row in enumerate(table.rows):
        if i in table.sections:
            out.add_section()
        cells = [text(_plain_text(c), "bold" if _cell(c).bold else "") for c in row]
        out.add_row(*cells, style=table.styles[i] if table.styles else None)
    return out


def render_rich(table: Table, width: int | None = None) -> bytes:
    """``table`` drawn by rich for a terminal, then its notes, as bytes with escape codes.

    Only the ``fold`` columns (names, reasons) wrap on a narrow terminal, at spaces (a
    word longer than the column is folded); numbers are never cut. ``width``: the
    terminal's by default."""
    import io

    from rich.console import Console
    from rich.text import Text

    width = width or terminal_width()
    headers = [_plain_text(h) for h in table.headers]
    least = 3 * len(headers) - 1  # edges, separators and inner padding of SIMPLE_HEAD without edge padding
    needs = []
    for i, h in enumerate(headers):
        cells = [_plain_text(row[i]) for row in table.rows]
        if i in table.fold:
            words = [len(w) for c in [h, *cells] for w in c.split()] or [1]
            needs.append(min(max(words), 16))
        else:
            needs.append(max([len(h)] + [len(c) for c in cells]))
    # too wide: the folding columns give up their longest words first (down to 8 characters each)
    while least + sum(needs) > width and any(needs[i] > 8 for i in table.fold):
        i = max((i for i in table.fold if needs[i] > 8), key=lambda i: needs[i])
        needs[i] -= 1
    least += sum(needs)
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
    console.print(rich_grid(table, widths=needs))
    for note in table.notes:
        console.print(Text(note))
    return buf.getvalue().encode("utf-8", "surrogateescape")


def terminal_width() -> int:
    import shutil

    return shutil.get_terminal_size((120, 24)).columns


CORRECTED = {"holm": "Holm-corrected", "bonferroni": "Bonferroni-corrected", "none": "uncorrected"}


def paired_test_text(options: Mapping[str, Any]) -> str:
    """The paired test a report's p-values come from, as its notes name it (with the
    randomization test's permutations and seed)."""
    from ..analysis.stats import TEST_NAMES

    text = TEST_NAMES[options["test"]]
    if options["test"] == "randomization":
        text += f" ({options['permutations']} permutations, seed {options['seed']})"
    return text


def input_notes(sources: Sequence[dict[str, Any] | None], topics: int, qrels: str, named: str = "") -> list[str]:
    """What a report says of its inputs: the topics a run has no results for (the first ten),
    the topics it has that ``qrels`` does not judge. ``named``: a suite collection's prefix."""
    notes = []
    for src in sources:
        if not src:
            continue
        miss = src["missing_topics"]
        if miss:
            shown = " ".join(miss[:10]) + (" ..." if len(miss) > 10 else "")
            notes.append(f"{named}{src['path']} has no results for {len(miss)} of {topics} topics (scored 0): {shown}")
        if src["unjudged_topics"]:
            k = src["unjudged_topics"]
            notes.append(f"{named}{src['path']} has {k} topic{'s' if k != 1 else ''} not judged in {qrels} (ignored)")
    return notes


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
