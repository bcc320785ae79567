"""The command line: one module per subcommand; main.py maps errors to exit codes."""
