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

Every row has ``quantity = "item"``. A joint release (``release_mode: joint``) is estimated per
(attribute, ε) on its joint (subcategory, item) domain, prior ``q(s, i) = π(s) q_s(i)``, and
reported as what the analyst asks of it (:func:`joint_quantities`): per subcategory its share of
the population (``quantity = "share"``, ``item`` null: the marginal of the joint estimate) and
its items' distribution within it (``quantity = "conditional"``: the joint estimate over the
share). The inversion's analytic standard errors of both come from the delta method
(:func:`joint_standard_errors`); the bootstrap recomputes both from every replicate. Its χ² test
is one per (attribute, ε), subcategory :data:`~ldpsample.publish.spec.JOINT_LABEL`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import polars as pl
from numpy.typing import NDArray
from scipy import stats

from ldpsample.estimate.estimators import (
    analytic_standard_errors,
    chi_square_test,
    em_estimate,
    inversion,
    norm_sub,
)
from ldpsample.estimate.publication import Publication
from ldpsample.estimate.structured import StructuredKernel, structured_kernel
from ldpsample.publish.spec import JOINT_LABEL

FloatArray = NDArray[np.float64]

__all__ = [
    "CONDITIONAL",
    "ESTIMATE_SCHEMA",
    "ITEM",
    "METHODS",
    "SHARE",
    "TEST_SCHEMA",
    "Estimates",
    "estimate_publication",
    "joint_quantities",
    "joint_standard_errors",
]

