# Helpers of the WPM stages (workflow/rules/wpm.smk), included by it; names start with get_wpm_.
# Config section `wpm:` (workflow/schemas/wpm.schema.yaml). The derived Gowalla file's location,
# get_wpm_gowalla_derived_file, is in common.smk with the other data locations (the "auto"
# toggle of wpm_gowalla waits for it).


def get_wpm_seed(stage, *keys):
    """Seed of one WPM job: the root seed, the stage and its wildcards (zlib.crc32 is stable
    across runs and Python versions, unlike hash()); pass to numpy.random.default_rng.
    """
    return [config["seed"], *(zlib.crc32(str(key).encode()) for key in (stage, *keys))]


def get_wpm_sphere_grids():
    """wpm.sphere.grid_sizes as {d: sorted sizes} (d = 2: S¹, d = 3: S²)."""
    sizes = config["wpm"]["sphere"]["grid_sizes"]
    return {2: sorted(sizes["s1"]), 3: sorted(sizes["s2"])}


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
            "results/wpm_sphere/scales.parquet",
            "results/wpm_sphere/convergence.parquet",
            "results/wpm_sphere/sphere.png",
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
