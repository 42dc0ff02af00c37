"""What each ``ldpsample`` sub-command runs: ``commands/<command>.py`` defines ``run(args)`` and
imports what it needs at module level. :func:`ldpsample.cli.main` imports one of them by name,
for the sub-command that runs, so ``--help`` and ``ldpsample show <spec>`` work in the core
install (numpy and scipy) while ``estimate`` loads polars and matplotlib."""
