"""Figures of the pipeline, in one home: seaborn on matplotlib's non-interactive Agg backend.

Every plotting function takes a tidy polars frame (converted with ``to_pandas()`` where seaborn
0.13 draws it) and returns a matplotlib Figure. The events figures (bars and trade-off lines)
and the Avazu bars are plain matplotlib (:func:`~ldpsample.figures.style.subcategory_bars`):
:mod:`~ldpsample.figures.events`, :mod:`~ldpsample.figures.real_data` and
:mod:`~ldpsample.figures.style` do not import seaborn (its import costs a figure job more than
drawing a small figure). Every method has one colour in every figure
(:data:`~ldpsample.figures.style.METHOD_COLORS`); saving is left to
:func:`ldpsample.pipeline.io.write_figure` (atomic) and :func:`ldpsample.figures.style.close`
releases the figure. Modules:

* :mod:`~ldpsample.figures.style` -- the backend (set once, here, on import of the package), the
  label table, the palette and the shared axis helpers;
* :mod:`~ldpsample.figures.synthetic` -- Fig. 2 of the synthetic experiment;
* :mod:`~ldpsample.figures.theory` -- the optimal-risk curves of Theorem 1;
* :mod:`~ldpsample.figures.wpm` -- the Wasserstein projection mechanism stages (ring,
  MovieLens-100K, Gowalla);
* :mod:`~ldpsample.figures.real_data` -- the real-data worst-case tables as bars, and the Avazu
  bar plots (Figs. 3, 6-11);
* :mod:`~ldpsample.figures.movielens` -- the MovieLens bar plots (Figs. 4, 12);
* :mod:`~ldpsample.figures.events` -- one bar plot per attribute of an events dataset (TV and
  KL) and its trade-off figure (a block of panels per attribute);
* :mod:`~ldpsample.figures.estimate` -- a publication's estimates with their intervals
  (``ldpsample estimate --figure``).
"""

# Imported first so that matplotlib's backend is Agg before any submodule imports pyplot.
from ldpsample.figures import style as style
