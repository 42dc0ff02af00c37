# Helpers shared by every stage (config check, path formatting, data locations, final targets).
import importlib.util
import os
import re
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


def load_library_module(name, relative_path):
    """Load one light library module by path (standard library + what Snakemake imports).

    Importing it through the package would be the same code, but the package's heavy
    dependencies (scipy, polars, pyarrow) would then load at every Snakemake invocation and
    in every cluster job, which re-parses the workflow.
    """
    spec = importlib.util.spec_from_file_location(name, LIBRARY / relative_path)
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return loaded


REGISTRY = load_library_module("ldpsample_registry", "datasets/registry.py")
CONFIG_CHECK = load_library_module("ldpsample_config_check", "pipeline/config_check.py")
DOWNLOAD_DIR = "resources"


wildcard_constraints:
    n=r"[0-9]+",
    eps=r"[0-9]+(\.[0-9]+)?",


def format_epsilon(value):
    """Folder-safe, reversible plain decimal for an epsilon: 8.0 -> "8", 1e-05 -> "0.00001"."""
    return np.format_float_positional(float(value), trim="-")


def get_epsilon_folders(epsilons):
    """Folder names (format_epsilon) of a list of epsilons, sorted by value."""
    return [format_epsilon(e) for e in sorted(epsilons)]


def check_epsilon_folder_names(key, epsilons):
    """ε values must have a plain decimal folder name eps~<ε> (the eps wildcard's pattern)."""
    for index, eps in enumerate(epsilons):
        text = format_epsilon(eps)
        if not re.fullmatch(r"[0-9]+(\.[0-9]+)?", text) or float(text) != eps:
            raise CONFIG_CHECK.config_error(
                f"{key}[{index}]",
                f"{eps!r} has no plain decimal folder name eps~<ε> (got {text!r}); "
                "use a value like 0.5 or 8",
            )


def get_library_sources(*modules):
    """Library modules a rule's result depends on, as inputs: editing one re-runs the rule.

    (A script rule's code trigger sees only the script, not the library it imports.)
    """
    return sorted(str(LIBRARY / module) for module in modules)


def is_enabled(experiment):
    """Whether an experiment runs: true/false from config, "auto" if its raw data is present."""
    toggle = config["experiments"].get(experiment, False)
    if toggle == "auto":
        return not get_missing_raw_files(experiment)
    return bool(toggle)


def get_raw_files(experiment):
    """Raw files an experiment needs inside data_dir (what its "auto" toggle waits for)."""
    if experiment == "movielens":
        return get_data_dir_files("ml-1m") + get_data_dir_files("ml-100k")
    if experiment == "avazu" and config["avazu"]["source"] == "kaggle":
        return get_data_dir_files("avazu")
    if experiment == "wpm_movielens":
        return get_data_dir_files("ml-100k")
    if experiment == "wpm_gowalla":
        if config["wpm"]["gowalla"]["source"] == "derived":
            return [get_wpm_gowalla_derived_file()]
        return get_data_dir_files("gowalla")
    return []


def get_missing_raw_files(experiment):
    files = get_raw_files(experiment)
    return [path for path in files if not Path(path).exists()] if files else ["(none)"]


def log_auto_toggles():
    """One line at start-up naming the "auto" experiments that are off, and why."""
    off = [
        f"{name} (missing {get_missing_raw_files(name)[0]})"
        for name, toggle in config["experiments"].items()
        if toggle == "auto" and get_missing_raw_files(name)
    ]
    if off and workflow.is_main_process:
        logger.info(
            f"data_dir={config['data_dir']}: experiments on auto that are off, their files "
            f"being absent: {', '.join(off)}"
        )


