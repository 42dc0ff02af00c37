"""The rows of ``benchmarks/run_all.py``, one module per subject, and their one list,
:data:`ORDER`. Importing a module registers its rows in :data:`runner.registry.ROWS`
(``@register(name, subject)``); ``run_all.py`` imports every module of this package and runs
the rows in the order of :data:`ORDER`, which must name each registered row once
(``run_all.py --list`` prints them with their modules).

Modules without rows hold what several rows share: :mod:`rows.inputs` (the seeded users and
priors of the library rows, and ε), :mod:`rows.steps` (the Avazu-shaped steps, each in a
process of its own) and :mod:`rows.scale_table` (the generated events table and its Snakemake
run).

A row module imports the standard library, numpy, :mod:`runner` and these shared modules (or
another row module's input builder) at its top. ``ldpsample``, ``polars``, ``scipy``,
``cvxpy`` and ``yaml`` are imported inside the row's functions, on purpose: every child process
imports every row module to find its row, and the memory probe's peak (``ru_maxrss`` of a
process running the subject alone) includes the imports, so a row must load only what its own
subject uses, and ``--only X`` loads nothing of the other rows.
"""

#: Every row, in the order the table runs and prints them.
ORDER: tuple[str, ...] = (
    "apply-4000",
    "kl-brentq",
    "dense-2000",
    "dense-10000",
    "dense-sizes",
    "kernel-lp",
    "apply-1e6x100",
    "apply-methods-1e6x100",
    "audit-1e6",
    "sparse-1e6x1e5",
    "sparse-baselines-1e6x1e5",
    "mollifier-1e5x100",
    "avazu",
    "wpm-exact",
    "wpm-solvers",
    "wpm-base-measure",
    "wpm-small-epsilon",
    "wpm-small-epsilon-limit",
    "avazu-stage",
    "events-avazu",
    "events-scale-1e7",
    "events-scale-1e8",
    "events-scale-4e8",
    "events-metrics-threads",
    "events-sparse-1e6x1e5",
    "estimate-1e6x1e5",
    "publish-joint-20x1e4",
    "release-modes",
    "events-sparse-workflow",
    "test-command",
)
#: Rows left out of a ``--quick`` run unless named with ``--only``: ``test-command`` has no
#: small size, the ``wpm-small-epsilon`` and ``release-modes`` rows read the real data copies
#: (``--data``).
NOT_QUICK = ("test-command", "wpm-small-epsilon", "wpm-small-epsilon-limit", "release-modes")
