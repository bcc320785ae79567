"""Compare, gate and their statistics (irevalcli.analysis)."""