def check_config_consistency():
    """Cross-field checks a JSON schema cannot express (ConfigError naming the key)."""
    error = CONFIG_CHECK.config_error
    data_dir = Path(config["data_dir"])
    if not data_dir.is_dir() and data_dir.resolve() != Path(DOWNLOAD_DIR).resolve():
        raise error(
            "data_dir",
            f"{config['data_dir']!r} is not an existing folder (it should hold pre-placed "
            "raw data in the official layouts; resources/, the download folder, needs none)",
        )
    for dataset, source in config["downloads"].items():
        if source.get("md5") and source.get("sha256"):
            raise error(f"downloads.{dataset}", "give md5 or sha256, not both")
    for key in ("synthetic", "movielens", "avazu"):
        check_epsilon_folder_names(f"{key}.epsilons", config[key]["epsilons"])
    theory = config["theory"]
    grid = theory["epsilon_grid"]
    if grid["start"] >= grid["stop"]:
        raise error(
            "theory.epsilon_grid.start",
            f"{grid['start']!r} must be < theory.epsilon_grid.stop ({grid['stop']!r})",
        )
    for index, q_min in enumerate(theory["q_mins"]):
        if q_min > 1 / theory["n"]:
            raise error(
                f"theory.q_mins[{index}]",
                f"{q_min!r} exceeds 1/theory.n = {1 / theory['n']!r}",
            )
    example = theory["example_1"]
    if len(example["q"]) != len(example["p"]):
        raise error(
            "theory.example_1.p",
            f"has {len(example['p'])} entries, theory.example_1.q has {len(example['q'])}",
        )
    for key in ("q", "p"):
        if abs(sum(example[key]) - 1) > 1e-9:
            raise error(
                f"theory.example_1.{key}", f"must sum to 1, got {sum(example[key])!r}"
            )
    check_wpm_config()


def check_wpm_config():
    """Cross-field checks of the wpm section (ConfigError naming the key)."""
    wpm = config["wpm"]
    box = wpm["gowalla"]["bbox"]
    for low, high in (("lat_min", "lat_max"), ("lon_min", "lon_max")):
        if box[low] >= box[high]:
            raise CONFIG_CHECK.config_error(
                f"wpm.gowalla.bbox.{low}",
                f"{box[low]!r} must be < wpm.gowalla.bbox.{high} ({box[high]!r})",
            )
    for key in ("movielens.epsilons", "gowalla.epsilons", "gowalla.map_epsilons"):
        experiment, name = key.split(".")
        check_epsilon_folder_names(f"wpm.{key}", wpm[experiment][name])
    derived = os.path.join(config["data_dir"], wpm["gowalla"]["derived_file"])
    if (
        wpm["gowalla"]["source"] == "derived"
        and config["experiments"].get("wpm_gowalla") is True
        and not Path(derived).is_file()
    ):
        raise CONFIG_CHECK.config_error(
            "wpm.gowalla.derived_file",
            f"{derived!r} not found (it is never downloaded; set wpm.gowalla.source: snap "
            "or point data_dir at a copy)",
        )


def check_config():
    """The one config check, before any job: finite numbers, the JSON schema, then the
    cross-field checks. A WorkflowError whose first line names the key path and the value.
    """
    try:
        CONFIG_CHECK.check_config(
            config, Path(workflow.basedir) / "workflow/schemas/config.schema.yaml"
        )
        check_config_consistency()
    except CONFIG_CHECK.ConfigError as exc:
        raise WorkflowError(str(exc)) from None


check_config()


def get_synthetic_parts():
    return expand(
        "results/synthetic/parts/n~{n}/eps~{eps}/values.parquet",
        n=sorted(config["synthetic"]["n"]),
        eps=get_epsilon_folders(config["synthetic"]["epsilons"]),
    )


def get_synthetic_threads(wildcards):
    """Threads of one synthetic job: 1 below the 2**20 entries (grid_size x n) from which the
    library's kernels split their work over threads (minimax._APPLY_THREADED_ENTRIES,
    _DENSE_THREADED_ENTRIES), else 2. More would leave a cluster job pending on small nodes;
    a profile raises it with set-threads (docs/cluster.md)."""
    entries = int(wildcards.n) * config["synthetic"]["grid_size"]
    return 1 if entries < 2**20 else 2


def get_theory_epsilons():
    grid = config["theory"]["epsilon_grid"]
    return [float(e) for e in np.linspace(grid["start"], grid["stop"], grid["num"])]


def get_final_outputs():
    """Everything `rule all` builds, per enabled experiment."""
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


