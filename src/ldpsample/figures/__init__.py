"""Figures of the pipeline, in one home: seaborn on matplotlib's non-interactive Agg backend.

Uses: its own modules (figures.style on import).

Every plotting function takes a tidy polars frame (converted with ``to_pandas()`` where seaborn
0.13 draws it) and returns a matplotlib Figure. The grouped bars of the events and Avazu figures
are plain matplotlib (:func:`~ldpsample.figures.style.subcategory_bars`); the events module
imports seaborn for its trade-off lines, while :mod:`~ldpsample.figures.real_data` and
:mod:`~ldpsample.figures.style` do not (seaborn's import costs a figure job more than drawing a
small bar figure); saving is left to
:func:`ldpsample.pipeline.io.write_figure` (atomic) and :func:`ldpsample.figures.style.close`
releases the figure. Modules:

* :mod:`~ldpsample.figures.style` -- the backend (set once, here, on import of the package), the
  label table and the shared axis helpers;
* :mod:`~ldpsample.figures.synthetic` -- Fig. 2 of the synthetic experiment;
* :mod:`~ldpsample.figures.theory` -- the optimal-risk curves of Theorem 1;
* :mod:`~ldpsample.figures.wpm` -- the Wasserstein projection mechanism stages (ring,
  MovieLens-100K, Gowalla);
* :mod:`~ldpsample.figures.real_data` -- the real-data worst-case tables as bars, and the Avazu
  bar plots (Figs. 3, 6-11);
* :mod:`~ldpsample.figures.movielens` -- the MovieLens bar plots (Figs. 4, 12);
* :mod:`~ldpsample.figures.events` -- one bar plot per attribute of an events dataset;
* :mod:`~ldpsample.figures.estimate` -- a publication's estimates with their intervals
  (``ldpsample estimate --figure``).
"""

# Imported first so that matplotlib's backend is Agg before any submodule imports pyplot.
from ldpsample.figures import style as style
