"""``ldpsample show``'s arguments (argparse only, imported to build ``--help``):
``ldpsample show <spec folder, manifest.json or ledger> [--items N] [--top N]``.
:mod:`ldpsample.cli.commands.show` runs it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ldpsample.cli._text import paragraph

__all__ = ["add_parser"]

EPILOG = """\
examples:
  ldpsample show results/events/ml1m/publish/spec
      the spec a release published: its mechanism, epsilon values, samples, membership,
      randomness, each user's cost per release, the provenance of the prior, and every
      subcategory's items with their prior q (in the kernel's order, ascending q)
  ldpsample show privacy/ledger.sqlite --top 5
      the ledger: every recorded release, then the users with the most epsilon spent
"""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Add ``show`` to the ``ldpsample`` parser."""
    parser = subparsers.add_parser(
        "show",
        help="print a release spec or a privacy ledger readably",
        description=paragraph(
            "Print a release spec (a publish/spec folder or its manifest.json: checked against "
            "its domain.csv's sha256) or a privacy ledger (a .sqlite file) as plain text."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("path", type=Path, help="a spec folder, its manifest.json, or a ledger")
    parser.add_argument(
        "--items",
        type=int,
        default=None,
        metavar="N",
        help="a spec: show at most N items per subcategory, those of largest q (default: all)",
    )
    parser.add_argument(
        "--top",
        type=int,
        default=10,
        metavar="N",
        help="a ledger: show the N users with the most epsilon spent (default 10)",
    )
