"""The cvxpy reference projection onto the relative mollifier, for any divergence.

Holds :func:`mollifier_projection` (stacked batches of users, one convex program per batch) with
its option checks (``_check_projection_options``), the solver ladder it tries
(``_attempts``: the preference lists and the tight-then-default Clarabel settings) and the
solve of one batch with its status and constraint-violation checks (``_solve_batch``). cvxpy is
imported only when a projection runs (it is slow to import).

Uses the sibling module :mod:`~ldpsample.mollifier.bounds`, :mod:`ldpsample.divergences`
and cvxpy.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ldpsample._types import FloatArray
from ldpsample.divergences import TV, Divergence, DivergenceLike, get_divergence
from ldpsample.mollifier.bounds import _bounds, _fill_to_one, _finish, _prepare

__all__ = ["mollifier_projection"]

#: Solvers tried in order by :func:`mollifier_projection` when ``solver=None``.
_PREFERRED_CONIC = ("CLARABEL", "SCS")
_PREFERRED_LP = ("HIGHS", "CLARABEL", "SCS")

#: Clarabel settings tried first by :func:`mollifier_projection` unless ``solver_options`` is
#: given: tighter than the defaults (1e-8) because the objective of a batch is a sum over users.
#: Where Clarabel stalls before reaching them (status ``optimal_inaccurate``), the solve is
#: repeated with Clarabel's defaults.
_CLARABEL_TIGHT: dict[str, Any] = {
    "tol_gap_abs": 1e-9,
    "tol_gap_rel": 1e-9,
    "tol_feas": 1e-9,
    "static_regularization_constant": 1e-10,
}


def _attempts(
    solver: object, solver_options: Mapping[str, Any] | None, is_lp: bool, installed: list[str]
) -> list[tuple[str, Mapping[str, Any] | None]]:
    """The ``(solver, options)`` pairs :func:`mollifier_projection` tries, in order."""
    if solver is None:
        preferred = _PREFERRED_LP if is_lp else _PREFERRED_CONIC
        names = [s for s in preferred if s in installed]
        if not names:
            raise RuntimeError(
                f"none of the open-source solvers {preferred} is installed (installed: {installed})"
            )
    elif not isinstance(solver, str):
        raise TypeError(f"solver must be a cvxpy solver name or None, got {solver!r}")
    else:
        names = [solver.upper()]
        if names[0] not in installed:
            raise ValueError(
                f"solver {solver!r} is not installed; installed: {', '.join(installed)}"
            )
    if solver_options is not None:
        return [(name, solver_options) for name in names]
    attempts: list[tuple[str, Mapping[str, Any] | None]] = []
    for name in names:
        if name == "CLARABEL":  # tight first; if it stalls there, Clarabel's own defaults
            attempts.append((name, _CLARABEL_TIGHT))
        attempts.append((name, None))
    return attempts


def mollifier_projection(
    P: ArrayLike,
    q: ArrayLike,
    *,
    epsilon: float,
    divergence: DivergenceLike = "kl",
    solver: str | None = None,
    batch_size: int = 32,
    solver_options: Mapping[str, Any] | None = None,
    tol: float = 1e-6,
) -> FloatArray:
    """Reference projection ``argmin_{Q in M} D_f(p || Q)`` for any divergence, with cvxpy.

    Solves the mollifier projection of Husain et al. (2020) -- the baseline of Zamanlooy et al.
    (2025) -- as a convex program, for every divergence whose :class:`ldpsample.Divergence`
    carries a ``cvxpy_objective`` (built-ins ``"tv"``, ``"kl"``, ``"chi2"``, ``"hellinger"``).
    Users are separable, so each batch of ``batch_size`` users is one stacked problem (one
    variable of shape ``(batch, n)``, objective averaged over the batch's users so that it stays
    O(1) whatever the batch size), compiled once per batch -- not one problem per user.

    Formulation. Coordinates with ``q_i = 0`` are fixed to 0 and left out of the variable; the
    objective is evaluated on the others (for KL, the finite part of the package docstring). The
    variable is the ratio ``R = Q / q`` with ``e^{-ε/2} <= R <= min(e^{ε/2}, 1 / q)``, and the
    builder receives the affine expression ``Q = q * R``: solver tolerances then bound relative
    errors of ``Q``, which matters for KL where ``p_i / Q_i`` can be large (with ``Q`` as the
    variable, a bound violated by 1e-9 could gain 1e-5 of objective).

    Solvers and checks. ``solver=None`` tries, in order, HiGHS, Clarabel, SCS for TV (an LP) and
    Clarabel, SCS otherwise. Clarabel first runs with gap and feasibility tolerances of 1e-9 and
    a static regularisation of 1e-10; when it stalls there (status ``optimal_inaccurate``) the
    batch is re-solved with Clarabel's defaults (1e-8) before moving on. A solve is accepted only
    if ``problem.status == "optimal"`` and the solution satisfies the bounds and the sum
    constraint within ``tol`` (absolute); otherwise the next attempt runs, and when none is left
    a ``RuntimeError`` names the batch, every solver tried and its status or error. Accepted
    solutions are cleaned of solver noise by clipping to the bounds and moving the residual sum
    onto the coordinates with slack (as in :func:`relative_mollifier_tv`), so the output lies in
    ``M`` exactly.

    Parameters
    ----------
    P
        User distributions, shape ``(users, n)`` or ``(n,)``.
    q
        Public prior, shape ``(n,)``.
    epsilon
        Privacy parameter ε >= 0 (keyword-only).
    divergence
        A built-in name or a :class:`ldpsample.Divergence` with ``cvxpy_objective``.
    solver
        A cvxpy solver name (case-insensitive), or None for the preference list above. Only the
        named solver is tried (Clarabel still with the tight-then-default ladder).
    batch_size
        Users per stacked problem.
    solver_options
        Keyword arguments for ``Problem.solve``, used for every attempt instead of the defaults
        described above.
    tol
        Largest accepted violation of the bounds or of the sum constraint before clean-up.

    Returns
    -------
    numpy.ndarray
        Projected distributions, same shape as ``P``.

    Raises
    ------
    TypeError, ValueError
        For invalid inputs, an unknown divergence, a divergence without ``cvxpy_objective``, or a
        solver that is not installed.
    RuntimeError
        If no solver returns an optimal, feasible solution for a batch; the message names the
        batch, the solver(s) and the status or error.
    """
    P2, q_arr, eps, was_1d = _prepare(P, q, epsilon)
    div = get_divergence(divergence)
    _check_projection_options(div, batch_size, tol, solver_options)

    import cvxpy as cp  # slow to import: only when the reference is used

    attempts = _attempts(solver, solver_options, div is TV, list(cp.installed_solvers()))
    lower, upper = _bounds(q_arr, eps)
    keep = q_arr > 0
    out = np.zeros_like(P2)
    if np.all(lower[keep] == upper[keep]):  # ε = 0 (or below float resolution): M = {q}
        out[:] = lower
        return _finish(_fill_to_one(out, lower, upper), was_1d)

    users = P2.shape[0]
    for batch, start in enumerate(range(0, users, batch_size)):
        stop = min(start + batch_size, users)
        solution, failures = _solve_batch(
            P2[start:stop][:, keep], q_arr[keep], lower[keep], upper[keep], div, attempts, tol
        )
        if solution is None:
            raise RuntimeError(
                f"mollifier_projection failed on batch {batch} (users {start}:{stop}, "
                f"divergence {div.name!r}): " + "; ".join(failures)
            )
        full = np.zeros((stop - start, q_arr.size))
        full[:, keep] = np.clip(solution, lower[keep], upper[keep])
        out[start:stop] = _fill_to_one(full, lower, upper)
    return _finish(out, was_1d)


def _check_projection_options(
    div: Divergence, batch_size: object, tol: object, solver_options: object
) -> None:
    """Boundary checks of :func:`mollifier_projection`'s options (``TypeError``/``ValueError``)."""
    if div.cvxpy_objective is None:
        raise ValueError(
            f"divergence {div.name!r} has no cvxpy_objective; pass one to "
            "Divergence.from_function(..., cvxpy_objective=...) to project with it"
        )
    if isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral):
        raise TypeError(f"batch_size must be an integer, got {batch_size!r}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size!r}")
    if isinstance(tol, bool) or not isinstance(tol, numbers.Real):
        raise TypeError(f"tol must be a real number, got {tol!r}")
    if not (0.0 < float(tol) < math.inf):
        raise ValueError(f"tol must be a finite number > 0, got {tol!r}")
    if solver_options is not None and not isinstance(solver_options, Mapping):
        raise TypeError(f"solver_options must be a mapping or None, got {solver_options!r}")


