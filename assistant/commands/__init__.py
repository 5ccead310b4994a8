"""Subcommands of `assistant`; each module has `register(subparsers)`."""


class CliError(Exception):
    """A user-facing failure: printed as one line, exit status 2, no traceback."""
