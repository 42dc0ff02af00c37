"""The client side of a release: a spec and users' own histograms in, one item per (user,
subcategory, ε, sample) out. Usable without Snakemake (a notebook, or each user's own device).

Every input other than the users' histograms is public (the spec) or secret randomness (a
:class:`~ldpsample.publish.randomness.UniformSource`). A user's draw in a subcategory is the inverse
CDF of ``p K_{q,ε}`` at the user's own uniform ``u``, with ``q`` the spec's prior on the
subcategory's full domain and ``K`` the minimax kernel
(:func:`ldpsample.events.scoring.release_kernel.minimax_release_kernel`, the kernel code of the
pipeline's evaluation), audited in O(n) before any draw. Draws take O(k log n) for a user with ``k``
items (:func:`ldpsample.sample_minimax_sparse`; docs/minimax-sparse.md), the CDF in the kernel's
sorted order, which is the spec's domain order (ascending ``q``). Where the user has no data in a
subcategory, ``p := q`` and the draw comes from ``qK = q``: it says nothing about the user. With
hidden membership (the default) every user of ``users`` releases in every subcategory; with
``attributes_public`` only where it has data.

A joint spec (``release_mode: joint``) releases instead one item per (attribute, ε, sample) on
the attribute's joint (subcategory, item) domain, drawn by the same sampler from ``p K_{q,ε}``
with ``q = π(s) q_s(i)`` and ``p`` the user's own (subcategory, item) histogram (``p := q``
when it has none): the released row names the drawn subcategory and item, and the cost is
attributes × Σε × samples.

Each draw is ε-LDP for the user's whole data (any two inputs give output probabilities within
e^ε, ``p := q`` included, since ``qK`` is a mixture of rows of ``K``); a run costs each user at
most subcategories × Σε × samples (:attr:`ReleaseSpec.budget_bound`), which the ledger adds up.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import polars as pl
from numpy.typing import NDArray

from ldpsample.events.counting.data_priors import csr_rows
from ldpsample.events.scoring import release_kernel as _release
from ldpsample.minimax_sparse import sample_minimax_sparse
from ldpsample.publish.randomness import UniformSource
from ldpsample.publish.spec import DOMAIN_SCHEMA, JOINT_LABEL, PER_SUBCATEGORY, ReleaseSpec

__all__ = [
    "HISTOGRAM_COLUMNS",
    "RELEASED_SCHEMA",
    "REPORT_SCHEMA",
    "Release",
    "audit_spec",
    "planned_spend",
    "release_items",
]

log = logging.getLogger(__name__)

#: Columns of the users' histograms (long, sparse: one row per (user, subcategory, item) with
#: data; other columns are ignored).
HISTOGRAM_COLUMNS = ("user", "attribute", "subcategory", "item", "count")
#: One row per draw.
RELEASED_SCHEMA: dict[str, pl.DataType] = {
    "epsilon": pl.Float64(),
    "user": pl.String(),
    "attribute": pl.String(),
    "subcategory": pl.String(),
    "sample": pl.Int64(),
    "item": pl.String(),
}
#: The operator's view of one (subcategory, ε): never part of what is published.
REPORT_SCHEMA: dict[str, pl.DataType] = {
    "attribute": pl.String(),
    "subcategory": pl.String(),
    "epsilon": pl.Float64(),
    "n_items": pl.Int64(),
    "realized_epsilon": pl.Float64(),
    "users_released": pl.Int64(),
    "users_with_data": pl.Int64(),
    "users_without_data": pl.Int64(),
    "users_zero_mass": pl.Int64(),
}


@dataclass(frozen=True)
class Release:
    """What :func:`release_items` returns.

    Attributes
    ----------
    released
        :data:`RELEASED_SCHEMA` rows in (epsilon, attribute, subcategory, user, sample) order.
    report
        :data:`REPORT_SCHEMA` rows (realised ε of every kernel, who released, users holding
        mass on items of ``q = 0``), for the operator only.
    rows_outside_domain
        Histogram rows whose (attribute, subcategory, item) is not in the spec (not used).
    """

    released: pl.DataFrame
    report: pl.DataFrame
    rows_outside_domain: int


def _check_histograms(histograms: pl.DataFrame) -> pl.DataFrame:
    missing = [c for c in HISTOGRAM_COLUMNS if c not in histograms.columns]
    if missing:
        raise ValueError(
            f"histograms lack columns {missing}; they need {list(HISTOGRAM_COLUMNS)} (one row "
            "per user, subcategory and item)"
        )
    frame = histograms.select(
        *[pl.col(c).cast(pl.String) for c in HISTOGRAM_COLUMNS[:4]],
        pl.col("count").cast(pl.Float64),
    )
    bad = frame.filter(~(pl.col("count") >= 0) | pl.col("count").is_infinite())
    if bad.height:
        raise ValueError(
            f"histograms: {bad.height} counts are negative, NaN or infinite, e.g. "
            f"{bad.row(0, named=True)!r}"
        )
    nulls = frame.select(pl.any_horizontal(pl.all().is_null()).sum()).item()
    if nulls:
        raise ValueError(
            f"histograms: {nulls} rows have a null user, attribute, subcategory or item"
        )
    return frame.filter(pl.col("count") > 0)


def _inside(spec: ReleaseSpec, hist: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    """Histogram rows inside the spec's domain (with their position) and how many are not."""
    keys = ["attribute", "subcategory", "item"]
    joined = hist.join(spec.domain.select(*keys, "position"), on=keys, how="left")
    outside = joined.filter(pl.col("position").is_null()).height
    return joined.filter(pl.col("position").is_not_null()), outside


