# Helpers of the reproduction stage (workflow/rules/reproduction.smk), kept apart from its rule
# because `snakemake --lint` flags rules and functions in one file, and out of common.smk, which
# the other stages share. Names start with get_reproduction_.


ARXIV_MOVIELENS_VARIANT = get_movielens_variant("ml-1m", "count")
AISTATS_MOVIELENS_VARIANT = get_movielens_variant("ml-100k", "count")


def get_reproduction_enabled():
    """Experiment of each claim -> whether this run produces its outputs."""
    movielens = is_enabled("movielens")
    variants = get_movielens_variants()
    avazu = is_enabled("avazu")
    min_users = config["avazu"]["min_users"]
    return {
        "synthetic": is_enabled("synthetic"),
        "theory": is_enabled("theory"),
        "movielens": movielens and AISTATS_MOVIELENS_VARIANT in variants,
        "movielens_ml1m": movielens and ARXIV_MOVIELENS_VARIANT in variants,
        "avazu": avazu and min_users == 100,
        "avazu_arxiv": avazu and get_reproduction_avazu_arxiv_folder() is not None,
        "wpm_ring": is_enabled("wpm_ring"),
        "wpm_movielens": is_enabled("wpm_movielens"),
        "wpm_gowalla": is_enabled("wpm_gowalla"),
    }


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


def get_reproduction_inputs(wildcards):
    """Exactly the outputs of the enabled experiments (and Avazu's conversion stats)."""
    inputs = {}
    if is_enabled("synthetic"):
        inputs["synthetic"] = "results/synthetic/values.parquet"
    if is_enabled("theory"):
        inputs["risk"] = "results/theory/risk.csv"
        inputs["example_1"] = "results/theory/example_1.csv"
    if is_enabled("avazu") and config["avazu"]["source"] == "kaggle":
        inputs["avazu_stats"] = get_avazu_cache()["stats"]
    inputs["movielens"] = get_movielens_outputs()
    inputs["avazu"] = get_avazu_outputs()
    inputs["wpm"] = get_wpm_outputs()
    return inputs


def get_reproduction_outputs():
    """Target of the `all` rule: the table (always; rows of experiments not run say so)."""
    return ["results/reproduction.csv"]


def get_reproduction_movielens_variant():
    """The MovieLens folder the claims read: the AISTATS variant if the run has it."""
    variants = get_movielens_variants()
    return (
        AISTATS_MOVIELENS_VARIANT
        if AISTATS_MOVIELENS_VARIANT in variants
        else variants[0]
    )
