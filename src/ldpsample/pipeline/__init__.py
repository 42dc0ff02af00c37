"""Pipeline glue: what the Snakemake workflow needs beside the maths.

* :mod:`~ldpsample.pipeline.config_check` -- the config check (finite numbers, the JSON schema,
  the cross-field rules); light, so the workflow loads it by path at parse time;
* :mod:`~ldpsample.pipeline.scripting` -- ``start``: a script's logging, warnings and progress
  bars to its rule's log, parameters logged;
* :mod:`~ldpsample.pipeline.io` -- atomic writers (CSV, parquet, JSON, text, figures) and the
  concatenation of parquet parts;
* :mod:`~ldpsample.pipeline.progress` -- progress bars on stderr, off unless a script asks;
* :mod:`~ldpsample.pipeline.job_errors` -- the first line of a failed job's error, read from
  its log, for the console (the workflow's ``onerror`` handler); light, loaded by path too;
* :mod:`~ldpsample.pipeline.checkout` -- what a clone holds of the workflow, and a copy of it
  (the tests and benchmarks run Snakemake in such copies).

The package imports none of them, so importing one does not load the others' dependencies.
"""
