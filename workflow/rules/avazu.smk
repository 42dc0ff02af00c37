# Avazu experiment of Zamanlooy et al. (2025): max TV per attribute subcategory (issue 4).
# Config: the `avazu:` section (workflow/schemas/avazu.schema.yaml); helpers: common.smk,
# section "Avazu helpers". The (gzipped) CSV is converted once to parquet, then one histogram
# job per attribute, one metrics job per (attribute, ε), then local tables and figures.
#
# The parquet is a cache, not a temp() file: it is the one pass over the 40 M-row gzip (about a
# minute, the slowest step after a download) and every histogram job reads it, so it is kept
# to let a change of a filter option (min_users, top_sites, ...) or a new attribute re-run only
# the histograms. It is derived data, hence under results/avazu/cache/<source>/ (removed with
# results/, never mixed with the raw files in data_dir or resources/).


wildcard_constraints:
    attribute="|".join(AVAZU_ATTRIBUTE_NAMES),


localrules:
    avazu_aggregate,
    avazu_figure,


rule avazu_generate:
    input:
        code=get_library_sources("datasets/avazu_synthetic.py"),
    output:
        csv=AVAZU_SYNTHETIC_FILE,
    log:
        "logs/avazu_generate/generate.log",
    benchmark:
        "logs/benchmarks/avazu_generate/generate.tsv"
    conda:
        CONDA_ENV
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        rows=config["avazu"]["synthetic"]["rows"],
        users=config["avazu"]["synthetic"]["users"],
        sites=config["avazu"]["synthetic"]["sites"],
        seed=get_avazu_synthetic_seed(),
    script:
        "../../scripts/avazu_generate.py"


rule avazu_convert:
    input:
        data=get_avazu_source_inputs(),
        code=get_library_sources("datasets/avazu.py"),
    output:
        parquet=get_avazu_cache()["parquet"],
        stats=get_avazu_cache()["stats"],
    log:
        f"logs/avazu_convert/{config['avazu']['source']}.log",
    benchmark:
        f"logs/benchmarks/avazu_convert/{config['avazu']['source']}.tsv"
    conda:
        CONDA_ENV
    resources:
        mem_mb=3000,
        runtime=30,
    params:
        src=get_avazu_source_file(),
        on_bad_rows=config["avazu"]["on_bad_rows"],
    script:
        "../../scripts/avazu_convert.py"


rule avazu_histograms:
    input:
        parquet=get_avazu_cache()["parquet"],
        code=get_library_sources("datasets/avazu.py", "experiments/real_data_tables.py"),
    output:
        histograms="results/avazu/attribute~{attribute}/histograms.parquet",
        counts="results/avazu/attribute~{attribute}/subcategories.json",
    log:
        "logs/avazu_histograms/attribute~{attribute}.log",
    benchmark:
        "logs/benchmarks/avazu_histograms/attribute~{attribute}.tsv"
    conda:
        CONDA_ENV
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        **get_avazu_histogram_params(),
        attribute=lambda wildcards: wildcards.attribute,
    script:
        "../../scripts/avazu_histograms.py"


rule avazu_metrics:
    input:
        histograms="results/avazu/attribute~{attribute}/histograms.parquet",
        code=get_library_sources(
            "experiments/real_data.py",
            "experiments/real_data_tables.py",
            "minimax.py",
            "mollifier.py",
            "divergences.py",
        ),
    output:
        per_user="results/avazu/attribute~{attribute}/eps~{eps}/per_user.parquet",
        max_tv="results/avazu/attribute~{attribute}/eps~{eps}/max_tv.parquet",
    log:
        "logs/avazu_metrics/attribute~{attribute}_eps~{eps}.log",
    benchmark:
        "logs/benchmarks/avazu_metrics/attribute~{attribute}_eps~{eps}.tsv"
    conda:
        CONDA_ENV
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        epsilon=lambda wildcards: float(wildcards.eps),
    script:
        "../../scripts/avazu_metrics.py"


rule avazu_aggregate:
    input:
        max_tv=expand(
            "results/avazu/attribute~{attribute}/eps~{eps}/max_tv.parquet",
            attribute=get_avazu_attributes(),
            eps=get_avazu_epsilons(),
        ),
        counts=expand(
            "results/avazu/attribute~{attribute}/subcategories.json",
            attribute=get_avazu_attributes(),
        ),
        stats=get_avazu_cache()["stats"],
        code=get_library_sources(
            "experiments/real_data.py", "experiments/real_data_tables.py"
        ),
    output:
        max_tv_parquet="results/avazu/max_tv.parquet",
        max_tv=report(
            "results/avazu/max_tv.csv",
            caption="../report/avazu_max_tv.rst",
            category="Avazu",
            labels={"table": "max TV per attribute subcategory and ε"},
        ),
        summary=report(
            "results/avazu/summary.csv",
            caption="../report/avazu_summary.rst",
            category="Avazu",
            labels={"table": "win shares and mean improvements"},
        ),
        subcategories=report(
            "results/avazu/subcategories.csv",
            caption="../report/avazu_subcategories.rst",
            category="Avazu",
            labels={"table": "subcategories kept and skipped"},
        ),
    log:
        "logs/avazu_aggregate/aggregate.log",
    conda:
        CONDA_ENV
    params:
        min_users=config["avazu"]["min_users"],
        min_rows=config["avazu"]["min_rows"],
        user_activity=config["avazu"]["user_activity"],
    script:
        "../../scripts/avazu_aggregate.py"


rule avazu_figure:
    input:
        max_tv=expand(
            "results/avazu/attribute~{{attribute}}/eps~{eps}/max_tv.parquet",
            eps=get_avazu_epsilons(),
        ),
        code=get_library_sources(
            "experiments/real_data_figures.py",
            "experiments/real_data_tables.py",
            "plotting.py",
        ),
    output:
        figure=report(
            "results/avazu/figures/attribute~{attribute}.png",
            caption="../report/avazu_figure.rst",
            category="Avazu",
            labels={"figure": "max TV per subcategory", "attribute": "{attribute}"},
        ),
    log:
        "logs/avazu_figure/attribute~{attribute}.log",
    conda:
        CONDA_ENV
    params:
        attribute=lambda wildcards: wildcards.attribute,
    script:
        "../../scripts/avazu_figure.py"
