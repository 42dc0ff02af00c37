"""``ldpsample evaluate``: evaluate the samplers on a table of user events, without writing YAML.

The command writes the config overlay ``events: {<name>: {...}}`` that docs/own-data.md
describes and runs the pipeline's own rules on the table's outputs, so its results are the
pipeline's, byte for byte: ``results/events/<name>/`` with ``summary.csv``, ``max_tv.csv``,
``max_kl.csv``, ``tradeoff.csv``, ``per_user.parquet``, ``subcategories.csv``, ``audit.csv``
and the figures (docs/outputs.md).
"""

from __future__ import annotations

import argparse
import sys

from ldpsample.cli import CommandError
from ldpsample.cli._pipeline import (
    EVENTS_RESULTS,
    METHODS,
    add_run_arguments,
    add_table_arguments,
    events_entry,
    find_workflow,
    print_overlay,
    run_snakemake,
    write_overlay,
)
from ldpsample.cli._text import paragraph

__all__ = ["TABLES", "add_parser", "evaluate"]

#: The table's outputs that ``evaluate`` asks Snakemake for (in results/events/<name>/).
TABLES = (
    "summary.csv",
    "max_tv.csv",
    "max_kl.csv",
    "tradeoff.csv",
    "per_user.parquet",
    "subcategories.csv",
    "audit.csv",
    "tradeoff.png",
    "figures",
)

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
    parser.set_defaults(func=evaluate)


def evaluate(args: argparse.Namespace) -> int:
    """Write the overlay and run Snakemake on the table's outputs; return its exit status."""
    name, entry = events_entry(args, methods=args.methods)
    if args.print_config:
        print_overlay(name, entry)
        return 0
    workflow = find_workflow(args.workflow)
    overlay = write_overlay(workflow, "evaluate", name, entry)
    targets = [f"{EVENTS_RESULTS}/{name}/{table}" for table in TABLES]
    status = run_snakemake(workflow, overlay, targets, cores=args.cores, dry_run=args.dry_run)
    if status != 0:
        raise CommandError(f"Snakemake failed (exit status {status}): its log is above")
    if not args.dry_run:
        print(f"results: {workflow / EVENTS_RESULTS / name}", file=sys.stderr)
    return 0
