"""The accuracy plan of a release, from public inputs only (the spec and how many users will
release), before anything is drawn: per subcategory and ε the inversion's predicted standard
error of every item, the kernel's condition number, and a warning where inverting cannot beat
reporting the prior ``q``. A joint spec (``release_mode: joint``) has one cell per attribute and
ε, subcategory :data:`~ldpsample.publish.spec.JOINT_LABEL`, on its joint (subcategory, item)
domain with ``q = π(s) q_s(i)``; its item rows name each item's subcategory.

The prediction takes the population at the prior, ``p̄ = q`` (the only distribution public
inputs name): then ``π = q K = q`` and ``N Var(p̂_i) = sum_j q_j (K^{-1}[j, i])^2 - q_i^2``
with ``N`` = users × samples draws per subcategory (:mod:`ldpsample.estimate.estimators`). The
predicted TV error is ``E TV(p̂, p̄) ≈ (1/2) sum_i se_i sqrt(2/π)`` (the mean absolute value of a
normal error). Reporting ``q`` itself errs by ``TV(p̄, q) <= 1 - min_i q_i`` for any population;
where the predicted error reaches that bound, inversion cannot beat reporting ``q`` for any
population, and the plan says so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from ldpsample.estimate.structured import structured_kernel
from ldpsample.publish.spec import JOINT_LABEL, ReleaseSpec

__all__ = [
    "PLAN_CELL_SCHEMA",
    "PLAN_ITEM_SCHEMA",
    "AccuracyPlan",
    "accuracy_plan",
    "plan_summary",
    "releasing_users",
]

#: Per (attribute, subcategory, ε, item): the prior and the inversion's predicted standard error.
PLAN_ITEM_SCHEMA: dict[str, pl.DataType] = {
    "attribute": pl.String(),
    "subcategory": pl.String(),
    "epsilon": pl.Float64(),
    "item": pl.String(),
    "q": pl.Float64(),
    "predicted_se": pl.Float64(),
}
#: Per (attribute, subcategory, ε).
PLAN_CELL_SCHEMA: dict[str, pl.DataType] = {
    "attribute": pl.String(),
    "subcategory": pl.String(),
    "epsilon": pl.Float64(),
    "items": pl.Int64(),
    "draws": pl.Int64(),
    "condition_number": pl.Float64(),
    "predicted_tv_error": pl.Float64(),
    "max_tv_of_prior": pl.Float64(),
    "inversion_can_beat_prior": pl.Boolean(),
}


@dataclass(frozen=True)
class AccuracyPlan:
    """What :func:`accuracy_plan` returns.

    Attributes
    ----------
    items
        :data:`PLAN_ITEM_SCHEMA` rows.
    cells
        :data:`PLAN_CELL_SCHEMA` rows; ``condition_number`` is ``cond_1(K)``.
    warnings
        One line per cell where inversion cannot beat reporting ``q``.
    """

    items: pl.DataFrame
    cells: pl.DataFrame
    warnings: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        """The per-cell plan and the warnings as JSON-ready values (for a manifest)."""
        return {
            "assumes": "population distribution = the prior q (p̄ = q)",
            "cells": self.cells.to_dicts(),
            "warnings": list(self.warnings),
        }


def accuracy_plan(spec: ReleaseSpec, *, users: int | Mapping[tuple[str, str], int]) -> AccuracyPlan:
    """Predicted accuracy of the inversion for every (attribute, subcategory, ε) of ``spec``.

    Parameters
    ----------
    spec
        The release's public spec.
    users
        Users releasing in each subcategory: one number (hidden membership: every user of the
        roster releases everywhere) or ``(attribute, subcategory) -> users``.

    Raises
    ------
    ValueError
        A subcategory without a user count, or a count below 1.
    """
    item_frames, cells, warnings = [], [], []
    for attribute, subcategory, item_subs, names, q_all in _planned_domains(spec):
        count = users if isinstance(users, int) else users.get((attribute, subcategory))
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ValueError(
                f"users[{(attribute, subcategory)!r}] must be an integer >= 1, got {count!r}"
            )
        keep = q_all > 0
        q = q_all[keep] / q_all[keep].sum()
        draws = count * spec.samples
        for eps in spec.epsilons:
            kernel = structured_kernel(q, epsilon=eps)
            variance = kernel.inverse_column_moments(q) - q**2
            se = np.sqrt(np.maximum(variance, 0.0) / draws)
            tv_error = 0.5 * math.sqrt(2 / math.pi) * float(se.sum())
            max_tv = 1.0 - float(q.min())
            beats = tv_error < max_tv
            item_frames.append(
                pl.DataFrame(
                    {
                        "attribute": attribute,
                        "subcategory": item_subs.filter(pl.Series(keep)),
                        "epsilon": eps,
                        "item": names.filter(pl.Series(keep)),
                        "q": q,
                        "predicted_se": se,
                    },
                    schema=PLAN_ITEM_SCHEMA,
                )
            )
            cells.append(
                (
                    attribute,
                    subcategory,
                    eps,
                    q.shape[0],
                    draws,
                    kernel.condition_number(),
                    tv_error,
                    max_tv,
                    beats,
                )
            )
            if not beats:
                warnings.append(
                    f"{attribute}={subcategory!r}, epsilon={eps!r}: the inversion's predicted "
                    f"TV error {tv_error:.3g} with {draws} draws is at least {max_tv:.3g}, the "
                    "largest error of reporting the prior q: inversion cannot beat q (use "
                    "em or norm_sub, more users, fewer items or a larger epsilon)"
                )
    return AccuracyPlan(
        items=pl.concat(item_frames),
        cells=pl.DataFrame(cells, schema=PLAN_CELL_SCHEMA, orient="row"),
        warnings=tuple(warnings),
    )


def _planned_domains(
    spec: ReleaseSpec,
) -> list[tuple[str, str, pl.Series, pl.Series, np.ndarray]]:
    """Per kernel of ``spec``: attribute, the cell's subcategory label, each item's
    subcategory, the items and ``q`` (a joint spec: one cell :data:`JOINT_LABEL` per attribute
    on its joint domain, ``q = π(s) q_s(i)``)."""
    if spec.joint:
        joint = spec.joint_domain()
        return [
            (attribute, JOINT_LABEL, rows["subcategory"], rows["item"], rows["q"].to_numpy())
            for attribute in spec.attributes
            for rows in [joint.filter(pl.col("attribute") == attribute)]
        ]
    out = []
    for attribute, subcategory in spec.subcategories:
        names, q = spec.prior_of(attribute, subcategory)
        out.append(
            (attribute, subcategory, pl.repeat(subcategory, names.len(), eager=True), names, q)
        )
    return out


def releasing_users(
    spec: ReleaseSpec, histograms: pl.DataFrame, *, users: Sequence[str]
) -> int | dict[tuple[str, str], int]:
    """How many users release in each subcategory, as :func:`accuracy_plan`'s ``users``.

    With hidden membership every user of the roster ``users`` releases everywhere: the roster's
    size, a count of the population that the released rows reveal anyway; ``histograms`` is not
    read. With public attributes a user releases where they have a positive count on the
    subcategory's domain: per subcategory the count of such users of the roster (public in that
    mode: the released rows show who released where), at least 1 so that a subcategory nobody
    releases in is still planned.
    """
    roster = pl.Series("user", [str(user) for user in users], dtype=pl.String).unique()
    if not spec.attributes_public:
        return max(roster.len(), 1)
    domain = spec.domain.filter(pl.col("q") > 0).select("attribute", "subcategory", "item")
    counted = (
        histograms.lazy()
        .select(
            pl.col("user").cast(pl.String),
            pl.col("attribute").cast(pl.String),
            pl.col("subcategory").cast(pl.String),
            pl.col("item").cast(pl.String),
            pl.col("count"),
        )
        .filter((pl.col("count") > 0) & pl.col("user").is_in(roster.implode()))
        .join(domain.lazy(), on=["attribute", "subcategory", "item"], how="semi")
        .group_by("attribute", "subcategory")
        .agg(pl.col("user").n_unique().alias("users"))
        .collect()
    )
    found = {(a, s): int(n) for a, s, n in counted.iter_rows()}
    return {key: max(found.get(key, 0), 1) for key in spec.subcategories}


def plan_summary(plan: AccuracyPlan) -> str:
    """One line for a console: cells planned, the largest predicted TV error and cond(K), and
    how many cells inversion cannot beat reporting ``q`` in."""
    worst = plan.cells.sort("predicted_tv_error", descending=True).row(0, named=True)
    return (
        f"accuracy plan (public inputs only, population at the prior q): {plan.cells.height} "
        f"(subcategory, epsilon) cells, largest predicted TV error of the inversion "
        f"{worst['predicted_tv_error']:.3g} ({worst['attribute']}={worst['subcategory']!r}, "
        f"epsilon={worst['epsilon']!r}, {worst['draws']} draws), largest cond(K) "
        f"{plan.cells['condition_number'].max():.3g}; inversion cannot beat q in "
        f"{len(plan.warnings)} of them"
    )
