"""``ireval gate accept``: record a locked baseline.

``ireval gate`` dispatches to it when its first argument is ``accept``
(:class:`irevalcli.commands.gate.GateCommand`); what it computes is
:mod:`irevalcli.analysis.baseline`.
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
