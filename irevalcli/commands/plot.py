"""``ireval plot``: precision-recall curves and per-topic differences, to PNG, SVG or PDF.

An optional extra: it needs matplotlib (``pip install 'matplotlib>=3.5'``, the ``plot`` extra). Figures
are drawn on a bare :class:`matplotlib.figure.Figure` (no pyplot, no global
state, no display) and written atomically. The same inputs give the same bytes:
SVG ids are salted with a constant, and no date or matplotlib version is written (PDF:
no CreationDate, Creator or Producer).

- ``ireval plot pr QRELS RUN...``: each run's interpolated precision at the 11
  standard recall levels (trec_eval's ``iprec_at_recall``, mean over topics).
- ``ireval plot diff QRELS RUN_A RUN_B -m MEASURE``: MEASURE per topic of RUN_B
  minus RUN_A, as bars sorted from largest gain to largest loss.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import click

from .. import signals
from ..errors import UsageError
from ..output.cells import undecodable_escaped
from ..output.files import no_short_output_option
from .completion import complete_path
from .options import complete_option, debug_option, input_format_options, measure_option, rel_level_option, ties_option

if TYPE_CHECKING:
    from ..settings import EvalSettings

PLOT_FORMATS = ("png", "svg", "pdf")


def _matplotlib() -> Any:
    """matplotlib, imported without reading anyone's configuration and without writing to
    ``~/.cache`` or ``~/.config``: its configuration and cache directory (``MPLCONFIGDIR``)
    is a private temporary directory, removed once imported, and the import runs in that
    directory so a ``matplotlibrc`` in the working directory is not read. Figures are then
    drawn with matplotlib's own defaults (:func:`_defaults`), so the same inputs give the
    same bytes wherever ireval runs."""
    import sys

    if sys.modules.get("matplotlib") is not None:
        return sys.modules["matplotlib"]
    import shutil
    import tempfile

    saved = os.environ.get("MPLCONFIGDIR")
    private = here = None
    try:
        with signals.deferred():  # a signal cannot land between making it and this finally owning it
            private = tempfile.mkdtemp(prefix="ireval-matplotlib-")
        try:  # (O_PATH: a working directory that can be entered but not read comes back too)
            here = os.open(".", getattr(os, "O_PATH", os.O_RDONLY))
        except OSError:
            pass
        os.environ["MPLCONFIGDIR"] = private
        if here is not None:  # no way back: stay (a matplotlibrc there may then be read)
            os.chdir(private)
        import matplotlib
        import matplotlib.font_manager
    except ImportError:
        raise UsageError("ireval plot needs matplotlib: pip install 'matplotlib>=3.5'") from None
    finally:
        with signals.deferred():  # back in the working directory, and the directory gone, whatever arrives
            if here is not None:
                os.fchdir(here)
                os.close(here)
            if saved is None:
                os.environ.pop("MPLCONFIGDIR", None)
            else:
                os.environ["MPLCONFIGDIR"] = saved
            if private is not None:
                shutil.rmtree(private, ignore_errors=True)
    return matplotlib


def _defaults() -> Any:
    """A context with matplotlib's built-in settings (no matplotlibrc, no style in effect)."""
    matplotlib = _matplotlib()
    rc = {k: v for k, v in matplotlib.rcParamsDefault.items() if k not in ("backend", "backend_fallback")}
    return matplotlib.rc_context(rc)


def _plot_format(output: str, fmt: str | None) -> str:
    from ..output.files import format_for, is_stdout

    chosen = format_for(output, fmt, PLOT_FORMATS, None, command="ireval plot")
    if chosen:
        return chosen
    if is_stdout(output):
        raise UsageError(
            f"--output {output}: standard output has no name to tell the image format from; give --format png|svg|pdf"
        )
    raise UsageError(
        f"--output {output}: cannot tell the image format from the name; end it in .png, .svg or .pdf "
        "or give --format png|svg|pdf"
    )


def _size(text: str) -> tuple[float, float]:
    try:
        w, h = (float(x) for x in text.lower().split("x"))
    except ValueError:
        raise UsageError(f"--size {text}: expected WIDTHxHEIGHT in inches, e.g. 8x5") from None
    if not (0 < w <= 100 and 0 < h <= 100):
        raise UsageError(f"--size {text}: width and height must be between 0 and 100 inches")
    return w, h


