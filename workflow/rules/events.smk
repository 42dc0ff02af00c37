# Your own data: any number of events tables, each configured under `events.<name>`
# (workflow/schemas/events.schema.yaml, docs/own-data.md). Per (dataset, attribute): one
# histogram job (streaming scans of the table; one job for all attributes needed 2.7 GB on a
# 40 M-row table, one per attribute 0.6 GB) and one metrics job looping over every
# ε in-process (per-user divergences, kernel audit), then local jobs that combine the tables
# and draw one figure per attribute. This is evaluation: nothing is drawn.
#
# A table with release: true is also published (docs/publishing.md): events_spec builds the
# spec from public inputs only (never the events table), events_roster lists every user of the
# table, events_budget checks the persistent ledger against the budget (it fails, and nothing
# else of the table runs, when a user would exceed it), the histogram jobs take the spec's
# domain, and events_publish records the spend, draws every user's items and replaces publish/.
# The budget and the ledger are the gate's only parameters, and the jobs it guards take its
# output as ancient(); the gate is an early warning: events_publish checks the budget again,
# from the current config, under the ledger's lock.
#
# A large table (events.<name>.buckets > 1, or auto) runs the map/reduce rules of
# events_buckets.smk instead of events_histograms and events_metrics, with the same results;
# {name} of each layout's rules matches only its tables.
#
# The stage's helpers live beside it in events_common.smk (snakemake --lint flags rules and
# functions in one file); they use format_epsilon / get_epsilon_folders / get_script_sources
# from common.smk.


include: "events_common.smk"
include: "events_buckets.smk"


localrules:
    events_spec,
    events_budget,
    events_publish,
    events_combine,
    events_figure,


rule events_spec:
    input:
        public=lambda wildcards: get_events_public_inputs(wildcards.name),
        code=get_script_sources("events_spec.py"),
    output:
        **get_events_spec_files("{name}"),
    log:
        "logs/events_spec/{name}.log",
    wildcard_constraints:
        name=EVENTS_NAME_PATTERN,
    conda:
        CONDA_ENV
    params:
        spec=lambda wildcards: get_events_spec_params(wildcards.name),
    script:
        "../../scripts/events_spec.py"


rule events_roster:
    input:
        data=lambda wildcards: get_events_files(wildcards.name),
        code=get_script_sources("events_roster.py"),
    output:
        roster=f"{EVENTS_RESULTS}/{{name}}/work/roster.parquet",
    log:
        "logs/events_roster/{name}.log",
    wildcard_constraints:
        name=EVENTS_NAME_PATTERN,
    conda:
        CONDA_ENV
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        options=lambda wildcards: get_events_roster_params(wildcards.name),
    script:
        "../../scripts/events_roster.py"


rule events_budget:
    input:
        manifest=f"{EVENTS_RESULTS}/{{name}}/work/spec/manifest.json",
        domain=f"{EVENTS_RESULTS}/{{name}}/work/spec/domain.csv",
        roster=f"{EVENTS_RESULTS}/{{name}}/work/roster.parquet",
        code=get_script_sources("events_budget.py"),
    output:
        gate=f"{EVENTS_RESULTS}/{{name}}/work/budget.json",
    log:
        "logs/events_budget/{name}.log",
    wildcard_constraints:
        name=EVENTS_NAME_PATTERN,
    conda:
        CONDA_ENV
    params:
        budget=lambda wildcards: get_events_budget_params(wildcards.name),
    script:
        "../../scripts/events_budget.py"


