"""Measures, the registry and measure names (irevalcli.measures)."""
