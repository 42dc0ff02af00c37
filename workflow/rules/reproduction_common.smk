# Helpers of the reproduction stage (workflow/rules/reproduction.smk), kept apart from its rule
# because `snakemake --lint` flags rules and functions in one file, and out of common.smk, which
# the other stages share. Names start with get_reproduction_.


ARXIV_MOVIELENS_VARIANT = get_movielens_variant("ml-1m", "count")
AISTATS_MOVIELENS_VARIANT = get_movielens_variant("ml-100k", "count")


def get_reproduction_enabled():
    """Experiment of each claim -> whether this run produces its outputs (the keys of
    ldpsample.reproduction.claims.EXPERIMENTS; *_any: any variant of the stage)."""
    movielens = is_enabled("movielens")
    variants = get_movielens_variants()
    avazu = is_enabled("avazu")
    min_users = config["avazu"]["min_users"]
    return {
        "synthetic": is_enabled("synthetic"),
        "theory": is_enabled("theory"),
        "movielens": movielens and AISTATS_MOVIELENS_VARIANT in variants,
        "movielens_ml1m": movielens and ARXIV_MOVIELENS_VARIANT in variants,
        "movielens_any": movielens,
        "avazu": avazu and min_users == 100,
        "avazu_arxiv": avazu and get_reproduction_avazu_arxiv_folder() is not None,
        "avazu_any": avazu,
        "wpm_ring": is_enabled("wpm_ring"),
        "wpm_movielens": is_enabled("wpm_movielens"),
        "wpm_gowalla": is_enabled("wpm_gowalla"),
    }


def get_reproduction_movielens_priors():
    """MovieLens variant folder -> the prior its metrics job used (table or pooled)."""
    ml = config["movielens"]
    listed = lambda value: value if isinstance(value, list) else [value]
    return {
        get_movielens_variant(prior, weight): get_movielens_metrics_params(prior)[
            "prior"
        ]
        for prior in sorted(listed(ml["prior_source"]))
        for weight in sorted(listed(ml["weight"]))
    }


def get_reproduction_context():
    """The config values the claims' checks need (ldpsample.reproduction.reproduction_table;
    sorted keys: params are compared between runs)."""
    wpm_ml = get_wpm_movielens_params()
    setup_keys = (
        "files",
        "seed",
        "n_components",
        "n_outputs",
        "train_fraction",
        "validation_fraction",
        "like_threshold",
        "max_test_users",
    )
    context = {
        "avazu_arxiv_folder": get_reproduction_avazu_arxiv_folder(),
        "avazu_attributes": get_avazu_attributes(),
        "avazu_folder": "avazu",
        "avazu_folders": get_avazu_folders() if is_enabled("avazu") else [],
        "avazu_parquet": (
            get_avazu_cache()["parquet"] if get_reproduction_avazu_read() else None
        ),
        "avazu_prior": get_avazu_metrics_params()["prior"],
        "avazu_stats": (
            get_avazu_cache()["stats"] if get_reproduction_avazu_read() else None
        ),
        "example_1": dict(sorted(config["theory"]["example_1"].items())),
        "movielens_files": (
            {name: get_dataset_paths(name) for name in ("ml-100k", "ml-1m")}
            if is_enabled("movielens")
            else {}
        ),
        "movielens_priors": (
            get_reproduction_movielens_priors() if is_enabled("movielens") else {}
        ),
        "movielens_variant": get_reproduction_movielens_variant(),
        "ring_n": config["wpm"]["ring"]["n"],
        "ring_r": config["wpm"]["ring"]["r"],
        "ring_eta": sorted(config["wpm"]["ring"]["convergence"]["etas"])[
            (len(config["wpm"]["ring"]["convergence"]["etas"]) - 1) // 2
        ],
        "ring_max_iter": config["wpm"]["ring"]["convergence"]["max_iter"],
        "seed": config["seed"],
        "theory_n": config["theory"]["n"],
        "wpm_base_measure": config["wpm"]["movielens"]["base_measure"],
        "wpm_gowalla_file": (
            {
                "path": get_wpm_gowalla_path(),
                "source": config["wpm"]["gowalla"]["source"],
            }
            if is_enabled("wpm_gowalla")
            else None
        ),
        "wpm_movielens_setup": (
            {key: wpm_ml[key] for key in setup_keys}
            if is_enabled("wpm_movielens")
            else None
        ),
    }
    return context


def get_reproduction_avazu_read():
    """Whether this run converts the Kaggle Avazu file (its parquet and stats exist)."""
    return is_enabled("avazu") and config["avazu"]["source"] == "kaggle"


