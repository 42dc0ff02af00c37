# Helpers of the events stage (workflow/rules/events.smk); names start with get_events_ or
# EVENTS_. Kept apart from the rules because snakemake --lint flags rules and functions in one file.
# Every value of an entry reaches a script as fields of its one options object
# (ldpsample.events.options.EventsOptions, built once per entry by get_events_options), each rule
# getting the fields it uses, so a config change re-runs exactly the jobs that read it.

import dataclasses

EVENTS_RESULTS = "results/events"
# Dataset names (checked with the config: ldpsample.pipeline.config_check.check_events).
EVENTS_NAME_PATTERN = CONFIG_CHECK.EVENTS_NAME_PATTERN
# The folders a release replaces whole: secret randomness, and a seeded (reproducible) run.
EVENTS_PUBLISH_FOLDERS = ("publish", "reproducible_not_for_publication")
# A table's files (events.<name>.path: a file, a folder, a glob; stdlib only, loaded by path).
EVENTS_FILES = load_library_module("ldpsample_events_files", "events/reading/files.py")
# An entry's options (stdlib only, loaded by path).
EVENTS_OPTIONS = load_library_module("ldpsample_events_options", "events/options.py")


def get_events_config(name):
    """The config entry events.<name>."""
    return config["events"][name]


@functools.cache
def get_events_options(name):
    """events.<name> (checked, schema defaults filled) as one EventsOptions."""
    return EVENTS_OPTIONS.EventsOptions.from_entry(
        get_events_config(name), key=f"events.{name}"
    )


def get_events_report(table, caption, what):
    """A table of results/events/<name>/ as a report entry (category Events, subcategory and
    label the dataset; caption ../report/<caption>, relative to the rule files)."""
    return report(
        f"{EVENTS_RESULTS}/{{name}}/{table}",
        caption=f"../report/{caption}",
        category="Events",
        subcategory="{name}",
        labels={"dataset": "{name}", "table": what},
    )


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


def is_events_release(name):
    """Whether events.<name> publishes a release (release: true)."""
    return bool(get_events_config(name)["release"])


def get_events_prior_kind(name):
    """The metrics job's prior: a release's spec, or the configured kind."""
    if is_events_release(name):
        return "spec"
    return str(get_events_options(name).prior_kind)


def get_events_public_inputs(name):
    """The public table of a table prior, or the manifest of a reused spec, if any."""
    prior = get_events_config(name)["prior"]
    if isinstance(prior, str):
        return []
    if "spec" in prior:
        spec = Path(prior["spec"])
        return [str(spec if spec.suffix == ".json" else spec / "manifest.json")]
    return get_events_table_files(prior["path"])


def get_events_inputs(wildcards):
    """The histogram job's inputs: the events table's files and, for evaluation with a table
    prior, the public table's; a release's histograms read its spec instead
    (get_events_spec_input).
    """
    name = wildcards.name
    if is_events_release(name):
        return get_events_files(name)
    return [*get_events_files(name), *get_events_public_inputs(name)]


@functools.cache
def get_events_table(path):
    """The files of a table path (a file, folder or glob: EVENTS_FILES.list_table_files); None
    for a path under results/ that another rule makes (then it is one file)."""
    if str(path).startswith("results/"):
        return None
    return EVENTS_FILES.list_table_files(path)


def get_events_table_files(path):
    """The files of a table path, in order ([path] for one another rule makes)."""
    table = get_events_table(path)
    return [path] if table is None else list(table.files)


def get_events_files(name):
    """The events table's files, in order (its partitions)."""
    return get_events_table_files(get_events_config(name)["path"])


def get_events_buckets(name):
    """events.<name>.buckets: auto is one bucket per EVENTS_FILES.ROWS_PER_BUCKET estimated
    rows (1 for a table another rule makes); 1 runs the one-job rules."""
    buckets = get_events_config(name).get("buckets", "auto")
    if buckets != "auto":
        return int(buckets)
    table = get_events_table(get_events_config(name)["path"])
    return 1 if table is None else EVENTS_FILES.auto_buckets(table)


def is_events_bucketed(name):
    """Whether events.<name> runs the map/reduce rules (more than one bucket)."""
    return get_events_buckets(name) > 1


def get_events_name_pattern(bucketed):
    """Constraint of {name} for the rules of one layout: the enabled names with (bucketed) or
    without buckets; a pattern matching nothing when there are none."""
    names = [n for n in get_events_datasets() if is_events_bucketed(n) == bucketed]
    return "|".join(re.escape(n) for n in names) if names else "(?!)"


def get_events_partitions(name):
    """Indices of the events table's files (the {part} wildcard of events_split)."""
    return list(range(len(get_events_files(name))))


