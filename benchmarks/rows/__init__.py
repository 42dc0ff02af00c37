"""The rows of ``benchmarks/run_all.py``, one module per subject; importing a module registers
its rows in :data:`runner.registry.ROWS` (``@register(name, subject)``), and ``run_all.py``
imports them all and runs them in its ``ORDER``.

* :mod:`rows.inputs`: the seeded users and priors the library rows share, and ε;
* :mod:`rows.kernels`: ``apply-4000``, ``dense-2000``, ``dense-10000``, ``apply-1e6x100``,
  ``audit-1e6``;
* :mod:`rows.kernel_lp`: ``kernel-lp`` (the closed form against the LP, the AISTATS cost claim);
* :mod:`rows.sparse_catalogue`: ``sparse-1e6x1e5`` (and the catalogue ``rows.events_sparse``
  evaluates);
* :mod:`rows.mollifier`: ``kl-brentq``, ``mollifier-1e5x100``;
* :mod:`rows.avazu`: ``avazu``, ``avazu-stage``;
* :mod:`rows.wpm`: ``wpm-exact``;
* :mod:`rows.events_scale`: ``events-scale-1e7``, ``events-scale-1e8``, ``events-scale-4e8``,
  ``events-metrics-threads``;
* :mod:`rows.events_sparse`: ``events-sparse-1e6x1e5``;
* :mod:`rows.test_command`: ``test-command``.

A row module imports the standard library, numpy, :mod:`runner` and :mod:`rows.inputs` (or
another row module's input builder) at its top. ``ldpsample``, ``polars``, ``cvxpy``, ``yaml``
and the ``benchmarks/bench_*.py`` scripts are imported inside the row's functions, on purpose:
every child process imports every row module to find its row, and the memory probe's peak
(``ru_maxrss`` of a process running the subject alone) includes the imports, so a row must load
only what its own subject uses, and ``--only X`` loads nothing of the other rows.
"""
