"""The command line: one subcommand per module, registered in cli.main."""