def get_events_split(name):
    """Every partition's split folder (its bucket files, checks, rows and ranking)."""
    return expand(
        f"{get_events_work(name)}/split/part~{{part}}", part=get_events_partitions(name)
    )


def get_events_bucket_files(name, table):
    """One file of every bucket, in bucket order (histograms, users, items, ranks)."""
    return expand(
        f"{get_events_work(name)}/bucket~{{bucket}}/{table}.parquet",
        bucket=range(get_events_buckets(name)),
    )


def get_events_ranks_need_activity(name):
    """Whether the item ranking is summed per bucket (global activity filter first) rather
    than per partition (ldpsample.events.bucketed.steps.ranks_need_activity)."""
    entry = get_events_config(name)
    return (
        not is_events_release(name)
        and entry["top_items"] is not None
        and entry["activity_scope"] == "global"
        and entry["min_user_count"] > 0
    )


def get_events_tops_inputs(wildcards):
    """The merge of the partitions: their split folders and, where the ranking needs each
    user's activity, every bucket's ranking partial sums."""
    name = wildcards.name
    inputs = {"split": get_events_split(name)}
    if get_events_ranks_need_activity(name):
        inputs["ranks"] = get_events_bucket_files(name, "ranks")
    if is_events_release(name):
        inputs["domain"] = get_events_spec_files(name)["domain"]
    return inputs


def get_events_priors_inputs(wildcards):
    """An attribute's reduce step: every bucket's kept users and items, the bucket histograms
    for a user_mean prior, the public table or the spec's domain."""
    name = wildcards.name
    inputs = {
        "users": get_events_bucket_files(name, "users"),
        "item_sets": get_events_bucket_files(name, "items"),
        "rows": f"{get_events_work(name)}/merge/rows.parquet",
        "checks": f"{get_events_work(name)}/merge/checks.json",
        "public": get_events_public_inputs(name) if not is_events_release(name) else [],
    }
    if get_events_prior_kind(name) == "user_mean":
        inputs["histograms"] = get_events_bucket_files(name, "histograms")
    if is_events_release(name):
        inputs["domain"] = get_events_spec_files(name)["domain"]
    return inputs


def get_events_bucket_params(name):
    """What the map/reduce steps of events.<name> use: the histogram options of every
    attribute (get_events_histogram_params), the buckets and where the ranking is summed.
    """
    options = get_events_histogram_params(name, None)
    options.update(
        buckets=get_events_buckets(name),
        rank_rows=not get_events_ranks_need_activity(name),
        release=is_events_release(name),
    )
    return options


def get_events_work(name):
    return f"{EVENTS_RESULTS}/{name}/work"


def get_events_spec_files(name, folder="work/spec"):
    """A release's spec files (its domain and manifest) under results/events/<name>/<folder>."""
    return {
        part: f"{EVENTS_RESULTS}/{name}/{folder}/{part}.{suffix}"
        for part, suffix in (("domain", "csv"), ("manifest", "json"))
    }


def get_events_gate(wildcards):
    """The histogram job's inputs that only a release has: its spec's domain and the budget
    gate (ancient: a changed budget re-checks, it does not re-run what the gate guards).
    """
    name = wildcards.name
    if not is_events_release(name):
        return {}
    return {
        "domain": get_events_spec_files(name)["domain"],
        "gate": ancient(f"{get_events_work(name)}/budget.json"),
    }


def get_events_spec_params(name):
    """Every events.<name> value the spec uses: public inputs only (ldpsample.publish.build_spec)."""
    entry = get_events_config(name)
    prior = entry["prior"]
    if isinstance(prior, dict):
        prior = dict(sorted(prior.items()))
    participation = None
    if entry["attributes_public"] and entry["min_user_count"] > 0:
        participation = dict(
            min_user_count=entry["min_user_count"],
            activity_by=entry["activity_by"] or entry["count"] or "rows",
            activity_scope=entry["activity_scope"],
        )
    subcategories = entry["subcategories"]
    return dict(
        name=name,
        key=f"events.{name}",
        attributes=list(entry["attributes"]),
        prior=prior,
        epsilons=sorted(float(e) for e in entry["epsilons"]),
        items=(
            None if entry["items"] is None else sorted(str(i) for i in entry["items"])
        ),
        top_items=None if entry["top_items"] == "auto" else entry["top_items"],
        subcategories=(
            None
            if subcategories is None
            else {
                str(k): [str(v) for v in subcategories[k]]
                for k in sorted(subcategories)
            }
        ),
        samples=entry["samples"],
        prior_smoothing=float(entry["prior_smoothing"]),
        attributes_public=bool(entry["attributes_public"]),
        participation=participation,
        seeded=entry["release_seed"] is not None,
        population=entry["population"],
        private_files=sorted(str(f) for f in get_events_files(name)),
        release_mode=entry["release_mode"],
        subcategory_shares=get_events_subcategory_shares(entry["subcategory_shares"]),
    )


