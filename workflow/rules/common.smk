# Helpers every stage needs: the library's light modules, the one config check, the onerror
# handler (failed jobs' causes on the console), ε folder names, the library sources of a rule,
# experiment toggles, data locations and the final targets. Each stage's own helpers live beside
# its rules in <stage>_common.smk, included by <stage>.smk (snakemake --lint flags rules and
# functions in one file).
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

# A job's polars thread pool is its `threads:`. Snakemake exports OMP_NUM_THREADS (and the BLAS
# variables) = threads to every job's shell and script, but polars reads only
# POLARS_MAX_THREADS, once, at import; without it each job starts one thread per core, and jobs
# side by side compete for the cores. The prefix is Snakemake's default plus the export.
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
    files = [
        path
        for name in extra
        for path in (
            sorted(
                p for p in (LIBRARY / name).iterdir() if p.suffix in (".py", ".toml")
            )
            if name.endswith("/")
            else [LIBRARY / name]
        )
    ]
    starts = [Path(workflow.basedir) / "scripts" / script]
    starts += [path for path in files if path.suffix == ".py"]
    paths = {*IMPORT_GRAPH.library_closure(LIBRARY, starts), *files}
    cwd = Path.cwd()
    return sorted(
        os.path.relpath(path, cwd) if path.is_relative_to(cwd) else str(path)
        for path in paths
    )


#: Experiments that need no raw data: "auto" runs them unless the run is an own-data one.
OFFLINE_EXPERIMENTS = ("synthetic", "theory", "wpm_ring")


def is_own_data_run():
    """Whether the config has enabled events tables: then the experiments left on "auto" are
    off, so that an overlay adding only `events:` runs only those tables."""
    entries = config.get("events") or {}
    return any(entry.get("enabled", True) for entry in entries.values())


def is_enabled(experiment):
    """Whether an experiment runs: true/false from config; "auto" unless this is an own-data
    run, and for a real-data experiment only if its raw data was placed in data_dir
    (get_auto_off_reason)."""
    toggle = config["experiments"].get(experiment, False)
    if toggle == "auto":
        if is_own_data_run():
            return False
        return (
            experiment in OFFLINE_EXPERIMENTS or get_auto_off_reason(experiment) is None
        )
    return bool(toggle)


def get_experiment_datasets(experiment):
    """Datasets an experiment reads from data_dir (or downloads): what its "auto" waits for."""
    if experiment == "movielens":
        return ["ml-1m", "ml-100k"]
    if experiment == "avazu" and config["avazu"]["source"] == "kaggle":
        return ["avazu"]
    if experiment == "wpm_movielens":
        return ["ml-100k"]
    if experiment == "wpm_gowalla" and config["wpm"]["gowalla"]["source"] == "snap":
        return ["gowalla"]
    return []


def get_raw_files(experiment):
    """Raw files an experiment needs inside data_dir (what its "auto" toggle waits for)."""
    if experiment == "wpm_gowalla" and config["wpm"]["gowalla"]["source"] == "derived":
        return [get_wpm_gowalla_derived_file()]
    return [
        path
        for dataset in get_experiment_datasets(experiment)
        for path in get_data_dir_files(dataset)
    ]


def get_auto_off_reason(experiment):
    """Why an "auto" experiment is off (None if it runs): a raw file missing from data_dir, or
    data_dir's copy being the pipeline's own download (download.done). "auto" means data the
    user placed in data_dir: a download made by an earlier run (of an experiment set to true)
    must not switch it on, or the same command would do new work on its second run."""
    files = get_raw_files(experiment)
    if not files:
        return "no raw files to wait for (set it to true)"
    missing = [path for path in files if not Path(path).exists()]
    if missing:
        return f"missing {missing[0]}"
    for dataset in get_experiment_datasets(experiment):
        if is_own_download(dataset):
            return (
                f"{get_download_marker(dataset)} marks the pipeline's own download, not data "
                f"placed in data_dir: set experiments.{experiment}: true to use it"
            )
    return None


