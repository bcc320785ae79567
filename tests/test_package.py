"""The package as a user meets it: what ``import irevalcli`` offers, and how it installs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import irevalcli

ROOT = Path(__file__).resolve().parent.parent


def test_dir_lists_the_public_api():
    names = dir(irevalcli)
    assert "evaluate" in names and "__version__" in names
    assert set(irevalcli.__all__) <= set(names)
    assert names == sorted(names)
    for name in irevalcli.__all__:  # each listed name is there
        assert getattr(irevalcli, name) is not None


def test_dir_imports_nothing_heavy():
    code = "import sys, irevalcli; dir(irevalcli); print(sorted(m for m in ('pandas', 'pyarrow', 'numpy') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out == "[]\n"


def test_the_readmes_gate_config_is_a_real_config(tmp_path):
    """The README's TOML example, every key of it, is read by ``ireval gate --config``."""
    import re
    import shutil

    from irevalcli.commands.gate import CONFIG_KEYS

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```toml\n(.*?)```", readme, re.S).group(1)
    for key in ("level_for_rel", "ties", "seed", "permutations"):
        assert re.search(rf"^{key} = ", block, re.M), key
    top = block.split("\n[", 1)[0]  # the keys before the first [table]
    keys = set(re.findall(r"^([a-z_]+) = ", top, re.M)) | set(re.findall(r"^\[([a-z_]+)\]", block, re.M))
    assert keys <= set(CONFIG_KEYS)
    (tmp_path / "gate.toml").write_text(block)
    shutil.copy(ROOT / "examples" / "qrels.txt", tmp_path / "qrels.txt")
    shutil.copy(ROOT / "examples" / "run.txt", tmp_path / "run.txt")
    res = subprocess.run(
        [sys.executable, "-m", "irevalcli", "gate", "--config", "gate.toml", "run.txt", "--format", "json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    import json

    assert res.returncode in (0, 1), res.stderr  # a verdict, not a usage or input error
    doc = json.loads(res.stdout)
    assert doc["options"]["ties"] == "docno" and doc["options"]["seed"] == 0
