"""ldpsample: locally private sampling with public data.

The maths behind the pipeline, usable on its own. Every mechanism takes keyword-only privacy
parameters, validates its input, and never draws randomness it was not handed.

Submodules not imported here (heavier dependencies): :mod:`ldpsample.wasserstein` (the
Wasserstein projection mechanism), :mod:`ldpsample.datasets` (downloads and readers),
:mod:`ldpsample.experiments` (the pipeline's computations).
"""

from ldpsample._validation import (
    SUM_TOLERANCE,
    check_distribution,
    check_distributions,
    check_epsilon,
    normalize,
)
from ldpsample.audit import check_kernel, preserves_prior, realized_epsilon, worst_case_divergence
from ldpsample.baselines import linear_minimax, nonlinear_minimax, randomized_response
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
from ldpsample.minimax import (
    MinimaxKernel,
    apply_minimax,
    binary_kernel,
    minimax_coefficients,
    minimax_kernel,
    minimax_risk,
)
from ldpsample.mollifier import (
    mollifier_bounds,
    mollifier_projection,
    mollifier_tv_value,
    relative_mollifier_kl,
    relative_mollifier_tv,
)
from ldpsample.sampling import release_minimax, sample_categorical

__version__ = "0.1.0"

__all__ = [
    "CHI2",
    "DIVERGENCES",
    "HELLINGER",
    "KL",
    "SUM_TOLERANCE",
    "TV",
    "Divergence",
    "MinimaxKernel",
    "__version__",
    "apply_minimax",
    "binary_kernel",
    "check_distribution",
    "check_distributions",
    "check_epsilon",
    "check_kernel",
    "f_divergence",
    "get_divergence",
    "kl_divergence",
    "linear_minimax",
    "minimax_coefficients",
    "minimax_kernel",
    "minimax_risk",
    "mollifier_bounds",
    "mollifier_projection",
    "mollifier_tv_value",
    "nonlinear_minimax",
    "normalize",
    "point_mass_divergence",
    "preserves_prior",
    "randomized_response",
    "realized_epsilon",
    "relative_mollifier_kl",
    "relative_mollifier_tv",
    "release_minimax",
    "sample_categorical",
    "tv_distance",
    "worst_case_divergence",
]
