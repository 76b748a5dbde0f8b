"""CLI commands that live in a module of their own; ``core.cli.COMMAND_MODULES`` lists them."""
