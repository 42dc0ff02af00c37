"""Drawing the private samples: one item per user from its release distribution."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ldpsample._validation import check_distributions, check_rng
from ldpsample.minimax import MinimaxKernel, apply_minimax

__all__ = ["inverse_cdf", "release_minimax", "sample_categorical"]


def sample_categorical(
    probs: ArrayLike, *, rng: np.random.Generator, check_input: bool = True
) -> NDArray[np.intp] | np.intp:
    """Draw one item index per row of ``probs`` by inverse CDF, vectorised over rows.

    One uniform ``u`` per row (``rng.random(users)``, so the same seed gives the same draws) is
    compared with the row's cumulative sums: the index is the number of cumulative sums ``<= u``.
    Items of probability 0 are never drawn; when rounding leaves the last cumulative sum below
    ``u``, the last item of positive probability is returned.

    Parameters
    ----------
    probs
        Distributions, shape ``(users, n)``, or one distribution of shape ``(n,)``.
    rng
        A :class:`numpy.random.Generator`.
    check_input
        Validate ``probs`` (finite, non-negative, rows summing to 1). ``False`` skips that pass
        for distributions the caller has built, e.g. :func:`ldpsample.apply_minimax`'s output;
        the draws are the same.

    Returns
    -------
    numpy.ndarray
        Integer indices in ``[0, n)``, of shape ``(users,)``; a single integer for 1-D ``probs``.
    """
    generator = check_rng(rng)
    P = check_distributions(probs, name="probs", check_values=check_input)
    squeeze = P.ndim == 1
    P2 = P[None, :] if squeeze else P
    index = _inverse_cdf(P2, generator.random(P2.shape[0]))
    return index[0] if squeeze else index


def _inverse_cdf(P2: NDArray[np.float64], u: NDArray[np.float64]) -> NDArray[np.intp]:
    """Row ``i``'s item for uniform ``u[i]``: the number of its cumulative sums ``<= u[i]``
    (the last item of positive probability when rounding leaves the last sum below ``u``)."""
    cdf = np.cumsum(P2, axis=1)
    index = np.count_nonzero(cdf <= u[:, None], axis=1)
    overflow = np.flatnonzero(index >= P2.shape[1])
    if overflow.size:
        positive = P2[overflow] > 0
        index[overflow] = P2.shape[1] - 1 - np.argmax(positive[:, ::-1], axis=1)
    return index


def inverse_cdf(
    probs: ArrayLike, uniforms: ArrayLike, *, check_input: bool = True
) -> NDArray[np.intp]:
    """One item index per row of ``probs`` for caller-supplied uniforms, by inverse CDF.

    The draw of :func:`sample_categorical` with the randomness made explicit: row ``i`` gets
    the number of its cumulative sums ``<= uniforms[i]`` (items of probability 0 are never
    drawn). A release whose randomness must come from elsewhere than a
    :class:`numpy.random.Generator` (the operating system's secure source, or uniforms derived
    per user by SHA-256: :mod:`ldpsample.publish.randomness`) draws through this function.

    Parameters
    ----------
    probs
        Distributions, shape ``(users, n)``.
    uniforms
        Shape ``(users,)``, each in ``[0, 1)``.
    check_input
        Validate ``probs`` (as :func:`sample_categorical`).

    Returns
    -------
    numpy.ndarray
        Integer indices in ``[0, n)``, shape ``(users,)``.

    Raises
    ------
    ValueError
        If ``probs`` is not 2-D, ``uniforms`` has another length, or a uniform is outside
        ``[0, 1)``.
    """
    P = check_distributions(probs, name="probs", check_values=check_input)
    u = np.asarray(uniforms, dtype=float)
    if P.ndim != 2 or u.shape != (P.shape[0],):
        raise ValueError(
            f"probs must be (users, n) and uniforms (users,), got {P.shape} and {u.shape}"
        )
    if u.size and not (u.min() >= 0.0 and u.max() < 1.0):
        raise ValueError(f"uniforms must lie in [0, 1), got values in [{u.min()!r}, {u.max()!r}]")
    return _inverse_cdf(P, u)


def release_minimax(
    P: ArrayLike,
    q: ArrayLike | MinimaxKernel,
    *,
    epsilon: float | None = None,
    rng: np.random.Generator,
    threads: int | None = None,
) -> NDArray[np.intp] | np.intp:
    """Each user's ε-LDP sample from the minimax-optimal mechanism with public prior ``q``.

    Equivalent to
    ``sample_categorical(apply_minimax(P, q, epsilon=epsilon, threads=threads), rng=rng)``.

    Parameters
    ----------
    P
        Private distributions, shape ``(users, n)`` or ``(n,)``.
    q
        Public prior of shape ``(n,)`` or a precomputed :class:`MinimaxKernel`.
    epsilon
        Privacy parameter ε >= 0 (optional with a :class:`MinimaxKernel`).
    rng
        A :class:`numpy.random.Generator`.
    threads
        Most threads :func:`ldpsample.apply_minimax` uses for large inputs
        (``users * n >= 2**20``): None (default) uses up to ``min(os.cpu_count(), 8)``; pass the
        allocation's core count on a cluster node (e.g. a Snakemake rule's ``threads``); 1 runs
        in this thread with no thread pool. The draws do not depend on it.

    Returns
    -------
    numpy.ndarray
        One released item index per user (a single integer for 1-D ``P``).

    Raises
    ------
    TypeError, ValueError
        Invalid ``P``, ``q``, ``epsilon``, ``rng`` or ``threads`` (see
        :func:`ldpsample.apply_minimax`).
    """
    generator = check_rng(rng)
    released = apply_minimax(P, q, epsilon=epsilon, threads=threads)
    return sample_categorical(released, rng=generator)
