"""MovieLens-100K next-movie recommendation with the Wasserstein projection mechanism.

Set-up (:func:`prepare_movielens`, all splits drawn from the ``rng`` passed in):

* movies are split 80/20 into *train* (the input points ``x_i``) and *test* movies; users 80/20
  into *validation* users (public: they tune hyper-parameters and define the embedding) and
  *test* users (private: the reported numbers);
* movie embeddings are the top-``k`` (default 64) principal components of the validation users'
  rating matrix: with ``R`` (validation users x movies, 0 where unrated) centred per movie,
  ``R_c = U S V^T`` and movie ``i`` is embedded as row ``i`` of ``V_k S_k = R_c^T U_k`` (its
  loadings; computed from the eigenvectors of the users x users Gram matrix ``R_c R_c^T``);
* the outputs ``y_j`` are the ``m`` (default 250) test movies with the most ratings from
  validation users; the cost is the cosine distance ``1 - cos(e_i, e_j)`` (``1`` when either
  embedding is zero);
* a user's input is ``P_i ∝ rating`` on the train movies they rated; the user's *liked* set is
  the output movies they rated ``>= 4``. Users without train ratings or without a liked output
  are left out (their hit rate would be 0 for every method).

Evaluation (:func:`movielens_hit_rates`): Hit Rate@1 of a user is the probability that the
released movie is liked, computed exactly as ``sum_y Q(y) 1[y liked]`` -- the expectation of the
one-sample hit indicator, so no sampling noise is added. Methods, each ε-LDP:

* ``wpm`` -- WPM with a base measure over the ``m`` outputs of total mass ``scale``, whose shape is
  ``base_measure`` (:data:`BASE_MEASURES`): ``uniform`` (default, the paper's), ``kpm_genre``
  (the KPM's measure pushed to movies: a uniform genre, then a uniform output movie of it),
  ``popularity`` (proportional to 1 + the number of validation users who like the movie) or
  ``optimal`` (the shape of :func:`ldpsample.wasserstein.optimal_base_measure` for the cost at
  that ε, which minimises the worst-case transport cost, by mirror descent);
* ``kpm_genre`` -- the user's genre distribution (each rated train movie's weight split equally
  over its genres, restricted to genres that have an output movie) released by the KPM with a
  uniform base measure over those genres, then a uniform output movie of the released genre
  (post-processing);
* ``exponential`` -- the exponential mechanism with utility ``-sum_i P_i C[i, y]``;
* ``nonprivate`` -- reference at ε = ∞: each input movie's mass goes to its nearest output.

The total mass (``scale``) of the uniform base measures is chosen per ε on the validation users
from a geometric grid strictly inside ``[e^{-ε}, 1]`` (both ends force the uniform output).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl
from numpy.typing import NDArray

from ldpsample._types import FloatArray
from ldpsample._validation import check_epsilon, check_rng
from ldpsample.pipeline.progress import progress as _progress
from ldpsample.wasserstein import (
    optimal_base_measure,
    release_distributions,
    uniform_base_measure,
)

__all__ = [
    "BASE_MEASURES",
    "TEST_SCHEMA",
    "VALIDATION_SCHEMA",
    "MovieLensSetup",
    "base_measure_shape",
    "movielens_hit_rates",
    "prepare_movielens",
]

#: Columns of the validation table (one row per ε, method and candidate scale).
VALIDATION_SCHEMA: dict[str, pl.DataType] = {
    "epsilon": pl.Float64(),
    "method": pl.String(),
    "scale": pl.Float64(),
    "hit_rate": pl.Float64(),
    "n_users": pl.Int64(),
}

#: Columns of the test table (one row per ε and method).
TEST_SCHEMA: dict[str, pl.DataType] = {
    "epsilon": pl.Float64(),
    "method": pl.String(),
    "scale": pl.Float64(),
    "hit_rate_mean": pl.Float64(),
    "hit_rate_se": pl.Float64(),
    "n_users": pl.Int64(),
}

METHODS = ("wpm", "kpm_genre", "exponential")

#: Shapes of the WPM's base measure (``movielens_hit_rates(base_measure=...)``).
BASE_MEASURES = ("uniform", "kpm_genre", "popularity", "optimal")


@dataclass(frozen=True)
class MovieLensSetup:
    """Everything :func:`movielens_hit_rates` needs (see the module docstring).

    Attributes
    ----------
    train_movies, output_movies
        Movie ids of the input points (``n``) and output points (``m``).
    cost
        Cosine distances, shape ``(n, m)``.
    genres
        Genres that have at least one output movie (``G`` of them).
    train_genre_weights
        ``(n, G)``: each train movie's weight 1 split equally over its genres among ``genres``.
    output_genres
        ``(m, G)`` boolean membership of the output movies.
    validation_P, test_P
        Users' input distributions, shapes ``(users, n)``.
    validation_liked, test_liked
        Boolean ``(users, m)``: output movies the user rated ``>= like_threshold``.
    validation_users, test_users
        The user ids, in the order of the rows above.
    """

    train_movies: NDArray[np.int64]
    output_movies: NDArray[np.int64]
    cost: FloatArray
    genres: tuple[str, ...]
    train_genre_weights: FloatArray
    output_genres: NDArray[np.bool_]
    validation_P: FloatArray
    validation_liked: NDArray[np.bool_]
    validation_users: NDArray[np.int64]
    test_P: FloatArray
    test_liked: NDArray[np.bool_]
    test_users: NDArray[np.int64]


def _fraction(value: float, name: str) -> float:
    if not (0.0 < value < 1.0):
        raise ValueError(f"{name} must be in (0, 1), got {value!r}")
    return float(value)


def _cosine_distance(a: FloatArray, b: FloatArray) -> FloatArray:
    na = np.linalg.norm(a, axis=1)
    nb = np.linalg.norm(b, axis=1)
    sim = (a @ b.T) / np.where(na > 0, na, 1.0)[:, None] / np.where(nb > 0, nb, 1.0)[None, :]
    sim = np.where((na > 0)[:, None] & (nb > 0)[None, :], sim, 0.0)
    return np.clip(1.0 - sim, 0.0, 2.0)


def prepare_movielens(
    ratings: pl.DataFrame,
    movie_genres: pl.DataFrame,
    *,
    rng: np.random.Generator,
    n_components: int = 64,
    n_outputs: int = 250,
    train_fraction: float = 0.8,
    validation_fraction: float = 0.8,
    like_threshold: int = 4,
) -> MovieLensSetup:
    """Split, embed and build the inputs of the MovieLens experiment (module docstring).

    Parameters
    ----------
    ratings
        Columns ``user_id``, ``movie_id``, ``rating`` (from
        :func:`ldpsample.experiments.movielens.data.read_ml100k`).
    movie_genres
        Columns ``movie_id``, ``genre`` (one row per listed genre).
    rng
        Draws the movie and user splits.
    n_components, n_outputs
        Embedding dimension and number of output movies.
    train_fraction, validation_fraction
        Share of movies used as inputs and share of users used for validation.
    like_threshold
        Minimum rating of a liked movie.
    """
    gen = check_rng(rng)
    tf = _fraction(train_fraction, "train_fraction")
    vf = _fraction(validation_fraction, "validation_fraction")
    r = ratings.select(
        pl.col("user_id").cast(pl.Int64),
        pl.col("movie_id").cast(pl.Int64),
        pl.col("rating").cast(pl.Float64),
    )
    movies = np.unique(r["movie_id"].to_numpy())
    users = np.unique(r["user_id"].to_numpy())
    train_movies, test_movies = _split(gen, movies, tf)
    val_users, test_users = _split(gen, users, vf)
    R = _rating_matrix(r, users, movies)
    R_val = R[np.searchsorted(users, val_users)]  # the embedding sees validation users only
    embedding = _embedding(R_val, n_components)
    output_movies = _output_movies(R_val, movies, test_movies, n_outputs)
    train_cols = np.searchsorted(movies, train_movies)
    out_cols = np.searchsorted(movies, output_movies)
    cost = _cosine_distance(embedding[train_cols], embedding[out_cols])
    genres, train_genre_weights, output_genres = _genre_tables(
        movie_genres, train_movies, output_movies
    )
    val_P, val_liked, val_ids = _user_rows(
        R, users, val_users, train_cols, out_cols, like_threshold
    )
    test_P, test_liked, test_ids = _user_rows(
        R, users, test_users, train_cols, out_cols, like_threshold
    )
    return MovieLensSetup(
        train_movies=train_movies,
        output_movies=output_movies,
        cost=cost,
        genres=genres,
        train_genre_weights=train_genre_weights,
        output_genres=output_genres,
        validation_P=val_P,
        validation_liked=val_liked,
        validation_users=val_ids,
        test_P=test_P,
        test_liked=test_liked,
        test_users=test_ids,
    )


def _split(
    gen: np.random.Generator, ids: NDArray[np.int64], fraction: float
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """A random ``fraction`` of ``ids`` and the rest, each sorted (one permutation draw)."""
    perm = gen.permutation(ids)
    cut = round(fraction * ids.size)
    return np.sort(perm[:cut]), np.sort(perm[cut:])


def _rating_matrix(
    r: pl.DataFrame, users: NDArray[np.int64], movies: NDArray[np.int64]
) -> FloatArray:
    """Dense rating matrix users x movies, 0 where unrated (ML-100K: 943 x 1682)."""
    u_idx = np.searchsorted(users, r["user_id"].to_numpy())
    m_idx = np.searchsorted(movies, r["movie_id"].to_numpy())
    R = np.zeros((users.size, movies.size))
    R[u_idx, m_idx] = r["rating"].to_numpy()
    return R


def _embedding(R_val: FloatArray, n_components: int) -> FloatArray:
    """Movie embeddings ``V_k S_k = R_c^T U_k`` (movies x k), with ``U_k`` the top eigenvectors
    of the (users x users) Gram matrix of the per-movie centred ratings: the same loadings as an
    SVD (up to signs, to which cosine distances are blind), cheaper."""
    centred = R_val - R_val.mean(axis=0, keepdims=True)
    _, U = np.linalg.eigh(centred @ centred.T)
    k = min(int(n_components), U.shape[1])
    return centred.T @ U[:, ::-1][:, :k]


def _output_movies(
    R_val: FloatArray, movies: NDArray[np.int64], test_movies: NDArray[np.int64], n_outputs: int
) -> NDArray[np.int64]:
    """The ``n_outputs`` test movies most rated by validation users (ties: smaller id first),
    sorted."""
    test_cols = np.searchsorted(movies, test_movies)
    counts = (R_val[:, test_cols] > 0).sum(axis=0)
    order = np.lexsort((test_movies, -counts))
    m = min(int(n_outputs), test_movies.size)
    return np.sort(test_movies[order[:m]])


def _genre_tables(
    movie_genres: pl.DataFrame, train_movies: NDArray[np.int64], output_movies: NDArray[np.int64]
) -> tuple[tuple[str, ...], FloatArray, NDArray[np.bool_]]:
    """Genres present among the outputs, each train movie's weight split over them and the
    outputs' genre membership (see :class:`MovieLensSetup`)."""
    mg = movie_genres.select(pl.col("movie_id").cast(pl.Int64), pl.col("genre").cast(pl.String))
    out_mg = mg.filter(pl.col("movie_id").is_in(output_movies.tolist()))
    genres = tuple(sorted(set(out_mg["genre"].to_list())))
    g_index = {g: j for j, g in enumerate(genres)}

    def membership(ids: NDArray[np.int64]) -> NDArray[np.bool_]:
        sub = mg.filter(pl.col("movie_id").is_in(ids.tolist()) & pl.col("genre").is_in(genres))
        out = np.zeros((ids.size, len(genres)), dtype=bool)
        rows = np.searchsorted(ids, sub["movie_id"].to_numpy())
        cols = np.array([g_index[g] for g in sub["genre"].to_list()], dtype=np.int64)
        out[rows, cols] = True
        return out

    train_member = membership(train_movies)
    n_genres = train_member.sum(axis=1, keepdims=True)
    train_genre_weights = np.divide(
        train_member, n_genres, out=np.zeros(train_member.shape), where=n_genres > 0
    )
    return genres, train_genre_weights, membership(output_movies)


