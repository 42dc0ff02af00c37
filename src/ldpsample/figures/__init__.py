"""Figures of the pipeline, in one home: seaborn on matplotlib's non-interactive Agg backend.

Every plotting function takes a tidy polars frame (converted with ``to_pandas()``, which
seaborn 0.13 needs) and returns a matplotlib Figure; saving is left to
:func:`ldpsample.pipeline.io.write_figure` (atomic) and :func:`ldpsample.figures.style.close`
releases the figure. Modules:

* :mod:`~ldpsample.figures.style` -- the backend (set once, here, on import of the package), the
  label table and the shared axis helpers;
* :mod:`~ldpsample.figures.synthetic` -- Fig. 2 of the synthetic experiment;
* :mod:`~ldpsample.figures.theory` -- the optimal-risk curves of Theorem 1;
* :mod:`~ldpsample.figures.wpm` -- the Wasserstein projection mechanism stages (ring,
  MovieLens-100K, Gowalla);
* :mod:`~ldpsample.figures.real_data` -- the MovieLens and Avazu bar plots (Figs. 3, 4, 6-12);
* :mod:`~ldpsample.figures.events` -- one bar plot per attribute of an events dataset.
"""

# Imported first so that matplotlib's backend is Agg before any submodule imports pyplot.
from ldpsample.figures import style as style
