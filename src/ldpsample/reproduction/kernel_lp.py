"""The minimax risk of Theorem 1 as a linear program, solved by HiGHS: an optimum that owes
nothing to the closed form or to Algorithm 1.

Theorem 1 (Zamanlooy, Diaz & Asoodeh, AISTATS 2025) states that, over all ε-LDP kernels ``K``
with ``qK = q``, the smallest worst case ``sup_p D_f(p || pK)`` is ``Γ_f(q, ε)``, with

    Γ_TV = (1 - q_min) / (e^ε q_min + 1 - q_min)

and the same optimal kernel for every f. By Lemma 1 the worst case of a kernel is
``max_i [K_ii f(1/K_ii) + (1 - K_ii) f(0)]``, decreasing in ``K_ii`` for every f, so the problem
is the linear program

    maximise  t
    subject to  t <= K_ii,  rows of K sum to 1,  qK = q,  K >= 0,
                m_j <= K_ij <= e^ε m_j   (every i, j: the column's ε-LDP ratio),

and ``Γ_TV = 1 - t*``, ``Γ_KL = -log t*``. (``max_i K_ij <= e^ε min_i K_ij`` holds exactly when
some ``m_j`` fits between them, which keeps the program at ``2 n^2`` inequalities instead of
``n^3``.)

**Symmetry reduction.** The feasible set is convex and invariant under every permutation of
items that leaves ``q`` unchanged (swapping items of equal mass, rows and columns together), and
the objective ``min_i K_ii`` is concave and invariant too. Averaging an optimal kernel over
those permutations therefore gives an optimal kernel that is constant on each block of equal
masses: one diagonal value per class, one off-diagonal value per pair of classes. The program
over such kernels has ``c^2`` unknowns for ``c`` distinct masses (2 for the theory stage's
priors, 1 for a uniform one) and the same optimum; ``reduce=False`` solves the full ``n^2``
program (the tests check that both agree).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from scipy.optimize import linprog

from ldpsample._types import FloatArray
from ldpsample._validation import check_distribution, check_epsilon

__all__ = ["KernelLP", "max_diagonal_lp", "minimax_kernel_lp"]

#: Largest violation of an LP constraint accepted after a solve.
LP_TOLERANCE = 1e-9


@dataclass(frozen=True)
class KernelLP:
    """The solved program of :func:`minimax_kernel_lp`.

    Attributes
    ----------
    min_diagonal
        ``t*``, the largest achievable smallest diagonal entry.
    kernel
        An optimal ``(n, n)`` kernel in the caller's order (block-constant when reduced).
    classes
        Number of distinct masses the program was written over (``n`` when not reduced).
    violation
        Largest constraint violation of ``kernel`` (rows, ``qK = q``, ε-LDP ratio, sign).
    unknowns, constraints
        Size of the program HiGHS solved: its variables (fixed ones included) and its
        inequality plus equality rows.
    iterations
        HiGHS's iteration count for the accepted solve (deterministic for a given input and
        HiGHS version).
    """

    min_diagonal: float
    kernel: FloatArray
    classes: int
    violation: float
    unknowns: int = 0
    constraints: int = 0
    iterations: int = 0

    @property
    def gamma_tv(self) -> float:
        """``Γ_TV = 1 - t*`` (Lemma 1: the worst case of total variation is ``1 - min K_ii``)."""
        return 1.0 - self.min_diagonal

    @property
    def gamma_kl(self) -> float:
        """``Γ_KL = -log t*`` (the point-mass worst case of KL, in nats)."""
        return -math.log(self.min_diagonal) if self.min_diagonal > 0 else math.inf


def _classes(q: FloatArray, reduce: bool) -> tuple[FloatArray, np.ndarray, np.ndarray]:
    """``(mass of each class, size of each class, class of each item)``."""
    if reduce:
        values, label, sizes = np.unique(q, return_inverse=True, return_counts=True)
        return values, sizes, label
    return q.copy(), np.ones(q.size, dtype=int), np.arange(q.size)


def minimax_kernel_lp(q: ArrayLike, *, epsilon: float, reduce: bool = True) -> KernelLP:
    """Solve the program above (HiGHS through :func:`scipy.optimize.linprog`).

    Parameters
    ----------
    q
        Public prior, shape ``(n,)``.
    epsilon
        Privacy parameter ε >= 0.
    reduce
        Solve over kernels constant on blocks of equal prior mass (exact, see the module
        docstring); False solves over all ``n x n`` kernels.

    Returns
    -------
    KernelLP

    Raises
    ------
    RuntimeError
        If HiGHS reports anything but an optimum, or the optimum violates a constraint by more
        than ``LP_TOLERANCE``.
    """
    eps = check_epsilon(epsilon)
    qa = check_distribution(q, name="q")
    qa = qa / qa.sum()
    kernel, violation, c, size = _solve(qa, eps, reduce, None)
    return KernelLP(
        min_diagonal=float(np.diagonal(kernel).min()),
        kernel=kernel,
        classes=int(c),
        violation=violation,
        unknowns=size[0],
        constraints=size[1],
        iterations=size[2],
    )


def _sparse(rows: list[dict[int, float]], n_var: int) -> sp.csr_matrix:
    r = [i for i, row in enumerate(rows) for _ in row]
    cidx = [j for row in rows for j in row]
    v = [value for row in rows for value in row.values()]
    return sp.csr_matrix((v, (r, cidx)), shape=(len(rows), n_var))


def _violation(kernel: FloatArray, q: FloatArray, epsilon: float) -> float:
    """Largest violation of: K >= 0, rows sum to 1, qK = q, max_i K_ij <= e^ε min_i K_ij."""
    ldp = kernel.max(axis=0) - math.exp(epsilon) * kernel.min(axis=0)
    return float(
        max(
            -kernel.min(),
            np.abs(kernel.sum(axis=1) - 1).max(),
            np.abs(q @ kernel - q).max(),
            ldp.max(),
        )
    )


def _solve(
    qa: FloatArray, eps: float, reduce: bool, item: int | None
) -> tuple[FloatArray, float, int, tuple[int, int, int]]:
    """The program of the module docstring over kernels constant on blocks of equal mass:
    maximise ``t <= min_a d_a`` (``item`` None) or the diagonal entry of ``item``, which is then
    a class of its own (the program stays exact: average over the permutations that fix it).
    Returns ``(kernel, violation, classes, (unknowns, constraints, iterations))``."""
    mass, size, label = _classes(qa, reduce)
    if item is not None and size[label[item]] > 1:
        own = mass.size
        size = np.append(size, 1)
        size[label[item]] -= 1
        mass = np.append(mass, mass[label[item]])
        label = label.copy()
        label[item] = own
    c = mass.size
    bound = math.exp(eps)
    # Unknowns: d_a (c), o_ab (c * c; o_aa fixed at 0 when the class has one item), m_b (c), t.
    n_var = c + c * c + c + 1

    def d(a: int) -> int:
        return a

    def o(a: int, b: int) -> int:
        return c + a * c + b

    def m(b: int) -> int:
        return c + c * c + b

    t = n_var - 1
    # Entries of column class b: (variable, rows that hold it) -- d_b and the o_ab in use.
    entries = [
        [(d(b), 1)] + [(o(a, b), 1) for a in range(c) if a != b or size[b] > 1] for b in range(c)
    ]
    ub_rows: list[dict[int, float]] = []
    for b in range(c):
        for var, _ in entries[b]:
            ub_rows.append({m(b): 1.0, var: -1.0})  # m_b <= entry
            ub_rows.append({var: 1.0, m(b): -bound})  # entry <= e^ε m_b
    if item is None:
        ub_rows += [{t: 1.0, d(a): -1.0} for a in range(c)]  # t <= d_a
    eq_rows: list[dict[int, float]] = []
    eq_rhs: list[float] = []
    for a in range(c):  # a row of class a sums to 1
        row = {d(a): 1.0}
        for b in range(c):
            count = size[b] - 1 if a == b else size[b]
            if count:
                row[o(a, b)] = float(count)
        eq_rows.append(row)
        eq_rhs.append(1.0)
    for b in range(c):  # column of class b: sum_i q_i K_ib = q_b
        col = {d(b): mass[b]}
        for a in range(c):
            count = size[a] - 1 if a == b else size[a]
            if count:
                col[o(a, b)] = col.get(o(a, b), 0.0) + count * mass[a]
        eq_rows.append(col)
        eq_rhs.append(float(mass[b]))
    unused = [o(a, a) for a in range(c) if size[a] == 1]
    bounds = [(0.0, None)] * n_var
    for var in unused:
        bounds[var] = (0.0, 0.0)
    objective = np.zeros(n_var)
    objective[t if item is None else d(int(label[item]))] = -1.0
    # HiGHS's dual simplex first; its interior-point method where the simplex's optimum
    # violates a constraint beyond LP_TOLERANCE (a few ε near 9 on 100-item priors).
    for method in ("highs-ds", "highs-ipm"):
        res = linprog(
            objective,
            A_ub=_sparse(ub_rows, n_var),
            b_ub=np.zeros(len(ub_rows)),
            A_eq=_sparse(eq_rows, n_var),
            b_eq=np.asarray(eq_rhs),
            bounds=bounds,
            method=method,
        )
        if res.status != 0:
            raise RuntimeError(
                f"HiGHS did not solve the kernel LP for q={qa!r}, epsilon={eps!r}: {res.message}"
            )
        x = res.x
        kernel = np.empty((qa.size, qa.size))
        rows, cols = np.meshgrid(label, label, indexing="ij")
        kernel[:] = x[c + rows * c + cols]
        np.fill_diagonal(kernel, x[label])
        violation = _violation(kernel, qa, eps)
        if violation <= LP_TOLERANCE:
            break
    if violation > LP_TOLERANCE:
        raise RuntimeError(
            f"the kernel LP's optimum violates a constraint by {violation:.3g} "
            f"(q={qa!r}, epsilon={eps!r})"
        )
    return kernel, violation, int(c), (n_var, len(ub_rows) + len(eq_rows), int(res.nit))


def max_diagonal_lp(q: ArrayLike, *, epsilon: float, item: int) -> float:
    """``max K_ii`` for ``i = item`` over all ε-LDP kernels with ``qK = q`` (HiGHS; the same
    program as :func:`minimax_kernel_lp` with the objective ``K_ii``, the item a class of its
    own and the other items in blocks of equal mass).

    Lemma 3 of the AISTATS paper bounds it by ``e^ε q_i / (e^ε q_i + 1 - q_i)``; this optimum
    owes nothing to that formula.

    Raises
    ------
    ValueError
        If ``item`` is not an index of ``q``.
    RuntimeError
        As :func:`minimax_kernel_lp`.
    """
    eps = check_epsilon(epsilon)
    qa = check_distribution(q, name="q")
    qa = qa / qa.sum()
    if (
        isinstance(item, bool)
        or not isinstance(item, int | np.integer)
        or not (0 <= item < qa.size)
    ):
        raise ValueError(f"item must be an index of q (0 to {qa.size - 1}), got {item!r}")
    kernel, _, _, _ = _solve(qa, eps, True, int(item))
    return float(kernel[item, item])
