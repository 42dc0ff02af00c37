# Helpers shared by every stage (config access, path formatting, final targets).
import os
import re
import sys
import zlib
from pathlib import Path

import numpy as np

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
    for eps in epsilons:
        text = format_epsilon(eps)
        if not re.fullmatch(r"[0-9]+(\.[0-9]+)?", text) or float(text) != eps:
            raise ValueError(
                f"config key {key}: {eps!r} has no plain decimal folder name eps~<ε> "
                f"(got {text!r}); use a value like 0.5 or 8"
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
        files = get_raw_files(experiment)
        return bool(files) and all(Path(path).exists() for path in files)
    return bool(toggle)


def get_raw_files(experiment):
    """Raw files an experiment needs inside data_dir (used by the "auto" toggle)."""
    return RAW_FILES.get(experiment, [])


# Raw files (relative to data_dir) each real-data experiment needs, for the "auto" toggle.
RAW_FILES = {}


def check_config_consistency():
    """Cross-field checks a JSON schema cannot express; each error names the key."""
    check_epsilon_folder_names("synthetic.epsilons", config["synthetic"]["epsilons"])
    theory = config["theory"]
    grid = theory["epsilon_grid"]
    if grid["start"] >= grid["stop"]:
        raise ValueError(
            f"config key theory.epsilon_grid: start ({grid['start']!r}) must be < stop ({grid['stop']!r})"
        )
    for q_min in theory["q_mins"]:
        if q_min > 1 / theory["n"]:
            raise ValueError(
                f"config key theory.q_mins: {q_min!r} exceeds 1/theory.n = {1 / theory['n']!r}"
            )
    example = theory["example_1"]
    if len(example["q"]) != len(example["p"]):
        raise ValueError(
            "config keys theory.example_1.q and .p must have the same length"
        )
    for key in ("q", "p"):
        if abs(sum(example[key]) - 1) > 1e-9:
            raise ValueError(
                f"config key theory.example_1.{key} must sum to 1, got {sum(example[key])!r}"
            )


check_config_consistency()


def get_synthetic_parts():
    return expand(
        "results/synthetic/parts/n~{n}/eps~{eps}/values.parquet",
        n=sorted(config["synthetic"]["n"]),
        eps=get_epsilon_folders(config["synthetic"]["epsilons"]),
    )


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


# ---- download / data_dir helpers (issue 4) -------------------------------------------------
# A dataset's files are read from data_dir when it holds them (read only), else from
# resources/ (where the download rules put them). Paths reach scripts through params, so
# pointing data_dir elsewhere re-runs what reads the data.

sys.path.insert(0, str(SOURCE))
from ldpsample.datasets.download import DATASETS, locate_dataset_files  # noqa: E402

DOWNLOAD_DIR = "resources"


def _located(dataset):
    for root in dict.fromkeys([config["data_dir"], DOWNLOAD_DIR]):
        try:
            return {
                role: str(path)
                for role, path in locate_dataset_files(root, dataset).items()
            }
        except FileNotFoundError:
            continue
    return None


def get_dataset_paths(dataset):
    """Role -> path of a dataset's raw files (pre-placed copy, or where the download puts them)."""
    located = _located(dataset)
    if located is not None:
        return located
    folder, roles = DATASETS[dataset]
    return {
        role: f"{DOWNLOAD_DIR}/{folder}/{names[0]}" for role, names in roles.items()
    }


def get_data_dir_files(dataset):
    """A dataset's files inside data_dir (never resources/): what an "auto" toggle waits for."""
    try:
        found = locate_dataset_files(config["data_dir"], dataset)
    except FileNotFoundError:
        folder, roles = DATASETS[dataset]
        return [
            os.path.join(config["data_dir"], folder, names[0])
            for names in roles.values()
        ]
    return sorted(str(path) for path in found.values())


def get_dataset_inputs(dataset):
    """Inputs standing for a dataset: its files if present, else the download rule's marker."""
    located = _located(dataset)
    if located is not None:
        return sorted(located.values())
    return [f"{DOWNLOAD_DIR}/{DATASETS[dataset][0]}/download.done"]


# ---- MovieLens helpers (issue 4) -----------------------------------------------------------
# Config section `movielens:` (workflow/schemas/movielens.schema.yaml); rules in
# workflow/rules/movielens.smk. The paper-vs-code options name the results folder,
# results/movielens/prior~<prior_source>_weight~<weight>/, so every variant keeps its results.

check_epsilon_folder_names("movielens.epsilons", config["movielens"]["epsilons"])

RAW_FILES["movielens"] = get_data_dir_files("ml-1m") + get_data_dir_files("ml-100k")


def get_movielens_variant():
    """Folder of the configured variant: prior~<prior_source>_weight~<weight>."""
    ml = config["movielens"]
    return f"prior~{ml['prior_source']}_weight~{ml['weight']}"


def get_movielens_epsilons():
    """Folder names (format_epsilon) of movielens.epsilons, sorted by value."""
    return get_epsilon_folders(config["movielens"]["epsilons"])


def get_movielens_parts(table):
    """One variant's per-ε parquet parts of a table (per_user, max_tv or max_kl)."""
    return expand(
        "results/movielens/prior~{{prior_source}}_weight~{{weight}}/eps~{eps}/{table}.parquet",
        eps=get_movielens_epsilons(),
        table=table,
    )


def get_movielens_outputs():
    """Final targets of the MovieLens experiment (configured variant), if enabled."""
    if not is_enabled("movielens"):
        return []
    base = f"results/movielens/{get_movielens_variant()}"
    return [
        f"{base}/max_tv.csv",
        f"{base}/max_kl.csv",
        f"{base}/per_user.parquet",
        f"{base}/summary.csv",
        f"{base}/figures/all_epsilons.png",
        *expand(f"{base}/figures/eps~{{eps}}.png", eps=get_movielens_epsilons()),
    ]


# ---- Avazu helpers (issue 4) ---------------------------------------------------------------
# Config section `avazu:` (workflow/schemas/avazu.schema.yaml); rules in workflow/rules/avazu.smk.
# The CSV is converted once into results/avazu/cache/<source>/train.parquet (see avazu.smk).

AVAZU_ATTRIBUTE_NAMES = ("C1", "C14", "C15", "C16", "C17", "C18", "C19", "C20", "C21")
AVAZU_SYNTHETIC_FILE = "resources/avazu-synthetic/train.gz"

check_epsilon_folder_names("avazu.epsilons", config["avazu"]["epsilons"])

RAW_FILES["avazu"] = (
    get_data_dir_files("avazu") if config["avazu"]["source"] == "kaggle" else []
)


def get_avazu_epsilons():
    """Folder names (format_epsilon) of avazu.epsilons, sorted by value."""
    return get_epsilon_folders(config["avazu"]["epsilons"])


def get_avazu_attributes():
    """The configured attributes, in the official column order."""
    return [a for a in AVAZU_ATTRIBUTE_NAMES if a in config["avazu"]["attributes"]]


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
    folder = f"results/avazu/cache/{config['avazu']['source']}"
    return {"parquet": f"{folder}/train.parquet", "stats": f"{folder}/train.json"}


def get_avazu_synthetic_seed():
    """Seed of the generated file: from the root seed and the stage name (crc32 is stable)."""
    return int(
        np.random.SeedSequence(
            [config["seed"], zlib.crc32(b"avazu_synthetic")]
        ).generate_state(1)[0]
    )


def get_avazu_histogram_params():
    """Every avazu value the histogram jobs use (build_avazu_histograms' options)."""
    return {
        key: config["avazu"][key]
        for key in (
            "top_sites",
            "site_rank_by",
            "min_rows",
            "user_activity",
            "activity_scope",
            "min_users",
            "exclude_placeholder_device",
        )
    }


def get_avazu_outputs():
    """Final targets of the Avazu experiment, if enabled."""
    if not is_enabled("avazu"):
        return []
    return [
        "results/avazu/max_tv.csv",
        "results/avazu/max_tv.parquet",
        "results/avazu/summary.csv",
        "results/avazu/subcategories.csv",
        *expand(
            "results/avazu/figures/attribute~{attribute}.png",
            attribute=get_avazu_attributes(),
        ),
    ]


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


RAW_FILES["wpm_movielens"] = get_data_dir_files("ml-100k")
RAW_FILES["wpm_gowalla"] = (
    [get_wpm_gowalla_derived_file()]
    if config["wpm"]["gowalla"]["source"] == "derived"
    else get_data_dir_files("gowalla")
)


def check_wpm_config():
    """Cross-field checks of the wpm section; each error names the key."""
    wpm = config["wpm"]
    box = wpm["gowalla"]["bbox"]
    for low, high in (("lat_min", "lat_max"), ("lon_min", "lon_max")):
        if box[low] >= box[high]:
            raise ValueError(
                f"config key wpm.gowalla.bbox: {low} ({box[low]!r}) must be < {high} ({box[high]!r})"
            )
    for key in ("movielens.epsilons", "gowalla.epsilons", "gowalla.map_epsilons"):
        experiment, name = key.split(".")
        check_epsilon_folder_names(f"wpm.{key}", wpm[experiment][name])
    if (
        wpm["gowalla"]["source"] == "derived"
        and config["experiments"].get("wpm_gowalla") is True
        and not Path(get_wpm_gowalla_derived_file()).is_file()
    ):
        raise ValueError(
            "config key wpm.gowalla.derived_file: "
            f"{get_wpm_gowalla_derived_file()!r} not found (it is never downloaded; "
            "set wpm.gowalla.source: snap or point data_dir at a copy)"
        )


check_wpm_config()


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
