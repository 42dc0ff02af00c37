"""``ldpsample estimate``: population estimates with standard errors and intervals from a
publication folder alone (docs/analysing.md).

``ldpsample estimate <publish folder> --out <table.csv> [--tests <tests.csv>] [--figure
<fig.png>] [--bootstrap B] [--seed S]`` reads ``spec/`` and ``released/`` of the folder, writes
the tidy table of :func:`ldpsample.estimate.estimate_publication` (and its χ² tests of
"population = public prior") atomically, and prints one line per (attribute, subcategory, ε).
Needs the ``events`` extra (polars); ``--figure`` also needs matplotlib, which
:mod:`ldpsample.cli.commands.estimate_figure` imports when a figure is asked for.
"""

from __future__ import annotations

import argparse

from ldpsample.cli import CommandError, load_command
from ldpsample.estimate import PublicationError, estimate_publication, read_publication
from ldpsample.pipeline.io import write_csv

__all__ = ["run"]


def run(args: argparse.Namespace) -> int:
    """Read, estimate, write; return 0."""
    for option in ("out", "tests", "figure"):
        path = getattr(args, option)
        if path is not None and not path.parent.is_dir():
            raise CommandError(f"--{option} {path}: folder {path.parent} does not exist")
    try:
        publication = read_publication(args.publication)
    except PublicationError as error:
        raise CommandError(str(error)) from None
    estimates = estimate_publication(publication, bootstrap=args.bootstrap, seed=args.seed)
    write_csv(estimates.table, args.out)
    if args.tests is not None:
        write_csv(estimates.tests, args.tests)
    if args.figure is not None:
        load_command("estimate_figure").write_estimates_figure(
            estimates.table, publication.spec.domain, args.figure
        )
    for row in estimates.tests.iter_rows(named=True):
        print(
            f"{row['attribute']}={row['subcategory']} epsilon={row['epsilon']:g}: "
            f"{row['draws']} draws from {row['users']} users, chi2 test of population = prior: "
            f"p = {row['p_value']:.3g}"
        )
    print(f"wrote {estimates.table.height} rows to {args.out}")
    return 0