def _located(dataset):
    """Role -> path of a dataset's files pre-placed in data_dir; None if absent, or if
    data_dir is the download folder and a download finished (its marker stands for them).
    """
    data_dir = Path(config["data_dir"])
    if (
        data_dir.resolve() == Path(DOWNLOAD_DIR).resolve()
        and Path(get_download_marker(dataset)).exists()
    ):
        return None
    try:
        found = REGISTRY.locate_dataset_files(data_dir, dataset)
    except FileNotFoundError:
        return None
    return {role: str(path) for role, path in found.items()}


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
    try:
        found = REGISTRY.locate_dataset_files(config["data_dir"], dataset)
    except FileNotFoundError:
        folder, roles = REGISTRY.DATASETS[dataset]
        return [
            os.path.join(config["data_dir"], folder, names[0])
            for names in roles.values()
        ]
    return sorted(str(path) for path in found.values())


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


# ---- MovieLens helpers (issues 4, 11) ------------------------------------------------------
# Config section `movielens:` (workflow/schemas/movielens.schema.yaml); rules in
# workflow/rules/movielens.smk. The official files become two events tables once
# (MOVIELENS_EVENTS); each variant runs them through the events stage's code. The paper-vs-code
# options name the results folder, results/movielens/prior~<prior_source>_weight~<weight>/, so
# every variant keeps its results.

# The variant folder, with the rules' wildcards; the one place it is spelled out.
MOVIELENS_VARIANT = "prior~{prior_source}_weight~{weight}"
MOVIELENS_FOLDER = f"results/movielens/{MOVIELENS_VARIANT}"
# The events tables of movielens_data (ldpsample.events.movielens.movielens_events).
MOVIELENS_EVENTS = {
    "ml1m": "results/movielens/events/ml-1m.parquet",
    "ml100k": "results/movielens/events/ml-100k.parquet",
}
# Library modules whose edits re-run the MovieLens tables and figures.
MOVIELENS_TABLE_CODE = ("events/movielens.py", "events/tables.py")
MOVIELENS_FIGURE_CODE = ("figures/real_data.py", "figures/style.py")


def get_movielens_variant(prior_source, weight):
    """Folder name of one variant (MOVIELENS_VARIANT filled in)."""
    return MOVIELENS_VARIANT.format(prior_source=prior_source, weight=weight)


def get_movielens_variants():
    """Folders of the configured variants, prior~<prior_source>_weight~<weight>, one per
    combination of the listed values (each key takes one value or a list)."""
    ml = config["movielens"]
    listed = lambda value: value if isinstance(value, list) else [value]
    return [
        get_movielens_variant(prior, weight)
        for prior in listed(ml["prior_source"])
        for weight in listed(ml["weight"])
    ]


def get_movielens_epsilons():
    """Folder names (format_epsilon) of movielens.epsilons, sorted by value."""
    return get_epsilon_folders(config["movielens"]["epsilons"])


def get_movielens_histogram_params(prior_source, weight):
    """The events options (build_event_histograms) equal to one variant (docs/own-data.md,
    "MovieLens and Avazu as events configurations"): every ML-1M user with mass on the genres,
    every genre, one subcategory per age group; the prior is the ML-100K users' pooled counts
    of the age group (ml-100k) or the ML-1M users' (ml-1m)."""
    count = {"count": "ratings", "rating": "rating_sum"}[weight]
    prior = (
        "pooled"
        if prior_source == "ml-1m"
        else dict(
            attributes=["age_group"],
            count=count,
            item="genre",
            path=MOVIELENS_EVENTS["ml100k"],
            user="user_id",
        )
    )
    return dict(
        key="movielens",
        path=MOVIELENS_EVENTS["ml1m"],
        user="user_id",
        item="genre",
        count=count,
        attributes=["age_group"],
        prior=prior,
        items=None,
        top_items=None,
        rank_items_by=None,
        activity_by=None,
        min_user_count=0,
        activity_scope="top_items",
        min_users=1,
        exclude_users=[],
        on_null="error",
    )


def get_movielens_metrics_params(prior_source):
    """The events options (evaluate_attribute) of a variant's metrics job: minimax and both
    mollifiers, every ε in-process, no release."""
    return dict(
        name="movielens",
        prior="pooled" if prior_source == "ml-1m" else "table",
        epsilons=sorted(float(e) for e in config["movielens"]["epsilons"]),
        methods=["minimax", "mollifier_kl", "mollifier_tv"],
        release=False,
        seed=config["seed"],
    )


