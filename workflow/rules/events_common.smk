# Helpers of the events stage (workflow/rules/events.smk); names start with get_events_ or
# EVENTS_. Kept apart from the rules because snakemake --lint flags rules and functions in one file.

EVENTS_RESULTS = "results/events"
# Dataset names (checked with the config: ldpsample.pipeline.config_check.check_events).
EVENTS_NAME_PATTERN = CONFIG_CHECK.EVENTS_NAME_PATTERN
# Library modules whose edits re-run each events job (a script's code trigger sees only the script).
EVENTS_HISTOGRAM_CODE = ("events/table.py", "events/histograms.py")
EVENTS_METRICS_CODE = (
    "events/metrics.py",
    "events/release.py",
    "minimax.py",
    "mollifier.py",
    "baselines.py",
    "divergences.py",
    "sampling.py",
    "audit.py",
)
EVENTS_TABLE_CODE = ("events/tables.py",)


def get_events_config(name):
    """The config entry events.<name>."""
    return config["events"][name]


def get_events_datasets():
    """Names of the enabled events datasets, sorted."""
    entries = config.get("events") or {}
    return sorted(name for name, entry in entries.items() if entry.get("enabled", True))


def get_events_attributes(name):
    """Attributes of a dataset (folder names of its metrics jobs); [] means one, "all"."""
    return list(get_events_config(name)["attributes"]) or ["all"]


def get_events_epsilons(name):
    """Folder names (format_epsilon) of events.<name>.epsilons, sorted by value."""
    return get_epsilon_folders(get_events_config(name)["epsilons"])


def get_events_prior_kind(name):
    prior = get_events_config(name)["prior"]
    return prior if isinstance(prior, str) else "table"


def get_events_inputs(wildcards):
    """The events table and, for a table prior, the public table."""
    entry = get_events_config(wildcards.name)
    prior = entry["prior"]
    return [entry["path"], *([] if isinstance(prior, str) else [prior["path"]])]


def get_events_histogram_params(name, attribute):
    """Every events.<name> value the histogram job of one attribute uses
    (build_event_histograms' options; the attribute "all" of `attributes: []` is the whole table).
    """
    entry = get_events_config(name)
    prior = entry["prior"]
    attributes = [] if not entry["attributes"] else [attribute]
    if not isinstance(prior, str):
        index = list(entry["attributes"]).index(attribute) if attributes else None
        prior = dict(sorted(prior.items()))
        prior["attributes"] = [] if index is None else [prior["attributes"][index]]
    return dict(
        key=f"events.{name}",
        path=entry["path"],
        user=entry["user"],
        item=entry["item"],
        count=entry["count"],
        attributes=attributes,
        prior=prior,
        items=(
            None if entry["items"] is None else sorted(str(i) for i in entry["items"])
        ),
        top_items=entry["top_items"],
        rank_items_by=entry["rank_items_by"],
        activity_by=entry["activity_by"],
        min_user_count=entry["min_user_count"],
        activity_scope=entry["activity_scope"],
        min_users=entry["min_users"],
        exclude_users=sorted(str(u) for u in entry["exclude_users"]),
        on_null=entry["on_null"],
    )


def get_events_metrics_params(name):
    """Every events.<name> value a metrics job uses."""
    entry = get_events_config(name)
    return dict(
        name=name,
        prior=get_events_prior_kind(name),
        epsilons=sorted(float(e) for e in entry["epsilons"]),
        methods=sorted(entry["methods"]),
        release=bool(entry["release"]),
        seed=config["seed"],
    )


def get_events_parts(name, table):
    return expand(
        f"{EVENTS_RESULTS}/{name}/work/attribute~{{attribute}}/{table}.parquet",
        attribute=get_events_attributes(name),
    )


def get_events_outputs():
    """Final targets of every enabled events dataset."""
    outputs = []
    for name in get_events_datasets():
        base = f"{EVENTS_RESULTS}/{name}"
        outputs += [
            f"{base}/{table}"
            for table in (
                "max_tv.csv",
                "max_kl.csv",
                "per_user.parquet",
                "summary.csv",
                "subcategories.csv",
                "audit.csv",
                "audit_users.csv",
            )
        ]
        outputs.append(f"{base}/figures")  # <attribute>.png of every attribute
        if get_events_config(name)["release"]:
            outputs += expand(
                f"{base}/released/eps~{{eps}}.parquet", eps=get_events_epsilons(name)
            )
    return outputs
