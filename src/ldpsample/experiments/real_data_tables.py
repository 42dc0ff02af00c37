"""Real-data tables (MovieLens, Avazu) as the pipeline computes them: per-user tables, the
worst cases and win summaries computed from them, and the count of Avazu subcategories kept.

The metrics job of one ε keeps every user's value (``*_per_user``), so any statistic besides
the paper's maximum can be computed later; the worst cases (``max_over_users``) are then a
group-by of that table and agree with :func:`ldpsample.experiments.real_data.movielens_metrics`
and :func:`~ldpsample.experiments.real_data.avazu_metrics`, whose column contracts they keep.
The figures drawn from these tables are in :mod:`ldpsample.experiments.real_data_figures`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence

import numpy as np
import polars as pl

from ldpsample._progress import progress as _progress
from ldpsample._validation import check_epsilon
from ldpsample.experiments.real_data import (
    KL_METHODS,
    TV_METHODS,
    WIN_SUMMARY_SCHEMA,
    Mechanism,
    per_user_divergence_blocks,
    win_summary,
)

__all__ = [
    "AVAZU_PER_USER_SCHEMA",
    "MOVIELENS_PER_USER_SCHEMA",
    "SUMMARY_SCHEMA",
    "avazu_max_table",
    "avazu_per_user",
    "avazu_subcategory_counts",
    "avazu_summary",
    "max_over_users",
    "movielens_max_tables",
    "movielens_per_user",
    "movielens_summary",
]

log = logging.getLogger(__name__)

#: One row per (ε, user): the user's divergence under each method (columns named as the
#: methods of :mod:`ldpsample.experiments.real_data`; TV, KL in nats).
MOVIELENS_PER_USER_SCHEMA: dict[str, pl.DataType] = {
    "epsilon": pl.Float64(),
    "group": pl.String(),
    "user_id": pl.Int64(),
    **{method: pl.Float64() for method in (*TV_METHODS, *KL_METHODS)},
}

#: One row per (ε, attribute, subcategory, device): TV under each method.
AVAZU_PER_USER_SCHEMA: dict[str, pl.DataType] = {
    "epsilon": pl.Float64(),
    "attribute": pl.String(),
    "subcategory": pl.Int64(),
    "device_id": pl.String(),
    **{method: pl.Float64() for method in TV_METHODS},
}

#: Columns of the summaries: ``win_summary`` per divergence, methods named generically
#: (``mollifier`` = ``mollifier_tv`` for TV, ``mollifier_kl`` for KL).
SUMMARY_SCHEMA: dict[str, pl.DataType] = {"divergence": pl.String(), **WIN_SUMMARY_SCHEMA}

_GENERIC = {
    "minimax": "minimax",
    "minimax_kl": "minimax",
    "mollifier_tv": "mollifier",
    "mollifier_kl": "mollifier",
}


# --------------------------------------------------------------------------------------------
# per-user tables
# --------------------------------------------------------------------------------------------


def _per_user_values(
    P: np.ndarray,
    q: np.ndarray,
    *,
    epsilon: float,
    mechanisms: Mapping[str, Mechanism] | None,
    kl: bool,
    chunk_users: int,
) -> dict[str, np.ndarray]:
    """:func:`per_user_divergence_blocks` joined into one array per method."""
    blocks: dict[str, list[np.ndarray]] = {}
    for values in per_user_divergence_blocks(
        P, q, epsilon=epsilon, mechanisms=mechanisms, kl=kl, chunk_users=chunk_users
    ):
        for name, v in values.items():
            blocks.setdefault(name, []).append(np.asarray(v, dtype=float))
    return {name: np.concatenate(parts) for name, parts in blocks.items()}


def movielens_per_user(
    users: pl.DataFrame,
    priors: pl.DataFrame,
    *,
    epsilon: float,
    genres: Sequence[str] | None = None,
    mechanisms: Mapping[str, Mechanism] | None = None,
    chunk_users: int = 10_000,
    progress: bool = False,
) -> pl.DataFrame:
    """Every ML-1M user's TV and KL between ``p`` and its release, at one ε.

    Parameters
    ----------
    users, priors
        ``MovieLensData.users`` and ``.priors`` (:func:`ldpsample.datasets.build_movielens_data`).
    epsilon
        Privacy parameter.
    genres
        Genre columns (default: the columns of ``users`` other than ``user_id`` and ``group``).
    mechanisms
        See :func:`ldpsample.experiments.real_data.per_user_divergences`.
    chunk_users
        Users released per mechanism call.
    progress
        Show a progress bar over the age groups on stderr.

    Returns
    -------
    polars.DataFrame
        :data:`MOVIELENS_PER_USER_SCHEMA`, sorted by group and user_id.
    """
    epsilon = check_epsilon(epsilon)
    genres = (
        list(genres)
        if genres is not None
        else [c for c in users.columns if c not in ("user_id", "group")]
    )
    frames = []
    groups = sorted(set(users["group"].to_list()))
    for group in _progress(groups, desc="age groups", enabled=progress):
        rows = users.filter(pl.col("group") == group).sort("user_id")
        prior = priors.filter(pl.col("group") == group)
        if prior.height != 1:
            raise ValueError(f"priors has {prior.height} rows for group {group!r}, needs 1")
        P = rows.select(genres).to_numpy().astype(float)
        q = prior.select(genres).to_numpy()[0].astype(float)
        values = _per_user_values(
            P, q, epsilon=epsilon, mechanisms=mechanisms, kl=True, chunk_users=chunk_users
        )
        frames.append(
            pl.DataFrame(
                {
                    "epsilon": np.full(P.shape[0], epsilon),
                    "group": [group] * P.shape[0],
                    "user_id": rows["user_id"],
                    **values,
                },
                schema=MOVIELENS_PER_USER_SCHEMA,
            )
        )
        log.info("ε=%g, group %s: %d users", epsilon, group, P.shape[0])
    if not frames:
        return pl.DataFrame(schema=MOVIELENS_PER_USER_SCHEMA)
    return pl.concat(frames).sort("group", "user_id")


def avazu_per_user(
    histograms: pl.DataFrame,
    *,
    epsilon: float,
    mechanisms: Mapping[str, Mechanism] | None = None,
    chunk_users: int = 20_000,
    progress: bool = False,
) -> pl.DataFrame:
    """Every kept device's TV between ``p`` and its release, per subcategory, at one ε.

    ``p`` is the device's normalised impression counts over the subcategory's websites and ``q``
    the mean of the subcategory's ``p`` (as :func:`ldpsample.experiments.real_data.avazu_metrics`).

    Parameters
    ----------
    histograms
        Frame of :func:`ldpsample.datasets.build_avazu_histograms` (one or more attributes;
        possibly empty).
    epsilon
        Privacy parameter.
    mechanisms
        See :func:`ldpsample.experiments.real_data.per_user_divergences`.
    chunk_users
        Devices released per mechanism call.
    progress
        Show a progress bar over the subcategories on stderr.

    Returns
    -------
    polars.DataFrame
        :data:`AVAZU_PER_USER_SCHEMA`, sorted by attribute, subcategory, device_id; empty (with
        that schema) for an empty input.
    """
    from ldpsample.datasets.avazu import avazu_user_matrix

    epsilon = check_epsilon(epsilon)
    frames = []
    parts = histograms.partition_by(["attribute", "subcategory"], as_dict=True)
    for attribute, subcategory in _progress(sorted(parts), desc="subcategories", enabled=progress):
        devices, _, P = avazu_user_matrix(parts[(attribute, subcategory)], subcategory)
        q = P.mean(axis=0)
        q = q / q.sum()
        values = _per_user_values(
            P, q, epsilon=epsilon, mechanisms=mechanisms, kl=False, chunk_users=chunk_users
        )
        frames.append(
            pl.DataFrame(
                {
                    "epsilon": np.full(P.shape[0], epsilon),
                    "attribute": [attribute] * P.shape[0],
                    "subcategory": np.full(P.shape[0], subcategory, dtype=np.int64),
                    "device_id": devices.tolist(),
                    **values,
                },
                schema=AVAZU_PER_USER_SCHEMA,
            )
        )
    log.info("ε=%g: %d subcategories, %d device rows", epsilon, len(frames), sum(map(len, frames)))
    if not frames:
        log.warning("ε=%g: the histogram frame is empty; no subcategory to evaluate", epsilon)
        return pl.DataFrame(schema=AVAZU_PER_USER_SCHEMA)
    return pl.concat(frames).sort("attribute", "subcategory", "device_id")


# --------------------------------------------------------------------------------------------
# worst cases and summaries
# --------------------------------------------------------------------------------------------


def max_over_users(
    per_user: pl.DataFrame, *, keys: Sequence[str], methods: Sequence[str], value: str
) -> pl.DataFrame:
    """Worst case over users per (ε, keys) and method, as a long frame.

    Returns
    -------
    polars.DataFrame
        Columns ``epsilon``, ``keys``, ``method`` (String), ``value`` (Float64), ``n_users``
        (Int64), sorted by epsilon, keys, method (the contract of
        :mod:`ldpsample.experiments.real_data`).
    """
    keys, methods = list(keys), list(methods)
    schema = {
        "epsilon": pl.Float64(),
        **{k: per_user.schema[k] for k in keys},
        "method": pl.String(),
        value: pl.Float64(),
        "n_users": pl.Int64(),
    }
    if per_user.height == 0:
        return pl.DataFrame(schema=schema)
    wide = per_user.group_by("epsilon", *keys).agg(
        *[pl.col(m).max() for m in methods], pl.len().cast(pl.Int64).alias("n_users")
    )
    long = wide.unpivot(
        on=methods, index=["epsilon", *keys, "n_users"], variable_name="method", value_name=value
    )
    return long.select(list(schema)).cast(schema).sort(["epsilon", *keys, "method"])


def movielens_max_tables(per_user: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``(max_tv, max_kl)`` per (ε, age group) from a MovieLens per-user table."""
    return (
        max_over_users(per_user, keys=["group"], methods=TV_METHODS, value="max_tv"),
        max_over_users(per_user, keys=["group"], methods=KL_METHODS, value="max_kl"),
    )