def _user_rows(
    R: FloatArray,
    users: NDArray[np.int64],
    ids: NDArray[np.int64],
    train_cols: NDArray[np.intp],
    out_cols: NDArray[np.intp],
    like_threshold: int,
) -> tuple[FloatArray, NDArray[np.bool_], NDArray[np.int64]]:
    """Inputs ``P`` (ratings on train movies, normalised), liked outputs and ids of the users
    ``ids`` that have a train rating and a liked output."""
    rows = R[np.searchsorted(users, ids)]
    weights = rows[:, train_cols]
    liked = rows[:, out_cols] >= like_threshold
    keep = (weights.sum(axis=1) > 0) & liked.any(axis=1)
    P = weights[keep] / weights[keep].sum(axis=1, keepdims=True)
    return P, liked[keep], ids[keep]


def scale_grid(epsilon: float, points: int) -> FloatArray:
    """``points`` geometric scales strictly inside ``[e^{-ε}, 1]`` (ε = 0 gives ``[1.0]``)."""
    eps = check_epsilon(epsilon)
    if eps == 0.0:
        return np.array([1.0])
    return np.geomspace(math.exp(-eps), 1.0, int(points) + 2)[1:-1]


def _genre_distribution(setup: MovieLensSetup, P: FloatArray) -> FloatArray:
    g = P @ setup.train_genre_weights
    total = g.sum(axis=1, keepdims=True)
    uniform = np.full(g.shape, 1.0 / g.shape[1])
    return np.where(total > 0, g / np.where(total > 0, total, 1.0), uniform)


