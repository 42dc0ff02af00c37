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

import functools
import logging
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl
from numpy.typing import NDArray

from ldpsample._threads import thread_count
from ldpsample._validation import check_distributions
from ldpsample.audit import randomized_response_realized_epsilon
from ldpsample.baselines import linear_minimax, randomized_response_divergences_sparse
from ldpsample.divergences import kl_divergence, tv_distance
from ldpsample.events.counting.data_priors import (
    DENSE_ITEMS,
    UserMeanFold,
    csr_rows,
    normalised,
    pooled_masses,
)
from ldpsample.events.options import Method, PriorKind
from ldpsample.events.schemas import AUDIT_SCHEMA, METHODS
from ldpsample.events.scoring import release_kernel as _release
from ldpsample.minimax import apply_minimax
from ldpsample.minimax_sparse import minimax_divergences_sparse
from ldpsample.mollifier import (
    SparseMollifier,
    mollifier_divergences_sparse,
    relative_mollifier_kl,
    relative_mollifier_tv,
    sparse_mollifier,
)
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

PRIORS = ("user_mean", "pooled", "uniform")
#: Users per chunk of a sparse subcategory (one thread's task, one step of its progress): a few
#: tens of MiB of working arrays at ~20 items per user.
SPARSE_CHUNK_USERS = 1 << 16
#: Priors read from a priors table: a public table's q on the items that kept users hold, a
#: release spec's q on its full domain, or q computed over every bucket's users (``given``).
TABLE_PRIORS = ("table", "spec", "given")


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
    users, items, (user_index, item_index) = _subcategory_index(rows, items)
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


def _sparse_prior(
    kind: str,
    indptr: NDArray[np.int64],
    indices: NDArray[np.int64],
    data: NDArray[np.float64],
    n: int,
) -> NDArray[np.float64]:
    """:func:`_prior` of a large subcategory from its CSR rows (no dense matrix)."""
    if kind == "user_mean":
        fold = UserMeanFold(n)
        fold.add(indptr, indices, data)
        return fold.q()
    if kind == "pooled":
        return normalised(pooled_masses(indices, data, n))
    if kind == "uniform":
        return normalised(np.ones(n))
    raise ValueError(f"prior must be one of {PRIORS + TABLE_PRIORS}, got {kind!r}")