def planned_spend(
    spec: ReleaseSpec, histograms: pl.DataFrame, *, users: Sequence[str] | None = None
) -> pl.DataFrame:
    """``user, epsilon, samples``: the draws :func:`release_items` will make for each user at
    each ε, computed without any randomness (so the ledger can count them before they exist).

    With hidden membership every user of ``users`` (or of ``histograms``) draws ``samples``
    items in every subcategory; with public attributes only in the subcategories where it has
    data in the spec's domain.
    """
    hist = _check_histograms(histograms)
    subs = spec.draw_units
    if spec.attributes_public:
        inside, _ = _inside(spec, hist)
        if users is not None:
            roster = pl.Series("user", [str(u) for u in users], dtype=pl.String)
            inside = inside.filter(pl.col("user").is_in(roster.implode()))
        per_user = inside.group_by("user").agg(
            pl.struct("attribute", "subcategory").n_unique().alias("subs")
        )
    else:
        names = hist["user"].unique() if users is None else pl.Series([str(u) for u in users])
        stray = hist["user"].unique().filter(~hist["user"].unique().is_in(names.implode()))
        if stray.len():
            raise ValueError(
                f"{stray.len()} users with data are not in users (e.g. {stray.sort()[0]!r}); "
                "every user of the table must be listed"
            )
        per_user = pl.DataFrame({"user": names.unique(), "subs": subs}).cast(
            {"user": pl.String, "subs": pl.Int64}
        )
    eps = pl.DataFrame({"epsilon": list(spec.epsilons)}, schema={"epsilon": pl.Float64()})
    return (
        per_user.join(eps, how="cross")
        .select("user", "epsilon", (pl.col("subs") * spec.samples).cast(pl.Int64).alias("samples"))
        .sort("user", "epsilon")
    )


def audit_spec(spec: ReleaseSpec) -> pl.DataFrame:
    """Build and audit every kernel of ``spec`` (``attribute, subcategory, epsilon,
    realized_epsilon``) without drawing.

    Raises
    ------
    ldpsample.events.PrivacyAuditError
        If a kernel's realised ε exceeds its ε.
    """
    if spec.joint:
        spec = _joint_view(spec)[0]
    rows = []
    for attribute, subcategory in spec.subcategories:
        _, q = spec.prior_of(attribute, subcategory)
        for eps in spec.epsilons:
            what = f"release of {spec.name}, {attribute}={subcategory!r}, epsilon={eps!r}"
            K = _release.minimax_release_kernel(q, epsilon=eps)
            realized = _release.audit_kernel(K, epsilon=eps, what=f"{what}, minimax")
            rows.append((attribute, subcategory, eps, realized))
    return pl.DataFrame(
        rows,
        schema={
            "attribute": pl.String(),
            "subcategory": pl.String(),
            "epsilon": pl.Float64(),
            "realized_epsilon": pl.Float64(),
        },
        orient="row",
    )


