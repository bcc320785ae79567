"""Config files (``gate --config``): read as data, never run, and the paths in them resolved one way.

A path inside a config file is resolved by one rule, whatever the config's folder and
whatever kind of path it is:

- ``-`` is standard input;
- a local path is relative to the config file's folder (an absolute path stays as it is);
  ``file://PATH`` is the local path ``PATH``, by the same rule;
- any other URL (``s3://``, ``http://``, ``memory://``, ...; anything ``scheme://``) is
  refused: a config file, which may arrive in a pull request, never makes ireval reach
  the network or another file system. The user opts in on the command line
  (``--allow-remote-config-paths``); the URL is then read as given.

The config file itself is a local file, read through the byte source (so no output may
replace it).
"""

from __future__ import annotations

import os
import re
from typing import Any

from ..errors import InputError

_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
REMOTE_OPTION = "--allow-remote-config-paths"


def _toml_loads(text: str) -> dict[str, Any]:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef, unused-ignore]
    return tomllib.loads(text)


def read_config(path: str) -> tuple[dict[str, Any], str]:
    """Parse a TOML config file (never evaluated): its table and the SHA-256 of its bytes."""
    from .source import read_whole

    got = read_whole(path, what="config")  # hashed as it is read
    raw = got.data
    try:
        doc = _toml_loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise InputError(path, "not valid TOML: the file is not UTF-8") from None
    except ValueError as exc:  # tomllib.TOMLDecodeError
        raise InputError(path, f"not valid TOML: {exc}") from None
    return doc, got.sha256


def resolve_config_path(value: str, config: str, key: str, *, allow_remote: bool = False) -> str:
    """The input a config file's ``key = value`` names (see the module docstring)."""
    if value == "-":
        return value
    m = _URL.match(value)
    if m is not None and m.group(1).lower() != "file":
        if not allow_remote:
            raise InputError(
                config,
                f"'{key}' is the URL {value}; a config file may name local files only "
                f"(give the URL on the command line, or {REMOTE_OPTION} to read URLs named in config files)",
            )
        return value
    local = value[len(m.group(0)) :] if m is not None else value
    if not local:
        raise InputError(config, f"'{key}' must name a file, got {value!r}")
    if os.path.isabs(local):
        return local
    return os.path.join(os.path.dirname(config), local)
