"""Shell completion for bash, zsh and fish, with click's ``_IREVAL_COMPLETE`` mechanism.

One line in the shell's start-up file turns it on::

    eval "$(_IREVAL_COMPLETE=bash_source ireval)"       # ~/.bashrc
    eval "$(_IREVAL_COMPLETE=zsh_source ireval)"        # ~/.zshrc
    _IREVAL_COMPLETE=fish_source ireval | source         # ~/.config/fish/completions/ireval.fish

The top-level command is ``ireval QRELS RUN...`` with subcommands dispatched by
name, so completion first routes to the subcommand named in the words typed so
far. Options, ``--format`` choices, measure names after ``-m`` (with their
one-line definitions in zsh and fish), subcommand names (``ireval <TAB>`` lists them, with
the files) and file names complete.
"""

from __future__ import annotations

import os
from typing import Any

import click
from click.shell_completion import CompletionItem

COMPLETE_VAR = "_IREVAL_COMPLETE"


def complete_measure(ctx: Any, param: Any, incomplete: str) -> list[CompletionItem]:
    """Measure names and nicknames starting with what was typed (``-m nd<TAB>``)."""
    if "." in incomplete:  # parameters are free-form
        return []
    from ..measures.catalog import load
    from ..measures.registry import NICKNAMES

    registry = load()
    items = [
        CompletionItem(name, help=_short(meas.doc.split(". ")[0].rstrip(".")))
        for name, meas in registry.items()
        if name.startswith(incomplete)
    ]
    items += [
        CompletionItem(nick, help="nickname: " + " ".join(members))
        for nick, members in NICKNAMES.items()
        if nick.startswith(incomplete)
    ]
    return items


def _short(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 3].rstrip() + "..."


def complete_path(ctx: Any, param: Any, incomplete: str) -> list[CompletionItem]:
    """File names (the shell completes them)."""
    return [CompletionItem(incomplete, type="file")]


def complete_first(ctx: Any, param: Any, incomplete: str) -> list[CompletionItem]:
    """The first argument: a subcommand name, or a qrels file."""
    from .dispatch import SUBCOMMANDS

    names = [CompletionItem(n, help="subcommand") for n in SUBCOMMANDS if n.startswith(incomplete)]
    return [*names, CompletionItem(incomplete, type="file")]


def bash_words(items: list[CompletionItem], incomplete: str) -> list[CompletionItem]:
    """click's bash script empties its reply on a ``file`` item (to let bash complete file
    names itself), which drops the subcommand names offered beside one. Where words and
    files are offered together, bash gets the file names as words too: the directory's
    entries starting with what was typed (hidden ones only after a typed dot; directories
    end in ``/``)."""
    if not any(i.type == "file" for i in items) or not any(i.type == "plain" for i in items):
        return items
    head, base = os.path.split(incomplete)
    where = os.path.expanduser(head) or "."
    try:
        entries = sorted(os.listdir(where))
    except OSError:
        entries = []
    files = []
    for name in entries:
        if not name.startswith(base) or "\n" in name or (name.startswith(".") and not base.startswith(".")):
            continue
        slash = "/" if os.path.isdir(os.path.join(where, name)) else ""
        files.append(CompletionItem(os.path.join(head, name) + slash))
    return [i for i in items if i.type != "file"] + files


def complete(instruction: str) -> int:
    """Handle ``_IREVAL_COMPLETE=<shell>_source|<shell>_complete``: print and return the exit code."""
    from click.shell_completion import get_completion_class

    from .dispatch import SUBCOMMANDS, load_eval_command, load_subcommand

    shell, _, action = instruction.partition("_")
    cls = get_completion_class(shell)
    if cls is None or action not in ("source", "complete"):
        click.echo(f"ireval: {COMPLETE_VAR}={instruction}: expected bash_source, zsh_source or fish_source", err=True)
        return 2
    comp = cls(load_eval_command(), {}, "ireval", COMPLETE_VAR)
    if action == "source":
        click.echo(comp.source())
        return 0
    args, incomplete = comp.get_completion_args()
    if args and args[0] in SUBCOMMANDS:
        comp = cls(load_subcommand(args[0]), {}, f"ireval {args[0]}", COMPLETE_VAR)
        args = args[1:]
    items = comp.get_completions(args, incomplete)
    if shell == "bash":
        items = bash_words(items, incomplete)
    out = [comp.format_completion(item) for item in items]
    if out:
        click.echo("\n".join(out))
    return 0


def requested(argv: list[str]) -> str | None:
    """The completion instruction when a shell is asking, else None.

    click's shell scripts run the bare command (``ireval``, no arguments) with
    ``_IREVAL_COMPLETE=<shell>_complete`` and the words typed so far in
    ``COMP_WORDS``/``COMP_CWORD``; the start-up line runs it bare with
    ``<shell>_source``. A variable that leaked into the environment of a real
    invocation (``ireval gate qrels run ...`` in a CI job) is not a shell asking:
    it is ignored, and the command runs as usual.
    """
    instruction = os.environ.get(COMPLETE_VAR)
    if not instruction or argv:
        return None
    if instruction.endswith("_complete") and ("COMP_WORDS" not in os.environ or "COMP_CWORD" not in os.environ):
        return None
    return instruction
