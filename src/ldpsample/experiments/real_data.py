"""Real-data experiments (MovieLens, Avazu): worst-case utility of the minimax sampler and the
relative-mollifier baseline per group, and who wins how often.

For every group (an age group for MovieLens, an attribute's subcategory for Avazu) and every ε,
each user's private ``p`` is released through

* ``minimax``: ``p̂ = p K_{q,ε}`` (:func:`ldpsample.minimax.apply_minimax`), the minimax-optimal
  sampler of Zamanlooy, Diaz & Asoodeh (2025), and
* ``mollifier_tv``: the TV projection of ``p`` onto the relative mollifier around ``q``
  (:func:`ldpsample.mollifier.relative_mollifier_tv`), the baseline built on Husain et al. (2020);

and the worst case over the group's users of ``TV(p, p̂)`` is reported (the paper's tables).
For MovieLens the same is done for KL: ``minimax_kl`` is ``KL(p ‖ p K_{q,ε})`` (the minimax
kernel is universal across f-divergences) and ``mollifier_kl`` is ``KL(p ‖ p̂)`` with the KL
projection (:func:`ldpsample.mollifier.relative_mollifier_kl`).

The functions take frames and return tidy polars frames sorted by their key columns. The
mechanisms are looked up at call time (``mechanisms=None``) or passed in, e.g. to test the
bookkeeping with stand-ins.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl
from numpy.typing import NDArray

from ldpsample._validation import check_epsilon
from ldpsample.divergences import kl_divergence, tv_distance

__all__ = [
    "KL_METHODS",
    "TV_METHODS",
    "WIN_SUMMARY_SCHEMA",
    "MovieLensMetrics",
    "avazu_metrics",
    "default_mechanisms",
    "movielens_metrics",
    "per_user_divergence_blocks",
    "per_user_divergences",
    "win_summary",
]

log = logging.getLogger(__name__)

#: Method names of the TV tables (``max_tv``) and of the KL table (``max_kl``).
TV_METHODS: tuple[str, str] = ("minimax", "mollifier_tv")
KL_METHODS: tuple[str, str] = ("minimax_kl", "mollifier_kl")

Mechanism = Callable[..., NDArray[np.float64]]

#: Columns of :func:`win_summary`, one row per method.
WIN_SUMMARY_SCHEMA: dict[str, pl.DataType] = {
    "method": pl.String(),
    "wins": pl.Int64(),
    "ties": pl.Int64(),
    "cases": pl.Int64(),
    "win_share": pl.Float64(),
    "mean_improvement": pl.Float64(),
}


def default_mechanisms() -> dict[str, Mechanism]:
    """The library's mechanisms, imported now: ``minimax``, ``mollifier_tv``, ``mollifier_kl``.

    Each is called as ``f(P, q, *, epsilon)`` and returns ``p̂`` with the shape of ``P``.
    """
    from ldpsample.minimax import apply_minimax
    from ldpsample.mollifier import relative_mollifier_kl, relative_mollifier_tv

    return {
        "minimax": apply_minimax,
        "mollifier_tv": relative_mollifier_tv,
        "mollifier_kl": relative_mollifier_kl,
    }


def _mechanisms(mechanisms: Mapping[str, Mechanism] | None, *, kl: bool) -> Mapping[str, Mechanism]:
    mech = default_mechanisms() if mechanisms is None else mechanisms
    needed = ["minimax", "mollifier_tv", *(["mollifier_kl"] if kl else [])]
    missing = [name for name in needed if name not in mech]
    if missing:
        raise ValueError(f"mechanisms lacks {missing}; needs {needed}")
    return mech


def _epsilons(epsilons: Iterable[float]) -> list[float]:
    if isinstance(epsilons, str | bytes):
        raise TypeError(f"epsilons must be a sequence of numbers, got {epsilons!r}")
    values = [check_epsilon(e) for e in epsilons]
    if not values:
        raise ValueError("epsilons is empty")
    return values


def per_user_divergences(
    P: NDArray[np.float64],
    q: NDArray[np.float64],
    *,
    epsilon: float,
    mechanisms: Mapping[str, Mechanism] | None = None,
    kl: bool = False,
) -> dict[str, NDArray[np.float64]]:
    """Per-user divergence between ``p`` and its release, per method.

    Parameters
    ----------
    P
        Users' distributions, shape ``(users, n)``.
    q
        Public prior, shape ``(n,)``.
    epsilon
        Privacy parameter (keyword-only).
    mechanisms
        ``{"minimax", "mollifier_tv"[, "mollifier_kl"]}`` → ``f(P, q, *, epsilon)``;
        default :func:`default_mechanisms`.
    kl
        Also compute ``minimax_kl`` and ``mollifier_kl``.

    Returns
    -------
    dict
        Method → array of shape ``(users,)``: ``minimax`` and ``mollifier_tv`` (TV), and with
        ``kl`` also ``minimax_kl`` and ``mollifier_kl`` (KL(p ‖ p̂) in nats).
    """
    mech = _mechanisms(mechanisms, kl=kl)
    released = np.asarray(mech["minimax"](P, q, epsilon=epsilon), dtype=float)
    out = {
        "minimax": tv_distance(P, released),
        "mollifier_tv": tv_distance(P, mech["mollifier_tv"](P, q, epsilon=epsilon)),
    }
    if kl:
        out["minimax_kl"] = kl_divergence(P, released)
        out["mollifier_kl"] = kl_divergence(P, mech["mollifier_kl"](P, q, epsilon=epsilon))
    for name, values in out.items():
        if np.isnan(values).any():
            raise ValueError(f"method {name!r} gave NaN at ε={epsilon!r}")
    return out


def per_user_divergence_blocks(
    P: NDArray[np.float64],
    q: NDArray[np.float64],
    *,
    epsilon: float,
    mechanisms: Mapping[str, Mechanism] | None,
    kl: bool,
    chunk_users: int,
) -> Iterator[dict[str, NDArray[np.float64]]]:
    """:func:`per_user_divergences` of ``P``'s rows in blocks of ``chunk_users`` users, one
    dict per block, in row order (bounded memory: one block is released at a time)."""
    for start in range(0, P.shape[0], chunk_users):
        yield per_user_divergences(
            P[start : start + chunk_users], q, epsilon=epsilon, mechanisms=mechanisms, kl=kl
        )


def _max_over_users(
    P: NDArray[np.float64],
    q: NDArray[np.float64],
    *,
    epsilon: float,
    mechanisms: Mapping[str, Mechanism],
    kl: bool,
    chunk_users: int,
) -> dict[str, float]:
    best: dict[str, float] = {}
    blocks = per_user_divergence_blocks(
        P, q, epsilon=epsilon, mechanisms=mechanisms, kl=kl, chunk_users=chunk_users
    )
    for values in blocks:
        for name, v in values.items():
            best[name] = max(best.get(name, -np.inf), float(np.max(v)))
    return best


@dataclass(frozen=True)
class MovieLensMetrics:
    """Worst case over each age group's users.

    Attributes
    ----------
    max_tv
        Columns ``epsilon`` (Float64), ``group`` (String), ``method`` (String: ``minimax``,
        ``mollifier_tv``), ``max_tv`` (Float64), ``n_users`` (Int64); sorted by epsilon,
        group, method.
    max_kl
        Same shape with methods ``minimax_kl``, ``mollifier_kl`` and column ``max_kl``
        (empty with that schema when ``kl=False``).
    """

    max_tv: pl.DataFrame
    max_kl: pl.DataFrame


def _result_frame(records: list[dict[str, object]], keys: dict[str, pl.DataType], value: str):
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
    users: pl.DataFrame,
    priors: pl.DataFrame,
    *,
    epsilons: Iterable[float],
    genres: Sequence[str] | None = None,
    mechanisms: Mapping[str, Mechanism] | None = None,
    kl: bool = True,
    chunk_users: int = 10_000,
) -> MovieLensMetrics:
    """Max TV (and KL) over each age group's users, per ε and method.

    Parameters
    ----------
    users
        ``MovieLensData.users``: ``user_id``, ``group`` and one column per genre (rows sum to 1).
    priors
        ``MovieLensData.priors``: ``group`` and the same genre columns (``q`` per group).
    epsilons
        Privacy parameters.
    genres
        Genre columns in order (default: the columns of ``users`` other than ``user_id`` and
        ``group``).
    mechanisms
        See :func:`per_user_divergences`.
    kl
        Also compute the KL table.
    chunk_users
        Users released per mechanism call (bounds memory).

    Returns
    -------
    MovieLensMetrics
    """
    eps_list = _epsilons(epsilons)
    genres = (
        list(genres)
        if genres is not None
        else [c for c in users.columns if c not in ("user_id", "group")]
    )
    missing = [g for g in genres if g not in priors.columns]
    if missing:
        raise ValueError(f"priors lacks the genre columns {missing}")
    mech = _mechanisms(mechanisms, kl=kl)
    tv_rows: list[dict[str, object]] = []
    kl_rows: list[dict[str, object]] = []
    for group in sorted(set(users["group"].to_list())):
        P = users.filter(pl.col("group") == group).select(genres).to_numpy().astype(float)
        prior_row = priors.filter(pl.col("group") == group)
        if prior_row.height != 1:
            raise ValueError(f"priors has {prior_row.height} rows for group {group!r}, needs 1")
        q = prior_row.select(genres).to_numpy()[0].astype(float)
        for eps in eps_list:
            best = _max_over_users(
                P, q, epsilon=eps, mechanisms=mech, kl=kl, chunk_users=chunk_users
            )
            for method in TV_METHODS:
                tv_rows.append(
                    {
                        "epsilon": eps,
                        "group": group,
                        "method": method,
                        "max_tv": best[method],
                        "n_users": P.shape[0],
                    }
                )
            if kl:
                for method in KL_METHODS:
                    kl_rows.append(
                        {
                            "epsilon": eps,
                            "group": group,
                            "method": method,
                            "max_kl": best[method],
                            "n_users": P.shape[0],
                        }
                    )
        log.info("MovieLens group %s: %d users done for ε in %s", group, P.shape[0], eps_list)
    keys = {"group": pl.String()}
    return MovieLensMetrics(
        max_tv=_result_frame(tv_rows, keys, "max_tv"),
        max_kl=_result_frame(kl_rows, keys, "max_kl"),
    )


def avazu_metrics(
    histograms: pl.DataFrame,
    *,
    epsilons: Iterable[float],
    mechanisms: Mapping[str, Mechanism] | None = None,
    chunk_users: int = 20_000,
) -> pl.DataFrame:
    """Max TV over each subcategory's devices, per ε and method.

    Parameters
    ----------
    histograms
        Long frame of :func:`ldpsample.datasets.avazu.build_avazu_histograms` (one or several
        attributes): ``attribute, subcategory, device_id, site_id, count``. Per subcategory,
        ``p`` is a device's normalised counts over the subcategory's websites and ``q`` the
        mean of its devices' ``p``.
    epsilons
        Privacy parameters.
    mechanisms
        See :func:`per_user_divergences` (``minimax`` and ``mollifier_tv`` are used).
    chunk_users
        Devices released per mechanism call (bounds memory).

    Returns
    -------
    polars.DataFrame
        Columns ``epsilon`` (Float64), ``attribute`` (String), ``subcategory`` (Int64),
        ``method`` (String: ``minimax``, ``mollifier_tv``), ``max_tv`` (Float64), ``n_users``
        (Int64), sorted by epsilon, attribute, subcategory, method. Empty (with that schema) for
        an empty input.
    """
    from ldpsample.datasets.avazu import avazu_user_matrix

    eps_list = _epsilons(epsilons)
    mech = _mechanisms(mechanisms, kl=False)
    records: list[dict[str, object]] = []
    parts = histograms.partition_by(["attribute", "subcategory"], as_dict=True)
    for attribute, subcategory in sorted(parts):
        _, _, P = avazu_user_matrix(parts[(attribute, subcategory)], subcategory)
        q = P.mean(axis=0)
        q = q / q.sum()
        for eps in eps_list:
            best = _max_over_users(
                P, q, epsilon=eps, mechanisms=mech, kl=False, chunk_users=chunk_users
            )
            for method in TV_METHODS:
                records.append(
                    {
                        "epsilon": eps,
                        "attribute": attribute,
                        "subcategory": subcategory,
                        "method": method,
                        "max_tv": best[method],
                        "n_users": P.shape[0],
                    }
                )
    if not parts:
        log.warning("avazu_metrics: the histogram frame is empty; no subcategory to evaluate")
    return _result_frame(records, {"attribute": pl.String(), "subcategory": pl.Int64()}, "max_tv")


def win_summary(
    frame: pl.DataFrame,
    *,
    value: str = "max_tv",
    methods: Sequence[str] = TV_METHODS,
    case_columns: Sequence[str] | None = None,
    tie_tolerance: float = 1e-12,
) -> pl.DataFrame:
    """How often each method has the strictly lowest worst case, and by how much.

    A *case* is one combination of ``case_columns`` (default: every column except ``method``,
    ``value`` and ``n_users``, e.g. (epsilon, group)). A method *wins* a case if its ``value``
    is lower than every other method's by more than ``tie_tolerance``; cases where the lowest
    values are within ``tie_tolerance`` are *ties*, counted for the tied methods and never as
    wins.

    Returns
    -------
    polars.DataFrame
        One row per method (in ``methods`` order): ``method`` (String), ``wins``, ``ties``,
        ``cases`` (Int64), ``win_share`` (wins / cases, Float64) and ``mean_improvement``
        (mean over won cases of the best other method's value minus this one's; null without
        wins).
    """
    methods = list(methods)
    if len(methods) < 2:
        raise ValueError(f"need at least two methods to compare, got {methods!r}")
    if case_columns is None:
        case_columns = [c for c in frame.columns if c not in ("method", value, "n_users")]
    case_columns = list(case_columns)
    present = frame.filter(pl.col("method").is_in(methods))
    wide = present.pivot(on="method", index=case_columns, values=value)
    missing = [m for m in methods if m not in wide.columns]
    if missing and wide.height:
        raise ValueError(f"no {value!r} values for methods {missing}")
    if wide.height and wide.select(pl.any_horizontal(pl.col(methods).is_null())).to_series().any():
        raise ValueError(f"some cases lack a value for one of {methods}")
    rows = []
    values = wide.select(methods).to_numpy().astype(float) if wide.height else np.empty((0, 2))
    if np.isnan(values).any():
        raise ValueError(f"{value} has NaN values")
    cases = values.shape[0]
    for j, method in enumerate(methods):
        others = np.delete(values, j, axis=1).min(axis=1) if cases else np.empty(0)
        margin = others - values[:, j] if cases else np.empty(0)
        wins = margin > tie_tolerance
        ties = np.abs(margin) <= tie_tolerance
        rows.append(
            {
                "method": method,
                "wins": int(wins.sum()),
                "ties": int(ties.sum()),
                "cases": int(cases),
                "win_share": float(wins.mean()) if cases else None,
                "mean_improvement": float(margin[wins].mean()) if wins.any() else None,
            }
        )
    return pl.DataFrame(
        rows,
        schema=WIN_SUMMARY_SCHEMA,
        orient="row",
    )
