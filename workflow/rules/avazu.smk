# Avazu experiment of Zamanlooy et al. (2025): max TV per attribute subcategory, run by the
# events stage's library and scripts: the `avazu:` section is translated into events options
# (avazu_common.smk, get_avazu_histogram_params; docs/own-data.md has the mapping).
# Config: the `avazu:` section (workflow/schemas/avazu.schema.yaml); helpers: avazu_common.smk.
# The (gzipped) CSV is converted once to parquet; then, per variant
# (results/avazu/ and one folder per avazu.variants entry, the {avazu_folder} wildcard), one
# histogram job per attribute and one metrics job per attribute looping over ε in-process
# (scripts/events_*.py), then two local jobs per run folder (a local job pays a few seconds of
# process start-up): the tables in the Avazu contract and every attribute's figure
# (figures/attribute~<A>.png, one report entry each). Both read the per-attribute parts, so they
# run side by side. The prior is the users' mean histogram (the paper's): this is evaluation,
# nothing is drawn or released (docs/paper-vs-code.md; publishing is events.<name>.release).
# Histogram and metrics jobs stay apart: a change of ε re-runs only the metrics (the scan is
# the costly step), and 18 short jobs share 2 cores better than 9 long ones.
#
# The parquet is a cache, not a temp() file: it is the one pass over the 40 M-row gzip (about a
# minute, the slowest step after a download) and every histogram job reads it, so it is kept
# to let a change of a filter option (min_users, top_sites, ...) or a new attribute re-run only
# the histograms. It is derived data, hence under results/avazu/cache/<source>/ (removed with
# results/, never mixed with the raw files in data_dir or resources/).


include: "events_common.smk"
include: "avazu_common.smk"


localrules:
    avazu_aggregate,
    avazu_figure,


rule avazu_generate:
    input:
        code=get_script_sources("avazu_generate.py"),
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
        code=get_script_sources("avazu_convert.py"),
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
        data=get_avazu_cache()["parquet"],
        code=get_script_sources("events_histograms.py"),
    output:
        histograms="results/{avazu_folder}/work/attribute~{attribute}/histograms.parquet",
        priors="results/{avazu_folder}/work/attribute~{attribute}/priors.parquet",
        subcategories="results/{avazu_folder}/work/attribute~{attribute}/subcategories.parquet",
    log:
        "logs/avazu_histograms/{avazu_folder}/attribute~{attribute}.log",
    benchmark:
        "logs/benchmarks/avazu_histograms/{avazu_folder}/attribute~{attribute}.tsv"
    wildcard_constraints:
        avazu_folder=get_avazu_folder_pattern(),
        attribute="|".join(REGISTRY.AVAZU_ATTRIBUTES),
    conda:
        CONDA_ENV
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        options=lambda wildcards: get_avazu_histogram_params(
            wildcards.avazu_folder, wildcards.attribute
        ),
    script:
        "../../scripts/events_histograms.py"


rule avazu_metrics:
    input:
        histograms="results/{avazu_folder}/work/attribute~{attribute}/histograms.parquet",
        priors="results/{avazu_folder}/work/attribute~{attribute}/priors.parquet",
        code=get_script_sources("events_metrics.py"),
    output:
        # per_user is combined into the published per_user.parquet, then removed
        per_user=temp(
            "results/{avazu_folder}/work/attribute~{attribute}/per_user.parquet"
        ),
        audit="results/{avazu_folder}/work/attribute~{attribute}/audit.parquet",
    log:
        "logs/avazu_metrics/{avazu_folder}/attribute~{attribute}.log",
    benchmark:
        "logs/benchmarks/avazu_metrics/{avazu_folder}/attribute~{attribute}.tsv"
    wildcard_constraints:
        avazu_folder=get_avazu_folder_pattern(),
        attribute="|".join(REGISTRY.AVAZU_ATTRIBUTES),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        options=get_avazu_metrics_params(),
        attribute=lambda wildcards: wildcards.attribute,
    script:
        "../../scripts/events_metrics.py"


rule avazu_aggregate:
    input:
        per_user=lambda wildcards: get_avazu_parts(wildcards.avazu_folder, "per_user"),
        audit=lambda wildcards: get_avazu_parts(wildcards.avazu_folder, "audit"),
        subcategories=lambda wildcards: get_avazu_parts(
            wildcards.avazu_folder, "subcategories"
        ),
        histograms=lambda wildcards: get_avazu_parts(
            wildcards.avazu_folder, "histograms"
        ),
        stats=get_avazu_cache()["stats"],
        code=get_script_sources("avazu_aggregate.py"),
    output:
        max_tv_parquet="results/{avazu_folder}/max_tv.parquet",
        max_tv=report(
            "results/{avazu_folder}/max_tv.csv",
            caption="../report/avazu_max_tv.rst",
            category="Avazu",
            subcategory="{avazu_folder}",
            labels={"table": "max TV per attribute subcategory and ε"},
        ),
        summary=report(
            "results/{avazu_folder}/summary.csv",
            caption="../report/avazu_summary.rst",
            category="Avazu",
            subcategory="{avazu_folder}",
            labels={"table": "win shares and mean improvements"},
        ),
        subcategories=report(
            "results/{avazu_folder}/subcategories.csv",
            caption="../report/avazu_subcategories.rst",
            category="Avazu",
            subcategory="{avazu_folder}",
            labels={"table": "subcategories kept and skipped"},
        ),
        per_user="results/{avazu_folder}/per_user.parquet",
        audit=report(
            "results/{avazu_folder}/audit.csv",
            caption="../report/avazu_audit.rst",
            category="Avazu",
            subcategory="{avazu_folder}",
            labels={"table": "realised ε of every kernel used"},
        ),
    log:
        "logs/avazu_aggregate/{avazu_folder}.log",
    benchmark:
        "logs/benchmarks/avazu_aggregate/{avazu_folder}.tsv"
    wildcard_constraints:
        avazu_folder=get_avazu_folder_pattern(),
    conda:
        CONDA_ENV
    params:
        variant=lambda wildcards: wildcards.avazu_folder,
        options=lambda wildcards: get_avazu_aggregate_params(wildcards.avazu_folder),
        attributes=get_avazu_attributes(),
    script:
        "../../scripts/avazu_aggregate.py"


# The figures come from the per-user parts, as max_tv does, so that drawing them (the longest
# local job) runs beside avazu_aggregate instead of after it.
rule avazu_figure:
    input:
        per_user=lambda wildcards: get_avazu_parts(wildcards.avazu_folder, "per_user"),
        code=get_script_sources("avazu_figure.py"),
    output:
        **get_avazu_figure_outputs(),
    log:
        "logs/avazu_figure/{avazu_folder}.log",
    benchmark:
        "logs/benchmarks/avazu_figure/{avazu_folder}.tsv"
    wildcard_constraints:
        avazu_folder=get_avazu_folder_pattern(),
    conda:
        CONDA_ENV
    params:
        attributes=get_avazu_attributes(),
    script:
        "../../scripts/avazu_figure.py"
