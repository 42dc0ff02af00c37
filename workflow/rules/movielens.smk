# MovieLens experiment of Zamanlooy et al. (2025): max TV/KL per age group, run by the events
# stage's library and scripts. Config: the `movielens:` section
# (workflow/schemas/movielens.schema.yaml); helpers: movielens_common.smk.
# One data job turns the official files into events tables (one row per (user, genre)); per
# variant (MOVIELENS_VARIANT, prior~<prior_source>_weight~<weight>: the paper-vs-code options)
# one histogram job and one metrics job looping over ε in-process (scripts/events_*.py), then
# local jobs: the tables in the MovieLens layout and the figures (one per ε, one for all).


include: "events_common.smk"
include: "movielens_common.smk"


wildcard_constraints:
    prior_source="ml-100k|ml-1m",
    weight="count|rating",


localrules:
    movielens_aggregate,
    movielens_figure,
    movielens_overview_figure,


rule movielens_data:
    input:
        ml1m=get_dataset_inputs("ml-1m"),
        ml100k=get_dataset_inputs("ml-100k"),
        code=get_script_sources("movielens_data.py"),
    output:
        ml1m=MOVIELENS_EVENTS["ml1m"],
        ml100k=MOVIELENS_EVENTS["ml100k"],
    log:
        "logs/movielens_data/events.log",
    benchmark:
        "logs/benchmarks/movielens_data/events.tsv"
    conda:
        CONDA_ENV
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        ml1m_files=get_dataset_paths("ml-1m"),
        ml100k_files=get_dataset_paths("ml-100k"),
    script:
        "../../scripts/movielens_data.py"


rule movielens_histograms:
    input:
        data=list(MOVIELENS_EVENTS.values()),
        code=get_script_sources("events_histograms.py"),
    output:
        histograms=f"{MOVIELENS_FOLDER}/work/histograms.parquet",
        priors=f"{MOVIELENS_FOLDER}/work/priors.parquet",
        subcategories=f"{MOVIELENS_FOLDER}/work/subcategories.parquet",
    log:
        f"logs/movielens_histograms/{MOVIELENS_VARIANT}.log",
    benchmark:
        f"logs/benchmarks/movielens_histograms/{MOVIELENS_VARIANT}.tsv"
    conda:
        CONDA_ENV
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        options=lambda wildcards: get_movielens_histogram_params(
            wildcards.prior_source, wildcards.weight
        ),
    script:
        "../../scripts/events_histograms.py"


rule movielens_metrics:
    input:
        histograms=f"{MOVIELENS_FOLDER}/work/histograms.parquet",
        priors=f"{MOVIELENS_FOLDER}/work/priors.parquet",
        code=get_script_sources("events_metrics.py"),
    output:
        per_user=temp(f"{MOVIELENS_FOLDER}/work/per_user.parquet"),
        audit=temp(f"{MOVIELENS_FOLDER}/work/audit.parquet"),
    log:
        f"logs/movielens_metrics/{MOVIELENS_VARIANT}.log",
    benchmark:
        f"logs/benchmarks/movielens_metrics/{MOVIELENS_VARIANT}.tsv"
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        options=lambda wildcards: get_movielens_metrics_params(wildcards.prior_source),
        attribute="age_group",
    script:
        "../../scripts/events_metrics.py"


rule movielens_aggregate:
    input:
        per_user=f"{MOVIELENS_FOLDER}/work/per_user.parquet",
        audit=f"{MOVIELENS_FOLDER}/work/audit.parquet",
        code=get_script_sources("movielens_aggregate.py"),
    output:
        per_user=f"{MOVIELENS_FOLDER}/per_user.parquet",
        max_tv=report(
            f"{MOVIELENS_FOLDER}/max_tv.csv",
            caption="../report/movielens_max_tv.rst",
            category="MovieLens",
            subcategory=MOVIELENS_VARIANT,
            labels={"table": "max TV per age group and ε"},
        ),
        max_kl=report(
            f"{MOVIELENS_FOLDER}/max_kl.csv",
            caption="../report/movielens_max_kl.rst",
            category="MovieLens",
            subcategory=MOVIELENS_VARIANT,
            labels={"table": "max KL per age group and ε"},
        ),
        summary=report(
            f"{MOVIELENS_FOLDER}/summary.csv",
            caption="../report/movielens_summary.rst",
            category="MovieLens",
            subcategory=MOVIELENS_VARIANT,
            labels={"table": "win shares and mean improvements"},
        ),
        audit=f"{MOVIELENS_FOLDER}/audit.csv",
    log:
        f"logs/movielens_aggregate/{MOVIELENS_VARIANT}.log",
    conda:
        CONDA_ENV
    script:
        "../../scripts/movielens_aggregate.py"


rule movielens_figure:
    input:
        max_tv=f"{MOVIELENS_FOLDER}/max_tv.csv",
        max_kl=f"{MOVIELENS_FOLDER}/max_kl.csv",
        code=get_script_sources("movielens_figure.py"),
    output:
        figure=report(
            f"{MOVIELENS_FOLDER}/figures/eps~{{eps}}.png",
            caption="../report/movielens_figure.rst",
            category="MovieLens",
            subcategory=MOVIELENS_VARIANT,
            labels={"figure": "max TV and KL per age group", "ε": "{eps}"},
        ),
    log:
        f"logs/movielens_figure/{MOVIELENS_VARIANT}_eps~{{eps}}.log",
    conda:
        CONDA_ENV
    params:
        epsilon=lambda wildcards: float(wildcards.eps),
    script:
        "../../scripts/movielens_figure.py"


rule movielens_overview_figure:
    input:
        max_tv=f"{MOVIELENS_FOLDER}/max_tv.csv",
        max_kl=f"{MOVIELENS_FOLDER}/max_kl.csv",
        code=get_script_sources("movielens_figure.py"),
    output:
        figure=report(
            f"{MOVIELENS_FOLDER}/figures/all_epsilons.png",
            caption="../report/movielens_overview.rst",
            category="MovieLens",
            subcategory=MOVIELENS_VARIANT,
            labels={"figure": "max TV and KL per age group, every ε", "ε": "all"},
        ),
    log:
        f"logs/movielens_overview_figure/{MOVIELENS_VARIANT}.log",
    conda:
        CONDA_ENV
    params:
        epsilon=None,
    script:
        "../../scripts/movielens_figure.py"
