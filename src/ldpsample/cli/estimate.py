"""``ldpsample estimate``'s arguments (argparse only, imported to build ``--help``):
``ldpsample estimate <publish folder> --out <table.csv> [--tests <tests.csv>] [--figure
<fig.png>] [--bootstrap B] [--seed S]``. :mod:`ldpsample.cli.commands.estimate` runs it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["add_parser"]


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
