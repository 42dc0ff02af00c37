"""Relative mollifiers: the baseline of Zamanlooy et al. (2025) built on Husain et al. (2020).

Husain et al. (2020) ("Local differential privacy for sampling", AISTATS) make a sampler
ε-locally private by releasing a sample from a distribution constrained to the *relative
mollifier* around a public prior ``q``,

    M = {Q in the simplex : e^{-ε/2} q <= Q <= e^{ε/2} q}   (element-wise).

Any two members of ``M`` satisfy ``Q(x) <= e^ε Q'(x)``, so sampling from any ``Q`` in ``M`` is
ε-LDP whatever the user's distribution ``p`` was. Zamanlooy, Diaz and Asoodeh (2025, "Locally
private sampling with public data", AISTATS; section on baselines) compare their minimax
samplers against the projection of ``p`` onto ``M``,

    p_hat = argmin_{Q in M} D_f(p || Q).

This package computes that projection, one module per concern:

* :mod:`~ldpsample.mollifier.kl` -- :func:`relative_mollifier_kl`, the exact KL projection
  ``clip(λ p, a, b)``, its normaliser ``λ`` found by a safeguarded Newton iteration on a
  piecewise-linear function (:mod:`~ldpsample.mollifier.kl_normaliser`), vectorised over users
  and exact once it reaches the root's piece, and the degenerate case where no normaliser
  exists handled in closed form;
* :mod:`~ldpsample.mollifier.tv` -- :func:`relative_mollifier_tv` / :func:`mollifier_tv_value`,
  the exact TV projection and its value ``max(E, D)``;
* :mod:`~ldpsample.mollifier.cvxpy_reference` -- :func:`mollifier_projection`, a cvxpy reference
  for any divergence carrying a ``cvxpy_objective`` (open-source solvers only), solved in
  stacked batches of users;
* :mod:`~ldpsample.mollifier.sparse` -- :func:`relative_mollifier_tv_sparse`,
  :func:`relative_mollifier_kl_sparse` and :func:`mollifier_divergences_sparse`: both
  projections and their TV and KL for sparse users (CSR histograms) in O(k log k) per user
  with k items, the items off a user's support handled in aggregate (:func:`sparse_mollifier`
  holds the per-(q, ε) sums, O(n log n) once);
* :mod:`~ldpsample.mollifier.bounds` -- :func:`mollifier_bounds`, the bounds of ``M``, and the
  validation and the fill onto sum 1 that every projection shares;
  :mod:`~ldpsample.mollifier.chunks` -- the row blocks of the closed forms.

The closed forms, their proofs and the degenerate cases are written up in ``docs/mollifier.md``.

Conventions shared by every function of the package:

* ``q`` is validated as one distribution and ``P`` as one or a batch of distributions over the
  same ``n`` items; both are then rescaled to sum to exactly 1 (they are accepted within
  :data:`ldpsample.SUM_TOLERANCE`, and ``M`` is empty for ε = 0 unless ``sum(q) == 1``).
* The upper bound is stored as ``min(e^{ε/2} q, 1)``: the same set ``M`` (no member exceeds 1),
  but finite for every finite ε.
* Coordinates with ``q_i = 0`` are forced to ``Q_i = 0``. If ``p`` puts mass there,
  ``KL(p || Q) = inf`` for every ``Q`` in ``M``; the KL projection is then defined as the
  minimiser of the finite part ``sum_{i: q_i > 0} p_i log(p_i / Q_i)`` (equivalently, the
  projection of ``p`` conditioned on ``supp(q)``; ``q`` itself if ``p`` has no mass on
  ``supp(q)``). The cvxpy reference minimises the same finite part.

This ``__init__`` only re-exports the public names. Imports between the modules run one way:
``bounds``, ``chunks`` and ``kl_normaliser`` use no sibling; ``kl`` uses those three; ``tv``
uses ``bounds`` and ``chunks``; ``cvxpy_reference`` uses ``bounds``; ``sparse`` uses ``bounds``
and ``kl_normaliser``.
"""

from ldpsample.mollifier.bounds import mollifier_bounds
from ldpsample.mollifier.cvxpy_reference import mollifier_projection
from ldpsample.mollifier.kl import relative_mollifier_kl
from ldpsample.mollifier.sparse import (
    SparseMollifier,
    SparseProjection,
    mollifier_divergences_sparse,
    relative_mollifier_kl_sparse,
    relative_mollifier_tv_sparse,
    sparse_mollifier,
)
from ldpsample.mollifier.tv import mollifier_tv_value, relative_mollifier_tv

__all__ = [
    "SparseMollifier",
    "SparseProjection",
    "mollifier_bounds",
    "mollifier_divergences_sparse",
    "mollifier_projection",
    "mollifier_tv_value",
    "relative_mollifier_kl",
    "relative_mollifier_kl_sparse",
    "relative_mollifier_tv",
    "relative_mollifier_tv_sparse",
    "sparse_mollifier",
]
