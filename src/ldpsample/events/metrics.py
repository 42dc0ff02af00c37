"""One attribute of an events experiment, every ε in one process: each kept user's divergence
between ``p`` and its release distribution under each method, and the audit of every kernel
used. This is evaluation (an operator's view of utility, possibly with a data-derived prior);
it draws nothing: releases are :mod:`ldpsample.publish`'s.

Methods (``methods`` of the config):

* ``minimax``: ``p K`` with the minimax-optimal kernel of the public prior (TV and KL);
* ``mollifier_tv`` / ``mollifier_kl``: the TV / KL projection onto the relative mollifier
  around the prior (:func:`ldpsample.relative_mollifier_tv`,
  :func:`~ldpsample.relative_mollifier_kl`);
* ``randomized_response``: ``p K`` with n-ary randomized response (TV and KL).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl
from numpy.typing import NDArray

from ldpsample._validation import check_distributions
from ldpsample.baselines import randomized_response
from ldpsample.divergences import kl_divergence, tv_distance
from ldpsample.events import release as _release
from ldpsample.minimax import apply_minimax
from ldpsample.mollifier import relative_mollifier_kl, relative_mollifier_tv
from ldpsample.pipeline.progress import progress as _progress

__all__ = [
    "AUDIT_SCHEMA",
    "METHODS",
    "AttributeResult",
    "evaluate_attribute",
    "per_user_schema",
    "subcategory_matrix",
]

log = logging.getLogger(__name__)

#: Method -> the divergences it is scored with.
METHODS: dict[str, tuple[str, ...]] = {
    "minimax": ("tv", "kl"),
    "mollifier_tv": ("tv",),
    "mollifier_kl": ("kl",),
    "randomized_response": ("tv", "kl"),
}
PRIORS = ("user_mean", "pooled", "uniform")
#: Priors read from the histogram job's priors table: a public table's q on the items that
#: kept users hold, or a release spec's q on its full domain.
TABLE_PRIORS = ("table", "spec")

AUDIT_SCHEMA: dict[str, pl.DataType] = {
    "attribute": pl.String(),
    "subcategory": pl.String(),
    "epsilon": pl.Float64(),
    "kernel": pl.String(),
    "n_items": pl.Int64(),
    "realized_epsilon": pl.Float64(),
}


def per_user_schema(methods: Sequence[str]) -> dict[str, pl.DataType]:
    """Columns of the per-user table: keys and ``<divergence>_<method>`` values."""
    return {
        "epsilon": pl.Float64(),
        "attribute": pl.String(),
        "subcategory": pl.String(),
        "user": pl.String(),
        **{f"{d}_{m}": pl.Float64() for m in _ordered(methods) for d in METHODS[m]},
    }


def _ordered(methods: Sequence[str]) -> list[str]:
    unknown = sorted(set(methods) - set(METHODS))
    if unknown:
        raise ValueError(f"unknown methods {unknown}; choose from {list(METHODS)}")
    return [m for m in METHODS if m in set(methods)]


@dataclass(frozen=True)
class AttributeResult:
    per_user: pl.DataFrame
    audit: pl.DataFrame


def subcategory_matrix(
    rows: pl.DataFrame,
) -> tuple[NDArray[np.str_], NDArray[np.str_], NDArray[np.float64]]:
    """``(users, items, counts)`` of one subcategory's histogram rows, users and items sorted."""
    user_values, item_values, counts = _subcategory_matrix(rows)
    return user_values.to_numpy(), item_values.to_numpy(), counts