def log_auto_toggles():
    """One line at start-up naming the "auto" experiments that are off, and why."""
    auto = [name for name, toggle in config["experiments"].items() if toggle == "auto"]
    if is_own_data_run():
        if auto and workflow.is_main_process:
            logger.info(
                f"own-data run (events: {', '.join(sorted(config['events']))}): the experiments "
                f"on auto are off ({', '.join(auto)}); set one to true to run it too"
            )
        return
    off = [
        f"{name} ({get_auto_off_reason(name)})"
        for name, toggle in config["experiments"].items()
        if toggle == "auto"
        and name not in OFFLINE_EXPERIMENTS
        and get_auto_off_reason(name)
    ]
    if off and workflow.is_main_process:
        logger.info(
            f"data_dir={config['data_dir']}: experiments on auto that are off: {', '.join(off)}"
        )


def writes_reproduction_table():
    """Whether the run writes results/reproduction.csv: always, except in an own-data run
    (enabled events tables) that runs no paper experiment, where every row would be 'not
    run'."""
    return not is_own_data_run() or any(
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


# ---- data locations ------------------------------------------------------------------------
# A dataset's files are read from data_dir when it holds them (read only), else from
# resources/, where the download rule puts them and then writes its marker download.done.
# Paths reach scripts through params, so pointing data_dir elsewhere re-runs what reads them.


def get_download_marker(dataset):
    return f"{DOWNLOAD_DIR}/{REGISTRY.dataset_folder(dataset)}/download.done"


def is_own_download(dataset):
    """Whether data_dir's copy of a dataset is the pipeline's own download: data_dir is the
    download folder and the download finished (its marker download.done exists)."""
    return (
        Path(config["data_dir"]).resolve() == Path(DOWNLOAD_DIR).resolve()
        and Path(get_download_marker(dataset)).exists()
    )


@functools.cache
def _scan_data_dir(dataset):
    """Role -> path of a dataset's files in data_dir, None if any is missing: the one scan of
    data_dir per dataset and parse (_located and get_data_dir_files read it)."""
    try:
        found = REGISTRY.locate_dataset_files(config["data_dir"], dataset)
    except FileNotFoundError:
        return None
    return {role: str(path) for role, path in found.items()}


def _located(dataset):
    """Role -> path of a dataset's files pre-placed in data_dir; None if absent, or if
    data_dir is the download folder and a download finished (its marker stands for them).
    """
    if is_own_download(dataset):
        return None
    found = _scan_data_dir(dataset)
    return None if found is None else dict(found)


def get_dataset_paths(dataset):
    """Role -> path of a dataset's raw files (pre-placed copy, or where the download puts them)."""
    located = _located(dataset)
    if located is not None:
        return located
    folder, roles = REGISTRY.DATASETS[dataset]
    return {
        role: f"{DOWNLOAD_DIR}/{folder}/{names[0]}" for role, names in roles.items()
    }


def get_data_dir_files(dataset):
    """A dataset's files inside data_dir (never resources/): what an "auto" toggle waits for."""
    found = _scan_data_dir(dataset)
    if found is None:
        folder, roles = REGISTRY.DATASETS[dataset]
        return [
            os.path.join(config["data_dir"], folder, names[0])
            for names in roles.values()
        ]
    return sorted(found.values())


def get_dataset_inputs(dataset):
    """Inputs standing for a dataset: its files if pre-placed, else the download's marker.

    The choice must not flip between runs: once downloaded, the marker keeps standing for the
    files (else the input trigger would re-run every job reading them).
    """
    located = _located(dataset)
    if located is not None:
        return sorted(located.values())
    return [get_download_marker(dataset)]


def get_download_source(dataset):
    """url and checksum of a download (config downloads.<dataset>; Avazu: Kaggle CLI)."""
    return dict(sorted(config["downloads"].get(dataset, {}).items()))


def get_wpm_gowalla_derived_file():
    """The derived Gowalla check-ins (wpm.gowalla.derived_file) in data_dir; never downloaded."""
    return os.path.join(config["data_dir"], config["wpm"]["gowalla"]["derived_file"])


log_auto_toggles()