def render(fig: Any, fmt: str, dpi: int) -> bytes:
    """The figure as PNG, SVG or PDF bytes, reproducibly: no date and no matplotlib version
    in the file (PNG's Software, SVG's Date, PDF's CreationDate, Creator and Producer)."""
    import io

    matplotlib = _matplotlib()
    buf = io.BytesIO()
    with _defaults(), matplotlib.rc_context({"svg.hashsalt": "ireval", "svg.fonttype": "path"}):
        metadata = {
            "svg": {"Date": None},
            "pdf": {"CreationDate": None, "Creator": None, "Producer": None},
        }.get(fmt, {"Software": None})
        fig.savefig(buf, format=fmt, dpi=dpi, metadata=metadata, bbox_inches="tight")
    return buf.getvalue()


def _new_figure(size: tuple[float, float]) -> Any:
    _matplotlib()
    from matplotlib.figure import Figure

    return Figure(figsize=size, layout="constrained")


def pr_figure(
    curves: Sequence[tuple[str, list[float], list[float]]], *, title: str | None, size: tuple[float, float] = (7.0, 5.0)
) -> Any:
    """``curves``: (name, recall levels, interpolated precision) per run."""
    fig = _new_figure(size)
    ax = fig.add_subplot()
    markers = "osD^vx+*<>ph"
    for i, (name, recall, precision) in enumerate(curves):
        ax.plot(recall, precision, marker=markers[i % len(markers)], markersize=4, linewidth=1.5, label=name)
    ax.set_xlim(0, 1)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("Recall")
    ax.set_ylabel("Interpolated precision")
    ax.grid(True, linewidth=0.5, alpha=0.5)
    ax.legend(loc="upper right", fontsize="small")
    ax.set_title(undecodable_escaped(title) if title else "Interpolated precision-recall")
    return fig


def diff_figure(
    qids: Sequence[str],
    diffs: Sequence[float],
    *,
    label: str,
    name_a: str,
    name_b: str,
    title: str | None,
    size: tuple[float, float] = (8.0, 4.5),
) -> Any:
    """Bars of ``diffs`` (already sorted), one per topic."""
    fig = _new_figure(size)
    ax = fig.add_subplot()
    colors = ["#2b8a3e" if d > 0 else "#c92a2a" if d < 0 else "#868e96" for d in diffs]
    x = list(range(len(diffs)))
    ax.bar(x, diffs, color=colors, width=0.85)
    ax.axhline(0, color="black", linewidth=0.8)
    if len(qids) <= 60:
        ax.set_xticks(x)
        ax.set_xticklabels([_label(q) for q in qids], rotation=90, fontsize="x-small")
    else:
        ax.set_xticks([])
    ax.set_xlabel(f"Topics ({len(qids)}), sorted by difference")
    ax.set_ylabel(f"{label}: {name_b} - {name_a}")
    better = sum(d > 0 for d in diffs)
    worse = sum(d < 0 for d in diffs)
    ax.set_title(
        undecodable_escaped(title or "")
        or f"{label} per topic: {name_b} vs {name_a} ({better} better, {worse} worse, "
        f"{len(diffs) - better - worse} tied)"
    )
    ax.grid(True, axis="y", linewidth=0.5, alpha=0.5)
    return fig


# ---------------------------------------------------------------- data


def _settings(
    complete: bool, rel_level: int, ties: str, run_format: str, qrels_format: str, columns: Sequence[str]
) -> EvalSettings:
    """The plot commands' options as the settings their runs are read and evaluated with."""
    from ..io.tabular import parse_column_map
    from ..settings import EvalSettings

    return EvalSettings.of(
        complete=complete,
        rel_level=rel_level,
        ties=ties,
        run_format=run_format,
        qrels_format=qrels_format,
        columns=parse_column_map(columns),
    )


