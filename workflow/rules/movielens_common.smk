# Helpers of the MovieLens stage (workflow/rules/movielens.smk), included by it; names start
# with get_movielens_ or MOVIELENS_. Config section `movielens:`
# (workflow/schemas/movielens.schema.yaml). The official files become two events tables once
# (MOVIELENS_EVENTS); each variant runs them through the events stage's code. The paper-vs-code
# options name the results folder, results/movielens/prior~<prior_source>_weight~<weight>/, so
# every variant keeps its results.

# The variant folder, with the rules' wildcards; the one place it is spelled out.
MOVIELENS_VARIANT = "prior~{prior_source}_weight~{weight}"
MOVIELENS_FOLDER = f"results/movielens/{MOVIELENS_VARIANT}"
# The events tables of movielens_data (ldpsample.experiments.movielens.tables.movielens_events).
MOVIELENS_EVENTS = {
    "ml1m": "results/movielens/events/ml-1m.parquet",
    "ml100k": "results/movielens/events/ml-100k.parquet",
}


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
    mollifiers, every ε in-process."""
    return dict(
        name="movielens",
        prior="pooled" if prior_source == "ml-1m" else "table",
        epsilons=sorted(float(e) for e in config["movielens"]["epsilons"]),
        methods=["minimax", "mollifier_kl", "mollifier_tv"],
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
