"""The version, in one place: the package metadata reads it from here (pyproject.toml)."""

VERSION = "0.1.0"
