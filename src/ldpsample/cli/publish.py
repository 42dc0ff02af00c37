"""``ldpsample publish``: publish an ε-LDP release of a table of user events.

The command writes the config overlay of a release (``release: true``, docs/publishing.md) and
asks Snakemake for the pipeline's publish targets by path (in ``results/events/<name>/``: the
publish job's receipt ``work/release.json``, ``ledger.csv`` and ``release_report.csv``; the job
writes the folder ``publish/`` whole), so every check of a publication
applies as in a config-file run: the spec from public inputs only, the kernels' privacy audit,
secret randomness, the persistent ledger and the budget. The ε folder names and the default ε
list come from the workflow's own config check and events schema.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ldpsample.cli import CommandError
from ldpsample.cli._pipeline import (
    EVENTS_RESULTS,
    add_run_arguments,
    add_table_arguments,
    events_entry,
    find_workflow,
    print_overlay,
    require_snakemake,
    run_snakemake,
    write_overlay,
)
from ldpsample.cli._text import paragraph

__all__ = ["add_parser", "publish", "publish_targets"]

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
    parser.set_defaults(func=publish)


def publish_targets(workflow: Path, name: str, epsilons: list[float] | None) -> list[str]:
    """The publish outputs of ``events.<name>`` (workflow/rules/events_common.smk's
    ``get_events_publish_outputs``): the job's receipt (the published folder is written whole by
    the job, never as Snakemake outputs), the ledger totals and the release report.

    ``workflow`` and ``epsilons`` are not needed: every ε of the entry is released by the one
    publish job."""
    del workflow, epsilons
    base = f"{EVENTS_RESULTS}/{name}"
    return [f"{base}/work/release.json", f"{base}/ledger.csv", f"{base}/release_report.csv"]


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


def _shares_entry(values: list | None) -> str | dict[str, dict[str, float]] | None:
    """The ``subcategory_shares`` key from the ``--subcategory-shares`` values."""
    if values is None:
        return None
    if "uniform" in values:
        if len(values) > 1:
            raise CommandError("--subcategory-shares: uniform stands alone")
        return "uniform"
    return dict(values)


def publish(args: argparse.Namespace) -> int:
    """Write the release's overlay and run the publish target; return 0 or raise."""
    if args.prior is None:
        raise CommandError(
            "--prior is required: uniform, a public table's path or spec:<folder> (a release's "
            "prior must not come from the users' data)"
        )
    name, entry = events_entry(
        args,
        release=True,
        budget=args.budget,
        samples=args.samples,
        subcategories=None if args.subcategories is None else dict(args.subcategories),
        ledger=None if args.ledger is None else str(args.ledger),
        attributes_public=args.attributes_public,
        prior_smoothing=args.prior_smoothing,
        release_mode=args.release_mode,
        subcategory_shares=_shares_entry(args.subcategory_shares),
        release_seed=args.release_seed,
    )
    if args.print_config:
        print_overlay(name, entry)
        return 0
    workflow = find_workflow(args.workflow)
    require_snakemake()
    overlay = write_overlay(workflow, "publish", name, entry)
    targets = publish_targets(workflow, name, args.epsilons)
    status = run_snakemake(workflow, overlay, targets, cores=args.cores, dry_run=args.dry_run)
    if status != 0:
        raise CommandError(
            f"Snakemake failed (exit status {status}): nothing new was published; its log is above"
        )
    if not args.dry_run:
        print(f"published: {workflow / EVENTS_RESULTS / name / 'publish'}", file=sys.stderr)
    return 0
