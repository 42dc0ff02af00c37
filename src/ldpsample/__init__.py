"""ldpsample: locally private sampling with public data.

The maths behind the pipeline, usable on its own. Every mechanism takes keyword-only privacy
parameters, validates its input, and never draws randomness it was not handed.

Submodules not imported here (heavier dependencies): :mod:`ldpsample.wasserstein` (the
Wasserstein projection mechanism), :mod:`ldpsample.datasets` (downloads and readers),
:mod:`ldpsample.experiments` (the pipeline's computations).

The names below are loaded on first use (PEP 562), so importing a light submodule such as
:mod:`ldpsample.datasets.registry` or :mod:`ldpsample.pipeline.config_check` (which the
workflow does at parse time) does not import numpy and scipy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ldpsample._lazy import lazy_exports

__version__ = "0.1.0"

#: Public name -> module defining it.
_EXPORTS: dict[str, str] = {
    "CHI2": "ldpsample.divergences",
    "DIVERGENCES": "ldpsample.divergences",
    "Divergence": "ldpsample.divergences",
    "HELLINGER": "ldpsample.divergences",
    "KL": "ldpsample.divergences",
    "MinimaxKernel": "ldpsample.minimax",
    "SUM_TOLERANCE": "ldpsample._validation",
    "SparseMollifier": "ldpsample.mollifier.sparse",
    "SparseProjection": "ldpsample.mollifier.sparse",
    "TV": "ldpsample.divergences",
    "apply_minimax": "ldpsample.minimax",
    "binary_kernel": "ldpsample.minimax",
    "check_distribution": "ldpsample._validation",
    "check_distributions": "ldpsample._validation",
    "check_epsilon": "ldpsample._validation",
    "check_kernel": "ldpsample.audit",
    "epsilon_lower_bound": "ldpsample.empirical",
    "f_divergence": "ldpsample.divergences",
    "get_divergence": "ldpsample.divergences",
    "inverse_cdf": "ldpsample.sampling",
    "inverse_cdf_sorted": "ldpsample.minimax_sparse",
    "kl_divergence": "ldpsample.divergences",
    "linear_minimax": "ldpsample.baselines",
    "minimax_coefficients": "ldpsample.minimax",
    "minimax_divergences_sparse": "ldpsample.minimax_sparse",
    "minimax_kernel": "ldpsample.minimax",
    "minimax_realized_epsilon": "ldpsample.audit",
    "minimax_risk": "ldpsample.minimax",
    "mollifier_bounds": "ldpsample.mollifier.bounds",
    "mollifier_divergences_sparse": "ldpsample.mollifier.sparse",
    "mollifier_projection": "ldpsample.mollifier.cvxpy_reference",
    "mollifier_tv_value": "ldpsample.mollifier.tv",
    "nonlinear_minimax": "ldpsample.baselines",
    "normalize": "ldpsample._validation",
    "point_mass_divergence": "ldpsample.divergences",
    "preserves_prior": "ldpsample.audit",
    "randomized_response": "ldpsample.baselines",
    "randomized_response_divergences_sparse": "ldpsample.baselines",
    "randomized_response_sparse": "ldpsample.baselines",
    "realized_epsilon": "ldpsample.audit",
    "relative_mollifier_kl": "ldpsample.mollifier.kl",
    "relative_mollifier_kl_sparse": "ldpsample.mollifier.sparse",
    "relative_mollifier_tv": "ldpsample.mollifier.tv",
    "relative_mollifier_tv_sparse": "ldpsample.mollifier.sparse",
    "release_minimax": "ldpsample.sampling",
    "sample_categorical": "ldpsample.sampling",
    "sample_minimax_sparse": "ldpsample.minimax_sparse",
    "sparse_mollifier": "ldpsample.mollifier.sparse",
    "tv_distance": "ldpsample.divergences",
    "worst_case_divergence": "ldpsample.audit",
}

__all__ = [
    "CHI2",
    "DIVERGENCES",
    "HELLINGER",
    "KL",
    "SUM_TOLERANCE",
    "TV",
    "Divergence",
    "MinimaxKernel",
    "SparseMollifier",
    "SparseProjection",
    "__version__",
    "apply_minimax",
    "binary_kernel",
    "check_distribution",
    "check_distributions",
    "check_epsilon",
    "check_kernel",
    "epsilon_lower_bound",
    "f_divergence",
    "get_divergence",
    "inverse_cdf",
    "inverse_cdf_sorted",
    "kl_divergence",
    "linear_minimax",
    "minimax_coefficients",
    "minimax_divergences_sparse",
    "minimax_kernel",
    "minimax_realized_epsilon",
    "minimax_risk",
    "mollifier_bounds",
    "mollifier_divergences_sparse",
    "mollifier_projection",
    "mollifier_tv_value",
    "nonlinear_minimax",
    "normalize",
    "point_mass_divergence",
    "preserves_prior",
    "randomized_response",
    "randomized_response_divergences_sparse",
    "randomized_response_sparse",
    "realized_epsilon",
    "relative_mollifier_kl",
    "relative_mollifier_kl_sparse",
    "relative_mollifier_tv",
    "relative_mollifier_tv_sparse",
    "release_minimax",
    "sample_categorical",
    "sample_minimax_sparse",
    "sparse_mollifier",
    "tv_distance",
    "worst_case_divergence",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())


if TYPE_CHECKING:  # static analysers see the eager imports
    from ldpsample._validation import (
        SUM_TOLERANCE,
        check_distribution,
        check_distributions,
        check_epsilon,
        normalize,
    )
    from ldpsample.audit import (
        check_kernel,
        minimax_realized_epsilon,
        preserves_prior,
        realized_epsilon,
        worst_case_divergence,
    )
    from ldpsample.baselines import (
        linear_minimax,
        nonlinear_minimax,
        randomized_response,
        randomized_response_divergences_sparse,
        randomized_response_sparse,
    )
    from ldpsample.divergences import (
        CHI2,
        DIVERGENCES,
        HELLINGER,
        KL,
        TV,
        Divergence,
        f_divergence,
        get_divergence,
        kl_divergence,
        point_mass_divergence,
        tv_distance,
    )
    from ldpsample.empirical import epsilon_lower_bound
    from ldpsample.minimax import (
        MinimaxKernel,
        apply_minimax,
        binary_kernel,
        minimax_coefficients,
        minimax_kernel,
        minimax_risk,
    )
    from ldpsample.minimax_sparse import (
        inverse_cdf_sorted,
        minimax_divergences_sparse,
        sample_minimax_sparse,
    )
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
    from ldpsample.sampling import inverse_cdf, release_minimax, sample_categorical
