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
    events_entry,
    find_workflow,
    print_overlay,
    require_snakemake,
    run_snakemake,
    write_overlay,
)

__all__ = ["publish_targets", "run"]


def publish_targets(workflow: Path, name: str, epsilons: list[float] | None) -> list[str]:
    """The publish outputs of ``events.<name>`` (workflow/rules/events_common.smk's
    ``get_events_publish_outputs``): the job's receipt (the published folder is written whole by
    the job, never as Snakemake outputs), the ledger totals and the release report.

    ``workflow`` and ``epsilons`` are not needed: every ε of the entry is released by the one
    publish job."""
    del workflow, epsilons
    base = f"{EVENTS_RESULTS}/{name}"
    return [f"{base}/work/release.json", f"{base}/ledger.csv", f"{base}/release_report.csv"]


def _shares_entry(values: list | None) -> str | dict[str, dict[str, float]] | None:
    """The ``subcategory_shares`` key from the ``--subcategory-shares`` values."""
    if values is None:
        return None
    if "uniform" in values:
        if len(values) > 1:
            raise CommandError("--subcategory-shares: uniform stands alone")
        return "uniform"
    return dict(values)


def run(args: argparse.Namespace) -> int:
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