def _load(qrels: str, runs: Sequence[str], settings: EvalSettings, *, expand: bool = True) -> tuple:
    from ..api import load_qrels, load_run
    from ..io.tabular import expand_runs

    paths = expand_runs(runs) if expand else list(runs)
    if paths.count("-") > 1:
        raise UsageError("only one run can be read from standard input ('-')")
    fmt, cmap = settings.run_format, settings.columns
    hashed, ranks = settings.hash_inputs, settings.read_ranks
    q = load_qrels(qrels, fmt=settings.qrels_format, columns=cmap, hash=hashed)  # a file or a dataset
    return q, [load_run(p, fmt=fmt, columns=cmap, hash=hashed, ranks=ranks) for p in paths]


def pr_curves(qrels: Any, runs: Sequence[Any], *, options: EvalSettings | None = None, **settings: Any) -> list:
    """(runid or file name, recall levels, interpolated precision) for each run, evaluated
    with ``options`` (or settings named as keywords: ``complete``, ``rel_level``, ``ties``...)."""
    from ..api import evaluate
    from ..settings import EvalSettings

    options = EvalSettings.given(options, settings, "pr_curves()")
    curves = []
    for run in runs:
        ev = evaluate(qrels, run, ["iprec_at_recall"], options=options)
        points = [
            (float(c.label.rsplit("_", 1)[1]), float(c.summary))
            for c in ev.results.columns
            if c.root == "iprec_at_recall" and c.summary is not None
        ]
        points.sort()
        curves.append((_name(run, runs), [r for r, _ in points], [p for _, p in points]))
    return curves


def _name(run: Any, runs: Sequence[Any]) -> str:
    """The runid, or the file name when runids do not tell the runs apart."""
    ids = [r.runid for r in runs]
    return _label(run.runid if run.runid and ids.count(run.runid) == 1 else run.name)


def _label(text: str) -> str:
    """An id drawn as written: bytes that are not UTF-8 as ``\\xNN``, ``$`` not taken for
    mathtext, and a leading ``_`` (which hides a legend entry) kept visible."""
    text = undecodable_escaped(text).replace("$", "\\$")
    return " " + text if text.startswith("_") else text


def topic_diffs(
    qrels: Any,
    run_a: Any,
    run_b: Any,
    measure: str,
    *,
    options: EvalSettings | None = None,
    **settings: Any,
) -> tuple[str, list[str], list[float]]:
    """(label, topics, b - a) sorted by difference descending (ties by topic), evaluated with
    ``options`` (or settings named as keywords: ``complete``, ``rel_level``, ``ties``...)."""
    from ..api import evaluate
    from ..settings import EvalSettings

    options = EvalSettings.given(options, settings, "topic_diffs()")
    values = []
    label = ""
    for run in (run_a, run_b):
        ev = evaluate(qrels, run, [measure], options=options)
        cols = [c for c in ev.results.columns if c.per_query is not None and c.kind != "str"]
        if len(cols) != 1:
            names = ", ".join(c.label for c in cols) or "no per-topic value"
            raise UsageError(
                f"-m {measure}: plot diff needs one value per topic, and this gives {names}; "
                "name one (e.g. P.10 or ndcg_cut.10)"
            )
        label = cols[0].label
        values.append(dict(zip(ev.results.qids, (float(v) for v in cols[0].per_query))))
    common = [q for q in values[0] if q in values[1]]
    if not common:
        raise UsageError("the two runs have no evaluated topic in common")
    pairs = sorted(((values[1][q] - values[0][q], q) for q in common), key=lambda t: (-t[0], t[1]))
    return label, [q for _, q in pairs], [d for d, _ in pairs]


# ---------------------------------------------------------------- commands


def _common(f: Callable[..., Any]) -> Callable[..., Any]:
    opts = [
        click.option(
            "--output",
            required=True,
            metavar="PATH",
            shell_complete=complete_path,
            help="Image file to write (atomically); .png, .svg or .pdf, or - for standard output (with --format).",
        ),
        no_short_output_option("ireval plot"),
        click.option(
            "--format",
            "fmt",
            type=click.Choice(PLOT_FORMATS),
            default=None,
            help="Image format (default: from the --output name).",
        ),
        click.option("--title", metavar="TEXT", help="Figure title."),
        click.option("--size", default=None, metavar="WxH", help="Figure size in inches."),
        click.option("--dpi", type=click.IntRange(30, 1200), default=150, show_default=True, help="PNG resolution."),
        complete_option(),
        rel_level_option(),
        ties_option(),
        input_format_options,
        debug_option,
    ]
    for opt in reversed(opts):
        f = opt(f)
    return f


