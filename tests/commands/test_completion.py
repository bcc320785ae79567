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


def test_subcommands_and_files(monkeypatch, capsys, tmp_path):
    monkeypatch.chdir(tmp_path)
    assert bash(monkeypatch, capsys, "ireval po") == ["plain,pool"]  # bash: the files as words (none here)
    monkeypatch.setenv("COMP_WORDS", "ireval po")
    monkeypatch.setenv("COMP_CWORD", "1")
    assert complete("zsh_complete") == 0  # zsh and fish complete files beside the words themselves
    assert capsys.readouterr().out.splitlines() == ["plain", "pool", "subcommand", "file", "po", "_"]
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


# A leaked _IREVAL_COMPLETE must not hijack a real invocation; a shell asking still gets answers.

QRELS = b"1 0 a 1\n1 0 b 0\n"
RUN = b"1 Q0 a 1 3 r\n"


def _exe() -> Path:
    exe = Path(sys.executable).parent / "ireval"
    if not exe.exists():
        pytest.skip("console script not installed")
    return exe


@pytest.mark.parametrize("value", ["bash_source", "zsh_complete", "bash_complete", "tcsh_source"])
def test_leaked_variable_does_not_hijack_a_command(tmp_path, value):
    exe = _exe()
    (tmp_path / "q.txt").write_bytes(QRELS)
    (tmp_path / "r.txt").write_bytes(RUN)
    env = dict(os.environ, _IREVAL_COMPLETE=value, COMP_WORDS="ireval gate", COMP_CWORD="1")
    res = subprocess.run(
        [exe, "gate", "q.txt", "r.txt", "--min", "map=1.5"], cwd=tmp_path, capture_output=True, env=env, check=False
    )
    assert (res.returncode, res.stderr) == (1, b"ireval: gate failed: 1 of 1 check failed (map >= 1.5)\n")
    assert res.stdout.startswith(b"ireval gate: FAILED: 1 of 1 check failed\n")
    res = subprocess.run([exe, "-m", "map", "q.txt", "r.txt"], cwd=tmp_path, capture_output=True, env=env, check=False)
    assert (res.returncode, res.stdout) == (0, b"map                   \tall\t1.0000\n")


def test_complete_without_the_shells_words_is_not_a_shell(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("COMP_WORDS", "COMP_CWORD")}
    env["_IREVAL_COMPLETE"] = "bash_complete"
    res = subprocess.run([_exe()], cwd=tmp_path, capture_output=True, env=env, check=False)
    assert res.returncode == 2 and res.stdout == b""
    assert res.stderr.startswith(b"ireval: Missing argument 'QRELS'")


def test_requested():
    from irevalcli.commands.completion import requested

    env = {"_IREVAL_COMPLETE": "bash_complete", "COMP_WORDS": "ireval -m", "COMP_CWORD": "2"}
    with pytest.MonkeyPatch.context() as mp:
        for k, v in env.items():
            mp.setenv(k, v)
        assert requested([]) == "bash_complete"
        assert requested(["gate", "q", "r"]) is None
        mp.setenv("_IREVAL_COMPLETE", "bash_source")
        assert requested([]) == "bash_source"
        mp.delenv("COMP_WORDS")
        mp.setenv("_IREVAL_COMPLETE", "zsh_complete")
        assert requested([]) is None


def test_a_real_bash_completes(tmp_path):
    """bash sources the script and completes 'ireval gate --max-d' through it."""
    import shutil

    exe = _exe()
    bash_exe = shutil.which("bash")
    if bash_exe is None:
        pytest.skip("no bash")
    script = (
        'eval "$(_IREVAL_COMPLETE=bash_source ireval)"\n'
        "COMP_WORDS=(ireval gate q.txt --max-d); COMP_CWORD=3\n"
        "_ireval_completion ireval --max-d q.txt\n"  # as bash calls it: command, word, previous word
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    env = dict(os.environ, PATH=f"{exe.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    env.pop("_IREVAL_COMPLETE", None)
    res = subprocess.run(
        [bash_exe, "--norc", "--noprofile", "-c", script],
        cwd=tmp_path,
        capture_output=True,
        env=env,
        check=False,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.decode().split() == ["--max-drop", "--max-drop-rel"]


def _real_bash(tmp_path, body: str) -> str:
    """Run ``body`` in bash after the README's start-up line, in ``tmp_path``; ``compopt`` (a
    builtin only inside a completion bash runs) prints what it was asked instead."""
    import shutil

    exe = _exe()
    bash_exe = shutil.which("bash")
    if bash_exe is None:
        pytest.skip("no bash")
    script = 'eval "$(_IREVAL_COMPLETE=bash_source ireval)"\ncompopt() { echo compopt "$@"; }\n' + body
    env = dict(os.environ, PATH=f"{exe.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    env.pop("_IREVAL_COMPLETE", None)
    res = subprocess.run(
        [bash_exe, "--norc", "--noprofile", "-c", script], cwd=tmp_path, capture_output=True, env=env, check=False
    )
    assert (res.returncode, res.stderr) == (0, b"")
    return res.stdout.decode()


def _tab(words: list[str]) -> str:
    """What bash does on TAB after ``words`` (the last is the word being typed): calls the
    function ``complete -p ireval`` names, then shows COMPREPLY."""
    quoted = " ".join(f"'{w}'" for w in words)
    return (
        f"COMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}\n"
        f"_ireval_completion ireval '{words[-1]}' '{words[-2]}'\n"
        'printf "%s\\n" "${COMPREPLY[@]}"; COMPREPLY=()\n'
    )


def test_a_real_bash_offers_the_subcommands(tmp_path):
    """``ireval <TAB>`` in bash: the subcommands and the files; a typed prefix narrows both."""
    for name in ("qrels.txt", "compare-notes.txt", ".hidden"):
        (tmp_path / name).write_text("")
    (tmp_path / "runs").mkdir()
    assert _real_bash(tmp_path, "complete -p ireval\n") == "complete -o nosort -F _ireval_completion ireval\n"
    assert _real_bash(tmp_path, _tab(["ireval", ""])).splitlines() == [
        "measures",
        "compare",
        "gate",
        "pool",
        "plot",
        "curve",
        "similarity",
        "compare-notes.txt",
        "qrels.txt",
        "runs/",
    ]
    assert _real_bash(tmp_path, _tab(["ireval", "c"])).splitlines() == ["compare", "curve", "compare-notes.txt"]
    assert _real_bash(tmp_path, _tab(["ireval", "ga"])).splitlines() == ["gate"]
    assert _real_bash(tmp_path, _tab(["ireval", "qr"])).splitlines() == ["compopt -o default", ""]  # bash lists files
    assert _real_bash(tmp_path, _tab(["ireval", "gate", "--max-d"])).splitlines() == ["--max-drop", "--max-drop-rel"]