def release_items(
    spec: ReleaseSpec,
    histograms: pl.DataFrame,
    *,
    uniforms: UniformSource,
    users: Sequence[str] | None = None,
) -> Release:
    """Each user's released items under ``spec``: one per (subcategory, ε, sample).

    Parameters
    ----------
    spec
        The public spec (:func:`~ldpsample.publish.build_spec`,
        :func:`~ldpsample.publish.read_spec`).
    histograms
        Users' own counts, long and sparse: ``user, attribute, subcategory, item, count``
        (counts >= 0; zero rows are ignored). Rows outside the spec's domain are not used
        (counted in the result and logged).
    uniforms
        Source of the draws' uniforms: :class:`~ldpsample.publish.SecureUniforms` to publish,
        :class:`~ldpsample.publish.SeededUniforms` for tests and evaluation.
    users
        Hidden membership (``spec.attributes_public`` false): every user to release, in every
        subcategory (``p := q`` where it has no data); None: the users of ``histograms``. A
        user with data that is not listed is an error (it would be dropped silently). With
        public attributes, users release where they have data; ``users`` then only restricts.

    Returns
    -------
    Release

    Raises
    ------
    ValueError
        Malformed histograms, users with data missing from ``users``.
    ldpsample.events.PrivacyAuditError
        If a kernel's realised ε exceeds its ε (nothing is returned).
    """
    if spec.joint:
        return _release_joint(spec, histograms, uniforms=uniforms, users=users)
    hist = _check_histograms(histograms)
    inside, outside = _inside(spec, hist)
    if outside:
        log.warning(
            "%d histogram rows are outside the spec's domain (other items or subcategories) "
            "and are not used",
            outside,
        )
    # every user of the histograms is in the table, also one whose rows are all outside
    data_users = hist["user"].unique()
    if users is not None:
        roster = pl.Series("user", [str(u) for u in users], dtype=pl.String).unique().sort()
        stray = data_users.filter(~data_users.is_in(roster.implode()))
        if spec.attributes_public:
            inside = inside.filter(pl.col("user").is_in(roster.implode()))
        elif stray.len():
            raise ValueError(
                f"{stray.len()} users with data are not in users (e.g. {stray.sort()[0]!r}); "
                "every user of the table must be listed"
            )
    else:
        roster = data_users.sort()
    parts = inside.partition_by(["attribute", "subcategory"], as_dict=True)
    released: dict[float, list[pl.DataFrame]] = {eps: [] for eps in spec.epsilons}
    report = []
    for attribute, subcategory in spec.subcategories:
        items, q = spec.prior_of(attribute, subcategory)
        rows = parts.get((attribute, subcategory))
        with_data = _users_with_data(rows)
        names = with_data if spec.attributes_public else roster
        indptr, indices, data = _csr(rows, names)
        zero_mass = _zero_mass_users(indptr, indices, data, q)
        for eps in spec.epsilons:
            what = f"release of {spec.name}, {attribute}={subcategory!r}, epsilon={eps!r}"
            K = _release.minimax_release_kernel(q, epsilon=eps)
            realized = _release.audit_kernel(K, epsilon=eps, what=f"{what}, minimax")
            user_list = names.to_list()
            drawn = [
                sample_minimax_sparse(
                    K,
                    indptr,
                    indices,
                    data,
                    uniforms=uniforms.uniforms(
                        user_list,
                        attribute=attribute,
                        subcategory=subcategory,
                        epsilon=eps,
                        sample=sample,
                    ),
                )
                for sample in range(spec.samples)
            ]
            # rows sample by sample, each over the users in order (any count, 0 included)
            count = names.len() * spec.samples
            released[eps].append(
                pl.DataFrame(
                    {
                        "epsilon": np.full(count, eps),
                        "user": names.gather(np.tile(np.arange(names.len()), spec.samples)),
                        "attribute": pl.repeat(attribute, count, eager=True),
                        "subcategory": pl.repeat(subcategory, count, eager=True),
                        "sample": np.repeat(np.arange(spec.samples, dtype=np.int64), names.len()),
                        "item": items.gather(np.asarray(drawn, dtype=np.int64).reshape(count)),
                    },
                    schema=RELEASED_SCHEMA,
                )
            )
            report.append(
                (
                    attribute,
                    subcategory,
                    eps,
                    q.shape[0],
                    realized,
                    names.len(),
                    with_data.len(),
                    names.len() - with_data.len(),
                    zero_mass,
                )
            )
    frames = [f for eps in spec.epsilons for f in released[eps]]
    out = (
        pl.concat(frames).sort("epsilon", "attribute", "subcategory", "user", "sample")
        if frames
        else pl.DataFrame(schema=RELEASED_SCHEMA)
    )
    return Release(
        released=out,
        report=pl.DataFrame(report, schema=REPORT_SCHEMA, orient="row"),
        rows_outside_domain=outside,
    )


