"""The subcommands of ``ireval``, by name, imported only when used.

Shared by the entry point (``commands/main.py``) and shell completion
(``commands/completion.py``), so that neither imports the other for it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import click

# The command ``ireval`` itself (evaluation), with its options and arguments.
EVAL_COMMAND = "irevalcli.commands.main:eval_command"

# Subcommands: name -> "module:attribute" of a click command, imported only when used.
SUBCOMMANDS: dict[str, str] = {
    "measures": "irevalcli.commands.main:measures_command",
    "compare": "irevalcli.commands.compare:compare_command",
    "gate": "irevalcli.commands.gate:gate_command",
    "pool": "irevalcli.commands.pool:pool_command",
    "plot": "irevalcli.commands.plot:plot_command",
    "curve": "irevalcli.commands.curve:curve_command",
    "similarity": "irevalcli.commands.similarity:similarity_command",
}


def _load(spec: str) -> click.Command:
    module, attr = spec.split(":")
    command: click.Command = getattr(importlib.import_module(module), attr)
    return command


def load_subcommand(name: str) -> click.Command:
    """The click command of subcommand ``name`` (a key of :data:`SUBCOMMANDS`), imported now."""
    return _load(SUBCOMMANDS[name])


def load_eval_command() -> click.Command:
    """The click command of ``ireval`` itself (:data:`EVAL_COMMAND`), imported now."""
    return _load(EVAL_COMMAND)