def _subcategory_matrix(
    rows: pl.DataFrame, items: pl.Series | None = None
) -> tuple[pl.Series, pl.Series, NDArray[np.float64]]:
    """:func:`subcategory_matrix` with the sorted users and items as polars series; with
    ``items`` (a release spec's domain, in its order) the columns are those items, all of them."""
    # Sorted distinct values and each row's index among them, by polars (dense rank; polars
    # orders strings by their UTF-8 bytes, which is code point order, as numpy's sort): the
    # same arrays as np.sort + np.searchsorted, without comparing Python strings.
    users = rows["user"].unique().sort()
    user_index = (rows["user"].rank("dense") - 1).to_numpy().astype(np.intp)
    if items is None:
        items = rows["item"].unique().sort()
        item_index = (rows["item"].rank("dense") - 1).to_numpy().astype(np.intp)
    else:
        positions = pl.DataFrame({"item": items, "_j": np.arange(items.len())})
        index = rows.select("item").join(positions, on="item", how="left", maintain_order="left")
        if index["_j"].null_count():
            raise ValueError("histogram rows hold items outside the spec's domain")
        item_index = index["_j"].to_numpy().astype(np.intp)
    # Counts summed per (user, item) cell by one bincount over the flat cell index (np.add.at
    # gives the same sums, in the same order, about ten times slower).
    counts = np.bincount(
        user_index * items.len() + item_index,
        weights=rows["count"].to_numpy().astype(float),
        minlength=users.len() * items.len(),
    ).reshape(users.len(), items.len())
    return users, items, counts


def _prior(kind: str, P: NDArray[np.float64], counts: NDArray[np.float64]) -> NDArray[np.float64]:
    if kind == "user_mean":
        q = P.mean(axis=0)
    elif kind == "pooled":
        q = counts.sum(axis=0)
    elif kind == "uniform":
        q = np.ones(P.shape[1])
    else:
        raise ValueError(f"prior must be one of {PRIORS + TABLE_PRIORS}, got {kind!r}")
    return q / q.sum()


