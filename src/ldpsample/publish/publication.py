"""One publication: budget check, ledger entry, draws and the published folder as one step, in
an order where no draw exists that the ledger does not count, and the published folder is
replaced whole.

Order of :func:`publish_release`:

1. remove what a killed earlier run left beside the folder (``.<folder>.new-*``,
   ``.<folder>.old-*``); normalise the user ids
   (:func:`~ldpsample.publish.ledger.canonical_user_ids`);
2. audit every kernel (:func:`~ldpsample.publish.client.audit_spec`) and compute each user's
   draws from the spec and the roster alone (:func:`~ldpsample.publish.client.planned_spend`);
3. refuse if the users hold spend of their population in another ledger the project knows of
   (:func:`~ldpsample.publish.ledger.other_ledger_spend`);
4. under the ledger's write lock: check the budget (the caller's live value) and append the
   planned spend; commit. Only now may a draw exist: a kill from here on leaves spend without a
   release (over-counted, which is safe), never the reverse;
5. draw (:func:`~ldpsample.publish.client.release_items`) and check that the draws are exactly
   the planned ones;
6. write the new folder beside the old one (``.<folder>.new-<id>``): the spec, one parquet file
   per ε, ``release.json`` (every file with its sha256, and the accuracy plan the caller
   computed from public inputs before any draw) and ``README.md``;
7. swap it in: the old folder is renamed away, the new one renamed into place, the old one
   removed. A reader sees the old publication, then (after a kill between the renames) none,
   then the new one: never a mix of two releases.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from ldpsample.events.scoring.release_kernel import epsilon_text
from ldpsample.pipeline.io import write_json, write_parquet, write_text
from ldpsample.publish.client import Release, audit_spec, planned_spend, release_items
from ldpsample.publish.ledger import (
    DEFAULT_POPULATION,
    Ledger,
    LedgerConflictError,
    canonical_user_ids,
    other_ledger_spend,
    register_ledger,
)
from ldpsample.publish.randomness import UniformSource
from ldpsample.publish.readme import publication_readme
from ldpsample.publish.spec import (
    DOMAIN_FILE,
    MANIFEST_FILE,
    ReleaseSpec,
    file_sha256,
)

__all__ = [
    "RELEASE_FILE",
    "RELEASE_FORMAT",
    "PublishedRelease",
    "budget_detail",
    "check_release_budget",
    "publish_release",
]

PathLike = str | os.PathLike[str]

RELEASE_FORMAT = "ldpsample-release/1"
#: The published folder's index: release id, spec sha256, every released file with its sha256.
RELEASE_FILE = "release.json"
README_FILE = "README.md"
SPEC_FOLDER = "spec"
RELEASED_FOLDER = "released"


def _checkpoint(name: str) -> None:
    """A named point of :func:`publish_release` (``"recorded"``, ``"drawn"``, ``"staged"``,
    ``"swapping"``, ``"published"``); does nothing. Tests replace it to kill the process
    there and check what the ledger and the folder hold."""
    del name


@dataclass(frozen=True)
class PublishedRelease:
    """What :func:`publish_release` did: the release id (in the ledger and ``release.json``),
    the draws with their operator report, and the published folder."""

    release_id: str
    release: Release
    folder: Path


def budget_detail(spec: ReleaseSpec) -> str:
    """How the spec's per-user bound is made, for messages."""
    units = (
        f"{spec.draw_units} attributes (joint release)"
        if spec.joint
        else (f"{spec.draw_units} subcategories")
    )
    return f" ({units} × Σε {sum(spec.epsilons)!r} × {spec.samples} samples)"


def check_release_budget(
    spec: ReleaseSpec,
    users: Sequence[str],
    *,
    ledger: Ledger | PathLike,
    budget: float | None,
    key: str,
    population: str = DEFAULT_POPULATION,
) -> float:
    """Raise :class:`~ldpsample.publish.BudgetExceededError` if releasing ``spec`` to
    ``users`` would take one past ``budget`` (config key ``key``); return the largest projected
    total. Depends on the spec and the ledger only (an early warning: :func:`publish_release`
    checks again under the lock that records the spend)."""
    book = ledger if isinstance(ledger, Ledger) else Ledger(ledger)
    with book.transaction() as tx:
        return tx.check_budget(
            canonical_user_ids(users, key=key),
            add=spec.budget_bound,
            budget=budget,
            key=key,
            detail=budget_detail(spec),
            population=population,
        )


def _clean_leftovers(folder: Path) -> None:
    """Remove the new and old folders a killed run left beside ``folder``."""
    for leftover in folder.parent.glob(f".{folder.name}.*-*"):
        if leftover.name.startswith((f".{folder.name}.new-", f".{folder.name}.old-")):
            shutil.rmtree(leftover, ignore_errors=True)


