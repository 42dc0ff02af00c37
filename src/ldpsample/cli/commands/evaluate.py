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
    events_entry,
    find_workflow,
    print_overlay,
    run_snakemake,
    write_overlay,
)

__all__ = ["TABLES", "run"]

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


def run(args: argparse.Namespace) -> int:
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