def _joint_view(spec: ReleaseSpec) -> tuple[ReleaseSpec, pl.DataFrame]:
    """A joint spec as a per-subcategory spec of one subcategory :data:`JOINT_LABEL` per
    attribute whose items are the joint positions (as text) with ``q = π(s) q_s(i)``, and the
    map ``attribute, joint_item, subcategory, item`` back to the spec's items."""
    joint = spec.joint_domain().with_columns(
        pl.int_range(pl.len()).over("attribute").cast(pl.Int64).alias("position")
    )
    joint = joint.with_columns(pl.col("position").cast(pl.String).alias("joint_item"))
    domain = joint.select(
        "attribute",
        pl.lit(JOINT_LABEL).alias("subcategory"),
        "position",
        pl.col("joint_item").alias("item"),
        "q",
    ).cast(DOMAIN_SCHEMA)
    view = replace(spec, domain=domain, release_mode=PER_SUBCATEGORY, shares=None)
    return view, joint.select("attribute", "joint_item", "subcategory", "item")


def _release_joint(
    spec: ReleaseSpec,
    histograms: pl.DataFrame,
    *,
    uniforms: UniformSource,
    users: Sequence[str] | None,
) -> Release:
    """:func:`release_items` of a joint spec: the per-subcategory release of its
    :func:`_joint_view` (each user's histogram is its own (subcategory, item) counts over the
    attribute's joint domain), each joint item mapped back to its subcategory and item."""
    view, back = _joint_view(spec)
    hist = _check_histograms(histograms)
    keys = ["attribute", "subcategory", "item"]
    mapped = hist.join(back, on=keys, how="left").select(
        "user",
        "attribute",
        # rows outside the domain keep a label no joint domain has: counted as outside
        pl.when(pl.col("joint_item").is_null())
        .then(pl.lit("(outside)"))
        .otherwise(pl.lit(JOINT_LABEL))
        .alias("subcategory"),
        pl.coalesce("joint_item", "item").alias("item"),
        "count",
    )
    result = release_items(view, mapped, uniforms=uniforms, users=users)
    released = (
        result.released.rename({"item": "joint_item"})
        .drop("subcategory")
        .join(back, on=["attribute", "joint_item"], how="left")
        .select(list(RELEASED_SCHEMA))
        .sort("epsilon", "attribute", "subcategory", "user", "sample")
    )
    return Release(
        released=released, report=result.report, rows_outside_domain=result.rows_outside_domain
    )


def _users_with_data(rows: pl.DataFrame | None) -> pl.Series:
    """The sorted users with a positive count on the subcategory's domain."""
    if rows is None:
        return pl.Series("user", [], dtype=pl.String)
    return rows["user"].unique().sort()


def _csr(
    rows: pl.DataFrame | None, names: pl.Series
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]:
    """CSR arrays of ``names``' counts over the domain positions (an empty row: no data,
    ``p := q``), for :func:`ldpsample.sample_minimax_sparse`: a user's rows of one item summed
    into one cell, then :func:`ldpsample.events.counting.data_priors.csr_rows`."""
    if rows is None or rows.height == 0:
        return np.zeros(names.len() + 1, dtype=np.int64), np.empty(0, np.int64), np.empty(0)
    index = pl.DataFrame({"user": names, "_row": np.arange(names.len(), dtype=np.int64)})
    cells = (
        rows.join(index, on="user", how="inner")
        .group_by("_row", "position")
        .agg(pl.col("count").sum())
    )
    return csr_rows(
        cells["_row"].to_numpy(),
        cells["position"].to_numpy(),
        cells["count"].to_numpy(),
        names.len(),
    )


def _zero_mass_users(
    indptr: NDArray[np.int64],
    indices: NDArray[np.int64],
    data: NDArray[np.float64],
    q: NDArray[np.float64],
) -> int:
    """How many users hold mass on an item of ``q = 0`` (never released: such mass is drawn
    as if it were q)."""
    held = (q[indices] == 0) & (data > 0)
    if not held.any():
        return 0
    rows = np.repeat(np.arange(indptr.shape[0] - 1), np.diff(indptr))
    return int(np.unique(rows[held]).size)