def publish_release(
    spec: ReleaseSpec,
    histograms: pl.DataFrame,
    *,
    spec_folder: PathLike,
    uniforms: UniformSource,
    ledger: Ledger | PathLike,
    budget: float | None,
    key: str,
    folder: PathLike,
    users: Sequence[str] | None = None,
    population: str = DEFAULT_POPULATION,
    project: PathLike = ".",
    accuracy_plan: Mapping[str, Any] | None = None,
) -> PublishedRelease:
    """Check the budget, record the spend, draw and replace ``folder`` whole (see the module
    docstring for the order).

    Parameters
    ----------
    spec, spec_folder
        The public spec and the folder its files were read from (copied into ``folder``).
    histograms, users, uniforms
        As :func:`~ldpsample.publish.release_items`.
    ledger, budget, key, population
        The persistent ledger, the per-user budget (None: no cap) read from the current config,
        its config key, and the population the users belong to.
    folder
        The published folder, replaced as a whole: ``spec/``, ``released/eps~<ε>.parquet``
        (``epsilon, user, attribute, subcategory, sample, item``), ``release.json``,
        ``README.md``.
    project
        The project folder whose ``privacy/`` lists the ledgers it knows of.
    accuracy_plan
        JSON-ready accuracy plan computed from public inputs only before the call
        (:meth:`ldpsample.estimate.AccuracyPlan.to_json`), written into ``release.json`` as
        ``accuracy_plan`` and summarised in ``README.md``; None: neither holds a plan.

    Raises
    ------
    BudgetExceededError, LedgerConflictError
        Before anything is drawn, recorded or written.
    PrivacyAuditError
        A kernel above its ε: nothing is recorded, drawn or written.
    """
    folder = Path(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    _clean_leftovers(folder)
    book = ledger if isinstance(ledger, Ledger) else Ledger(ledger)
    hist = histograms.with_columns(
        pl.Series("user", canonical_user_ids(histograms["user"], key=key))
    )
    roster = None if users is None else canonical_user_ids(users, key=key)
    audit_spec(spec)
    spend = planned_spend(spec, hist, users=roster)
    releasing = spend["user"].unique().sort().to_list()
    register_ledger(book.path, project)
    elsewhere = other_ledger_spend(book.path, releasing, population=population, project=project)
    if elsewhere:
        path, held, most = elsewhere[0]
        raise LedgerConflictError(
            f"config key {key.rsplit('.', 1)[0]}.ledger: {held} of the {len(releasing)} users of "
            f"population {population!r} hold spend (up to {most!r}) in ledger {path}, not in "
            f"{book.path}; nothing was drawn or written. Release against the ledger that holds "
            "their spend (ledger: that file), or name another population if they are other people"
        )
    release_id = uuid.uuid4().hex
    with book.transaction() as tx:
        tx.check_budget(
            releasing,
            add=spec.budget_bound,
            budget=budget,
            key=key,
            detail=budget_detail(spec),
            population=population,
        )
        tx.record(
            release_id=release_id,
            table=spec.name,
            spec_sha256=file_sha256(Path(spec_folder) / MANIFEST_FILE),
            seeded=spec.seeded,
            spend=spend,
            population=population,
        )
    _checkpoint("recorded")
    result = release_items(spec, hist, uniforms=uniforms, users=roster)
    drawn = (
        result.released.group_by("user", "epsilon")
        .agg(pl.len().cast(pl.Int64).alias("samples"))
        .sort("user", "epsilon")
    )
    if not drawn.equals(spend):
        raise RuntimeError(
            f"release {release_id}: the draws differ from the spend recorded before drawing "
            "(the ledger holds the planned spend; nothing was published)"
        )
    _checkpoint("drawn")
    staging = folder.parent / f".{folder.name}.new-{release_id}"
    _write_folder(
        spec,
        result,
        staging,
        spec_folder=Path(spec_folder),
        release_id=release_id,
        accuracy_plan=accuracy_plan,
    )
    _checkpoint("staged")
    old = folder.parent / f".{folder.name}.old-{release_id}"
    if folder.exists():
        folder.rename(old)
    _checkpoint("swapping")
    staging.rename(folder)
    shutil.rmtree(old, ignore_errors=True)
    _checkpoint("published")
    return PublishedRelease(release_id=release_id, release=result, folder=folder)


def _write_folder(
    spec: ReleaseSpec,
    result: Release,
    staging: Path,
    *,
    spec_folder: Path,
    release_id: str,
    accuracy_plan: Mapping[str, Any] | None,
) -> None:
    """The published folder's files in ``staging`` (see :func:`publish_release`)."""
    for name in (DOMAIN_FILE, MANIFEST_FILE):
        write_text((spec_folder / name).read_text(encoding="utf-8"), staging / SPEC_FOLDER / name)
    files = {}
    for eps in spec.epsilons:
        name = f"{RELEASED_FOLDER}/eps~{epsilon_text(eps)}.parquet"
        part = result.released.filter(pl.col("epsilon") == eps)
        write_parquet(part, staging / name)
        files[name] = {
            "epsilon": float(eps),
            "rows": part.height,
            "sha256": file_sha256(staging / name),
        }
    index = {
        "format": RELEASE_FORMAT,
        "release_id": release_id,
        "name": spec.name,
        "publishable": not spec.seeded,
        "spec": {
            "folder": SPEC_FOLDER,
            "sha256": file_sha256(staging / SPEC_FOLDER / MANIFEST_FILE),
            "files": {
                f"{SPEC_FOLDER}/{name}": file_sha256(staging / SPEC_FOLDER / name)
                for name in (DOMAIN_FILE, MANIFEST_FILE)
            },
        },
        "columns": list(result.released.columns),
        "files": files,
        "readme": README_FILE,
    }
    if accuracy_plan is not None:
        index["accuracy_plan"] = dict(accuracy_plan)
    write_json(index, staging / RELEASE_FILE)
    write_text(publication_readme(spec, index), staging / README_FILE)
