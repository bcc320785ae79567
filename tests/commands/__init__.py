"""The command line and the process around it (irevalcli.commands)."""