def _genre_to_movies(setup: MovieLensSetup) -> FloatArray:
    """``(G, m)``: a uniform output movie of each genre."""
    member = setup.output_genres.T.astype(float)
    return member / member.sum(axis=1, keepdims=True)


def base_measure_shape(setup: MovieLensSetup, base_measure: str, epsilon: float) -> FloatArray:
    """The WPM base measure's shape over the ``m`` outputs (sums to 1; module docstring).

    Only public quantities enter: the outputs' genres, the validation users' likes, the cost.
    """
    m = setup.cost.shape[1]
    if base_measure == "uniform":
        return np.full(m, 1.0 / m)
    if base_measure == "kpm_genre":
        # ε -> 0 limit of kpm_genre: uniform genre, then uniform output movie of that genre.
        return np.full(len(setup.genres), 1.0 / len(setup.genres)) @ _genre_to_movies(setup)
    if base_measure == "popularity":
        weights = 1.0 + setup.validation_liked.sum(axis=0).astype(float)
        return weights / weights.sum()
    if base_measure == "optimal":
        mu = optimal_base_measure(setup.cost, epsilon=epsilon).mu
        return mu / mu.sum()
    raise ValueError(f"unknown base_measure {base_measure!r}; known: {BASE_MEASURES}")


def _output_distribution(
    setup: MovieLensSetup,
    P: FloatArray,
    method: str,
    eps: float,
    scale: float,
    wpm_method: str,
    eta: float | None,
    shape: FloatArray | None = None,
) -> FloatArray:
    """Output distributions over the ``m`` output movies: the base measure of ``method`` (the
    experiment's choice), released by :func:`ldpsample.wasserstein.release_distributions`."""
    m = setup.cost.shape[1]
    if method == "wpm":
        # shape None: the uniform base measure exactly.
        mu = uniform_base_measure(m, scale) if shape is None else scale * shape
        return release_distributions(
            P, method="wpm", epsilon=eps, cost=setup.cost, mu=mu, wpm_method=wpm_method, eta=eta
        )
    if method == "kpm_genre":
        mu = uniform_base_measure(len(setup.genres), scale)
        Qg = release_distributions(_genre_distribution(setup, P), method="kpm", epsilon=eps, mu=mu)
        return Qg @ _genre_to_movies(setup)
    if method in ("exponential", "nonprivate"):
        return release_distributions(P, method=method, epsilon=eps, cost=setup.cost)
    raise ValueError(f"unknown method {method!r}; known: {(*METHODS, 'nonprivate')}")