def evaluate_attribute(
    histograms: pl.DataFrame,
    priors: pl.DataFrame | None,
    *,
    name: str,
    attribute: str,
    prior: str,
    epsilons: Sequence[float],
    methods: Sequence[str],
    chunk_users: int = 4096,
    progress: bool = False,
    kernel: Callable[..., object] | None = None,
    threads: int | None = None,
) -> AttributeResult:
    """Per-user divergences and kernel audit of one attribute, all ε.

    Parameters
    ----------
    histograms
        Rows of :data:`ldpsample.events.histograms.HISTOGRAM_SCHEMA` (other attributes ignored).
    priors
        :data:`~ldpsample.events.histograms.PRIOR_SCHEMA` rows for ``prior="table"`` or
        ``"spec"``.
    prior
        ``user_mean``, ``pooled``, ``uniform``, ``table`` (a public table's q on the items
        kept users hold) or ``spec`` (a release spec's q on its full domain: the mechanism a
        release uses).
    kernel
        Stand-in for :func:`ldpsample.events.release.minimax_release_kernel` (tests).
    threads
        Passed to :func:`~ldpsample.apply_minimax` and :func:`~ldpsample.relative_mollifier_kl`
        (None: their default; a Snakemake job passes its ``threads``). No value depends on it.

    Raises
    ------
    PrivacyAuditError
        If a kernel's realised ε exceeds its ε (before anything is returned).
    """
    methods = _ordered(methods)
    eps_list = sorted(float(e) for e in epsilons)
    make_kernel = kernel or _release.minimax_release_kernel
    rows = histograms.filter(pl.col("attribute") == attribute)
    schema = per_user_schema(methods)
    # Parts per ε, each in (subcategory, user) order: concatenated ε by ε they are the tables'
    # sorted order (polars and Python order strings alike, by code point), with no sort.
    per_user: dict[float, list[pl.DataFrame]] = {eps: [] for eps in eps_list}
    audit = []
    parts = rows.partition_by("subcategory", as_dict=True, maintain_order=True)
    for (subcategory,) in _progress(
        sorted(parts), desc=f"{attribute} subcategories", enabled=progress
    ):
        table = None
        if prior in TABLE_PRIORS:
            table = priors.filter(
                (pl.col("attribute") == attribute) & (pl.col("subcategory") == subcategory)
            )
        user_series, item_series, counts = _subcategory_matrix(
            parts[(subcategory,)], table["item"] if prior == "spec" else None
        )
        n_users = user_series.len()
        user_column = user_series.alias("user")
        attribute_column = pl.repeat(attribute, n_users, dtype=pl.String, eager=True)
        subcategory_column = pl.repeat(subcategory, n_users, dtype=pl.String, eager=True)
        # checked once here; the mechanisms below skip their own check (check_input=False)
        P = check_distributions(counts / counts.sum(axis=1, keepdims=True), name="P")
        if prior == "spec":
            q = table["q"].to_numpy()
        elif prior == "table":
            lookup = dict(zip(table["item"].to_list(), table["q"].to_list(), strict=True))
            q = np.array([lookup.get(i, 0.0) for i in item_series.to_list()], dtype=float)
        else:
            q = _prior(prior, P, counts)
        n = item_series.len()
        for eps in eps_list:
            what = f"events.{name}, {attribute}={subcategory!r}, epsilon={eps!r}"
            values: dict[str, list[NDArray[np.float64]]] = {c: [] for c in list(schema)[4:]}
            K_minimax = make_kernel(q, epsilon=eps) if "minimax" in methods else None
            if K_minimax is not None:
                realized = _release.audit_kernel(
                    K_minimax, epsilon=eps, what=f"{what}, minimax kernel"
                )
                audit.append((attribute, subcategory, eps, "minimax", n, realized))
            K_rr = None
            if "randomized_response" in methods:
                K_rr = randomized_response(n, epsilon=eps)
                realized = _release.audit_kernel(
                    K_rr, epsilon=eps, what=f"{what}, randomized_response kernel"
                )
                audit.append((attribute, subcategory, eps, "randomized_response", n, realized))
            for start in range(0, P.shape[0], chunk_users):
                Pc = P[start : start + chunk_users]
                if K_minimax is not None:
                    R = apply_minimax(Pc, K_minimax, threads=threads, check_input=False)
                    values["tv_minimax"].append(tv_distance(Pc, R))
                    values["kl_minimax"].append(kl_divergence(Pc, R))
                if "mollifier_tv" in methods:
                    values["tv_mollifier_tv"].append(
                        tv_distance(
                            Pc, relative_mollifier_tv(Pc, q, epsilon=eps, check_input=False)
                        )
                    )
                if "mollifier_kl" in methods:
                    values["kl_mollifier_kl"].append(
                        kl_divergence(
                            Pc, relative_mollifier_kl(Pc, q, epsilon=eps, threads=threads)
                        )
                    )
                if K_rr is not None:
                    R = Pc @ K_rr
                    values["tv_randomized_response"].append(tv_distance(Pc, R))
                    values["kl_randomized_response"].append(kl_divergence(Pc, R))
            columns = {c: np.concatenate(v) for c, v in values.items()}
            for column, v in columns.items():
                if np.isnan(v).any():
                    raise ValueError(f"{what}: {column} gave NaN")
            per_user[eps].append(
                pl.DataFrame(
                    {
                        "epsilon": np.full(n_users, eps),
                        "attribute": attribute_column,
                        "subcategory": subcategory_column,
                        "user": user_column,
                        **columns,
                    },
                    schema=schema,
                )
            )
        log.info("%s=%s: %d users, %d items, ε %s", attribute, subcategory, n_users, n, eps_list)
    return AttributeResult(
        per_user=_concat([f for eps in eps_list for f in per_user[eps]], schema),
        audit=pl.DataFrame(audit, schema=AUDIT_SCHEMA, orient="row").sort(
            "attribute", "subcategory", "epsilon", "kernel"
        ),
    )


def _concat(frames: list[pl.DataFrame], schema: dict[str, pl.DataType]) -> pl.DataFrame:
    return pl.concat(frames, rechunk=True) if frames else pl.DataFrame(schema=schema)
