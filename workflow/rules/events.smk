# Your own data: any number of events tables, each configured under `events.<name>`
# (workflow/schemas/events.schema.yaml, docs/own-data.md). Per (dataset, attribute): one
# histogram job (streaming scans of the table; one job for all attributes needed 2.7 GB on a
# 40 M-row table, one per attribute 0.6 GB) and one metrics job looping over every
# ε in-process (per-user divergences, minimax-released samples, kernel audit), then local jobs
# that combine the tables, split the releases per ε and draw one figure per attribute.
#
# The stage's helpers live beside it in events_common.smk (snakemake --lint flags rules and
# functions in one file); they use format_epsilon / get_epsilon_folders / get_library_sources
# from common.smk.


include: "events_common.smk"


localrules:
    events_combine,
    events_release,
    events_figure,


rule events_histograms:
    input:
        data=get_events_inputs,
        code=get_library_sources(*EVENTS_HISTOGRAM_CODE),
    output:
        histograms=f"{EVENTS_RESULTS}/{{name}}/work/attribute~{{attribute}}/histograms.parquet",
        priors=f"{EVENTS_RESULTS}/{{name}}/work/attribute~{{attribute}}/priors.parquet",
        subcategories=f"{EVENTS_RESULTS}/{{name}}/work/attribute~{{attribute}}/subcategories.parquet",
    log:
        "logs/events_histograms/{name}/attribute~{attribute}.log",
    benchmark:
        "logs/benchmarks/events_histograms/{name}/attribute~{attribute}.tsv"
    wildcard_constraints:
        name=EVENTS_NAME_PATTERN,
        attribute=r"[^/]+",
    conda:
        CONDA_ENV
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        options=lambda wildcards: get_events_histogram_params(
            wildcards.name, wildcards.attribute
        ),
    script:
        "../../scripts/events_histograms.py"


rule events_metrics:
    input:
        histograms=f"{EVENTS_RESULTS}/{{name}}/work/attribute~{{attribute}}/histograms.parquet",
        priors=f"{EVENTS_RESULTS}/{{name}}/work/attribute~{{attribute}}/priors.parquet",
        code=get_library_sources(*EVENTS_METRICS_CODE),
    output:
        # per_user and released are combined into the published files, then removed
        per_user=temp(
            f"{EVENTS_RESULTS}/{{name}}/work/attribute~{{attribute}}/per_user.parquet"
        ),
        audit=f"{EVENTS_RESULTS}/{{name}}/work/attribute~{{attribute}}/audit.parquet",
        released=temp(
            f"{EVENTS_RESULTS}/{{name}}/work/attribute~{{attribute}}/released.parquet"
        ),
    log:
        "logs/events_metrics/{name}/attribute~{attribute}.log",
    benchmark:
        "logs/benchmarks/events_metrics/{name}/attribute~{attribute}.tsv"
    wildcard_constraints:
        name=EVENTS_NAME_PATTERN,
        attribute=r"[^/]+",
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        options=lambda wildcards: get_events_metrics_params(wildcards.name),
        attribute=lambda wildcards: wildcards.attribute,
    script:
        "../../scripts/events_metrics.py"


rule events_combine:
    input:
        per_user=lambda wildcards: get_events_parts(wildcards.name, "per_user"),
        audit=lambda wildcards: get_events_parts(wildcards.name, "audit"),
        subcategories=lambda wildcards: get_events_parts(
            wildcards.name, "subcategories"
        ),
        code=get_library_sources(*EVENTS_TABLE_CODE),
    output:
        subcategories=report(
            f"{EVENTS_RESULTS}/{{name}}/subcategories.csv",
            caption="../report/events_subcategories.rst",
            category="Events",
            subcategory="{name}",
            labels={"dataset": "{name}", "table": "subcategories kept and skipped"},
        ),
        per_user=f"{EVENTS_RESULTS}/{{name}}/per_user.parquet",
        max_tv=report(
            f"{EVENTS_RESULTS}/{{name}}/max_tv.csv",
            caption="../report/events_max_tv.rst",
            category="Events",
            subcategory="{name}",
            labels={"dataset": "{name}", "table": "max TV per subcategory and ε"},
        ),
        max_kl=report(
            f"{EVENTS_RESULTS}/{{name}}/max_kl.csv",
            caption="../report/events_max_kl.rst",
            category="Events",
            subcategory="{name}",
            labels={"dataset": "{name}", "table": "max KL per subcategory and ε"},
        ),
        summary=report(
            f"{EVENTS_RESULTS}/{{name}}/summary.csv",
            caption="../report/events_summary.rst",
            category="Events",
            subcategory="{name}",
            labels={"dataset": "{name}", "table": "win shares and mean improvements"},
        ),
        audit=report(
            f"{EVENTS_RESULTS}/{{name}}/audit.csv",
            caption="../report/events_audit.rst",
            category="Events",
            subcategory="{name}",
            labels={"dataset": "{name}", "table": "realised ε of every kernel used"},
        ),
        audit_users=f"{EVENTS_RESULTS}/{{name}}/audit_users.csv",
    log:
        "logs/events_combine/{name}.log",
    benchmark:
        "logs/benchmarks/events_combine/{name}.tsv"
    wildcard_constraints:
        name=EVENTS_NAME_PATTERN,
    conda:
        CONDA_ENV
    script:
        "../../scripts/events_combine.py"


rule events_release:
    input:
        released=lambda wildcards: get_events_parts(wildcards.name, "released"),
        code=get_library_sources(*EVENTS_TABLE_CODE),
    output:
        released=f"{EVENTS_RESULTS}/{{name}}/released/eps~{{eps}}.parquet",
    log:
        "logs/events_release/{name}/eps~{eps}.log",
    benchmark:
        "logs/benchmarks/events_release/{name}/eps~{eps}.tsv"
    wildcard_constraints:
        name=EVENTS_NAME_PATTERN,
    conda:
        CONDA_ENV
    params:
        epsilons=lambda wildcards: [float(wildcards.eps)],
    script:
        "../../scripts/events_release.py"


# Every attribute's figure of a dataset in one job (a figure job's imports, seaborn's mostly,
# cost more than drawing a small figure); the attributes differ per dataset, so the output is
# the figures/ folder, one report entry per <attribute>.png in it.
rule events_figure:
    input:
        max_tv=f"{EVENTS_RESULTS}/{{name}}/max_tv.csv",
        code=get_library_sources("figures/events.py", "figures/style.py"),
    output:
        figures=report(
            directory(f"{EVENTS_RESULTS}/{{name}}/figures"),
            patterns=["{attribute}.png"],
            caption="../report/events_figure.rst",
            category="Events",
            subcategory="{name}",
            labels={
                "dataset": "{name}",
                "figure": "max TV per subcategory",
                "attribute": "{attribute}",
            },
        ),
    log:
        "logs/events_figure/{name}.log",
    benchmark:
        "logs/benchmarks/events_figure/{name}.tsv"
    wildcard_constraints:
        name=EVENTS_NAME_PATTERN,
    conda:
        CONDA_ENV
    params:
        name=lambda wildcards: wildcards.name,
        attributes=lambda wildcards: get_events_attributes(wildcards.name),
    script:
        "../../scripts/events_figure.py"