def get_events_subcategory_shares(shares):
    """subcategory_shares with sorted keys (deterministic params), or as given."""
    if not isinstance(shares, dict):
        return shares
    return {
        str(a): {str(s): float(v) for s, v in sorted(shares[a].items())}
        for a in sorted(shares)
    }


def get_events_roster_params(name):
    """What the roster job reads: every user of the table (after exclude_users, nulls)."""
    return get_events_options(name).params(EVENTS_OPTIONS.ROSTER_FIELDS)


def get_events_budget_params(name):
    """The ledger and budget of a release: the budget gate's only parameters (see events.smk)."""
    entry = get_events_config(name)
    return dict(
        key=f"events.{name}.budget",
        ledger=CONFIG_CHECK.events_ledger(name, entry),
        budget=entry["budget"],
    )


def get_events_histogram_params(name, attribute):
    """The options fields a histogram job of one attribute uses (EVENTS_OPTIONS.HISTOGRAM_FIELDS;
    the attribute "all" of `attributes: []` is the whole table, None every attribute); top_items
    resolved, and for a release the spec's domain and q in place of the data-derived choices.
    """
    options = get_events_options(name).for_attribute(attribute)
    if is_events_release(name):
        options = dataclasses.replace(options, prior="spec", items=None, top_items=None)
    else:
        options = dataclasses.replace(options, top_items=options.evaluation_top_items)
    return options.params(EVENTS_OPTIONS.HISTOGRAM_FIELDS)


def get_events_metrics_params(name):
    """Every events.<name> value a metrics job uses."""
    return dict(
        name=name,
        prior=get_events_prior_kind(name),
        **get_events_options(name).params(EVENTS_OPTIONS.METRICS_FIELDS),
    )


def get_events_parts(name, table):
    """Per-attribute parts (histograms, per_user, audit, subcategories); with buckets,
    histograms per bucket and per_user and audit per (attribute, bucket), in that order.
    """
    work = get_events_work(name)
    if is_events_bucketed(name) and table == "histograms":
        return get_events_bucket_files(name, "histograms")
    if is_events_bucketed(name) and table in ("per_user", "audit"):
        return expand(
            f"{work}/attribute~{{attribute}}/bucket~{{bucket}}/{table}.parquet",
            attribute=get_events_attributes(name),
            bucket=range(get_events_buckets(name)),
        )
    return expand(
        f"{work}/attribute~{{attribute}}/{table}.parquet",
        attribute=get_events_attributes(name),
    )


def get_events_combine_params(name):
    """The combine job's layout: per_user parts of (attribute, bucket) with buckets."""
    if not is_events_bucketed(name):
        return dict(buckets=1, parts=[])
    return dict(
        buckets=get_events_buckets(name),
        parts=[
            [attribute, bucket]
            for attribute in get_events_attributes(name)
            for bucket in range(get_events_buckets(name))
        ],
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
                "tradeoff.csv",
                "audit.csv",
                "tradeoff.png",
            )
        ]
        outputs.append(f"{base}/figures")  # <attribute>.png of every attribute
        if is_events_release(name):
            outputs += get_events_publish_outputs(name).values()
    return outputs


def get_events_release_pattern():
    """Constraint of {name} for the publish job: the enabled tables with release: true (a
    reused spec's folder under another, absent entry is then a plain input file)."""
    names = [n for n in get_events_datasets() if is_events_release(n)]
    return "|".join(re.escape(n) for n in names) if names else "(?!)"


def get_events_publish_folder(name):
    """The folder a release replaces whole: publish/ (secret randomness), or
    reproducible_not_for_publication/ for a seeded run (never publish/)."""
    seeded = get_events_config(name)["release_seed"] is not None
    return f"{EVENTS_RESULTS}/{name}/{EVENTS_PUBLISH_FOLDERS[1 if seeded else 0]}"


def get_events_publish_outputs(name):
    """What a release job leaves: its receipt (a copy of the published folder's release.json;
    the folder itself is written whole by the job) and, outside the folder, the operator's
    ledger totals and release report."""
    base = f"{EVENTS_RESULTS}/{name}"
    return {
        "receipt": f"{base}/work/release.json",
        "ledger": f"{base}/ledger.csv",
        "report": f"{base}/release_report.csv",
    }