def get_movielens_outputs():
    """Final targets of the MovieLens experiment (configured variants), if enabled."""
    if not is_enabled("movielens"):
        return []
    outputs = []
    for variant in get_movielens_variants():
        base = f"results/movielens/{variant}"
        outputs += [
            f"{base}/max_tv.csv",
            f"{base}/max_kl.csv",
            f"{base}/per_user.parquet",
            f"{base}/summary.csv",
            f"{base}/audit.csv",
            f"{base}/figures/all_epsilons.png",
            *expand(f"{base}/figures/eps~{{eps}}.png", eps=get_movielens_epsilons()),
        ]
    return outputs


# ---- Avazu helpers (issues 4, 11, 14) ------------------------------------------------------
# Config section `avazu:` (workflow/schemas/avazu.schema.yaml); rules in workflow/rules/avazu.smk.
# The CSV is converted once into results/avazu/cache/<source>/train.parquet (see avazu.smk), which
# is the events table of the events stage's rules (histograms and metrics: ldpsample.events).
# Each run (the section itself, and one per entry of avazu.variants) has a results folder:
# results/avazu/ for the section, results/avazu/<key>~<value>[_<key>~<value>...]/ for a variant.

AVAZU_ATTRIBUTE_NAMES = ("C1", "C14", "C15", "C16", "C17", "C18", "C19", "C20", "C21")
AVAZU_SYNTHETIC_FILE = "resources/avazu-synthetic/train.gz"
AVAZU_RESULTS = "results/avazu"
# ldpsample.datasets.avazu.PLACEHOLDER_DEVICE_ID (not imported: it would load polars here)
AVAZU_PLACEHOLDER_DEVICE = "a99f214a"
# The keys an avazu.variants entry may change (the histogram filters).
AVAZU_VARIANT_KEYS = (
    "top_sites",
    "site_rank_by",
    "min_rows",
    "user_activity",
    "activity_scope",
    "min_users",
    "exclude_placeholder_device",
)
# Library modules whose edits re-run the Avazu tables and figures.
AVAZU_TABLE_CODE = ("events/avazu.py", "events/tables.py")
AVAZU_FIGURE_CODE = ("figures/real_data.py", "figures/style.py")


def get_avazu_epsilons():
    """Folder names (format_epsilon) of avazu.epsilons, sorted by value."""
    return get_epsilon_folders(config["avazu"]["epsilons"])


def get_avazu_attributes():
    """The configured attributes, in the official column order."""
    return [a for a in AVAZU_ATTRIBUTE_NAMES if a in config["avazu"]["attributes"]]


def get_avazu_variant_name(overrides):
    """Folder of a variant: its keys and values, sorted by key (min_users~1000)."""
    text = lambda v: str(v).lower() if isinstance(v, bool) else str(v)
    return "_".join(f"{key}~{text(overrides[key])}" for key in sorted(overrides))


def get_avazu_folders():
    """Results folder (under results/) of every Avazu run: avazu (the section's own values)
    first, then avazu/<variant> per avazu.variants entry."""
    return ["avazu"] + [
        f"avazu/{get_avazu_variant_name(v)}"
        for v in config["avazu"].get("variants", [])
    ]


def get_avazu_folder_pattern():
    """Constraint of the {avazu_folder} wildcard: exactly the configured folders."""
    return "|".join(re.escape(folder) for folder in get_avazu_folders())


def get_avazu_settings(folder):
    """The avazu section with a variant's overrides applied (the folder names the variant)."""
    settings = {k: v for k, v in config["avazu"].items() if k != "variants"}
    for overrides in config["avazu"].get("variants", []):
        if folder == f"avazu/{get_avazu_variant_name(overrides)}":
            settings.update(overrides)
    return settings


def check_avazu_variants():
    """Each avazu.variants entry changes something and names its own folder (ConfigError)."""
    seen = {"avazu"}
    for index, overrides in enumerate(config["avazu"].get("variants", [])):
        key = f"avazu.variants[{index}]"
        unknown = sorted(set(overrides) - set(AVAZU_VARIANT_KEYS))
        if unknown or not overrides:
            raise CONFIG_CHECK.config_error(
                key,
                f"{overrides!r}: a variant sets one or more of {list(AVAZU_VARIANT_KEYS)}",
            )
        if all(config["avazu"][k] == v for k, v in overrides.items()):
            raise CONFIG_CHECK.config_error(
                key, f"{overrides!r} equals the avazu section itself (results/avazu/)"
            )
        folder = f"{AVAZU_RESULTS}/{get_avazu_variant_name(overrides)}"
        if folder in seen:
            raise CONFIG_CHECK.config_error(
                key, f"{overrides!r} repeats the variant {folder}"
            )
        seen.add(folder)