def _user_chunks(users: int, chunk_users: int, threads: int) -> list[tuple[int, int]]:
    """Contiguous ``(start, stop)`` ranges of users: at most ``chunk_users`` each and, with
    several threads, at least one per thread (results do not depend on the split)."""
    if users == 0:
        return []
    size = max(1, min(chunk_users, -(-users // threads)))
    return [(start, min(start + size, users)) for start in range(0, users, size)]


def _in_order(
    pool: ThreadPoolExecutor | None,
    work: Callable[[Any], Any],
    tasks: list[Any],
    *,
    lazy: bool = False,
) -> list[Any] | Iterator[Any]:
    """``work`` on every task, results in the tasks' order (on the pool's threads if any);
    ``lazy`` returns them as they come (for a progress bar) instead of as a list."""
    if pool is None or len(tasks) <= 1:
        results = (work(task) for task in tasks)
    else:
        results = pool.map(work, tasks)
    return results if lazy else list(results)


def evaluate_attribute(
    histograms: pl.DataFrame,
    priors: pl.DataFrame | None,
    *,
    name: str,
    attribute: str,
    prior: PriorKind | str,
    epsilons: Sequence[float],
    methods: Sequence[Method | str],
    chunk_users: int = 4096,
    progress: bool = False,
    threads: int | None = None,
) -> AttributeResult:
    """Per-user divergences and kernel audit of one attribute, all ε.

    Parameters
    ----------
    histograms
        Rows of :data:`ldpsample.events.schemas.HISTOGRAM_SCHEMA` (other attributes ignored).
    priors
        :data:`~ldpsample.events.schemas.PRIOR_SCHEMA` rows for ``prior="table"``,
        ``"spec"`` or ``"given"``.
    prior
        ``user_mean``, ``pooled``, ``uniform``, ``table`` (a public table's q on the items
        kept users hold), ``spec`` (a release spec's q on its full domain: the mechanism a
        release uses) or ``given`` (q and the items of every subcategory as ``priors`` lists
        them, in its order: the map/reduce steps' priors, :mod:`ldpsample.events.bucketed.steps`,
        computed over every bucket's users; ``histograms`` may then hold some of the users).
    threads
        Users are split into chunks computed side by side on this many threads (None:
        :func:`ldpsample._threads.thread_count`'s default; a Snakemake job passes its
        ``threads``). No value depends on it: each
        user's numbers depend on its own row only (``apply_minimax`` tiles rows alike whatever
        the chunk, the mollifiers and divergences work row by row, randomized response is the
        elementwise closed form :func:`ldpsample.baselines.linear_minimax`).

    Subcategories of more than :data:`~ldpsample.events.counting.data_priors.DENSE_ITEMS` items are
    evaluated without a dense users x items matrix, every method in O(k log k) per user with k items
    after O(n log n) per subcategory and ε: minimax (:func:`ldpsample.minimax_divergences_sparse`),
    the mollifiers (:func:`ldpsample.mollifier.mollifier_divergences_sparse`) and randomized
    response (:func:`ldpsample.baselines.randomized_response_divergences_sparse`), with a
    data-derived prior from the sparse rows. With ``progress``, such a subcategory also shows its
    users done and their rate, chunk by chunk of :data:`SPARSE_CHUNK_USERS` users.

    Raises
    ------
    PrivacyAuditError
        If a kernel's realised ε exceeds its ε (before anything is returned).
    """
    prior = PriorKind(prior)
    methods = _ordered([Method(m) for m in methods])
    eps_list = sorted(float(e) for e in epsilons)
    make_kernel = _release.minimax_release_kernel
    workers = thread_count(threads)
    same = histograms["attribute"] == attribute
    rows = histograms if same.all() else histograms.filter(same)
    schema = per_user_schema(methods)
    # Parts per ε, each in (subcategory, user) order: concatenated ε by ε they are the tables'
    # sorted order (polars and Python order strings alike, by code point), with no sort.
    per_user: dict[float, list[pl.DataFrame]] = {eps: [] for eps in eps_list}
    audit = []
    parts = _subcategory_parts(rows)
    subcategories = sorted(key for (key,) in parts)
    pool = ThreadPoolExecutor(workers) if workers > 1 else None
    # Enough subcategories: each thread takes whole ones (building a matrix is half the work);
    # else each subcategory's chunks of users run side by side.
    by_subcategory = pool is not None and len(subcategories) >= 2 * workers
    evaluate = _Attribute(
        parts=parts,
        priors=priors,
        name=name,
        attribute=attribute,
        prior=prior,
        eps_list=eps_list,
        methods=methods,
        schema=schema,
        make_kernel=make_kernel,
        chunk_users=chunk_users,
        workers=workers,
        pool=None if by_subcategory else pool,
        progress=progress and not by_subcategory,
    )
    try:
        results = (
            pool.map(evaluate, subcategories)
            if by_subcategory
            else (evaluate(s) for s in subcategories)
        )
        for frames, rows_audit in _progress(
            results, desc=f"{attribute} subcategories", total=len(subcategories), enabled=progress
        ):
            for eps, frame in zip(eps_list, frames, strict=True):
                per_user[eps].append(frame)
            audit += rows_audit
    finally:
        if pool is not None:
            pool.shutdown()
    return AttributeResult(
        per_user=_concat([f for eps in eps_list for f in per_user[eps]], schema),
        audit=pl.DataFrame(audit, schema=AUDIT_SCHEMA, orient="row").sort(
            "attribute", "subcategory", "epsilon", "kernel"
        ),
    )


@dataclass(frozen=True)
class _Attribute:
    """One attribute's evaluation (:func:`evaluate_attribute`): its subcategories' rows, priors
    and settings; calling it on a subcategory evaluates that one (chunks of users on ``pool``
    if given)."""

    parts: dict[tuple[str], pl.DataFrame]
    priors: pl.DataFrame | None
    name: str
    attribute: str
    prior: PriorKind
    eps_list: list[float]
    methods: list[str]
    schema: dict[str, pl.DataType]
    make_kernel: Callable[..., object]
    chunk_users: int
    workers: int
    pool: ThreadPoolExecutor | None
    progress: bool = False

    def __call__(self, subcategory: str) -> tuple[list[pl.DataFrame], list[tuple]]:
        """The subcategory's per-user frame of every ε (in order) and its audit rows."""
        return _evaluate_subcategory(self, subcategory)


def _evaluate_subcategory(
    job: _Attribute, subcategory: str
) -> tuple[list[pl.DataFrame], list[tuple]]:
    """One subcategory of :func:`evaluate_attribute` (see :class:`_Attribute`)."""
    parts, priors, name, attribute, prior = (
        job.parts,
        job.priors,
        job.name,
        job.attribute,
        job.prior,
    )
    eps_list, methods, schema, make_kernel = job.eps_list, job.methods, job.schema, job.make_kernel
    chunk_users, workers, pool, progress = job.chunk_users, job.workers, job.pool, job.progress
    table = None
    if prior in TABLE_PRIORS:
        table = priors.filter(
            (pl.col("attribute") == attribute) & (pl.col("subcategory") == subcategory)
        )
    given = table["item"] if prior in ("spec", "given") else None
    user_series, item_series, sub = _subcategory(parts[(subcategory,)], given)
    n_users, n = user_series.len(), item_series.len()
    if prior in ("spec", "given"):
        q = table["q"].to_numpy()
    elif prior == "table":
        lookup = dict(zip(table["item"].to_list(), table["q"].to_list(), strict=True))
        q = np.array([lookup.get(i, 0.0) for i in item_series.to_list()], dtype=float)
    elif sub.P is not None:
        q = _prior(prior, sub.P, sub.counts)
    else:
        q = _sparse_prior(prior, sub.indptr, sub.indices, sub.data, n)
    chunks = _user_chunks(
        n_users,
        chunk_users if sub.P is not None else sub.chunk,
        workers if pool is not None else 1,
    )
    frames, audit = [], []
    for eps in eps_list:
        what = f"events.{name}, {attribute}={subcategory!r}, epsilon={eps!r}"
        K_minimax = make_kernel(q, epsilon=eps) if "minimax" in methods else None
        if K_minimax is not None:
            realized = _release.audit_kernel(K_minimax, epsilon=eps, what=f"{what}, minimax kernel")
            audit.append((attribute, subcategory, eps, "minimax", n, realized))
        if "randomized_response" in methods:
            realized = _release.check_realized(
                randomized_response_realized_epsilon(n, epsilon=eps),
                epsilon=eps,
                what=f"{what}, randomized_response kernel",
            )
            audit.append((attribute, subcategory, eps, "randomized_response", n, realized))
        mollifier = None
        if sub.P is None and {"mollifier_tv", "mollifier_kl"} & set(methods):
            mollifier = sparse_mollifier(q, epsilon=eps)
        work = functools.partial(
            _chunk_values,
            sub,
            q=q,
            K_minimax=K_minimax,
            mollifier=mollifier,
            eps=eps,
            methods=methods,
        )
        done = list(
            _progress(
                _in_order(pool, work, chunks, lazy=True),
                desc=f"{attribute}={subcategory!r}, ε {eps:g}: chunks of {chunks[0][1]:,} users"
                if chunks
                else f"{attribute}={subcategory!r}",
                total=len(chunks),
                enabled=progress and sub.P is None,
            )
        )
        columns = {
            c: (np.concatenate([d[c] for d in done]) if done else np.empty(0))
            for c in list(schema)[4:]
        }
        for column, v in columns.items():
            if np.isnan(v).any():
                raise ValueError(f"{what}: {column} gave NaN")
        frames.append(
            pl.DataFrame(
                {
                    "epsilon": np.full(n_users, eps),
                    "attribute": pl.repeat(attribute, n_users, dtype=pl.String, eager=True),
                    "subcategory": pl.repeat(subcategory, n_users, dtype=pl.String, eager=True),
                    "user": user_series.alias("user"),
                    **columns,
                },
                schema=schema,
            )
        )
    log.info(
        "%s=%s: %d users, %d items%s, ε %s",
        attribute,
        subcategory,
        n_users,
        n,
        "" if sub.P is not None else " (sparse)",
        eps_list,
    )
    return frames, audit


@dataclass(frozen=True)
class _Users:
    """One subcategory's users: dense (``P``, ``counts``: users x items, at most
    :data:`DENSE_ITEMS` items) or sparse (CSR ``indptr, indices, data`` of the counts, in
    chunks of ``chunk`` users)."""

    n: int
    P: NDArray[np.float64] | None = None
    counts: NDArray[np.float64] | None = None
    indptr: NDArray[np.int64] | None = None
    indices: NDArray[np.int64] | None = None
    data: NDArray[np.float64] | None = None
    chunk: int = 4096


def _subcategory(
    rows: pl.DataFrame, items: pl.Series | None
) -> tuple[pl.Series, pl.Series, _Users]:
    """The users, items and matrix (dense or sparse, by the number of items) of one
    subcategory's histogram rows."""
    n = (items if items is not None else rows["item"].unique()).len()
    if n <= DENSE_ITEMS:
        user_series, item_series, counts = _subcategory_matrix(rows, items)
        # checked once here; the mechanisms below skip their own check (check_input=False)
        P = check_distributions(counts / counts.sum(axis=1, keepdims=True), name="P")
        return user_series, item_series, _Users(P=P, counts=counts, n=n)
    user_series, item_series, (user_index, item_index) = _subcategory_index(rows, items)
    indptr, indices, data = csr_rows(
        user_index, item_index, rows["count"].to_numpy().astype(float), user_series.len()
    )
    return (
        user_series,
        item_series,
        _Users(indptr=indptr, indices=indices, data=data, chunk=SPARSE_CHUNK_USERS, n=n),
    )


def _chunk_values(
    sub: _Users,
    bounds: tuple[int, int],
    *,
    q: NDArray[np.float64],
    K_minimax: object,
    mollifier: SparseMollifier | None,
    eps: float,
    methods: Sequence[str],
) -> dict[str, NDArray[np.float64]]:
    """Every method's divergences for the users ``bounds`` of a subcategory (one thread)."""
    if sub.P is None:
        return _sparse_chunk_values(
            sub, bounds, K_minimax=K_minimax, mollifier=mollifier, eps=eps, methods=methods
        )
    start, stop = bounds
    values: dict[str, NDArray[np.float64]] = {}
    Pc = sub.P[start:stop]
    if K_minimax is not None:
        R = apply_minimax(Pc, K_minimax, threads=1, check_input=False)
        values["tv_minimax"] = tv_distance(Pc, R)
        values["kl_minimax"] = kl_divergence(Pc, R)
    if "mollifier_tv" in methods:
        values["tv_mollifier_tv"] = tv_distance(
            Pc, relative_mollifier_tv(Pc, q, epsilon=eps, check_input=False)
        )
    if "mollifier_kl" in methods:
        values["kl_mollifier_kl"] = kl_divergence(
            Pc, relative_mollifier_kl(Pc, q, epsilon=eps, threads=1)
        )
    if "randomized_response" in methods:
        R = linear_minimax(Pc, epsilon=eps, check_input=False)
        values["tv_randomized_response"] = tv_distance(Pc, R)
        values["kl_randomized_response"] = kl_divergence(Pc, R)
    return values


def _sparse_chunk_values(
    sub: _Users,
    bounds: tuple[int, int],
    *,
    K_minimax: object,
    mollifier: SparseMollifier | None,
    eps: float,
    methods: Sequence[str],
) -> dict[str, NDArray[np.float64]]:
    """:func:`_chunk_values` of a sparse subcategory: every method on the CSR rows."""
    start, stop = bounds
    ptr = sub.indptr[start : stop + 1]
    lo, hi = int(ptr[0]), int(ptr[-1])
    rows = (ptr - lo, sub.indices[lo:hi], sub.data[lo:hi])
    values: dict[str, NDArray[np.float64]] = {}
    if K_minimax is not None:
        values["tv_minimax"], values["kl_minimax"] = minimax_divergences_sparse(K_minimax, *rows)
    if "mollifier_tv" in methods:
        values["tv_mollifier_tv"] = mollifier_divergences_sparse(mollifier, *rows, projection="tv")[
            0
        ]
    if "mollifier_kl" in methods:
        values["kl_mollifier_kl"] = mollifier_divergences_sparse(mollifier, *rows, projection="kl")[
            1
        ]
    if "randomized_response" in methods:
        tv, kl = randomized_response_divergences_sparse(*rows, n=sub.n, epsilon=eps)
        values["tv_randomized_response"], values["kl_randomized_response"] = tv, kl
    return values


def _subcategory_index(
    rows: pl.DataFrame, items: pl.Series | None
) -> tuple[pl.Series, pl.Series, tuple[NDArray[np.intp], NDArray[np.intp]]]:
    """Sorted users and items (or ``items`` in its order) and each row's indices among them."""
    users, user_index = _sorted_index(rows["user"])
    if items is None:
        items, item_index = _sorted_index(rows["item"])
    else:
        positions = pl.DataFrame({"item": items, "_j": np.arange(items.len())})
        index = rows.select("item").join(positions, on="item", how="left", maintain_order="left")
        if index["_j"].null_count():
            raise ValueError("histogram rows hold items outside the spec's domain")
        item_index = index["_j"].to_numpy().astype(np.intp)
    return users, items, (user_index, item_index)


def _sorted_index(values: pl.Series) -> tuple[pl.Series, NDArray[np.intp]]:
    """The sorted distinct ``values`` and each row's index among them (a dense rank; polars
    orders strings by their UTF-8 bytes, which is code point order, as numpy's sort).

    Values already sorted (a histogram table's users) are numbered by their runs in one pass;
    others by a hash lookup into the sorted distinct values (a rank of every row sorts them
    all: four times slower on 8 x 10^6 item ids)."""
    if values.is_sorted():
        change = values.ne_missing(values.shift(1))
        index = (change.cum_sum() - 1).to_numpy().astype(np.intp)
        return values.filter(change), index
    distinct = values.unique().sort()
    index = values.replace_strict(
        distinct, pl.int_range(distinct.len(), eager=True), return_dtype=pl.Int64
    )
    return distinct, index.to_numpy().astype(np.intp)


def _subcategory_parts(rows: pl.DataFrame) -> dict[tuple[str], pl.DataFrame]:
    """Each subcategory's rows (in their order): slices of ``rows`` when it is sorted by
    subcategory (a histogram table is), else ``partition_by``."""
    column = rows["subcategory"]
    if rows.height == 0:
        return {}
    if not column.is_sorted():
        return rows.partition_by("subcategory", as_dict=True, maintain_order=True)
    starts = np.flatnonzero(column.ne_missing(column.shift(1)).to_numpy())
    ends = np.append(starts[1:], rows.height)
    return {
        (column[int(a)],): rows.slice(int(a), int(b - a)) for a, b in zip(starts, ends, strict=True)
    }


def _concat(frames: list[pl.DataFrame], schema: dict[str, pl.DataType]) -> pl.DataFrame:
    return pl.concat(frames, rechunk=True) if frames else pl.DataFrame(schema=schema)