def _hit_rates(Q: FloatArray, liked: NDArray[np.bool_]) -> FloatArray:
    return (Q * liked).sum(axis=1)


def _subsample(n: int, limit: int | None, gen: np.random.Generator) -> NDArray[np.int64]:
    if limit is None or limit >= n:
        return np.arange(n)
    return np.sort(gen.choice(n, size=int(limit), replace=False))


def movielens_hit_rates(
    setup: MovieLensSetup,
    *,
    epsilons: Sequence[float],
    rng: np.random.Generator,
    methods: Sequence[str] = METHODS,
    n_scales: int = 8,
    wpm_method: str = "exact",
    eta: float | None = None,
    max_validation_users: int | None = None,
    max_test_users: int | None = None,
    include_nonprivate: bool = True,
    progress: bool = False,
    base_measure: str = "uniform",
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Hit Rate@1 of each method against ε (module docstring).

    Parameters
    ----------
    setup
        From :func:`prepare_movielens`.
    epsilons
        Privacy levels.
    rng
        Used only to subsample users when ``max_validation_users`` / ``max_test_users`` are set.
    methods
        Subset of ``("wpm", "kpm_genre", "exponential")``.
    n_scales
        Size of the geometric grid of base-measure scales tried on the validation users
        (:func:`scale_grid`); the exponential mechanism has no scale (``NaN``).
    wpm_method, eta
        Passed to :func:`ldpsample.wasserstein.wasserstein_projection` (``"exact"`` or
        ``"sinkhorn"`` with ``eta``).
    max_validation_users, max_test_users
        Optional caps (random subsets) to bound the running time.
    include_nonprivate
        Add the ε = ∞ reference row ``nonprivate`` (``epsilon = inf``) to both tables.

    progress
        Show a progress bar over the validation scales on stderr.
    base_measure
        Shape of the WPM's base measure, one of :data:`BASE_MEASURES` (default ``"uniform"``,
        the paper's; the other methods do not use it). Its total mass is the tuned ``scale``.

    Returns
    -------
    validation, test
        :data:`VALIDATION_SCHEMA` (mean hit rate of every candidate scale on validation users)
        and :data:`TEST_SCHEMA` (mean and standard error ``sd / sqrt(users)`` on test users at
        the scale chosen on validation), sorted by method and ε.
    """
    gen = check_rng(rng)
    eps_list = [check_epsilon(e) for e in epsilons]
    for method in methods:
        if method not in METHODS:
            raise ValueError(f"unknown method {method!r}; known: {METHODS}")
    if base_measure not in BASE_MEASURES:
        raise ValueError(f"unknown base_measure {base_measure!r}; known: {BASE_MEASURES}")
    v_idx = _subsample(setup.validation_P.shape[0], max_validation_users, gen)
    t_idx = _subsample(setup.test_P.shape[0], max_test_users, gen)
    Pv, Lv = setup.validation_P[v_idx], setup.validation_liked[v_idx]
    Pt, Lt = setup.test_P[t_idx], setup.test_liked[t_idx]

    val_rows: list[dict[str, object]] = []
    test_rows: list[dict[str, object]] = []
    for method in methods:
        for eps in eps_list:
            scales = [math.nan] if method == "exponential" else list(scale_grid(eps, n_scales))
            shape = (
                base_measure_shape(setup, base_measure, eps)
                if method == "wpm" and base_measure != "uniform"
                else None
            )
            release = functools.partial(
                _output_distribution,
                setup,
                method=method,
                eps=eps,
                wpm_method=wpm_method,
                eta=eta,
                shape=shape,
            )
            rows, best_scale = _validate_scales(
                release, Pv, Lv, scales, desc=f"{method} ε={eps:g} scales", progress=progress
            )
            val_rows += [{"epsilon": eps, "method": method, **row} for row in rows]
            Q = release(Pt, scale=best_scale)
            test_rows.append(_summary(eps, method, best_scale, _hit_rates(Q, Lt)))
    if include_nonprivate:
        hr = _hit_rates(_output_distribution(setup, Pv, "nonprivate", 0, 1, "", None), Lv)
        val_rows.append(
            {
                "epsilon": math.inf,
                "method": "nonprivate",
                "scale": math.nan,
                "hit_rate": float(hr.mean()),
                "n_users": Pv.shape[0],
            }
        )
        hr = _hit_rates(_output_distribution(setup, Pt, "nonprivate", 0, 1, "", None), Lt)
        test_rows.append(_summary(math.inf, "nonprivate", math.nan, hr))
    validation = pl.DataFrame(val_rows, schema=VALIDATION_SCHEMA).sort("method", "epsilon")
    test = pl.DataFrame(test_rows, schema=TEST_SCHEMA).sort("method", "epsilon")
    return validation, test


def _validate_scales(
    release: Callable[..., FloatArray],
    P: FloatArray,
    liked: NDArray[np.bool_],
    scales: list[float],
    *,
    desc: str,
    progress: bool,
) -> tuple[list[dict[str, object]], float]:
    """Mean validation hit rate of every candidate scale (rows without ε and method) and the
    best scale (the first of equal best)."""
    rows: list[dict[str, object]] = []
    best_scale, best_hr = scales[0], -math.inf
    for scale in _progress(scales, desc=desc, enabled=progress):
        hr = float(_hit_rates(release(P, scale=scale), liked).mean())
        rows.append({"scale": scale, "hit_rate": hr, "n_users": P.shape[0]})
        if hr > best_hr:
            best_scale, best_hr = scale, hr
    return rows, best_scale


def _summary(eps: float, method: str, scale: float, hr: FloatArray) -> dict[str, object]:
    n = hr.size
    se = float(hr.std(ddof=1) / math.sqrt(n)) if n > 1 else math.nan
    return {
        "epsilon": eps,
        "method": method,
        "scale": scale,
        "hit_rate_mean": float(hr.mean()),
        "hit_rate_se": se,
        "n_users": n,
    }