def avazu_max_table(per_user: pl.DataFrame) -> pl.DataFrame:
    """``max_tv`` per (ε, attribute, subcategory) from an Avazu per-user table."""
    return max_over_users(
        per_user, keys=["attribute", "subcategory"], methods=TV_METHODS, value="max_tv"
    )


def _summary(frame: pl.DataFrame, *, divergence: str, case_columns: list[str]) -> pl.DataFrame:
    result = win_summary(
        frame, value="value", methods=("minimax", "mollifier"), case_columns=case_columns
    )
    return result.select(pl.lit(divergence).alias("divergence"), pl.all()).cast(SUMMARY_SCHEMA)


def _generic(frame: pl.DataFrame, value: str, divergence: str) -> pl.DataFrame:
    return frame.select(
        pl.lit(divergence).alias("divergence"),
        pl.exclude("method", value, "n_users"),
        pl.col("method").replace_strict(_GENERIC),
        pl.col(value).alias("value"),
    )


def movielens_summary(max_tv: pl.DataFrame, max_kl: pl.DataFrame) -> pl.DataFrame:
    """Win shares and mean improvements of the minimax sampler vs the relative mollifier.

    A case is one (ε, age group) for ``tv`` and ``kl``, and one (divergence, ε, age group) for
    ``tv+kl`` (both tables pooled). See :func:`ldpsample.experiments.real_data.win_summary`.

    Returns
    -------
    polars.DataFrame
        :data:`SUMMARY_SCHEMA`: rows for divergences ``tv``, ``kl``, ``tv+kl`` and methods
        ``minimax``, ``mollifier``.
    """
    tv, kl = _generic(max_tv, "max_tv", "tv"), _generic(max_kl, "max_kl", "kl")
    return pl.concat(
        [
            _summary(tv, divergence="tv", case_columns=["epsilon", "group"]),
            _summary(kl, divergence="kl", case_columns=["epsilon", "group"]),
            _summary(
                pl.concat([tv, kl]),
                divergence="tv+kl",
                case_columns=["divergence", "epsilon", "group"],
            ),
        ]
    )


def avazu_summary(max_tv: pl.DataFrame) -> pl.DataFrame:
    """Win shares and mean improvements over the (ε, attribute, subcategory) cases (TV).

    Returns
    -------
    polars.DataFrame
        :data:`SUMMARY_SCHEMA` with divergence ``tv``; with no case (every subcategory skipped)
        ``cases`` is 0 and the shares and improvements are null.
    """
    return _summary(
        _generic(max_tv, "max_tv", "tv"),
        divergence="tv",
        case_columns=["epsilon", "attribute", "subcategory"],
    )


def avazu_subcategory_counts(
    parquet: str | os.PathLike[str],
    attribute: str,
    histograms: pl.DataFrame,
    *,
    exclude_placeholder_device: bool = False,
) -> dict[str, object]:
    """How many of an attribute's subcategories the histograms kept and how many were skipped.

    ``subcategories`` counts the attribute's distinct values in the converted file (without the
    placeholder device's rows if it is excluded); ``kept`` those present in ``histograms``.
    """
    from ldpsample.datasets.avazu import PLACEHOLDER_DEVICE_ID

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
