# Helpers every stage needs: the library's light modules, the one config check, the onerror
# handler (failed jobs' causes on the console), ε folder names, the library sources of a rule,
# experiment toggles (ldpsample.pipeline.experiment_toggles), data locations
# (ldpsample.datasets.registry.DataLocations) and the final targets. Each stage's own helpers
# live beside its rules in <stage>_common.smk, included by <stage>.smk (snakemake --lint flags
# rules and functions in one file).
import functools
import importlib.util
import os
import re
import sys
import zlib
from pathlib import Path

import numpy as np
from snakemake.exceptions import WorkflowError
from snakemake.logging import logger

SOURCE = Path(workflow.basedir) / "src"
LIBRARY = SOURCE / "ldpsample"
CONDA_ENV = "../../environment.yml"

# Jobs import this checkout's library (also inside a `--sdm conda` env, which holds only the
# dependencies); a pip-installed ldpsample is not needed to run the workflow.
os.environ.update(
    PYTHONPATH=os.pathsep.join(
        [str(SOURCE), *filter(None, [os.environ.get("PYTHONPATH")])]
    )
)

# A job's polars thread pool is its `threads:`: Snakemake exports OMP_NUM_THREADS = threads, but
# polars reads only POLARS_MAX_THREADS (else one thread per core). Snakemake's prefix plus that.
shell.prefix("set -euo pipefail; export POLARS_MAX_THREADS=$OMP_NUM_THREADS; ")


def load_library_module(name, relative_path):
    """Load one light library module by path (standard library + what Snakemake imports).

    Importing it through the package would be the same code, but the package's heavy
    dependencies (scipy, polars, pyarrow) would then load at every Snakemake invocation and
    in every cluster job, which re-parses the workflow.

    A path ending in a slash, such as "pipeline/config_check/", is a package folder: it is
    loaded as the package `name` (registered in sys.modules, anew at each load, so that its
    relative imports load its modules by path as `name.<module>`).
    """
    path = LIBRARY / relative_path
    if relative_path.endswith("/"):
        for loaded_name in [m for m in sys.modules if m.split(".")[0] == name]:
            del sys.modules[loaded_name]
        spec = importlib.util.spec_from_file_location(
            name, path / "__init__.py", submodule_search_locations=[str(path)]
        )
    else:
        spec = importlib.util.spec_from_file_location(name, path)
    loaded = importlib.util.module_from_spec(spec)
    if relative_path.endswith("/"):
        sys.modules[name] = loaded
    spec.loader.exec_module(loaded)
    return loaded


REGISTRY = load_library_module("ldpsample_registry", "datasets/registry.py")
CONFIG_CHECK = load_library_module("ldpsample_config_check", "pipeline/config_check/")
JOB_ERRORS = load_library_module("ldpsample_job_errors", "pipeline/job_errors.py")
IMPORT_GRAPH = load_library_module("ldpsample_import_graph", "pipeline/import_graph.py")
TOGGLES = load_library_module(
    "ldpsample_experiment_toggles", "pipeline/experiment_toggles.py"
)
DOWNLOAD_DIR = "resources"


def check_config():
    """The one config check, before anything reads the config: numbers in exponent form read
    as numbers, finite numbers, the JSON schema, then the cross-field checks
    (ldpsample.pipeline.config_check.check_consistency).

    An error is logged first, so that the console's first line of it names the key path and
    the value (raised as it is, Snakemake's `WorkflowError in file ".../common.smk", line ...:`
    came first); the WorkflowError raised after it stops the run.
    """
    try:
        CONFIG_CHECK.check_config(
            config, Path(workflow.basedir) / "workflow/schemas/config.schema.yaml"
        )
        CONFIG_CHECK.check_consistency(config, download_dir=DOWNLOAD_DIR)
    except CONFIG_CHECK.ConfigError as exc:
        logger.error(str(exc))
        raise WorkflowError(
            "the config error above stopped the run before any job"
        ) from None


check_config()


def log_failed_job_causes():
    """Per failed job, the first line of the error its log ends with (a script's traceback
    goes to its log, and Snakemake prints only the log's path): the `onerror` handler below.
    """
    failed = getattr(workflow.scheduler, "failed", None) or ()
    jobs = sorted(
        (job.rule.name, [str(path) for path in job.log])
        for failed_job in failed
        for job in getattr(failed_job, "jobs", [failed_job])
    )
    causes = JOB_ERRORS.failed_job_causes(jobs)
    if causes:
        logger.error(
            "Why the failed job(s) failed (the first line of the error in each job's log):\n"
            + "\n".join(f"  {cause}" for cause in causes)
        )