#: Estimators, in the table's order.
METHODS = ("inversion", "norm_sub", "em")
#: The table's ``quantity``: an item's estimate in a per-subcategory release; in a joint release
#: a subcategory's share (no item) and an item's conditional distribution within it.
ITEM, SHARE, CONDITIONAL = "item", "share", "conditional"
#: The tidy table of estimates.
ESTIMATE_SCHEMA: dict[str, pl.DataType] = {
    "attribute": pl.String(),
    "subcategory": pl.String(),
    "epsilon": pl.Float64(),
    "item": pl.String(),
    "quantity": pl.String(),
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


def _rows(keys, items, method, interval, estimate, se, lower, upper, quantity=ITEM) -> pl.DataFrame:
    attribute, subcategory, eps = keys
    n = len(items)
    return pl.DataFrame(
        {
            "attribute": [attribute] * n,
            "subcategory": [subcategory] * n,
            "epsilon": np.full(n, eps),
            "item": items,
            "quantity": [quantity] * n,
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
    positive = (spec.joint_domain() if spec.joint else spec.domain).filter(pl.col("q") > 0)
    cell_keys = ["attribute"] if spec.joint else ["attribute", "subcategory"]
    item_keys = ["subcategory", "item"] if spec.joint else ["item"]
    tables, tests = [], []
    for key_values, draws in publication.draws.group_by("epsilon", *cell_keys, maintain_order=True):
        eps, attribute = float(key_values[0]), key_values[1]
        subcategory = JOINT_LABEL if spec.joint else key_values[2]
        domain = positive.filter(
            pl.all_horizontal(
                pl.col(name) == value for name, value in zip(cell_keys, key_values[1:], strict=True)
            )
        )
        keys = (attribute, subcategory, eps)
        kernel = structured_kernel(domain["q"].to_numpy(), epsilon=eps)
        index = draws.join(
            domain.select(*item_keys, pl.int_range(pl.len()).alias("index")),
            on=item_keys,
            how="left",
        )
        item_index = index["index"].to_numpy()
        counts = np.bincount(item_index, minlength=domain.height).astype(float)
        estimates, replicates = _cell_estimates(
            kernel,
            counts=counts,
            item_index=item_index,
            users=index["user"].to_numpy(),
            bootstrap=bootstrap,
            rng=rng,
            tol=tol,
            max_iter=max_iter,
        )
        if spec.joint:
            tables.extend(
                _joint_rows(
                    (attribute, eps),
                    domain,
                    kernel,
                    counts=counts,
                    estimates=estimates,
                    replicates=replicates,
                    z=z,
                    tails=tails,
                )
            )
        else:
            tables.extend(
                _item_rows(
                    keys,
                    domain["item"].to_list(),
                    kernel,
                    counts=counts,
                    estimates=estimates,
                    replicates=replicates,
                    z=z,
                    tails=tails,
                )
            )
        first = index.filter(pl.col("sample") == pl.col("sample").min().over("user"))
        test = chi_square_test(
            counts=np.bincount(first["index"].to_numpy(), minlength=domain.height),
            q=kernel.q,
        )
        tests.append(
            {
                "attribute": attribute,
                "subcategory": subcategory,
                "epsilon": eps,
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


def _cell_estimates(
    kernel: StructuredKernel,
    *,
    counts: FloatArray,
    item_index: NDArray[np.int64],
    users: NDArray[np.object_],
    bootstrap: int,
    rng: np.random.Generator,
    tol: float,
    max_iter: int,
) -> tuple[dict[str, FloatArray], dict[str, FloatArray] | None]:
    """Every estimator's point estimate on one kernel's released ``counts``, and with
    ``bootstrap`` its replicates over users resampled with replacement (each user with all its
    draws in the cell; None without)."""
    p_hat = inversion(kernel, counts=counts)
    estimates = {
        "inversion": p_hat,
        "norm_sub": norm_sub(p_hat),
        "em": em_estimate(kernel, counts=counts, tol=tol, max_iter=max_iter),
    }
    if not bootstrap:
        return estimates, None
    names, user_index = np.unique(users, return_inverse=True)
    weights = rng.multinomial(len(names), np.full(len(names), 1 / len(names)), size=bootstrap)
    replicate_counts = np.stack(
        [np.bincount(item_index, weights=w[user_index], minlength=kernel.n) for w in weights]
    )
    replicate_inversion = inversion(kernel, counts=replicate_counts)
    replicates = {
        "inversion": replicate_inversion,
        "norm_sub": norm_sub(replicate_inversion),
        "em": em_estimate(kernel, counts=replicate_counts, tol=tol, max_iter=max_iter),
    }
    return estimates, replicates


def _item_rows(
    keys: tuple[str, str, float],
    items: list[str],
    kernel: StructuredKernel,
    *,
    counts: FloatArray,
    estimates: dict[str, FloatArray],
    replicates: dict[str, FloatArray] | None,
    z: float,
    tails: tuple[float, float],
) -> list[pl.DataFrame]:
    """A per-subcategory cell's rows (quantity ``item``)."""
    p_hat = estimates["inversion"]
    se = analytic_standard_errors(kernel, counts=counts, estimate=p_hat)
    rows = [_analytic_rows(keys, items, p_hat, se, z)]
    rows.extend(_other_rows(keys, items, estimates, replicates, tails))
    return rows


def _analytic_rows(keys, items, estimate, se, z, quantity=ITEM) -> pl.DataFrame:
    """The inversion's rows with their analytic standard errors and ``estimate ± z se``."""
    return _rows(
        keys,
        items,
        "inversion",
        "analytic",
        estimate,
        se,
        estimate - z * se,
        estimate + z * se,
        quantity,
    )


def _other_rows(keys, items, estimates, replicates, tails, quantity=ITEM):
    """Bootstrap rows of every method, or the point rows of norm_sub and em."""
    nan = np.full(len(items), np.nan)
    if replicates is None:
        return [
            _rows(keys, items, method, "none", estimates[method], nan, nan, nan, quantity)
            for method in ("norm_sub", "em")
        ]
    out = []
    for method in METHODS:
        lower, upper = np.percentile(replicates[method], tails, axis=0)
        spread = replicates[method].std(axis=0, ddof=1)
        out.append(
            _rows(
                keys, items, method, "bootstrap", estimates[method], spread, lower, upper, quantity
            )
        )
    return out


def joint_quantities(
    estimate: FloatArray, groups: NDArray[np.int64], subcategories: int
) -> tuple[FloatArray, FloatArray]:
    """A joint estimate's subcategory shares (its marginal) and each item's conditional
    distribution within its subcategory (``estimate / share``; NaN where the share is 0), for
    rows of ``estimate`` (replicates); ``groups[j]`` is item ``j``'s subcategory index."""
    x = np.atleast_2d(estimate)
    shares = np.stack([np.bincount(groups, weights=row, minlength=subcategories) for row in x])
    with np.errstate(divide="ignore", invalid="ignore"):
        conditional = np.where(shares[:, groups] != 0, x / shares[:, groups], np.nan)
    if np.ndim(estimate) == 1:
        return shares[0], conditional[0]
    return shares, conditional


def joint_standard_errors(
    kernel: StructuredKernel, *, counts: FloatArray, groups: NDArray[np.int64], subcategories: int
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """The inversion's shares and conditionals of a joint release with their delta-method
    (plug-in) standard errors: ``(shares, se_shares, conditional, se_conditional)``.

    A share is the linear functional ``ĥ K^{-1} 1_A = ĥ · v_A`` with ``v_A = K^{-1} 1_A``
    (``K = M diag(q)``, ``M`` symmetric, so ``v_A = solve(q ⊙ 1_A) / q``): ``N Var = sum_j ĥ_j
    v_Aj^2 - share^2``. A conditional ``r_i = p̂_i / m`` (``m`` its subcategory's share) has
    ``N m^2 Var ≈ sum_j ĥ_j (K^{-1}[j, i] - r_i v_Aj)^2 = M2_i - 2 r_i ((ĥ ⊙ v_A) K^{-1})_i +
    r_i^2 sum_j ĥ_j v_Aj^2`` (``M2``: :meth:`StructuredKernel.inverse_column_moments`). O(n)
    per subcategory."""
    n_draws = counts.sum()
    h = counts / n_draws
    p_hat = inversion(kernel, counts=counts)
    shares, conditional = joint_quantities(p_hat, groups, subcategories)
    moments = kernel.inverse_column_moments(h)
    se_shares = np.empty(subcategories)
    se_conditional = np.empty(kernel.n)
    q = kernel.q
    for s in range(subcategories):
        members = groups == s
        v = kernel.solve(np.where(members, q, 0.0)) / q
        second = float(h @ v**2)
        se_shares[s] = math.sqrt(max(second - shares[s] ** 2, 0.0) / n_draws)
        cross = kernel.solve(h * v)[members]
        r = conditional[members]
        var = (moments[members] - 2 * r * cross + r**2 * second) / (n_draws * shares[s] ** 2)
        se_conditional[members] = np.sqrt(np.maximum(var, 0.0))
    return shares, se_shares, conditional, se_conditional


def _joint_rows(
    keys: tuple[str, float],
    domain: pl.DataFrame,
    kernel: StructuredKernel,
    *,
    counts: FloatArray,
    estimates: dict[str, FloatArray],
    replicates: dict[str, FloatArray] | None,
    z: float,
    tails: tuple[float, float],
) -> list[pl.DataFrame]:
    """A joint cell's rows: per subcategory its share (quantity ``share``, no item) and its
    items' conditional distribution (quantity ``conditional``), every method."""
    attribute, eps = keys
    names, groups = np.unique(domain["subcategory"].to_numpy(), return_inverse=True)
    groups = groups.astype(np.int64)
    items = domain["item"].to_list()
    shares, se_s, conditional, se_c = joint_standard_errors(
        kernel, counts=counts, groups=groups, subcategories=len(names)
    )
    # (shares, conditionals) of every method's estimate and of its bootstrap replicates
    parts = {m: joint_quantities(estimates[m], groups, len(names)) for m in ("norm_sub", "em")}
    parts["inversion"] = (shares, conditional)
    replicate_parts = (
        None
        if replicates is None
        else {m: joint_quantities(replicates[m], groups, len(names)) for m in METHODS}
    )
    out = []
    for s, sub in enumerate(names):
        members = np.flatnonzero(groups == s)
        cell = (attribute, str(sub), eps)
        sub_items = [items[j] for j in members]
        out.append(_analytic_rows(cell, [None], shares[[s]], se_s[[s]], z, SHARE))
        out.append(
            _analytic_rows(cell, sub_items, conditional[members], se_c[members], z, CONDITIONAL)
        )
        for k, (quantity, take) in enumerate(((SHARE, [s]), (CONDITIONAL, members))):
            point = {m: part[k][take] for m, part in parts.items()}
            reps = (
                None
                if replicate_parts is None
                else {m: part[k][:, take] for m, part in replicate_parts.items()}
            )
            labels = [None] if quantity == SHARE else sub_items
            out.extend(_other_rows(cell, labels, point, reps, tails, quantity))
    return out