def _solve_batch(
    pb: FloatArray,
    q_k: FloatArray,
    lo_k: FloatArray,
    up_k: FloatArray,
    div: Divergence,
    attempts: list[tuple[str, Mapping[str, Any] | None]],
    tol: float,
) -> tuple[FloatArray | None, list[str]]:
    """One stacked cvxpy problem for a batch of users on the ``q > 0`` coordinates.

    Returns ``(Q, [])`` from the first attempt whose status is optimal and whose solution meets
    the bounds and the sum constraint within ``tol``, or ``(None, failures)`` with one message per
    attempt (status, solver error or violation).
    """
    import cvxpy as cp

    shape = pb.shape
    # Q = q * R with R in [e^{-ε/2}, min(e^{ε/2}, 1/q)]: the solver's tolerances then act on
    # relative errors of Q, which matters where p_i / Q_i (the KL gradient) is large.
    ratio = cp.Variable(shape, name="ratio")
    Q = cp.multiply(np.broadcast_to(q_k, shape), ratio)
    problem = cp.Problem(
        cp.Minimize(div.cvxpy_objective(pb, Q) / shape[0]),  # mean: O(1) for any batch
        [
            ratio >= np.broadcast_to(lo_k / q_k, shape),
            ratio <= np.broadcast_to(up_k / q_k, shape),
            cp.sum(Q, axis=1) == 1,
        ],
    )
    failures: list[str] = []
    for name, options in attempts:
        label = name if options is None else f"{name} {dict(options)}"
        try:
            with warnings.catch_warnings():
                # cvxpy warns on inaccurate solutions; the status is checked below.
                warnings.filterwarnings("ignore", message="Solution may be inaccurate")
                problem.solve(solver=name, **(options or {}))
        except cp.error.SolverError as exc:
            failures.append(f"{label}: solver error ({exc})")
            continue
        status = problem.status
        if status != cp.OPTIMAL or ratio.value is None:
            failures.append(f"{label}: status {status!r}")
            continue
        value = q_k * np.asarray(ratio.value, dtype=float)
        violation = max(
            float(np.max(lo_k - value)),
            float(np.max(value - up_k)),
            float(np.max(np.abs(value.sum(axis=1) - 1.0))),
        )
        if not violation <= tol:
            failures.append(
                f"{label}: status {status!r} but constraint violation {violation:.3g} > tol {tol:g}"
            )
            continue
        return value, []
    return None, failures
