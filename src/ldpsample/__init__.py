"""ldpsample: locally private sampling with public data.

The maths behind the pipeline, usable on its own. Every mechanism takes keyword-only privacy
parameters, validates its input, and never draws randomness it was not handed.
"""

from ldpsample._validation import (
    SUM_TOLERANCE,
    check_distribution,
    check_distributions,
    check_epsilon,
    normalize,
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

__version__ = "0.1.0"

__all__ = [
    "CHI2",
    "DIVERGENCES",
    "HELLINGER",
    "KL",
    "SUM_TOLERANCE",
    "TV",
    "Divergence",
    "__version__",
    "check_distribution",
    "check_distributions",
    "check_epsilon",
    "f_divergence",
    "get_divergence",
    "kl_divergence",
    "normalize",
    "point_mass_divergence",
    "tv_distance",
]
