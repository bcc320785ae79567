"""``ireval gate accept`` (record a locked baseline) and ``ireval gate calibrate``
(suggest margins from reruns of one system).

``ireval gate`` dispatches to these when its first argument is ``accept`` or
``calibrate`` (:class:`irevalcli.commands.gate.GateCommand`); what they compute is
:mod:`irevalcli.analysis.baseline` and :mod:`irevalcli.analysis.calibrate`.
"""

from __future__ import annotations

import click

from .options import REL_LEVEL_HELP, F, debug_option, measure_option, output_option, rel_level_option, ties_option

SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def scoring_options(measure_help: str) -> F:
    """What accept and calibrate both take: the measures (-m, required), -l and --ties, as the
    gate reads them, so a record and a calibration score runs as the gate does."""

    def decorate(f: F) -> F:
        for opt in reversed(
            [measure_option(measure_help, required=True), rel_level_option(help=REL_LEVEL_HELP), ties_option("docno")]
        ):
            f = opt(f)
        return f

    return decorate


ACCEPT_EPILOG = """\b
Example:
  ireval gate accept qrels.txt prod.txt -m map -m ndcg_cut.10 --output baseline.json
  ireval gate qrels.txt new.txt --baseline baseline.json --non-inferior map=0.02
"""


@click.command(context_settings=SETTINGS, epilog=ACCEPT_EPILOG)
@click.argument("qrels", metavar="QRELS")
@click.argument("run", metavar="RUN")
@scoring_options("A measure to record (repeatable); a gate against the record may check only these.")
@output_option("Write the record to PATH atomically (default: stdout).")
@debug_option
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
@scoring_options("A measure to calibrate (repeatable).")
@debug_option
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
