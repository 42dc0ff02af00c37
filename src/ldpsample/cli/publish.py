"""``ldpsample publish``'s arguments (argparse and the standard library only, imported to
build ``--help``): an events table's arguments, the release's (``--budget``, ``--samples``,
``--subcategories``, ``--release-mode``, ``--subcategory-shares``, ...) and the run's options.
:mod:`ldpsample.cli.commands.publish` runs it.
"""

from __future__ import annotations

import argparse

from ldpsample.cli._pipeline import add_run_arguments, add_table_arguments
from ldpsample.cli._text import paragraph

__all__ = ["add_parser"]

EPILOG = """\
examples:
  ldpsample publish results/movielens/events/ml-1m.parquet --name ml1m --user user_id \\
      --item genre --count ratings --attributes age_group \\
      --prior results/movielens/events/ml-100k.parquet --epsilons 1 4 --budget 50
      each ML-1M user releases one genre per age group at epsilon 1 and 4; the prior is
      pooled from the public MovieLens-100K table (docs/publishing.md's worked example)
  ldpsample publish data/clicks.csv --name clicks --user user_id --item site \\
      --attributes country --subcategories country=de,fr --prior uniform \\
      --items news sports music --epsilons 2 --budget 10
      a uniform prior on a listed domain and listed subcategories (both public); a second
      run past the budget is refused
  ldpsample publish data/new-users.csv --name clicks-2 --user user_id --item site \\
      --prior spec:results/events/clicks/publish/spec --epsilons 2
      new users released later under the same mechanism (an earlier spec)

The publishable files are results/events/<name>/publish/ (copy that folder); the ledger
(privacy/ledger.sqlite by default, one per project) outlives results/: ldpsample show prints it.
"""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Add ``publish`` to the ``ldpsample`` parser."""
    parser = subparsers.add_parser(
        "publish",
        help="publish an epsilon-LDP release of a table (spec, draws, ledger)",
        description=paragraph(
            "Publish a release: every user of the table releases items drawn with the minimax "
            "sampler under a spec fixed from public inputs only, with secret randomness, and "
            "every user's spent epsilon is added to a ledger that refuses a run past the "
            "budget. Runs the pipeline's publish target through Snakemake."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_table_arguments(parser, prior_default=None)
    release = parser.add_argument_group("the release (docs/publishing.md)")
    release.add_argument(
        "--budget", type=float, default=None, help="per-user total epsilon over the ledger"
    )
    release.add_argument(
        "--samples", type=int, default=None, help="draws per user, subcategory and epsilon"
    )
    release.add_argument(
        "--ledger",
        default=None,
        help="the ledger file (default: the project ledger privacy/ledger.sqlite)",
    )
    release.add_argument(
        "--attributes-public",
        action="store_true",
        default=None,
        help="users release only in their own subcategories (membership declared public)",
    )
    release.add_argument(
        "--subcategories",
        nargs="+",
        default=None,
        type=_subcategories,
        metavar="ATTRIBUTE=V1,V2",
        help=(
            "the released values of an attribute (required with a uniform prior and attributes; "
            "with a public table or a spec it restricts theirs)"
        ),
    )
    release.add_argument(
        "--release-mode",
        choices=("per_subcategory", "joint"),
        default=None,
        help=(
            "per_subcategory (default, or a reused spec's mode): one draw per subcategory; "
            "joint: one draw per attribute on the (subcategory, item) domain"
        ),
    )
    release.add_argument(
        "--subcategory-shares",
        nargs="+",
        default=None,
        type=_shares,
        metavar="uniform|ATTRIBUTE=S1:W1,S2:W2",
        help=(
            "the public shares of a joint release: uniform, or a positive weight per released "
            "subcategory of each attribute (default: the public table's shares)"
        ),
    )
    release.add_argument(
        "--prior-smoothing",
        type=float,
        default=None,
        metavar="ALPHA",
        help="q = (1 - ALPHA) q + ALPHA / n on each domain",
    )
    release.add_argument(
        "--release-seed",
        type=int,
        default=None,
        help="reproducible draws for tests: NOT publishable (whoever knows it knows every draw)",
    )
    add_run_arguments(parser)


def _subcategories(text: str) -> tuple[str, list[str]]:
    attribute, sep, values = text.partition("=")
    if not sep or not attribute or not values:
        raise argparse.ArgumentTypeError(f"{text!r} is not ATTRIBUTE=V1,V2,...")
    return attribute, values.split(",")


def _shares(text: str) -> str | tuple[str, dict[str, float]]:
    """``uniform``, or ``ATTRIBUTE=S1:W1,S2:W2`` (:func:`_subcategories`' form with a weight
    after each value) as (attribute, {subcategory: weight})."""
    if text == "uniform":
        return text
    try:
        attribute, pairs = _subcategories(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not uniform or ATTRIBUTE=S1:W1,S2:W2"
        ) from None
    weights: dict[str, float] = {}
    for pair in pairs:
        subcategory, colon, weight = pair.rpartition(":")
        try:
            value = float(weight) if colon and subcategory else None
        except ValueError:
            value = None
        if value is None:
            raise argparse.ArgumentTypeError(f"{pair!r} in {text!r} is not SUBCATEGORY:WEIGHT")
        weights[subcategory] = value
    return attribute, weights
