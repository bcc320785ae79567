"""Cells of text outputs: ids are data, never markup, formulas or line breaks.

Every renderer (eval's csv, markdown, LaTeX and rich tables, compare's and gate's reports,
curve, pool, plots) escapes ids through these. Importing this module imports only the
standard library, so the commands can use it without loading numpy.
"""

from __future__ import annotations

import re


def undecodable_escaped(text: str) -> str:
    """``text`` as valid UTF-8: each byte that was not UTF-8 in the input (kept as a
    surrogate escape) is spelt ``\\xNN``, as ireval's messages spell it. For outputs that
    must be Unicode text (Parquet string columns, plot labels)."""
    if not any(0xDC80 <= ord(ch) <= 0xDCFF for ch in text):
        return text
    return "".join(f"\\x{ord(ch) - 0xDC00:02x}" if 0xDC80 <= ord(ch) <= 0xDCFF else ch for ch in text)


_NUMBER = re.compile(r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$")


def csv_text_cell(text: str) -> str:
    """A text cell of csv output made safe for spreadsheets: a cell a spreadsheet would run
    as a formula (starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return) gets
    a leading ``'``, unless the whole cell is a plain number (a topic id ``-1``)."""
    if text[:1] in ("=", "+", "-", "@", "\t", "\r") and not _NUMBER.match(text):
        return "'" + text
    return text


def one_line_cell(text: str) -> str:
    """A cell of a markdown, LaTeX or rich table kept on one line and free of control
    characters: newline, carriage return and tab print as ``\\n``, ``\\r``, ``\\t``,
    other control characters as ``\\xNN``."""
    if not any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in text):
        return text
    named = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
    return "".join(named.get(ch) or (f"\\x{ord(ch):02x}" if ord(ch) < 0x20 or ord(ch) == 0x7F else ch) for ch in text)


def markdown_cell(text: str) -> str:
    """A Markdown table cell: one line (control characters spelled out), ``|`` escaped."""
    return one_line_cell(text).replace("|", "\\|")


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def latex_escape(text: str) -> str:
    """A LaTeX cell: one line, TeX's special characters escaped."""
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in one_line_cell(text))
