"""``ldpsample estimate``: population estimates with standard errors and intervals from a
publication folder alone (docs/analysing.md).

``ldpsample estimate <publish folder> --out <table.csv> [--tests <tests.csv>] [--figure
<fig.png>] [--bootstrap B] [--seed S]`` reads ``spec/`` and ``released/`` of the folder, writes
the tidy table of :func:`ldpsample.estimate.estimate_publication` (and its χ² tests of
"population = public prior") atomically, and prints one line per (attribute, subcategory, ε).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ldpsample.cli import CommandError

__all__ = ["add_parser", "run"]


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text!r}")
    return value


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Add ``estimate`` to the ``ldpsample`` parser."""
    parser = subparsers.add_parser(
        "estimate",
        help="estimate population statistics from a publication folder",
        description=(
            "Estimate each subcategory's item distribution from a publication folder (publish/: "
            "spec/ and released/) alone: the unbiased inversion with analytic standard errors, "
            "its simplex projection (norm_sub) and the maximum-likelihood estimate (em), with "
            "bootstrap intervals over users when --bootstrap is given, and the chi-square test "
            "of 'population = public prior'."
        ),
    )
    parser.add_argument("publication", type=Path, help="the publish/ folder")
    parser.add_argument("--out", type=Path, required=True, help="the table of estimates (CSV)")
    parser.add_argument("--tests", type=Path, help="the chi-square tests (CSV)")
    parser.add_argument("--figure", type=Path, help="a figure of the estimates (.png, .pdf)")
    parser.add_argument(
        "--bootstrap", type=_non_negative, default=0, help="bootstrap replicates (default 0)"
    )
    parser.add_argument("--seed", type=_non_negative, help="seed of the bootstrap resampling")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Read, estimate, write; return 0."""
    from ldpsample.estimate import PublicationError, estimate_publication, read_publication
    from ldpsample.pipeline.io import write_csv, write_figure

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
        from ldpsample.figures.estimate import plot_estimates
        from ldpsample.figures.style import close

        figure = plot_estimates(estimates.table, publication.spec.domain)
        write_figure(figure, args.figure, dpi=120)
        close(figure)
    for row in estimates.tests.iter_rows(named=True):
        print(
            f"{row['attribute']}={row['subcategory']} epsilon={row['epsilon']:g}: "
            f"{row['draws']} draws from {row['users']} users, chi2 test of population = prior: "
            f"p = {row['p_value']:.3g}"
        )
    print(f"wrote {estimates.table.height} rows to {args.out}")
    return 0
