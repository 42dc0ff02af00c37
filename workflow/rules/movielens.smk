# MovieLens experiment of Zamanlooy et al. (2025): max TV/KL per age group (issue 4).
# Config: the `movielens:` section (workflow/schemas/movielens.schema.yaml); helpers: common.smk,
# section "MovieLens helpers". One data job per variant (prior~<prior_source>_weight~<weight>:
# the paper-vs-code options), one metrics job per (variant, ε), then local tables and figures.


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
        code=get_library_sources(
            "datasets/movielens.py", "datasets/registry.py", "datasets/_files.py"
        ),
    output:
        users="results/movielens/prior~{prior_source}_weight~{weight}/users.parquet",
        priors="results/movielens/prior~{prior_source}_weight~{weight}/priors.parquet",
    log:
        "logs/movielens_data/prior~{prior_source}_weight~{weight}.log",
    benchmark:
        "logs/benchmarks/movielens_data/prior~{prior_source}_weight~{weight}.tsv"
    conda:
        CONDA_ENV
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        ml1m_files=get_dataset_paths("ml-1m"),
        ml100k_files=get_dataset_paths("ml-100k"),
        prior_source=lambda wildcards: wildcards.prior_source,
        weight=lambda wildcards: wildcards.weight,
    script:
        "../../scripts/movielens_data.py"


rule movielens_metrics:
    input:
        users="results/movielens/prior~{prior_source}_weight~{weight}/users.parquet",
        priors="results/movielens/prior~{prior_source}_weight~{weight}/priors.parquet",
        code=get_library_sources(
            "experiments/real_data.py",
            "experiments/real_data_tables.py",
            "minimax.py",
            "mollifier.py",
            "divergences.py",
        ),
    output:
        per_user="results/movielens/prior~{prior_source}_weight~{weight}/eps~{eps}/per_user.parquet",
        max_tv="results/movielens/prior~{prior_source}_weight~{weight}/eps~{eps}/max_tv.parquet",
        max_kl="results/movielens/prior~{prior_source}_weight~{weight}/eps~{eps}/max_kl.parquet",
    log:
        "logs/movielens_metrics/prior~{prior_source}_weight~{weight}_eps~{eps}.log",
    benchmark:
        "logs/benchmarks/movielens_metrics/prior~{prior_source}_weight~{weight}_eps~{eps}.tsv"
    conda:
        CONDA_ENV
    resources:
        mem_mb=2000,
        runtime=15,
    params:
        epsilon=lambda wildcards: float(wildcards.eps),
    script:
        "../../scripts/movielens_metrics.py"


rule movielens_aggregate:
    input:
        per_user=get_movielens_parts("per_user"),
        max_tv=get_movielens_parts("max_tv"),
        max_kl=get_movielens_parts("max_kl"),
        code=get_library_sources(
            "experiments/real_data.py", "experiments/real_data_tables.py"
        ),
    output:
        per_user="results/movielens/prior~{prior_source}_weight~{weight}/per_user.parquet",
        max_tv=report(
            "results/movielens/prior~{prior_source}_weight~{weight}/max_tv.csv",
            caption="../report/movielens_max_tv.rst",
            category="MovieLens",
            subcategory="prior~{prior_source}_weight~{weight}",
            labels={"table": "max TV per age group and ε"},
        ),
        max_kl=report(
            "results/movielens/prior~{prior_source}_weight~{weight}/max_kl.csv",
            caption="../report/movielens_max_kl.rst",
            category="MovieLens",
            subcategory="prior~{prior_source}_weight~{weight}",
            labels={"table": "max KL per age group and ε"},
        ),
        summary=report(
            "results/movielens/prior~{prior_source}_weight~{weight}/summary.csv",
            caption="../report/movielens_summary.rst",
            category="MovieLens",
            subcategory="prior~{prior_source}_weight~{weight}",
            labels={"table": "win shares and mean improvements"},
        ),
    log:
        "logs/movielens_aggregate/prior~{prior_source}_weight~{weight}.log",
    conda:
        CONDA_ENV
    script:
        "../../scripts/movielens_aggregate.py"


rule movielens_figure:
    input:
        max_tv="results/movielens/prior~{prior_source}_weight~{weight}/eps~{eps}/max_tv.parquet",
        max_kl="results/movielens/prior~{prior_source}_weight~{weight}/eps~{eps}/max_kl.parquet",
        code=get_library_sources(
            "experiments/real_data_figures.py",
            "experiments/real_data_tables.py",
            "plotting.py",
        ),
    output:
        figure=report(
            "results/movielens/prior~{prior_source}_weight~{weight}/figures/eps~{eps}.png",
            caption="../report/movielens_figure.rst",
            category="MovieLens",
            subcategory="prior~{prior_source}_weight~{weight}",
            labels={"figure": "max TV and KL per age group", "ε": "{eps}"},
        ),
    log:
        "logs/movielens_figure/prior~{prior_source}_weight~{weight}_eps~{eps}.log",
    conda:
        CONDA_ENV
    params:
        epsilon=lambda wildcards: float(wildcards.eps),
    script:
        "../../scripts/movielens_figure.py"


rule movielens_overview_figure:
    input:
        max_tv=get_movielens_parts("max_tv"),
        max_kl=get_movielens_parts("max_kl"),
        code=get_library_sources(
            "experiments/real_data_figures.py",
            "experiments/real_data_tables.py",
            "plotting.py",
        ),
    output:
        figure=report(
            "results/movielens/prior~{prior_source}_weight~{weight}/figures/all_epsilons.png",
            caption="../report/movielens_overview.rst",
            category="MovieLens",
            subcategory="prior~{prior_source}_weight~{weight}",
            labels={"figure": "max TV and KL per age group, every ε", "ε": "all"},
        ),
    log:
        "logs/movielens_overview_figure/prior~{prior_source}_weight~{weight}.log",
    conda:
        CONDA_ENV
    params:
        epsilon=None,
    script:
        "../../scripts/movielens_figure.py"
