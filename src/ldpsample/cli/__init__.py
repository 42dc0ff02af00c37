"""The ``ldpsample`` command line: one console script, one sub-command module each.

``ldpsample <command> ...`` (or ``python -m ldpsample``) parses its arguments with argparse and
dispatches to the module ``ldpsample.cli.<command>`` named in :data:`SUBCOMMANDS`. Each such
module defines ``add_parser(subparsers)``, which adds its parser with
``subparsers.add_parser(name, help=..., description=...)`` and sets ``func`` (a callable taking
the parsed namespace and returning the exit status) with ``set_defaults``.

Contract: :func:`main` returns 0 on success; a user error (a bad path, a bad value) is printed as
one line ``ldpsample <command>: error: ...`` on stderr with status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

#: The sub-commands, in the order ``--help`` lists them; each is the module
#: ``ldpsample.cli.<name>``.
SUBCOMMANDS: tuple[str, ...] = ("evaluate", "publish", "estimate", "show")


class CommandError(Exception):
    """A user error in a sub-command: printed as one line, exit status 2."""


def build_parser() -> argparse.ArgumentParser:
    """The ``ldpsample`` parser with every sub-command of :data:`SUBCOMMANDS` added."""
    parser = argparse.ArgumentParser(
        prog="ldpsample",
        description=(
            "Locally private sampling with public data: evaluate samplers on a table of user "
            "events, publish an epsilon-LDP release, and estimate population statistics from a "
            "publication."
        ),
    )
    subparsers = parser.add_subparsers(dest="command", metavar="<command>")
    for name in SUBCOMMANDS:
        importlib.import_module(f"ldpsample.cli.{name}").add_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``ldpsample`` with ``argv`` (default: ``sys.argv[1:]``); return the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 0 if args.command is None else 2
    try:
        return int(func(args) or 0)
    except CommandError as error:
        print(f"ldpsample {args.command}: error: {error}", file=sys.stderr)
        return 2