onerror:
    log_failed_job_causes()


wildcard_constraints:
    n=r"[0-9]+",
    eps=CONFIG_CHECK.EPSILON_FOLDER_PATTERN,


def format_epsilon(value):
    """Folder-safe, reversible plain decimal for an epsilon: 8.0 -> "8", 1e-05 -> "0.00001"."""
    return CONFIG_CHECK.epsilon_folder_name(value)


def get_epsilon_folders(epsilons):
    """Folder names (format_epsilon) of a list of epsilons, sorted by value."""
    return [format_epsilon(e) for e in sorted(epsilons)]


def get_script_sources(script, *extra):
    """The library files a rule's script runs, as inputs: editing one re-runs the rule.

    (A script rule's code trigger sees only the script, not the library it imports.) The files
    are the closure of the script's ``ldpsample`` imports (ldpsample.pipeline.import_graph: no
    hand-kept list to drift). ``extra`` names library files the imports cannot show: a folder
    ending in "/" stands for its modules and data files (the reproduction checks, which
    claims.toml names and the package imports by name), a file for itself. Relative to the
    working directory when the library is inside it (running from the project root):
    Snakemake records each job's set of input paths, so absolute ones re-ran every job of a
    project folder that was moved, renamed or restored elsewhere.
    """
    return _script_sources(script, extra)


@functools.cache
def _script_sources(script, extra):
    script_path = Path(workflow.basedir) / "scripts" / script
    return IMPORT_GRAPH.script_inputs(LIBRARY, script_path, extra, cwd=Path.cwd())


# ---- experiment toggles and data locations -------------------------------------------------
# A dataset's files are read from data_dir when it holds them (read only), else from
# resources/, where the download rule puts them and then writes its marker download.done.
# Paths reach scripts through params, so pointing data_dir elsewhere re-runs what reads them.
LOCATIONS = REGISTRY.DataLocations(config["data_dir"], DOWNLOAD_DIR)


def is_enabled(experiment):
    """Whether an experiment runs: true/false from config; "auto" unless this is an own-data
    run, and for a real-data experiment only if its raw data was placed in data_dir
    (ldpsample.pipeline.experiment_toggles)."""
    return TOGGLES.is_enabled(config, experiment, LOCATIONS)


def log_auto_toggles():
    """One line at start-up naming the "auto" experiments that are off, and why."""
    message = TOGGLES.auto_toggles_message(config, LOCATIONS)
    if message and workflow.is_main_process:
        logger.info(message)


def writes_reproduction_table():
    """Whether the run writes results/reproduction.csv: always, except in an own-data run
    (enabled events tables) that runs no paper experiment, where every row would be 'not
    run'."""
    return not TOGGLES.is_own_data_run(config) or any(
        is_enabled(name) for name in config["experiments"]
    )


def get_final_outputs():
    """Everything `rule all` builds, per enabled experiment (the stages' get_*_outputs are
    defined in their *_common.smk, included after this file)."""
    outputs = []
    if is_enabled("synthetic"):
        outputs += ["results/synthetic/values.parquet", "results/synthetic/figure.png"]
    if is_enabled("theory"):
        outputs += [
            "results/theory/risk.csv",
            "results/theory/risk.png",
            "results/theory/example_1.csv",
        ]
    outputs += get_movielens_outputs()
    outputs += get_avazu_outputs()
    outputs += get_wpm_outputs()
    return outputs


def get_dataset_paths(dataset):
    """Role -> path of a dataset's raw files (pre-placed copy, or where the download puts them)."""
    return LOCATIONS.dataset_paths(dataset)


def get_dataset_inputs(dataset):
    """Inputs standing for a dataset: its files if pre-placed, else the download's marker
    (which keeps standing for them once downloaded, so the input trigger never flips).
    """
    return LOCATIONS.dataset_inputs(dataset)


def get_download_source(dataset):
    """url and checksum of a download (config downloads.<dataset>; Avazu: Kaggle CLI)."""
    return dict(sorted(config["downloads"].get(dataset, {}).items()))


def get_wpm_gowalla_derived_file():
    """The derived Gowalla check-ins (wpm.gowalla.derived_file) in data_dir; never downloaded."""
    return TOGGLES.gowalla_derived_file(config)


log_auto_toggles()
