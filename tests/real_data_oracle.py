"""Test-only reference: the real-data (MovieLens, Avazu) implementation the pipeline ran before
both experiments moved onto the events stage, kept verbatim in its simple form (worst
case over users per group, per ε) to check that the published tables did not change.

It holds the former builders too, moved here from ``ldpsample.datasets`` when the library
dropped them (the pipeline's path is ``ldpsample.events``): MovieLens through
:func:`build_movielens_data` (one row of genre masses per ML-1M user, one prior row per age
group, on the library's readers) and Avazu through :func:`build_avazu_histograms` (one
attribute's kept devices' site counts, straight from the converted parquet) and
:func:`avazu_user_matrix`. Never import it from the library.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import polars as pl
from numpy.typing import NDArray

from ldpsample.datasets.registry import OFFICIAL_ROW_COUNTS
from ldpsample.divergences import kl_divergence, tv_distance
from ldpsample.events.outputs.tables import WIN_SUMMARY_SCHEMA, win_summary
from ldpsample.experiments.avazu.data import AVAZU_ATTRIBUTES, PLACEHOLDER_DEVICE_ID
from ldpsample.experiments.movielens.data import (
    AGE_GROUPS,
    Weight,
    _masses_with_groups,
    common_genres,
    read_ml1m,
    read_ml100k,
)
from ldpsample.minimax import apply_minimax
from ldpsample.mollifier import relative_mollifier_kl, relative_mollifier_tv

log = logging.getLogger(__name__)

PathLike = str | os.PathLike[str]
PriorSource = Literal["ml-100k", "ml-1m"]

# --------------------------------------------------------------------------------------------
# MovieLens: the former matrix builder of the library
# --------------------------------------------------------------------------------------------


def _wide(long: pl.DataFrame, index: list[str], genres: tuple[str, ...]) -> pl.DataFrame:
    """Long (index..., genre, mass) → one Float64 column per genre (zeros where absent)."""
    wide = long.pivot(on="genre", index=index, values="mass")
    for genre in genres:
        if genre not in wide.columns:
            wide = wide.with_columns(pl.lit(0.0).alias(genre))
    return wide.select(*index, *[pl.col(g).fill_null(0.0).cast(pl.Float64) for g in genres])


def _normalise_rows(frame: pl.DataFrame, genres: tuple[str, ...]) -> pl.DataFrame:
    total = pl.sum_horizontal([pl.col(g) for g in genres])
    return frame.with_columns([(pl.col(g) / total).alias(g) for g in genres])


@dataclass(frozen=True)
class MovieLensData:
    """The MovieLens experiment's inputs.

    Attributes
    ----------
    genres
        The genre order of every histogram (18 names).
    groups
        Age groups in order (all of :data:`AGE_GROUPS` that have users).
    users
        One row per ML-1M user with positive genre mass, sorted by ``user_id``: columns
        ``user_id`` (Int64), ``group`` (String), then one Float64 column per genre holding
        ``p`` (each row sums to 1).
    priors
        One row per group, in :attr:`groups` order: ``group``, ``n_users`` (users pooled into
        the prior), ``mass`` (total pooled mass before normalising), then one Float64 column
        per genre holding ``q`` (sums to 1).
    weight, prior_source
        The options used.
    partial
        True if a ratings file had fewer rows than the official release.
    skipped_users
        ML-1M users with ratings but zero mass on the genres (skipped; impossible in the
        official data).
    """

    genres: tuple[str, ...]
    groups: tuple[str, ...]
    users: pl.DataFrame
    priors: pl.DataFrame
    weight: str
    prior_source: str
    partial: bool
    skipped_users: int

    def user_matrix(self, group: str) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """``(user_ids, P)`` of one group: P has shape (users, genres), rows sum to 1."""
        rows = self.users.filter(pl.col("group") == group)
        return rows["user_id"].to_numpy(), rows.select(self.genres).to_numpy()

    def prior(self, group: str) -> NDArray[np.float64]:
        """The public prior ``q`` of one group (shape ``(genres,)``)."""
        row = self.priors.filter(pl.col("group") == group)
        if row.height != 1:
            raise KeyError(f"no prior for group {group!r}; groups: {self.groups}")
        return row.select(self.genres).to_numpy()[0]


def build_movielens_data(
    ml1m_files: Mapping[str, PathLike],
    ml100k_files: Mapping[str, PathLike],
    *,
    weight: Weight = "count",
    prior_source: PriorSource = "ml-100k",
) -> MovieLensData:
    """Private histograms of ML-1M users and public priors per age group.

    The pipeline runs the same data as events tables
    (:func:`ldpsample.experiments.movielens.tables.movielens_events`, one row per (user, genre))
    through the events stage; this matrix form is the reference the tests compare the events path
    against.

    Parameters
    ----------
    ml1m_files
        ML-1M ``ratings``, ``movies``, ``users`` (see
        :func:`ldpsample.experiments.movielens.data.read_ml1m`).
    ml100k_files
        ML-100K ``ratings``, ``items``, ``users``, ``genres`` (see
        :func:`ldpsample.experiments.movielens.data.read_ml100k`). Needed for the common genres
        whatever ``prior_source`` is.
    weight
        ``"count"`` (published code, default): each rating adds 1 to each genre of its movie;
        ``"rating"`` (paper text): it adds its rating.
    prior_source
        ``"ml-100k"`` (AISTATS version, default) or ``"ml-1m"`` (arXiv version): whose users'
        masses are pooled into each group's prior.

    Returns
    -------
    MovieLensData
    """
    if weight not in ("count", "rating"):
        raise ValueError(f"weight must be 'count' or 'rating', got {weight!r}")
    if prior_source not in ("ml-100k", "ml-1m"):
        raise ValueError(f"prior_source must be 'ml-100k' or 'ml-1m', got {prior_source!r}")
    ml1m = read_ml1m(ml1m_files)
    ml100k = read_ml100k(ml100k_files)
    genres = common_genres(ml100k["genres"], ml1m["genres"])  # type: ignore[arg-type]
    partial = ml1m["ratings"].height < OFFICIAL_ROW_COUNTS[("ml-1m", "ratings")]  # type: ignore[union-attr]
    partial |= ml100k["ratings"].height < OFFICIAL_ROW_COUNTS[("ml-100k", "ratings")]  # type: ignore[union-attr]

    masses_1m = _masses_with_groups(ml1m, genres, weight, "ml-1m")
    # Users whose ratings put no mass on the genres have no row in the long frame at all.
    raters = ml1m["ratings"].select("user_id").unique()  # type: ignore[union-attr]
    skipped = raters.join(masses_1m.select("user_id").unique(), on="user_id", how="anti").height
    if skipped:
        log.warning("%d ML-1M users have zero mass on the %d genres; skipped", skipped, len(genres))
    wide = _wide(masses_1m.filter(pl.col("mass") > 0), ["user_id", "group"], genres)
    users = _normalise_rows(wide, genres).sort("user_id")

    prior_masses = (
        masses_1m
        if prior_source == "ml-1m"
        else _masses_with_groups(ml100k, genres, weight, "ml-100k")
    )
    pooled = prior_masses.group_by("group", "genre").agg(pl.col("mass").sum())
    prior_users = (
        prior_masses.filter(pl.col("mass") > 0)
        .group_by("group")
        .agg(pl.col("user_id").n_unique().alias("n_users"))
    )
    priors = _wide(pooled, ["group"], genres)
    priors = priors.with_columns(pl.sum_horizontal([pl.col(g) for g in genres]).alias("mass"))
    priors = _normalise_rows(priors, genres).join(prior_users, on="group", how="left")

    groups = tuple(g for g in AGE_GROUPS if g in set(users["group"].to_list()))
    missing_prior = [g for g in groups if g not in set(priors["group"].to_list())]
    if missing_prior:
        raise ValueError(f"no {prior_source} ratings for age groups {missing_prior}: no prior")
    order = {g: i for i, g in enumerate(AGE_GROUPS)}
    priors = (
        priors.filter(pl.col("group").is_in(list(groups)))
        .with_columns(pl.col("group").replace_strict(order, return_dtype=pl.Int64).alias("_o"))
        .sort("_o")
        .select("group", pl.col("n_users").cast(pl.Int64), "mass", *genres)
    )
    counts = users.group_by("group").len().sort("group")
    log.info(
        "MovieLens: %d users over %d genres (weight=%s, prior_source=%s); users per group %s",
        users.height,
        len(genres),
        weight,
        prior_source,
        dict(counts.iter_rows()),
    )
    return MovieLensData(
        genres=genres,
        groups=groups,
        users=users,
        priors=priors,
        weight=weight,
        prior_source=prior_source,
        partial=bool(partial),
        skipped_users=skipped,
    )


# --------------------------------------------------------------------------------------------
# Avazu: the former histogram builder of the library
# --------------------------------------------------------------------------------------------

#: Columns and types of :func:`build_avazu_histograms`' result.
HISTOGRAM_SCHEMA: dict[str, pl.DataType] = {
    "attribute": pl.String(),
    "subcategory": pl.Int64(),
    "device_id": pl.String(),
    "site_id": pl.String(),
    "count": pl.Int64(),
}


def _empty_histograms() -> pl.DataFrame:
    return pl.DataFrame(schema=HISTOGRAM_SCHEMA)


def build_avazu_histograms(
    parquet: PathLike,
    attribute: str,
    *,
    top_sites: int = 100,
    site_rank_by: Literal["clicks", "impressions"] = "clicks",
    min_rows: int = 20,
    user_activity: Literal["impressions", "clicks"] = "impressions",
    activity_scope: Literal["global", "top_sites"] = "global",
    min_users: int = 100,
    exclude_placeholder_device: bool = False,
) -> pl.DataFrame:
    """Private histograms of one attribute's kept subcategories, as a long frame.

    Parameters
    ----------
    parquet
        Output of :func:`ldpsample.experiments.avazu.data.convert_avazu_to_parquet`.
    attribute
        One of :data:`AVAZU_ATTRIBUTES`.
    top_sites
        Websites per subcategory: the ``top_sites`` with the most clicks (or impressions).
    site_rank_by
        ``"clicks"`` (published code and paper) or ``"impressions"``.
    min_rows
        Minimum activity of a kept device.
    user_activity
        What ``min_rows`` counts: ``"impressions"`` (rows; published code, default) or
        ``"clicks"`` (paper text).
    activity_scope
        Where the activity is counted: ``"global"`` (the whole file, before subcategories and
        websites are chosen; published code, default) or ``"top_sites"`` (the subcategory's top
        websites only).
    min_users
        Minimum number of kept devices for a subcategory to be kept (100 in the AISTATS
        version and the published code; 1000 in the arXiv text).
    exclude_placeholder_device
        Drop the rows of :data:`PLACEHOLDER_DEVICE_ID` before anything else.

    Returns
    -------
    polars.DataFrame
        Columns :data:`HISTOGRAM_SCHEMA` — ``attribute`` (String), ``subcategory`` (Int64),
        ``device_id`` (String), ``site_id`` (String), ``count`` (Int64, impressions of the
        device on the site within the subcategory, > 0) — restricted to kept subcategories,
        their top websites and kept devices, sorted by (subcategory, device_id, site_id). A
        subcategory's website set is the websites occurring in its rows here; ``p`` of a device
        is its counts normalised, ``q`` the mean of its devices' ``p``
        (:func:`avazu_user_matrix`).
    """
    if attribute not in AVAZU_ATTRIBUTES:
        raise ValueError(f"attribute must be one of {AVAZU_ATTRIBUTES}, got {attribute!r}")
    for name, value in (("top_sites", top_sites), ("min_rows", min_rows), ("min_users", min_users)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if site_rank_by not in ("clicks", "impressions"):
        raise ValueError(f"site_rank_by must be 'clicks' or 'impressions', got {site_rank_by!r}")
    if user_activity not in ("impressions", "clicks"):
        raise ValueError(f"user_activity must be 'impressions' or 'clicks', got {user_activity!r}")
    if activity_scope not in ("global", "top_sites"):
        raise ValueError(f"activity_scope must be 'global' or 'top_sites', got {activity_scope!r}")
    parquet = Path(parquet)
    if not parquet.is_file():
        raise FileNotFoundError(f"Avazu parquet not found: {parquet}")

    lf = pl.scan_parquet(parquet).select("device_id", "site_id", "click", attribute)
    if exclude_placeholder_device:
        lf = lf.filter(pl.col("device_id") != PLACEHOLDER_DEVICE_ID)
    # The one pass over the rows: everything below works on this aggregate.
    agg = (
        lf.group_by(attribute, "device_id", "site_id")
        .agg(
            pl.len().cast(pl.Int64).alias("impressions"),
            pl.col("click").cast(pl.Int64).sum().alias("clicks"),
        )
        .rename({attribute: "subcategory"})
        .collect(engine="streaming")
    )
    n_subcategories = agg["subcategory"].n_unique()
    activity = user_activity  # "impressions" or "clicks": both are columns of agg
    if activity_scope == "global":
        active = (
            agg.group_by("device_id")
            .agg(pl.col(activity).sum().alias("activity"))
            .filter(pl.col("activity") >= min_rows)
            .select("device_id")
        )
        agg = agg.join(active, on="device_id", how="semi")
    site_stats = agg.group_by("subcategory", "site_id").agg(
        pl.col("clicks").sum(), pl.col("impressions").sum()
    )
    top = (
        site_stats.sort(["subcategory", site_rank_by, "site_id"], descending=[False, True, False])
        .group_by("subcategory", maintain_order=True)
        .head(top_sites)
        .select("subcategory", "site_id")
    )
    hist = agg.join(top, on=["subcategory", "site_id"], how="semi")
    if activity_scope == "top_sites":
        active = (
            hist.group_by("subcategory", "device_id")
            .agg(pl.col(activity).sum().alias("activity"))
            .filter(pl.col("activity") >= min_rows)
            .select("subcategory", "device_id")
        )
        hist = hist.join(active, on=["subcategory", "device_id"], how="semi")
    users = hist.group_by("subcategory").agg(pl.col("device_id").n_unique().alias("n_users"))
    kept = users.filter(pl.col("n_users") >= min_users).select("subcategory")
    n_kept = kept.height
    log.info(
        "%s: %d subcategories; %d kept, %d skipped (%d with devices but fewer than "
        "min_users=%d, %d with no device left after the activity filter)",
        attribute,
        n_subcategories,
        n_kept,
        n_subcategories - n_kept,
        users.height - n_kept,
        min_users,
        n_subcategories - users.height,
    )
    if n_kept == 0:
        log.warning(
            "%s: no subcategory has at least %d devices with at least %d %s; the histogram "
            "frame is empty",
            attribute,
            min_users,
            min_rows,
            user_activity,
        )
        return _empty_histograms()
    return (
        hist.join(kept, on="subcategory", how="semi")
        .select(
            pl.lit(attribute).alias("attribute"),
            pl.col("subcategory").cast(pl.Int64),
            "device_id",
            "site_id",
            pl.col("impressions").alias("count"),
        )
        .sort("subcategory", "device_id", "site_id")
    )


def avazu_user_matrix(
    histograms: pl.DataFrame, subcategory: int, *, attribute: str | None = None
) -> tuple[NDArray[np.str_], NDArray[np.str_], NDArray[np.float64]]:
    """Dense ``(device_ids, site_ids, P)`` of one subcategory of a histogram frame.

    ``P`` has one row per device (sorted by ``device_id``) and one column per website
    (sorted by ``site_id``); rows are normalised impression counts (sum 1). The public prior of
    the paper is ``P.mean(axis=0)``.
    """
    rows = histograms.filter(pl.col("subcategory") == subcategory)
    if attribute is not None:
        rows = rows.filter(pl.col("attribute") == attribute)
    if rows.height == 0:
        raise KeyError(f"subcategory {subcategory!r} is not in the histogram frame")
    if attribute is None and rows["attribute"].n_unique() > 1:
        raise ValueError("the frame holds several attributes: pass attribute=")
    devices = np.sort(rows["device_id"].unique().to_numpy())
    sites = np.sort(rows["site_id"].unique().to_numpy())
    d_index = np.searchsorted(devices, rows["device_id"].to_numpy())
    s_index = np.searchsorted(sites, rows["site_id"].to_numpy())
    counts = np.zeros((devices.size, sites.size))
    np.add.at(counts, (d_index, s_index), rows["count"].to_numpy().astype(float))
    return devices, sites, counts / counts.sum(axis=1, keepdims=True)


# --------------------------------------------------------------------------------------------
# the former metrics
# --------------------------------------------------------------------------------------------

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
