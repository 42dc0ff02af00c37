# Helpers of the Avazu stage (workflow/rules/avazu.smk), included by it; names start with
# get_avazu_ or AVAZU_. Config section `avazu:` (workflow/schemas/avazu.schema.yaml). The CSV is
# converted once into results/avazu/cache/<source>/train.parquet (see avazu.smk), which is the
# events table of the events stage's rules (histograms and metrics: ldpsample.events). Each run
# (the section itself, and one per entry of avazu.variants) has a results folder: results/avazu/
# for the section, results/avazu/<key>~<value>[_<key>~<value>...]/ for a variant
# (ldpsample.pipeline.config_check.avazu_variant_name; check_avazu_variants checks the entries).

AVAZU_SYNTHETIC_FILE = "resources/avazu-synthetic/train.gz"
AVAZU_RESULTS = "results/avazu"


def get_avazu_epsilons():
    """Folder names (format_epsilon) of avazu.epsilons, sorted by value."""
    return get_epsilon_folders(config["avazu"]["epsilons"])


def get_avazu_attributes():
    """The configured attributes, in the official column order."""
    return [a for a in REGISTRY.AVAZU_ATTRIBUTES if a in config["avazu"]["attributes"]]


def get_avazu_folders():
    """Results folder (under results/) of every Avazu run: avazu (the section's own values)
    first, then avazu/<variant> per avazu.variants entry."""
    return ["avazu"] + [
        f"avazu/{CONFIG_CHECK.avazu_variant_name(v)}"
        for v in config["avazu"].get("variants", [])
    ]


def get_avazu_folder_pattern():
    """Constraint of the {avazu_folder} wildcard: exactly the configured folders."""
    return "|".join(re.escape(folder) for folder in get_avazu_folders())


def get_avazu_settings(folder):
    """The avazu section with a variant's overrides applied (the folder names the variant)."""
    settings = {k: v for k, v in config["avazu"].items() if k != "variants"}
    for overrides in config["avazu"].get("variants", []):
        if folder == f"avazu/{CONFIG_CHECK.avazu_variant_name(overrides)}":
            settings.update(overrides)
    return settings


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
            [REGISTRY.AVAZU_PLACEHOLDER_DEVICE_ID]
            if avazu["exclude_placeholder_device"]
            else []
        ),
        on_null="error",
    )


def get_avazu_metrics_params():
    """The events options (evaluate_attribute) of every Avazu metrics job: the subcategory's
    mean histogram as prior (data-derived: evaluation, as the paper), minimax and the TV
    mollifier."""
    return dict(
        name="avazu",
        prior="user_mean",
        epsilons=sorted(float(e) for e in config["avazu"]["epsilons"]),
        methods=["minimax", "mollifier_tv"],
    )


def get_avazu_aggregate_params(folder):
    """The variant's values the tables job logs and checks (sorted: params are compared)."""
    settings = get_avazu_settings(folder)
    return dict(sorted((k, settings[k]) for k in CONFIG_CHECK.AVAZU_VARIANT_KEYS))


def get_avazu_parts(folder, table):
    """A variant's per-attribute parts of the events rules (histograms, per_user, ...)."""
    return expand(
        f"results/{folder}/work/attribute~{{attribute}}/{table}.parquet",
        attribute=get_avazu_attributes(),
    )


def get_avazu_figure_outputs():
    """The figure job's outputs, one report entry per configured attribute (named by the
    attribute): results/{avazu_folder}/figures/attribute~<attribute>.png."""
    return {
        attribute: report(
            f"results/{{avazu_folder}}/figures/attribute~{attribute}.png",
            caption="../report/avazu_figure.rst",
            category="Avazu",
            subcategory="{avazu_folder}",
            labels={"figure": "max TV per subcategory", "attribute": attribute},
        )
        for attribute in get_avazu_attributes()
    }


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
            )
        ]
        outputs += expand(
            f"{folder}/figures/attribute~{{attribute}}.png",
            attribute=get_avazu_attributes(),
        )
    return outputs