check_avazu_variants()


def get_avazu_source_file():
    """The CSV the conversion reads: official train.gz (data_dir, else the download) or the
    generated file."""
    if config["avazu"]["source"] == "synthetic":
        return AVAZU_SYNTHETIC_FILE
    return get_dataset_paths("avazu")["train"]


def get_avazu_source_inputs():
    if config["avazu"]["source"] == "synthetic":
        return [AVAZU_SYNTHETIC_FILE]
    return get_dataset_inputs("avazu")


def get_avazu_cache():
    """The converted parquet and its stats, one folder per source."""
    folder = f"{AVAZU_RESULTS}/cache/{config['avazu']['source']}"
    return {"parquet": f"{folder}/train.parquet", "stats": f"{folder}/train.json"}


def get_avazu_synthetic_seed():
    """Seed of the generated file: from the root seed and the stage name (crc32 is stable)."""
    return int(
        np.random.SeedSequence(
            [config["seed"], zlib.crc32(b"avazu_synthetic")]
        ).generate_state(1)[0]
    )


def get_avazu_histogram_params(folder, attribute):
    """The events options (build_event_histograms) equal to a variant's avazu values, for the
    histogram job of one attribute (docs/own-data.md, "MovieLens and Avazu as events
    configurations")."""
    avazu = get_avazu_settings(folder)
    return dict(
        key="avazu",
        path=get_avazu_cache()["parquet"],
        user="device_id",
        item="site_id",
        count=None,
        attributes=[attribute],
        prior="user_mean",
        items=None,
        top_items=avazu["top_sites"],
        rank_items_by="click" if avazu["site_rank_by"] == "clicks" else None,
        activity_by="click" if avazu["user_activity"] == "clicks" else None,
        min_user_count=avazu["min_rows"],
        activity_scope={"global": "global", "top_sites": "top_items"}[
            avazu["activity_scope"]
        ],
        min_users=avazu["min_users"],
        exclude_users=(
            [AVAZU_PLACEHOLDER_DEVICE] if avazu["exclude_placeholder_device"] else []
        ),
        on_null="error",
    )


def get_avazu_metrics_params():
    """The events options (evaluate_attribute) of every Avazu metrics job: the subcategory's
    mean histogram as prior, minimax and the TV mollifier, minimax-released samples."""
    return dict(
        name="avazu",
        prior="user_mean",
        epsilons=sorted(float(e) for e in config["avazu"]["epsilons"]),
        methods=["minimax", "mollifier_tv"],
        release=True,
        seed=config["seed"],
    )


def get_avazu_aggregate_params(folder):
    """The variant's values the tables job logs and checks (sorted: params are compared)."""
    settings = get_avazu_settings(folder)
    return dict(sorted((k, settings[k]) for k in AVAZU_VARIANT_KEYS))


def get_avazu_parts(folder, table):
    """A variant's per-attribute parts of the events rules (histograms, per_user, ...)."""
    return expand(
        f"results/{folder}/work/attribute~{{attribute}}/{table}.parquet",
        attribute=get_avazu_attributes(),
    )


def get_avazu_outputs():
    """Final targets of the Avazu experiment (every variant), if enabled."""
    if not is_enabled("avazu"):
        return []
    outputs = []
    for folder in get_avazu_folders():
        folder = f"results/{folder}"
        outputs += [
            f"{folder}/{table}"
            for table in (
                "max_tv.csv",
                "max_tv.parquet",
                "summary.csv",
                "subcategories.csv",
                "per_user.parquet",
                "audit.csv",
                "audit_users.csv",
            )
        ]
        outputs += expand(
            f"{folder}/figures/attribute~{{attribute}}.png",
            attribute=get_avazu_attributes(),
        )
        outputs += expand(
            f"{folder}/released/eps~{{eps}}.parquet", eps=get_avazu_epsilons()
        )
    return outputs


# ---- WPM helpers (issue 6) -----------------------------------------------------------------
# Config section `wpm:` (workflow/schemas/wpm.schema.yaml); rules in workflow/rules/wpm.smk.


