"""The one table model and its renderers (output/tables.py), and the options every command
shares (commands/options.py): exact text for each format."""

from __future__ import annotations

import re

from irevalcli.output.tables import (
    Cell,
    Table,
    render_csv,
    render_latex,
    render_markdown,
    render_plain,
    render_rich,
    value_cell,
)

TABLE = Table(
    ["", "Run", "map"],
    [
        ["a", "bm25|x_1", Cell("0.2500", bold=True, marks="b")],
        ["b", "=dense", Cell("0.1000", number=True)],
    ],
    "llr",
    sections=frozenset({1}),
)


def test_plain_marks_follow_the_value_and_numbers_align_right():
    assert render_plain(TABLE) == (
        "   Run            map\n-  --------  --------\na  bm25|x_1  0.2500 b\nb  =dense      0.1000\n"
    )


def test_plain_folds_only_the_fold_columns_to_the_width():
    table = Table(["Check", "Why"], [["map >= 0.5", "the mean is below the floor"]], "ll", fold=(1,))
    assert render_plain(table, width=24) == (
        "Check       Why\n----------  ------------\nmap >= 0.5  the mean is\n            below the\n            floor\n"
    )


def test_markdown_bold_sup_and_escaped_pipes():
    assert render_markdown(TABLE) == (
        "|  | Run | map |\n|---|---|---:|\n| a | bm25\\|x_1 | **0.2500**<sup>b</sup> |\n| b | =dense | 0.1000 |\n"
    )
    assert render_markdown(TABLE, spaced_rule=True).splitlines()[1] == "| --- | --- | ---: |"


def test_latex_escapes_bolds_marks_sections_and_missing_cells():
    table = Table(
        [Cell(r"$\Delta$", raw=True), "Run", "map"],
        [["x", "a_b", Cell("0.25", bold=True, marks="c")], ["y", None, "%"]],
        "lcr",
        caption="Means.",
        sections=frozenset({1}),
    )
    assert render_latex(table) == (
        "\\begin{table}\n\\centering\n\\caption{Means.}\n"
        "\\begin{tabular}{lcr}\n\\toprule\n"
        "$\\Delta$ & Run & map \\\\\n\\midrule\n"
        "x & a\\_b & \\textbf{0.25}$^{c}$ \\\\\n"
        "\\midrule\n"
        "y & & \\% \\\\\n"
        "\\bottomrule\n\\end{tabular}\n\\end{table}\n"
    )


def test_csv_numbers_as_they_are_text_never_a_formula():
    table = Table(
        ["run", "value"], [[value_cell("=HYPERLINK(1)"), value_cell(-0.5)], [value_cell("-1"), value_cell(None)]], "lr"
    )
    assert render_csv(table) == "run,value\n'=HYPERLINK(1),-0.5\n-1,\n"


def _visible(data: bytes) -> list[str]:
    return re.sub(r"\x1b\[[0-9;]*m", "", data.decode()).splitlines()


def test_rich_cells_are_text_on_one_line():
    table = Table(["Run", "p"], [["[red]x[/red]\nnext", "0.5"]], "lr", title="[b]t", notes=["[/x] note"])
    assert _visible(render_rich(table, width=60)) == [
        "[b]t                      ",
        "                          ",
        " Run                    p ",
        " ──────────────────────── ",
        " [red]x[/red]\\nnext   0.5 ",
        "                          ",
        "[/x] note",
    ]


def test_compare_and_gate_complete_measure_names(monkeypatch, capsys):
    """-m is one option everywhere: compare, gate and gate accept complete measure names
    as the eval command does; similarity's measures are not the registry's."""
    from irevalcli.commands.completion import complete

    def bash(line: str) -> list[str]:
        monkeypatch.setenv("COMP_WORDS", line)
        monkeypatch.setenv("COMP_CWORD", str(len(line.split(" ")) - 1))
        assert complete("bash_complete") == 0
        return capsys.readouterr().out.splitlines()

    for line in ("ireval compare q b r -m ndcg_c", "ireval gate q r -m ndcg_c", "ireval gate accept q r -m ndcg_c"):
        got = bash(line)
        assert "plain,ndcg_cut" in got and all(g.startswith("plain,ndcg_c") for g in got), line
    assert "plain,ndcg_cut" not in bash("ireval similarity a b -m ndcg_c")


def test_compare_terminal_table_keeps_an_id_on_its_line(cli, tmp_path, monkeypatch):
    """A run named with a newline is spelt ``\\n`` in compare's terminal table, as in eval's:
    the row stays one line."""
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setattr("irevalcli.commands.compare.stdout_is_terminal", lambda: True)
    (tmp_path / "q.txt").write_text("1 0 a 1\n2 0 b 1\n")
    (tmp_path / "base.txt").write_text("1 Q0 a 1 2 b\n2 Q0 b 1 2 b\n")
    (tmp_path / "new\nrun").write_text("1 Q0 a 1 2 r\n2 Q0 c 1 2 r\n")
    res = cli(["compare", "q.txt", "base.txt", "new\nrun"], cwd=tmp_path)
    assert res.code == 0, res.err
    row = [line for line in _visible(res.out) if "new" in line and "run" in line]
    assert row and row[0].split()[0] == "new\\nrun"
