"""Population estimates of a publication, per (attribute, subcategory, ε), pooling the
``samples``: a tidy table of every estimator's values with standard errors and intervals, and
the χ² tests of "population = public prior".

Per cell, over the items with ``q > 0`` (items of ``q = 0`` are never released; a user's mass
on them reaches the released items as ``q``, so the estimates are of ``p̄`` with that mass
spread as ``q``):

- ``inversion`` (unbiased, may be negative), ``norm_sub`` (its projection onto the simplex) and
  ``em`` (the maximum-likelihood estimate) of :mod:`ldpsample.estimate.estimators`;
- ``interval = "analytic"``: the inversion's plug-in standard error and the normal interval;
- ``interval = "bootstrap"`` (``bootstrap > 0`` replicates): every estimator recomputed on users
  resampled with replacement (each user with all its draws in the cell), the replicates'
  standard deviation and percentile interval;
- ``interval = "none"``: the point estimate of ``norm_sub`` and ``em`` without a bootstrap.

The χ² test uses each user's first sample only, so that its draws are independent.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl
from scipy import stats

from ldpsample.estimate.estimators import (
    analytic_standard_errors,
    chi_square_test,
    em_estimate,
    inversion,
    norm_sub,
)
from ldpsample.estimate.publication import Publication
from ldpsample.estimate.structured import structured_kernel

__all__ = ["ESTIMATE_SCHEMA", "METHODS", "TEST_SCHEMA", "Estimates", "estimate_publication"]

#: Estimators, in the table's order.
METHODS = ("inversion", "norm_sub", "em")
#: The tidy table of estimates.
ESTIMATE_SCHEMA: dict[str, pl.DataType] = {
    "attribute": pl.String(),
    "subcategory": pl.String(),
    "epsilon": pl.Float64(),
    "item": pl.String(),
    "method": pl.String(),
    "interval": pl.String(),
    "estimate": pl.Float64(),
    "se": pl.Float64(),
    "lower": pl.Float64(),
    "upper": pl.Float64(),
}
#: One χ² test of ``p̄ = q`` per (attribute, subcategory, ε).
TEST_SCHEMA: dict[str, pl.DataType] = {
    "attribute": pl.String(),
    "subcategory": pl.String(),
    "epsilon": pl.Float64(),
    "users": pl.Int64(),
    "draws": pl.Int64(),
    "chi2": pl.Float64(),
    "dof": pl.Int64(),
    "p_value": pl.Float64(),
}


@dataclass(frozen=True)
class Estimates:
    """What :func:`estimate_publication` returns: :data:`ESTIMATE_SCHEMA` rows and
    :data:`TEST_SCHEMA` rows."""

    table: pl.DataFrame
    tests: pl.DataFrame


def _rows(keys, items, method, interval, estimate, se, lower, upper) -> pl.DataFrame:
    attribute, subcategory, eps = keys
    n = len(items)
    return pl.DataFrame(
        {
            "attribute": [attribute] * n,
            "subcategory": [subcategory] * n,
            "epsilon": np.full(n, eps),
            "item": items,
            "method": [method] * n,
            "interval": [interval] * n,
            "estimate": estimate,
            "se": se,
            "lower": lower,
            "upper": upper,
        },
        schema=ESTIMATE_SCHEMA,
    )


def estimate_publication(
    publication: Publication,
    *,
    bootstrap: int = 0,
    seed: int | None = None,
    level: float = 0.95,
    tol: float = 1e-6,
    max_iter: int = 10_000,
) -> Estimates:
    """Estimate every (attribute, subcategory, ε) of a publication.

    Parameters
    ----------
    publication
        From :func:`~ldpsample.estimate.read_publication`.
    bootstrap
        Bootstrap replicates over users (0: none).
    seed
        Seed of the bootstrap's resampling (None: fresh entropy).
    level
        Coverage of the intervals.
    tol, max_iter
        EM's stopping rule (:func:`~ldpsample.estimate.em_estimate`): the default stops with
        the log-likelihood per draw within 1e-6 of its maximum, far below its sampling noise
        (about items / (2 draws) per draw).

    Raises
    ------
    ValueError
        ``bootstrap`` negative or ``level`` outside (0, 1).
    """
    if not isinstance(bootstrap, int) or bootstrap < 0:
        raise ValueError(f"bootstrap must be a non-negative integer, got {bootstrap!r}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    z = float(stats.norm.ppf(0.5 + level / 2))
    tails = (50 * (1 - level), 50 * (1 + level))
    rng = np.random.default_rng(seed)
    spec = publication.spec
    positive = spec.domain.filter(pl.col("q") > 0)
    tables, tests = [], []
    for (eps, attribute, subcategory), draws in publication.draws.group_by(
        "epsilon", "attribute", "subcategory", maintain_order=True
    ):
        domain = positive.filter(
            (pl.col("attribute") == attribute) & (pl.col("subcategory") == subcategory)
        )
        items = domain["item"].to_list()
        keys = (attribute, subcategory, float(eps))
        kernel = structured_kernel(domain["q"].to_numpy(), epsilon=float(eps))
        index = draws.join(
            domain.select("item", pl.int_range(pl.len()).alias("index")), on="item", how="left"
        )
        item_index = index["index"].to_numpy()
        counts = np.bincount(item_index, minlength=len(items)).astype(float)
        p_hat = inversion(kernel, counts=counts)
        se = analytic_standard_errors(kernel, counts=counts, estimate=p_hat)
        nan = np.full(len(items), np.nan)
        estimates = {"inversion": p_hat, "norm_sub": norm_sub(p_hat)}
        estimates["em"] = em_estimate(kernel, counts=counts, tol=tol, max_iter=max_iter)
        tables.append(
            _rows(keys, items, "inversion", "analytic", p_hat, se, p_hat - z * se, p_hat + z * se)
        )
        if bootstrap:
            users, user_index = np.unique(index["user"].to_numpy(), return_inverse=True)
            weights = rng.multinomial(
                len(users), np.full(len(users), 1 / len(users)), size=bootstrap
            )
            replicate_counts = np.stack(
                [
                    np.bincount(item_index, weights=w[user_index], minlength=len(items))
                    for w in weights
                ]
            )
            replicate_inversion = inversion(kernel, counts=replicate_counts)
            replicates = {
                "inversion": replicate_inversion,
                "norm_sub": norm_sub(replicate_inversion),
                "em": em_estimate(kernel, counts=replicate_counts, tol=tol, max_iter=max_iter),
            }
            for method in METHODS:
                lower, upper = np.percentile(replicates[method], tails, axis=0)
                spread = replicates[method].std(axis=0, ddof=1)
                tables.append(
                    _rows(keys, items, method, "bootstrap", estimates[method], spread, lower, upper)
                )
        else:
            for method in ("norm_sub", "em"):
                tables.append(_rows(keys, items, method, "none", estimates[method], nan, nan, nan))
        first = index.filter(pl.col("sample") == pl.col("sample").min().over("user"))
        test = chi_square_test(
            counts=np.bincount(first["index"].to_numpy(), minlength=len(items)),
            q=kernel.q,
        )
        tests.append(
            {
                "attribute": attribute,
                "subcategory": subcategory,
                "epsilon": float(eps),
                "users": first.height,
                "draws": draws.height,
                "chi2": test.statistic,
                "dof": test.dof,
                "p_value": test.p_value,
            }
        )
    order = {m: k for k, m in enumerate(METHODS)}
    table = (
        pl.concat(tables)
        .with_columns(pl.col("method").replace_strict(order, return_dtype=pl.Int64).alias("_m"))
        .sort("attribute", "subcategory", "epsilon", "_m", "interval", maintain_order=True)
        .drop("_m")
    )
    tested = pl.DataFrame(tests, schema=TEST_SCHEMA).sort("attribute", "subcategory", "epsilon")
    return Estimates(table=table, tests=tested)
