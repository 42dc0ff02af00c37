"""The ``ldpsample`` command line: one console script; each sub-command a parser module and a
command module.

``ldpsample <command> ...`` (or ``python -m ldpsample``) parses its arguments with argparse and
runs the sub-command ``<command>`` of :data:`SUBCOMMANDS` in two steps, as pip and git do, so
``--help`` and a light sub-command load nothing a heavy one needs:

- the parser module ``ldpsample.cli.<command>`` (argparse and the standard library only) defines
  ``add_parser(subparsers)``, which adds its parser with ``subparsers.add_parser(name, help=...,
  description=...)``; :func:`build_parser` imports every one of them;
- the command module ``ldpsample.cli.commands.<command>`` imports what the sub-command needs at
  module level and defines ``run(args)``, taking the parsed namespace and returning the exit
  status; :func:`main` imports it by name (:func:`load_command`) for the sub-command that runs
  only.

Contract: :func:`main` returns 0 on success; a user error (a bad path, a bad value) is printed as
one line ``ldpsample <command>: error: ...`` on stderr with status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from types import ModuleType

#: The sub-commands, in the order ``--help`` lists them: ``ldpsample.cli.<name>`` adds each one's
#: parser and ``ldpsample.cli.commands.<name>`` runs it.
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
        importlib.import_module(f"{__name__}.{name}").add_parser(subparsers)
    return parser


def load_command(name: str) -> ModuleType:
    """The command module ``ldpsample.cli.commands.<name>``, imported now (with what it imports:
    an ``ImportError`` when the install lacks an extra it needs)."""
    return importlib.import_module(f"{__name__}.commands.{name}")


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``ldpsample`` with ``argv`` (default: ``sys.argv[1:]``); return the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    try:
        return int(load_command(args.command).run(args) or 0)
    except CommandError as error:
        print(f"ldpsample {args.command}: error: {error}", file=sys.stderr)
        return 2
