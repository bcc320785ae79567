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


def _extra(name: str) -> list[str]:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"][name]


def test_each_missing_extra_names_its_packages_as_pyproject_lists_them():
    """The hints name a command that works without irevalcli on an index: the extra's packages."""
    import shlex

    from irevalcli.io.dataset import INSTALL_HINT

    assert shlex.split(INSTALL_HINT) == ["pip", "install", *_extra("dask")]
    plot = (ROOT / "irevalcli" / "commands" / "plot.py").read_text()
    assert "ireval plot needs matplotlib: pip install 'matplotlib>=3.5'" in plot
    assert _extra("plot") == ["matplotlib>=3.5"]


def test_readme_says_what_make_test_installs():
    import re

    make = (ROOT / "Makefile").read_text()
    extras = re.search(r"EXTRAS := '\.\[([a-z,]+)\]'", make).group(1).split(",")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    line = next(x for x in readme.splitlines() if x.startswith("make test "))
    said = re.search(r"adds the (.*) extras", line).group(1).replace(" and ", ", ").split(", ")
    assert said == extras


def test_ci_tests_the_wheel_a_user_installs():
    """.ci/run builds the wheel and runs `make run`'s examples from a fresh environment."""
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make check-dist" in ci
    make = (ROOT / "Makefile").read_text()
    check = make[make.index("check-dist: dist") :]
    check = check[: check.index("\n\n")]
    assert "$(PYTHON) -m venv $(WHEEL_VENV)" in check and "rm -rf $(WHEEL_VENV)" in check
    assert "$(WHEEL_VENV)/bin/pip install --quiet dist/irevalcli-*-py3-none-any.whl" in check
    assert "$(call EXAMPLES,$(WHEEL_VENV)/bin/ireval)" in check
    assert "run: $(STAMP)\n\t$(call EXAMPLES,$(BIN)/ireval)\n" in make