def get_reproduction_not_run():
    """Why a claim's experiment is off (sorted keys: params must be deterministic)."""
    variants = ", ".join(get_movielens_variants())
    reasons = {
        "movielens": (
            f"the config runs MovieLens variants {variants}, not {AISTATS_MOVIELENS_VARIANT}"
            if is_enabled("movielens")
            else "experiments.movielens is off or its data is absent"
        ),
        "movielens_ml1m": (
            f"the config runs MovieLens variants {variants}; the arXiv variant needs "
            "ml-1m in movielens.prior_source (e.g. [ml-100k, ml-1m])"
            if is_enabled("movielens")
            else "experiments.movielens is off or its data is absent"
        ),
        "avazu": (
            f"avazu.min_users is {config['avazu']['min_users']}, not the AISTATS 100"
            if is_enabled("avazu")
            else "experiments.avazu is off or its data is absent"
        ),
        "avazu_arxiv": (
            "neither avazu.min_users nor an avazu.variants entry is >= 1000 (add "
            "avazu.variants: [{min_users: 1000}], as config/paper.yaml does)"
            if is_enabled("avazu")
            else "experiments.avazu is off or its data is absent"
        ),
    }
    for name in ("synthetic", "theory", "wpm_ring", "wpm_movielens", "wpm_gowalla"):
        reasons[name] = f"experiments.{name} is off or its data is absent"
    for name in ("movielens", "avazu"):
        reasons[f"{name}_any"] = f"experiments.{name} is off or its data is absent"
    return dict(sorted(reasons.items()))


def get_reproduction_avazu_arxiv_folder():
    """The Avazu results folder (under results/) of the arXiv threshold: the first run (the
    section, then its variants) with min_users >= 1000; None without one."""
    for folder in get_avazu_folders():
        if get_avazu_settings(folder)["min_users"] >= 1000:
            return folder
    return None


def get_reproduction_wpm_gowalla_data():
    """The `data` cell of the Gowalla rows: which check-in file the config reads."""
    gowalla = config["wpm"]["gowalla"]
    if gowalla["source"] == "derived":
        return (
            "derived sample (not SNAP): "
            f"{gowalla['derived_file']}, ~300 Austin users with ≥ 10 check-ins, biased towards "
            "active users and popular places"
        )
    path = get_wpm_gowalla_path()
    if "first-" in Path(path).name:
        return f"partial: SNAP prefix {Path(path).name} (a few Austin users)"
    return "full (SNAP loc-gowalla_totalCheckins)"


def get_reproduction_wpm_movielens_log():
    """A log of the WPM MovieLens jobs (the first ε's): it names a partial ML-100K copy."""
    epsilons = get_wpm_epsilons("movielens")
    return f"logs/wpm_movielens_part/eps~{epsilons[0]}.log" if epsilons else None


def get_reproduction_inputs(wildcards):
    """The outputs of the enabled experiments, the real-data stages' histograms and priors
    (each user's TV(p, q)), Avazu's conversion stats, and the ML-100K files the WPM MovieLens
    row rebuilds its split from."""
    inputs = {}
    if is_enabled("synthetic"):
        inputs["synthetic"] = "results/synthetic/values.parquet"
    if is_enabled("theory"):
        inputs["risk"] = "results/theory/risk.csv"
        inputs["example_1"] = "results/theory/example_1.csv"
    if get_reproduction_avazu_read():
        inputs["avazu_stats"] = get_avazu_cache()["stats"]
        inputs["avazu_parquet"] = get_avazu_cache()["parquet"]
    inputs["movielens"] = get_movielens_outputs()
    inputs["avazu"] = get_avazu_outputs()
    inputs["wpm"] = get_wpm_outputs()
    work = []
    if is_enabled("movielens"):
        work += [
            f"results/movielens/{variant}/work/{table}.parquet"
            for variant in get_movielens_variants()
            for table in ("histograms", "priors")
        ]
    if is_enabled("avazu"):
        work += [
            f"results/{folder}/work/attribute~{attribute}/{table}.parquet"
            for folder in get_avazu_folders()
            for attribute in get_avazu_attributes()
            for table in ("histograms", "priors")
        ]
    inputs["work"] = work
    if is_enabled("wpm_movielens"):
        inputs["ml100k"] = get_dataset_inputs("ml-100k")
    if is_enabled("movielens"):
        inputs["ml_files"] = get_dataset_inputs("ml-100k") + get_dataset_inputs("ml-1m")
    if is_enabled("wpm_gowalla"):
        inputs["gowalla"] = get_wpm_gowalla_path()
    return inputs


def get_reproduction_outputs():
    """Targets of the `all` rule: the table and its counts per verdict (always; rows of
    experiments not run say so)."""
    return ["results/reproduction.csv", "results/reproduction_counts.csv"]


def get_reproduction_movielens_variant():
    """The MovieLens folder the claims read: the AISTATS variant if the run has it."""
    variants = get_movielens_variants()
    return (
        AISTATS_MOVIELENS_VARIANT
        if AISTATS_MOVIELENS_VARIANT in variants
        else variants[0]
    )
