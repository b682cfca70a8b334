"""The command line: `podtui` and its subcommands."""
