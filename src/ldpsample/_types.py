"""Type aliases shared by the library's modules (one declaration instead of one per module)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["FloatArray", "IntArray"]

#: A float64 array: distributions, kernels, divergences.
FloatArray = NDArray[np.float64]
#: An int64 array: item indices, counts.
IntArray = NDArray[np.int64]
