"""Test-only reference: the real-data (MovieLens, Avazu) implementation the pipeline ran before
both experiments moved onto the events stage (issue 11), kept verbatim in its simple form (worst
case over users per group, per ε) to check that the published tables did not change.

It reads the same inputs as before: MovieLens through ``build_movielens_data`` (one row of genre
masses per ML-1M user, one prior row per age group) and Avazu through
``build_avazu_histograms`` (one attribute's kept devices' site counts). Never import it from the
library.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

import numpy as np
import polars as pl
from numpy.typing import NDArray

from ldpsample.datasets.avazu import PLACEHOLDER_DEVICE_ID, avazu_user_matrix
from ldpsample.divergences import kl_divergence, tv_distance
from ldpsample.events.tables import WIN_SUMMARY_SCHEMA, win_summary
from ldpsample.minimax import apply_minimax
from ldpsample.mollifier import relative_mollifier_kl, relative_mollifier_tv

TV_METHODS = ("minimax", "mollifier_tv")
KL_METHODS = ("minimax_kl", "mollifier_kl")
SUMMARY_SCHEMA = {"divergence": pl.String(), **WIN_SUMMARY_SCHEMA}
_GENERIC = {
    "minimax": "minimax",
    "minimax_kl": "minimax",
    "mollifier_tv": "mollifier",
    "mollifier_kl": "mollifier",
}


def per_user_divergences(
    P: NDArray[np.float64], q: NDArray[np.float64], *, epsilon: float, kl: bool
) -> dict[str, NDArray[np.float64]]:
    released = apply_minimax(P, q, epsilon=epsilon)
    out = {
        "minimax": tv_distance(P, released),
        "mollifier_tv": tv_distance(P, relative_mollifier_tv(P, q, epsilon=epsilon)),
    }
    if kl:
        out["minimax_kl"] = kl_divergence(P, released)
        out["mollifier_kl"] = kl_divergence(P, relative_mollifier_kl(P, q, epsilon=epsilon))
    return out


def max_over_users(
    P: NDArray[np.float64], q: NDArray[np.float64], *, epsilon: float, kl: bool, chunk: int
) -> dict[str, float]:
    best: dict[str, float] = {}
    for start in range(0, P.shape[0], chunk):
        values = per_user_divergences(P[start : start + chunk], q, epsilon=epsilon, kl=kl)
        for name, v in values.items():
            best[name] = max(best.get(name, -np.inf), float(np.max(v)))
    return best


def _frame(records: list[dict[str, object]], keys: dict[str, pl.DataType], value: str):
    schema = {
        "epsilon": pl.Float64(),
        **keys,
        "method": pl.String(),
        value: pl.Float64(),
        "n_users": pl.Int64(),
    }
    frame = (
        pl.DataFrame(records, schema=schema, orient="row")
        if records
        else pl.DataFrame(schema=schema)
    )
    return frame.sort(["epsilon", *keys, "method"])


def movielens_metrics(
    users: pl.DataFrame, priors: pl.DataFrame, *, epsilons: Iterable[float], chunk: int = 10_000
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``(max_tv, max_kl)`` per (ε, age group): methods minimax/mollifier_tv and
    minimax_kl/mollifier_kl."""
    genres = [c for c in users.columns if c not in ("user_id", "group")]
    tv_rows, kl_rows = [], []
    for group in sorted(set(users["group"].to_list())):
        P = users.filter(pl.col("group") == group).select(genres).to_numpy().astype(float)
        q = priors.filter(pl.col("group") == group).select(genres).to_numpy()[0].astype(float)
        for eps in epsilons:
            best = max_over_users(P, q, epsilon=float(eps), kl=True, chunk=chunk)
            for methods, rows, value in (
                (TV_METHODS, tv_rows, "max_tv"),
                (KL_METHODS, kl_rows, "max_kl"),
            ):
                for method in methods:
                    rows.append(
                        {
                            "epsilon": float(eps),
                            "group": group,
                            "method": method,
                            value: best[method],
                            "n_users": P.shape[0],
                        }
                    )
    keys = {"group": pl.String()}
    return _frame(tv_rows, keys, "max_tv"), _frame(kl_rows, keys, "max_kl")


def avazu_metrics(
    histograms: pl.DataFrame, *, epsilons: Iterable[float], chunk: int = 20_000
) -> pl.DataFrame:
    """``max_tv`` per (ε, attribute, subcategory), methods minimax and mollifier_tv; q is the
    mean of the subcategory's devices' p."""
    records = []
    parts = histograms.partition_by(["attribute", "subcategory"], as_dict=True)
    for attribute, subcategory in sorted(parts):
        _, _, P = avazu_user_matrix(parts[(attribute, subcategory)], subcategory)
        q = P.mean(axis=0)
        q = q / q.sum()
        for eps in epsilons:
            best = max_over_users(P, q, epsilon=float(eps), kl=False, chunk=chunk)
            for method in TV_METHODS:
                records.append(
                    {
                        "epsilon": float(eps),
                        "attribute": attribute,
                        "subcategory": subcategory,
                        "method": method,
                        "max_tv": best[method],
                        "n_users": P.shape[0],
                    }
                )
    return _frame(records, {"attribute": pl.String(), "subcategory": pl.Int64()}, "max_tv")


def _generic(frame: pl.DataFrame, value: str, divergence: str) -> pl.DataFrame:
    return frame.select(
        pl.lit(divergence).alias("divergence"),
        pl.exclude("method", value, "n_users"),
        pl.col("method").replace_strict(_GENERIC),
        pl.col(value).alias("value"),
    )


def _summary(frame: pl.DataFrame, divergence: str, case_columns: Sequence[str]) -> pl.DataFrame:
    result = win_summary(
        frame, value="value", methods=("minimax", "mollifier"), case_columns=list(case_columns)
    )
    return result.select(pl.lit(divergence).alias("divergence"), pl.all()).cast(SUMMARY_SCHEMA)


def movielens_summary(max_tv: pl.DataFrame, max_kl: pl.DataFrame) -> pl.DataFrame:
    tv, kl = _generic(max_tv, "max_tv", "tv"), _generic(max_kl, "max_kl", "kl")
    return pl.concat(
        [
            _summary(tv, "tv", ["epsilon", "group"]),
            _summary(kl, "kl", ["epsilon", "group"]),
            _summary(pl.concat([tv, kl]), "tv+kl", ["divergence", "epsilon", "group"]),
        ]
    )


def avazu_summary(max_tv: pl.DataFrame) -> pl.DataFrame:
    return _summary(_generic(max_tv, "max_tv", "tv"), "tv", ["epsilon", "attribute", "subcategory"])


def avazu_subcategory_counts(
    parquet: str | os.PathLike[str],
    attribute: str,
    histograms: pl.DataFrame,
    *,
    exclude_placeholder_device: bool,
) -> dict[str, object]:
    lf = pl.scan_parquet(parquet)
    if exclude_placeholder_device:
        lf = lf.filter(pl.col("device_id") != PLACEHOLDER_DEVICE_ID)
    total = int(lf.select(pl.col(attribute).n_unique()).collect().item())
    kept = int(histograms["subcategory"].n_unique()) if histograms.height else 0
    devices = (
        int(histograms.select("subcategory", "device_id").n_unique()) if histograms.height else 0
    )
    return {
        "attribute": attribute,
        "subcategories": total,
        "kept": kept,
        "skipped": total - kept,
        "device_rows": devices,
        "histogram_rows": histograms.height,
    }
