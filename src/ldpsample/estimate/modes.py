"""The evaluation that compares the two release modes at an equal per-user budget (it reads the
private histograms, so nothing here is publishable): per budget ``B``, the per-subcategory
release at ``ε = B / subcategories`` in every subcategory against the joint release at
``ε = B`` on the (subcategory, item) domain, from the users' side and the analyst's.

- **Users' own TV**: for every user with data, ``TV(p, p K)`` of its released distribution
  (Zamanlooy, Diaz & Asoodeh, AISTATS 2025, ``000_904d48b38ce41b65.txt`` Section 2: the
  sampler's utility is "the f-divergence between the original distribution and the
  distribution of the sample"), on its own subcategory's domain (per subcategory: a user with
  data in several has one value per subcategory) or on the joint domain; the worst case and
  the median over users.
- **The analyst's error**: the target of subcategory ``s`` is ``p̄_s``, the mean distribution
  of the users with data in ``s``. The per-subcategory release (hidden membership: every user
  draws in every subcategory, ``p := q`` without data) estimates ``w_s p̄_s + (1 - w_s) q_s``
  with a private ``w_s``, and its estimate is reported as ``p̄_s``; the joint release's
  conditional within ``s`` estimates ``p̄_s`` itself when each user has data in one subcategory
  (as with an age group). Both estimated with :func:`~ldpsample.estimate.estimate_publication`
  (EM and Norm-Sub) on seeded draws of the real client
  (:func:`ldpsample.publish.release_items`); the TV error averaged over subcategories and
  ``repeats`` releases. The joint release also estimates the subcategory shares (TV error of
  the share vector against the users' own shares); the per-subcategory one cannot.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import polars as pl

from ldpsample.estimate.evaluation import histogram_frame
from ldpsample.estimate.publication import Publication
from ldpsample.estimate.table import CONDITIONAL, ITEM, SHARE, estimate_publication
from ldpsample.minimax import minimax_coefficients
from ldpsample.minimax_sparse import minimax_divergences_sparse
from ldpsample.publish.client import release_items
from ldpsample.publish.randomness import SeededUniforms
from ldpsample.publish.spec import JOINT, PER_SUBCATEGORY, ReleaseSpec

__all__ = ["MODE_COMPARISON_SCHEMA", "compare_release_modes", "user_tv"]

#: One row per (budget, mode).
MODE_COMPARISON_SCHEMA: dict[str, pl.DataType] = {
    "budget": pl.Float64(),
    "mode": pl.String(),
    "epsilon": pl.Float64(),
    "users": pl.Int64(),
    "user_tv_worst": pl.Float64(),
    "user_tv_median": pl.Float64(),
    "analyst_tv_em": pl.Float64(),
    "analyst_tv_norm_sub": pl.Float64(),
    "share_tv_em": pl.Float64(),
}


def _normalised(histograms: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    return histograms.filter(pl.col("count") > 0).with_columns(
        (pl.col("count") / pl.col("count").sum().over("user", *by)).alias("p")
    )


def user_tv(domain: pl.DataFrame, histograms: pl.DataFrame, *, epsilon: float, by: list[str]):
    """``TV(p_u, p_u K_{q,ε})`` of every (user, ``by``) with data: ``domain`` holds ``by``, the
    item keys and ``q`` (one kernel per ``by`` cell, items in ``domain``'s order)."""
    keys = [c for c in domain.columns if c not in ("q", "position")]
    values = []
    for _, rows in domain.group_by(by, maintain_order=True):
        q = rows["q"].to_numpy()
        indexed = rows.select(*keys).with_columns(pl.int_range(pl.len()).alias("_j"))
        mine = (
            _normalised(histograms, by)
            .join(indexed, on=keys, how="inner")
            .sort("user", "_j")
            .with_columns(pl.col("user").rank("dense").cast(pl.Int64).alias("_u") - 1)
        )
        if mine.height == 0:
            continue
        users = int(mine["_u"].max()) + 1
        indptr = np.zeros(users + 1, dtype=np.int64)
        np.cumsum(np.bincount(mine["_u"].to_numpy(), minlength=users), out=indptr[1:])
        kernel = minimax_coefficients(q, epsilon=epsilon)
        tv, _ = minimax_divergences_sparse(
            kernel, indptr, mine["_j"].to_numpy(), mine["p"].to_numpy()
        )
        values.append(tv)
    return np.concatenate(values) if values else np.empty(0)


def _targets(spec: ReleaseSpec, histograms: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``p̄_s`` (``attribute, subcategory, item, target``) over the users with data in ``s``,
    and the users' shares (``attribute, subcategory, share``): the mean over users of their
    mass in ``s`` on the joint domain."""
    by = ["attribute", "subcategory"]
    inside = histograms.join(spec.domain.select(*by, "item"), on=[*by, "item"], how="semi")
    per_sub = _normalised(inside, by)
    users = per_sub.group_by(by).agg(pl.col("user").n_unique().alias("users"))
    target = (
        per_sub.group_by(*by, "item")
        .agg(pl.col("p").sum())
        .join(users, on=by)
        .select(*by, "item", (pl.col("p") / pl.col("users")).alias("target"))
    )
    joint = _normalised(inside, ["attribute"])
    total = joint.group_by("attribute").agg(pl.col("user").n_unique().alias("users"))
    shares = (
        joint.group_by(by)
        .agg(pl.col("p").sum())
        .join(total, on="attribute")
        .select(*by, (pl.col("p") / pl.col("users")).alias("share"))
    )
    return target, shares


def compare_release_modes(
    spec: ReleaseSpec,
    histograms: pl.DataFrame,
    *,
    budgets: Sequence[float],
    users: Sequence[str],
    repeats: int = 5,
    seed: int = 0,
) -> pl.DataFrame:
    """:data:`MODE_COMPARISON_SCHEMA` rows, per budget the per-subcategory and the joint mode
    (see the module docstring).

    Parameters
    ----------
    spec
        A joint spec (its domain, ``q_s`` and shares ``π`` serve both modes; its ε values and
        samples are not used: one sample at each budget's ε).
    histograms
        The users' own ``user, attribute, subcategory, item, count`` (private).
    budgets
        Per-user budgets ``B`` (each mode's ε follows from it).
    users
        The roster (hidden membership: every user releases).
    repeats, seed
        Seeded releases per budget and mode (evaluation, never a publication).

    Raises
    ------
    ValueError
        ``spec`` is not joint, or ``repeats`` < 1.
    """
    if not spec.joint:
        raise ValueError(f"spec {spec.name!r}: compare_release_modes needs a joint spec")
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats must be an integer >= 1, got {repeats!r}")
    by = ["attribute", "subcategory"]
    hist = histogram_frame(histograms)
    target, true_shares = _targets(spec, hist)
    rows = []
    for budget in budgets:
        for mode in (PER_SUBCATEGORY, JOINT):
            eps = float(budget) / (len(spec.subcategories) if mode == PER_SUBCATEGORY else 1)
            if mode == JOINT:
                tv = user_tv(spec.joint_domain(), hist, epsilon=eps, by=["attribute"])
                quantity = CONDITIONAL
            else:
                tv = user_tv(spec.domain.drop("position"), hist, epsilon=eps, by=by)
                quantity = ITEM
            run = replace(
                spec,
                epsilons=(eps,),
                samples=1,
                release_mode=mode,
                shares=spec.shares if mode == JOINT else None,
            )
            errors: dict[str, list[float]] = {"em": [], "norm_sub": [], "share": []}
            for repeat in range(repeats):
                draws = release_items(
                    run, hist, uniforms=SeededUniforms(seed + repeat), users=users
                ).released
                table = estimate_publication(Publication(folder=None, spec=run, draws=draws)).table
                for method in ("em", "norm_sub"):
                    got = table.filter(
                        (pl.col("method") == method) & (pl.col("quantity") == quantity)
                    ).join(target, on=[*by, "item"], how="inner")
                    per_sub = got.group_by(by).agg(
                        (0.5 * (pl.col("estimate") - pl.col("target")).abs().sum()).alias("tv")
                    )
                    errors[method].append(float(per_sub["tv"].mean()))
                if mode == JOINT:
                    shares = table.filter(
                        (pl.col("method") == "em") & (pl.col("quantity") == SHARE)
                    ).join(true_shares, on=by)
                    errors["share"].append(
                        float(0.5 * (shares["estimate"] - shares["share"]).abs().sum())
                    )
            rows.append(
                (
                    float(budget),
                    mode,
                    eps,
                    int(tv.size),
                    float(tv.max()) if tv.size else float("nan"),
                    float(np.median(tv)) if tv.size else float("nan"),
                    float(np.mean(errors["em"])),
                    float(np.mean(errors["norm_sub"])),
                    float(np.mean(errors["share"])) if errors["share"] else float("nan"),
                )
            )
    return pl.DataFrame(rows, schema=MODE_COMPARISON_SCHEMA, orient="row")
