"""Shell completion through click's _IREVAL_COMPLETE mechanism: options, measure names,
subcommands and their options, and the source scripts for bash, zsh and fish."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from irevalcli.commands.completion import complete


def bash(monkeypatch, capsys, line: str) -> list[str]:
    words = line.split(" ")
    monkeypatch.setenv("COMP_WORDS", line)
    monkeypatch.setenv("COMP_CWORD", str(len(words) - 1))
    assert complete("bash_complete") == 0
    return capsys.readouterr().out.splitlines()


def test_measure_names(monkeypatch, capsys):
    got = bash(monkeypatch, capsys, "ireval -m ndcg_c")
    assert "plain,ndcg_cut" in got and all(g.startswith("plain,ndcg_c") for g in got)
    assert "plain,official" in bash(monkeypatch, capsys, "ireval q r -m off")
    assert bash(monkeypatch, capsys, "ireval -m P.5,") == []  # parameters are free-form


def test_options_and_choices(monkeypatch, capsys):
    assert bash(monkeypatch, capsys, "ireval --run-f") == ["plain,--run-format"]
    assert bash(monkeypatch, capsys, "ireval q r --format la") == ["plain,latex"]


def test_subcommands_and_files(monkeypatch, capsys):
    assert bash(monkeypatch, capsys, "ireval po") == ["plain,pool", "file,po"]
    assert bash(monkeypatch, capsys, "ireval qrels.txt ru") == ["file,ru"]
    assert bash(monkeypatch, capsys, "ireval pool a.txt --de") == ["plain,--depth", "plain,--debug"]
    assert "plain,recip_rank" in bash(monkeypatch, capsys, "ireval plot diff q a b -m recip")


def test_zsh_and_fish_carry_descriptions(monkeypatch, capsys):
    monkeypatch.setenv("COMP_WORDS", "ireval -m recip_r")
    monkeypatch.setenv("COMP_CWORD", "2")
    assert complete("zsh_complete") == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == ["plain", "recip_rank"] and lines[2].startswith("Reciprocal")
    monkeypatch.setenv("COMP_WORDS", "ireval -m recip_r")
    monkeypatch.setenv("COMP_CWORD", "recip_r")
    assert complete("fish_complete") == 0
    assert capsys.readouterr().out.startswith("plain,recip_rank\t")


@pytest.mark.parametrize(
    "shell,marker",
    [
        ("bash", "complete -o nosort -F _ireval_completion ireval"),
        ("zsh", "#compdef ireval"),
        ("fish", "complete --no-files --command ireval"),
    ],
)
def test_source_scripts(capsys, shell, marker):
    assert complete(f"{shell}_source") == 0
    assert marker in capsys.readouterr().out


def test_unknown_instruction(capsys):
    assert complete("tcsh_source") == 2
    assert capsys.readouterr().err == (
        "ireval: _IREVAL_COMPLETE=tcsh_source: expected bash_source, zsh_source or fish_source\n"
    )


def test_console_script_hook():
    exe = Path(sys.executable).parent / "ireval"
    if not exe.exists():
        pytest.skip("console script not installed")
    env = dict(os.environ, _IREVAL_COMPLETE="bash_complete", COMP_WORDS="ireval -m gm_", COMP_CWORD="2")
    res = subprocess.run([exe], capture_output=True, env=env, check=False)
    assert (res.returncode, res.stderr) == (0, b"")
    assert {"plain,gm_map", "plain,gm_bpref"} <= set(res.stdout.decode().splitlines())
