"""Reports as text: numbers as compare and gate print them, and tables drawn as plain
text, Markdown or with rich for a terminal. ``rich`` is imported inside the functions
that draw with it."""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Sequence
from typing import Any, Literal

from .cells import markdown_cell


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


def plain_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    right: Sequence[bool],
    *,
    fold: Sequence[int] = (),
    width: int | None = None,
) -> str:
    """Columns padded to width, two spaces apart; numbers right-aligned. No trailing blanks.

    ``fold`` (names, reasons) and ``width``: a table wider than ``width`` wraps the cells of
    those columns at spaces onto lines of their own (a word longer than its column is cut),
    the other columns blank there; numbers are never cut."""
    import textwrap

    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]
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
    needs = []
    for i, h in enumerate(headers):
        cells = [row[i] for row in rows]
        if i in fold:
            words = [len(w) for c in [h, *cells] for w in c.split()] or [1]
            needs.append(min(max(words), 16))
        else:
            needs.append(max([len(h)] + [len(c) for c in cells]))
    # too wide: the folding columns give up their longest words first (down to 8 characters each)
    while least + sum(needs) > width and any(needs[i] > 8 for i in fold):
        i = max((i for i in fold if needs[i] > 8), key=lambda i: needs[i])
        needs[i] -= 1
    for i, (h, r) in enumerate(zip(headers, right)):
        justify: Literal["left", "right"] = "right" if r else "left"
        if i in fold:
            table.add_column(Text(h), justify=justify, overflow="fold", min_width=needs[i])
        else:
            table.add_column(Text(h), justify=justify, no_wrap=True, min_width=needs[i])
    least += sum(needs)
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
