"""``ireval gate accept`` (record a locked baseline) and ``ireval gate calibrate``
(suggest margins from reruns of one system).

``ireval gate`` dispatches to these when its first argument is ``accept`` or
``calibrate`` (:class:`irevalcli.commands.gate.GateCommand`); what they compute is
:mod:`irevalcli.analysis.baseline` and :mod:`irevalcli.analysis.calibrate`.
"""

from __future__ import annotations

import click

from .options import Integer, ties_option

SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

ACCEPT_EPILOG = """\b
Example:
  ireval gate accept qrels.txt prod.txt -m map -m ndcg_cut.10 --output baseline.json
  ireval gate qrels.txt new.txt --baseline baseline.json --non-inferior map=0.02
"""


@click.command(context_settings=SETTINGS, epilog=ACCEPT_EPILOG)
@click.argument("qrels", metavar="QRELS")
@click.argument("run", metavar="RUN")
@click.option(
    "-m",
    "--measure",
    "measures",
    multiple=True,
    required=True,
    metavar="NAME[.PARAMS]",
    help="A measure to record (repeatable); a gate against the record may check only these.",
)
@click.option(
    "-l",
    "--level_for_rel",
    "rel_level",
    type=Integer(),
    default=1,
    metavar="N",
    help="Relevant means a judgement >= N, an integer [default: 1].",
)
@ties_option("docno")
@click.option("--output", metavar="PATH", help="Write the record to PATH atomically (default: stdout).")
@click.option("--debug", is_flag=True, help="Show a traceback for errors.")
def accept_command(
    qrels: str, run: str, measures: tuple[str, ...], rel_level: int, ties: str, output: str | None, debug: bool
) -> None:
    """Record RUN as the gate's baseline: its per-topic values on every judged topic of
    QRELS, with the qrels' SHA-256, the ireval version and the settings that change them.

    A gate given the record (--baseline FILE) uses these values as they are, and refuses
    the record (exit 2) when the qrels, a setting or the ireval version differ, or a
    checked measure is not in it, unless --allow-rebaseline.
    """
    from ..analysis.baseline import accept
    from ..output.files import check_not_input, check_output_path, is_stdout, write_output
    from ..output.tables import dump_json

    if not is_stdout(output):
        check_output_path(output)  # type: ignore[arg-type]
        check_not_input(output, [qrels, run])
    record = accept(qrels, run, measures, rel_level=rel_level, ties=ties)
    write_output(dump_json(record), output, "json")


CALIBRATE_EPILOG = """\b
Example:
  ireval gate calibrate qrels.txt seed1.txt seed2.txt seed3.txt -m map >> gate.toml

\b
s_run: the sample standard deviation (n-1) across the runs of the measure's
summary; s_topic: the mean over topics of each topic's sample standard deviation
across the runs. Suggested: [max_drop] 3 x s_run; [non_inferior]
3 x sqrt(2) x s_topic / sqrt(topics), both rounded up to 4 decimals.
"""


@click.command(context_settings=SETTINGS, epilog=CALIBRATE_EPILOG)
@click.argument("files", metavar="QRELS RUN1 RUN2 RUN3...", nargs=-1, required=True)
@click.option(
    "-m",
    "--measure",
    "measures",
    multiple=True,
    required=True,
    metavar="NAME[.PARAMS]",
    help="A measure to calibrate (repeatable).",
)
@click.option(
    "-l",
    "--level_for_rel",
    "rel_level",
    type=Integer(),
    default=1,
    metavar="N",
    help="Relevant means a judgement >= N, an integer [default: 1].",
)
@ties_option("docno")
@click.option("--debug", is_flag=True, help="Show a traceback for errors.")
def calibrate_command(
    files: tuple[str, ...], measures: tuple[str, ...], rel_level: int, ties: str, debug: bool
) -> None:
    """Estimate each measure's run-to-run spread from 3 or more runs of the same system
    (reruns, seeds) and print suggested gate margins as a TOML fragment."""
    from ..analysis.calibrate import MIN_RUNS, calibrate, format_toml
    from ..errors import UsageError
    from ..output.files import write_stdout

    if len(files) < MIN_RUNS + 1:
        runs = max(len(files) - 1, 0)
        raise UsageError(
            f"gate calibrate needs QRELS and at least {MIN_RUNS} runs of the same system "
            f"(reruns or seeds), got {runs} run{'s' if runs != 1 else ''}"
        )
    cal = calibrate(files[0], files[1:], measures, rel_level=rel_level, ties=ties)
    write_stdout(format_toml(cal).encode("utf-8", "surrogateescape"), "toml")
