"""The machinery of ``benchmarks/run_all.py``, apart from the rows it runs.

* :mod:`runner.measure`: the records a row returns (:class:`~runner.measure.Row`,
  :class:`~runner.measure.Measure`), ``best_time`` and the timed child processes whose peak
  memory the kernel reports (``wait4``);
* :mod:`runner.registry`: the one table of rows (``ROWS``, filled by ``register``) and its order;
* :mod:`runner.baseline`: the library as of a git revision (``--baseline``);
* :mod:`runner.report`: the machine line, the ratios and the markdown table.

These modules import the standard library and numpy, and each other (``registry`` imports
``measure``); never ``ldpsample``, never ``rows``.
"""
