"""The evaluation table and its rules (irevalcli.core)."""
