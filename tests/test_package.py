"""The package as a user meets it: what ``import irevalcli`` offers, and how it installs."""

from __future__ import annotations

import subprocess
import sys

import irevalcli


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
