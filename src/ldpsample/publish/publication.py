"""One publication: budget check, draws and ledger entry as one step, so that a release exists
only if its spend is recorded, and nothing is drawn when the budget would be exceeded.

Uses: polars, ldpsample.pipeline.io and this package's client, ledger, randomness and spec.

Order of :func:`publish_release`: take the ledger's write lock; check every releasing user's
spend plus the spec's bound against the budget; draw (:func:`~ldpsample.publish.release_items`,
with its kernel audit); write the released files to temporary names; append the spend; commit;
only then rename the files into place. A failure anywhere before the commit leaves the ledger
and the released folder as they were; a crash between the commit and the renames leaves a
recorded spend without a release (counted, never the reverse).
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import polars as pl

from ldpsample.pipeline.io import atomic_path, write_json
from ldpsample.publish.client import Release, release_items
from ldpsample.publish.ledger import Ledger
from ldpsample.publish.randomness import UniformSource
from ldpsample.publish.spec import ReleaseSpec

__all__ = ["PublishedRelease", "budget_detail", "check_release_budget", "publish_release"]

PathLike = str | os.PathLike[str]


@dataclass(frozen=True)
class PublishedRelease:
    """What :func:`publish_release` did: the release id (in the ledger and ``release.json``)
    and the draws with their operator report."""

    release_id: str
    release: Release


def budget_detail(spec: ReleaseSpec) -> str:
    """How the spec's per-user bound is made, for messages."""
    return (
        f" ({len(spec.subcategories)} subcategories × Σε {sum(spec.epsilons)!r} × "
        f"{spec.samples} samples)"
    )


def releasing_users(
    spec: ReleaseSpec, histograms: pl.DataFrame, users: Sequence[str] | None
) -> list[str]:
    """The users a release draws for: ``users`` (or those of ``histograms``) with hidden
    membership; with public attributes, those with data (within ``users`` if given)."""
    with_data = set(histograms["user"].cast(pl.String).to_list())
    if users is None:
        return sorted(with_data)
    listed = {str(u) for u in users}
    return sorted(listed & with_data if spec.attributes_public else listed)


def check_release_budget(
    spec: ReleaseSpec,
    users: Sequence[str],
    *,
    ledger: Ledger | PathLike,
    budget: float | None,
    key: str,
) -> float:
    """Raise :class:`~ldpsample.publish.BudgetExceededError` if releasing ``spec`` to
    ``users`` would take one past ``budget`` (config key ``key``); return the largest projected
    total. Depends on the spec and the ledger only."""
    book = ledger if isinstance(ledger, Ledger) else Ledger(ledger)
    with book.transaction() as tx:
        return tx.check_budget(
            users, add=spec.budget_bound, budget=budget, key=key, detail=budget_detail(spec)
        )


def publish_release(
    spec: ReleaseSpec,
    histograms: pl.DataFrame,
    *,
    spec_sha256: str,
    uniforms: UniformSource,
    ledger: Ledger | PathLike,
    budget: float | None,
    key: str,
    released: Mapping[float, PathLike],
    manifest: PathLike | None = None,
    users: Sequence[str] | None = None,
) -> PublishedRelease:
    """Check the budget, draw, record the spend and write the released files (see the module
    docstring for the order).

    Parameters
    ----------
    spec, spec_sha256
        The public spec and its identity (:func:`~ldpsample.publish.spec_sha256`).
    histograms, users, uniforms
        As :func:`~ldpsample.publish.release_items`.
    ledger, budget, key
        The persistent ledger, the per-user budget (None: no cap) and its config key.
    released
        ε -> the parquet file of that ε's draws (``user, attribute, subcategory, sample,
        item``); every ε of the spec.
    manifest
        Where to write ``release.json`` (release id, spec sha256, files and row counts), or None.

    Raises
    ------
    BudgetExceededError
        Before anything is drawn or written.
    PrivacyAuditError
        A kernel above its ε: nothing is recorded or written.
    """
    missing = sorted(set(spec.epsilons) - {float(e) for e in released})
    if missing:
        raise ValueError(f"released names no file for epsilon {missing}")
    book = ledger if isinstance(ledger, Ledger) else Ledger(ledger)
    release_id = uuid.uuid4().hex
    with contextlib.ExitStack() as files:
        temporary = {
            float(eps): files.enter_context(atomic_path(path)) for eps, path in released.items()
        }
        with book.transaction() as tx:
            tx.check_budget(
                releasing_users(spec, histograms, users),
                add=spec.budget_bound,
                budget=budget,
                key=key,
                detail=budget_detail(spec),
            )
            result = release_items(spec, histograms, uniforms=uniforms, users=users)
            rows = {}
            for eps, tmp in temporary.items():
                part = result.released.filter(pl.col("epsilon") == eps).drop("epsilon")
                part.write_parquet(tmp)
                rows[eps] = part.height
            spend = result.released.group_by("user", "epsilon").agg(
                pl.len().cast(pl.Int64).alias("samples")
            )
            tx.record(
                release_id=release_id,
                table=spec.name,
                spec_sha256=spec_sha256,
                seeded=spec.seeded,
                spend=spend.sort("user", "epsilon"),
            )
        # committed: the renames (leaving the ExitStack) publish the files
    if manifest is not None:
        write_json(
            {
                "release_id": release_id,
                "spec_sha256": spec_sha256,
                "name": spec.name,
                "reproducible_not_for_publication": spec.seeded,
                "files": {
                    os.path.basename(os.fspath(released[eps])): {"epsilon": eps, "rows": n}
                    for eps, n in sorted(rows.items())
                },
            },
            manifest,
        )
    return PublishedRelease(release_id=release_id, release=result)
