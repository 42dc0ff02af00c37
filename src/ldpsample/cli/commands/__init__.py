"""What each ``ldpsample`` sub-command runs: ``commands/<command>.py`` defines ``run(args)`` and
imports what it needs at module level. :func:`ldpsample.cli.main` imports one of them by name
(:func:`ldpsample.cli.load_command`), for the sub-command that runs, so ``--help`` and
``ldpsample show <spec>`` work in the core install (numpy and scipy). A part that needs more
than the rest of its command is a module of its own, imported by name when it is used:
``show_ledger`` (polars: the ``events`` extra) and ``estimate_figure`` (matplotlib)."""
