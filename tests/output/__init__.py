"""Formatters and output files (irevalcli.output)."""