rule events_histograms:
    input:
        unpack(get_events_gate),
        data=get_events_inputs,
        code=get_script_sources("events_histograms.py"),
    output:
        histograms=f"{EVENTS_RESULTS}/{{name}}/work/attribute~{{attribute}}/histograms.parquet",
        priors=f"{EVENTS_RESULTS}/{{name}}/work/attribute~{{attribute}}/priors.parquet",
        subcategories=f"{EVENTS_RESULTS}/{{name}}/work/attribute~{{attribute}}/subcategories.parquet",
    log:
        "logs/events_histograms/{name}/attribute~{attribute}.log",
    benchmark:
        "logs/benchmarks/events_histograms/{name}/attribute~{attribute}.tsv"
    wildcard_constraints:
        name=get_events_name_pattern(False),
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
        code=get_script_sources("events_metrics.py"),
    output:
        # per_user is combined into the published per_user.parquet, then removed
        per_user=temp(
            f"{EVENTS_RESULTS}/{{name}}/work/attribute~{{attribute}}/per_user.parquet"
        ),
        audit=f"{EVENTS_RESULTS}/{{name}}/work/attribute~{{attribute}}/audit.parquet",
    log:
        "logs/events_metrics/{name}/attribute~{attribute}.log",
    benchmark:
        "logs/benchmarks/events_metrics/{name}/attribute~{attribute}.tsv"
    wildcard_constraints:
        name=get_events_name_pattern(False),
        attribute=r"[^/]+",
    conda:
        CONDA_ENV
    threads: 2
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
        code=get_script_sources("events_combine.py"),
    output:
        subcategories=get_events_report(
            "subcategories.csv",
            "events_subcategories.rst",
            "subcategories kept and skipped",
        ),
        per_user=f"{EVENTS_RESULTS}/{{name}}/per_user.parquet",
        max_tv=get_events_report(
            "max_tv.csv", "events_max_tv.rst", "max TV per subcategory and ε"
        ),
        max_kl=get_events_report(
            "max_kl.csv", "events_max_kl.rst", "max KL per subcategory and ε"
        ),
        summary=get_events_report(
            "summary.csv",
            "events_summary.rst",
            "which method at which ε: wins, margins, reasons",
        ),
        tradeoff=get_events_report(
            "tradeoff.csv",
            "events_tradeoff_table.rst",
            "worst case and median against ε, per attribute",
        ),
        audit=get_events_report(
            "audit.csv", "events_audit.rst", "realised ε of every kernel used"
        ),
    log:
        "logs/events_combine/{name}.log",
    benchmark:
        "logs/benchmarks/events_combine/{name}.tsv"
    wildcard_constraints:
        name=EVENTS_NAME_PATTERN,
    conda:
        CONDA_ENV
    params:
        layout=lambda wildcards: get_events_combine_params(wildcards.name),
    script:
        "../../scripts/events_combine.py"


# A release's budget check, ledger entry, draws and published folder as one local job
# (SQLite's locks need the submitting host's file system; docs/publishing.md). The job reads
# the budget, ledger and population live (params; the gate is only an early warning), records
# the spend before any draw exists, and replaces the published folder whole (publish/, or
# reproducible_not_for_publication/ for a seeded run): the folder is not a Snakemake output,
# since Snakemake would delete some of its files before the job (a mix of two releases); the
# job's receipt (a copy of release.json) stands for it. The ledger totals and the release
# report stay outside the folder.
rule events_publish:
    input:
        manifest=f"{EVENTS_RESULTS}/{{name}}/work/spec/manifest.json",
        domain=f"{EVENTS_RESULTS}/{{name}}/work/spec/domain.csv",
        roster=f"{EVENTS_RESULTS}/{{name}}/work/roster.parquet",
        histograms=lambda wildcards: get_events_parts(wildcards.name, "histograms"),
        gate=ancient(f"{EVENTS_RESULTS}/{{name}}/work/budget.json"),
        code=get_script_sources("events_publish.py"),
    output:
        receipt=f"{EVENTS_RESULTS}/{{name}}/work/release.json",
        ledger=f"{EVENTS_RESULTS}/{{name}}/ledger.csv",
        report=f"{EVENTS_RESULTS}/{{name}}/release_report.csv",
    log:
        "logs/events_publish/{name}.log",
    benchmark:
        "logs/benchmarks/events_publish/{name}.tsv"
    wildcard_constraints:
        name=get_events_release_pattern(),
    conda:
        CONDA_ENV
    params:
        release_seed=lambda wildcards: get_events_config(wildcards.name)["release_seed"],
        budget=lambda wildcards: get_events_budget_params(wildcards.name),
        folder=lambda wildcards: get_events_publish_folder(wildcards.name),
    script:
        "../../scripts/events_publish.py"


# Every attribute's figure of a dataset in one job (a figure job's imports cost more than
# drawing a small figure); the attributes differ per dataset, so the output is
# the figures/ folder, one report entry per <attribute>.png in it.
rule events_figure:
    input:
        max_tv=f"{EVENTS_RESULTS}/{{name}}/max_tv.csv",
        max_kl=f"{EVENTS_RESULTS}/{{name}}/max_kl.csv",
        tradeoff=f"{EVENTS_RESULTS}/{{name}}/tradeoff.csv",
        code=get_script_sources("events_figure.py"),
    output:
        figures=report(
            directory(f"{EVENTS_RESULTS}/{{name}}/figures"),
            patterns=["{attribute}.png"],
            caption="../report/events_figure.rst",
            category="Events",
            subcategory="{name}",
            labels={
                "dataset": "{name}",
                "figure": "max TV and KL per subcategory",
                "attribute": "{attribute}",
            },
        ),
        tradeoff=report(
            f"{EVENTS_RESULTS}/{{name}}/tradeoff.png",
            caption="../report/events_tradeoff.rst",
            category="Events",
            subcategory="{name}",
            labels={
                "dataset": "{name}",
                "figure": "trade-off: TV and KL against ε, per attribute",
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