def get_wpm_seed(stage, *keys):
    """Seed of one WPM job: the root seed, the stage and its wildcards (zlib.crc32 is stable
    across runs and Python versions, unlike hash()); pass to numpy.random.default_rng.
    """
    return [config["seed"], *(zlib.crc32(str(key).encode()) for key in (stage, *keys))]


def get_wpm_library_sources(*modules):
    """Library modules of a WPM stage plus the whole ldpsample.wasserstein package."""
    package = sorted(
        path.relative_to(LIBRARY).as_posix()
        for path in (LIBRARY / "wasserstein").glob("*.py")
    )
    return get_library_sources(*modules, *package, "_validation.py")


def get_wpm_epsilons(experiment, key="epsilons"):
    """Folder names (format_epsilon) of a WPM experiment's ε list, sorted by value."""
    return get_epsilon_folders(config["wpm"][experiment][key])


def get_wpm_movielens_params():
    """Every wpm.movielens value the per-ε jobs use (the data files' paths included)."""
    ml = config["wpm"]["movielens"]
    return dict(
        files=get_dataset_paths("ml-100k"),
        seed=get_wpm_seed("wpm_movielens"),
        methods=list(ml["methods"]),
        **{
            key: ml[key]
            for key in (
                "n_components",
                "n_outputs",
                "train_fraction",
                "validation_fraction",
                "like_threshold",
                "n_scales",
                "wpm_method",
                "eta",
                "max_validation_users",
                "max_test_users",
                "base_measure",
            )
        },
    )


def get_wpm_movielens_parts(table):
    return [
        *expand(
            "results/wpm_movielens/parts/eps~{eps}/{table}.parquet",
            eps=get_wpm_epsilons("movielens"),
            table=table,
        ),
        f"results/wpm_movielens/parts/nonprivate/{table}.parquet",
    ]


def get_wpm_gowalla_derived_file():
    return os.path.join(config["data_dir"], config["wpm"]["gowalla"]["derived_file"])


def get_wpm_gowalla_path():
    """The check-in file read: the SNAP file (data_dir, else the download) or the derived one."""
    if config["wpm"]["gowalla"]["source"] == "derived":
        return get_wpm_gowalla_derived_file()
    return get_dataset_paths("gowalla")["checkins"]


def get_wpm_gowalla_inputs():
    if config["wpm"]["gowalla"]["source"] == "derived":
        return [get_wpm_gowalla_derived_file()]
    return get_dataset_inputs("gowalla")


def get_wpm_gowalla_bbox():
    box = config["wpm"]["gowalla"]["bbox"]
    return [box["lat_min"], box["lat_max"], box["lon_min"], box["lon_max"]]


def get_wpm_gowalla_grid_params():
    """wpm.gowalla values shared by the W1 and map jobs."""
    gw = config["wpm"]["gowalla"]
    return dict(
        bbox=get_wpm_gowalla_bbox(),
        grid_size=gw["grid_size"],
        min_checkins=gw["min_checkins"],
        methods=list(gw["methods"]),
        target=gw["target"],
    )


def get_wpm_gowalla_parts():
    return expand(
        "results/wpm_gowalla/parts/eps~{eps}/w1.parquet",
        eps=get_wpm_epsilons("gowalla"),
    )


def get_wpm_outputs():
    """Final targets of the enabled WPM experiments (tables, figures)."""
    outputs = []
    if is_enabled("wpm_ring"):
        outputs += [
            "results/wpm_ring/example.parquet",
            "results/wpm_ring/example.png",
            "results/wpm_ring/convergence.parquet",
            "results/wpm_ring/convergence.png",
        ]
    if is_enabled("wpm_movielens"):
        outputs += [
            "results/wpm_movielens/validation.parquet",
            "results/wpm_movielens/test.parquet",
            "results/wpm_movielens/test.csv",
            "results/wpm_movielens/hit_rate.png",
        ]
    if is_enabled("wpm_gowalla"):
        outputs += [
            "results/wpm_gowalla/w1.parquet",
            "results/wpm_gowalla/w1.csv",
            "results/wpm_gowalla/w1.png",
        ]
        outputs += expand(
            "results/wpm_gowalla/maps/eps~{eps}/maps.png",
            eps=get_wpm_epsilons("gowalla", "map_epsilons"),
        )
    return outputs


log_auto_toggles()
