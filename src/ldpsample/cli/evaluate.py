"""``ldpsample evaluate``'s arguments (argparse and the standard library only, imported to
build ``--help``): an events table's arguments, ``--methods`` and the run's options.
:mod:`ldpsample.cli.commands.evaluate` runs it.
"""

from __future__ import annotations

import argparse

from ldpsample.cli._pipeline import METHODS, add_run_arguments, add_table_arguments
from ldpsample.cli._text import paragraph

__all__ = ["add_parser"]

EPILOG = """\
examples:
  ldpsample evaluate data/clicks.parquet --user user_id --item site --count clicks \\
      --attributes country device --epsilons 1 4 8
      every method at each epsilon, per country and per device; the prior of each
      subcategory is the mean of its users' histograms (user_mean)
  ldpsample evaluate events/ --name ml1m --user user_id --item genre \\
      --prior public/ml-100k.parquet --methods minimax randomized_response -c 2
      a folder of CSV files, the prior pooled from a public table in the same layout
  ldpsample evaluate data/clicks.parquet --user user_id --item site --print-config
      print the config overlay instead of running it (to keep or edit it)

The results land in results/events/<name>/ of the workflow checkout (summary.csv answers
"which method at which epsilon"); see docs/own-data.md and docs/outputs.md.
"""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Add ``evaluate`` to the ``ldpsample`` parser."""
    parser = subparsers.add_parser(
        "evaluate",
        help="evaluate the samplers on a table of user events (the events tables)",
        description=paragraph(
            "Evaluate the minimax sampler, the relative mollifiers and randomized response on "
            "a table of user events: each user's histogram per attribute subcategory, each "
            "method's TV and KL to it at every epsilon, the worst case over users and the "
            "privacy audit of every kernel. Runs the pipeline's rules through Snakemake, so "
            "the results equal a run with the same events entry in a config file."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_table_arguments(parser, prior_default=None)
    parser.add_argument(
        "--methods",
        nargs="+",
        choices=METHODS,
        default=None,
        metavar="METHOD",
        help=f"methods to evaluate: {', '.join(METHODS)} (default: all four)",
    )
    add_run_arguments(parser)
