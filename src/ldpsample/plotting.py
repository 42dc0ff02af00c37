"""Former home of the figures, kept as a thin re-export: use :mod:`ldpsample.figures`.

The MovieLens/Avazu and events figures still import their helpers from here until they move
into :mod:`ldpsample.figures` too.
"""

from __future__ import annotations

from ldpsample.figures.style import close, epsilon_text, label_axes
from ldpsample.figures.synthetic import plot_synthetic
from ldpsample.figures.theory import plot_risk_curves

__all__ = ["close", "epsilon_text", "label_axes", "plot_risk_curves", "plot_synthetic"]