PLOT_EPILOG = """\b
Examples:
  ireval plot pr qrels.txt bm25.txt dense.txt --output pr.png
  ireval plot diff qrels.txt bm25.txt dense.txt -m ndcg_cut.10 --output diff.svg
  ireval plot pr qrels.txt run.txt --format svg --output - > pr.svg
  ireval plot pr qrels.txt bm25.txt dense.txt --output pr.pdf

\b
Needs matplotlib: pip install 'matplotlib>=3.5'.
"""


@click.group(
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog=PLOT_EPILOG,
    invoke_without_command=True,
    no_args_is_help=False,
)
@click.pass_context
def plot_command(ctx: click.Context) -> None:
    """Draw precision-recall curves (pr) or per-topic differences (diff) to PNG, SVG or PDF."""
    if ctx.invoked_subcommand is None:
        raise UsageError(
            "ireval plot needs a kind: 'pr' (precision-recall curves) or 'diff' (per-topic "
            "differences); see 'ireval plot --help'"
        )


@plot_command.command("pr", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("qrels", metavar="QRELS", shell_complete=complete_path)
@click.argument("runs", metavar="RUN...", nargs=-1, required=True, shell_complete=complete_path)
@_common
def pr_command(
    qrels: str,
    runs: tuple[str, ...],
    output: str,
    fmt: str | None,
    title: str | None,
    size: str | None,
    dpi: int,
    complete: bool,
    rel_level: int,
    run_format: str,
    qrels_format: str,
    columns: tuple[str, ...],
    debug: bool,
    ties: str = "docno",
) -> None:
    """Interpolated precision-recall curves (11 recall levels, mean over topics) of each RUN."""
    from ..io.tabular import expand_runs
    from ..output.files import write_output

    fmt = _plot_format(output, fmt)
    dims = _size(size) if size else (7.0, 5.0)
    inputs = [qrels, *expand_runs(runs)]
    _check_output(output, inputs)
    _matplotlib()
    settings = _settings(complete, rel_level, ties, run_format, qrels_format, columns)
    q, loaded = _load(qrels, runs, settings)
    with _defaults():
        fig = pr_figure(pr_curves(q, loaded, options=settings), title=title, size=dims)
        image = render(fig, fmt, dpi)
    write_output(image, output, fmt, inputs=inputs)


@plot_command.command("diff", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("qrels", metavar="QRELS", shell_complete=complete_path)
@click.argument("run_a", metavar="RUN_A", shell_complete=complete_path)
@click.argument("run_b", metavar="RUN_B", shell_complete=complete_path)
@measure_option("Measure with one value per topic (e.g. map, P.10, ndcg_cut.10).", one="map")
@_common
def diff_command(
    qrels: str,
    run_a: str,
    run_b: str,
    measure: str,
    output: str,
    fmt: str | None,
    title: str | None,
    size: str | None,
    dpi: int,
    complete: bool,
    rel_level: int,
    run_format: str,
    qrels_format: str,
    columns: tuple[str, ...],
    debug: bool,
    ties: str = "docno",
) -> None:
    """MEASURE per topic of RUN_B minus RUN_A, as a bar chart sorted by the difference."""
    from ..output.files import write_output

    fmt = _plot_format(output, fmt)
    dims = _size(size) if size else (8.0, 4.5)
    inputs = [qrels, run_a, run_b]
    _check_output(output, inputs)
    _matplotlib()
    settings = _settings(complete, rel_level, ties, run_format, qrels_format, columns)
    q, (a, b) = _load(qrels, [run_a, run_b], settings, expand=False)
    label, qids, diffs = topic_diffs(q, a, b, measure, options=settings)
    with _defaults():
        fig = diff_figure(
            qids, diffs, label=label, name_a=_name(a, [a, b]), name_b=_name(b, [a, b]), title=title, size=dims
        )
        image = render(fig, fmt, dpi)
    write_output(image, output, fmt, inputs=inputs)


def _check_output(output: str, inputs: Sequence[str]) -> None:
    """Refuse an output that can never be written, or that is an input, before any work."""
    from ..output.files import check_not_input, check_output_path, is_stdout

    if not is_stdout(output):
        check_output_path(output)
        check_not_input(output, inputs)
