# An events table evaluated in buckets (events.<name>.buckets > 1, or auto on a large table;
# docs/scale.md): map/reduce jobs whose memory is bounded by their share of the table, with the
# one-job rules' results (ldpsample.events.bucketed.steps). Users are split into ranges of their
# sorted ids (events_buckets, from a sample of the user column); each file of the table is one
# partition, split into the buckets' rows with its checks, rows per subcategory and ranking
# partial sums (events_split, side by side); a small merge picks each subcategory's top items
# (events_tops; where the ranking counts only users kept by the global activity filter, each
# bucket's ranking first, events_bucket_ranks); each bucket's users get their histograms
# (events_bucket_histograms); each attribute its subcategories table and priors over every
# bucket (events_priors: min_users, pooled counts, the user_mean fold in user order); each
# (attribute, bucket) its metrics (events_bucket_metrics); events_combine (events.smk) writes
# the tables from the parts in the one-job order. Helpers: events_common.smk.


# The merge of the partitions' checks, row counts and rankings reads small files only: it runs
# on the submitting host (one SLURM wave less between the split and the histogram jobs).
localrules:
    events_tops,


rule events_buckets:
    input:
        unpack(get_events_gate),
        data=lambda wildcards: get_events_files(wildcards.name),
        code=get_script_sources("events_buckets.py"),
    output:
        buckets=f"{EVENTS_RESULTS}/{{name}}/work/buckets.json",
    log:
        "logs/events_buckets/{name}.log",
    benchmark:
        "logs/benchmarks/events_buckets/{name}.tsv"
    wildcard_constraints:
        name=get_events_name_pattern(True),
    conda:
        CONDA_ENV
    threads: 2
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        options=lambda wildcards: get_events_bucket_params(wildcards.name),
    script:
        "../../scripts/events_buckets.py"


rule events_split:
    input:
        unpack(get_events_gate),
        data=lambda wildcards: get_events_files(wildcards.name)[int(wildcards.part)],
        buckets=f"{EVENTS_RESULTS}/{{name}}/work/buckets.json",
        code=get_script_sources("events_split.py"),
    output:
        # the partition's rows per bucket (bucket~<b>.parquet, about the input's size), its
        # checks.json, rows.parquet and ranks.parquet
        split=temp(directory(f"{EVENTS_RESULTS}/{{name}}/work/split/part~{{part}}")),
    log:
        "logs/events_split/{name}/part~{part}.log",
    benchmark:
        "logs/benchmarks/events_split/{name}/part~{part}.tsv"
    wildcard_constraints:
        name=get_events_name_pattern(True),
        part=r"\d+",
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    params:
        options=lambda wildcards: get_events_bucket_params(wildcards.name),
        part=lambda wildcards: int(wildcards.part),
    script:
        "../../scripts/events_split.py"


rule events_bucket_ranks:
    input:
        split=lambda wildcards: get_events_split(wildcards.name),
        code=get_script_sources("events_bucket_ranks.py"),
    output:
        ranks=f"{EVENTS_RESULTS}/{{name}}/work/bucket~{{bucket}}/ranks.parquet",
    log:
        "logs/events_bucket_ranks/{name}/bucket~{bucket}.log",
    benchmark:
        "logs/benchmarks/events_bucket_ranks/{name}/bucket~{bucket}.tsv"
    wildcard_constraints:
        name=get_events_name_pattern(True),
        bucket=r"\d+",
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        options=lambda wildcards: get_events_bucket_params(wildcards.name),
        bucket=lambda wildcards: int(wildcards.bucket),
    script:
        "../../scripts/events_bucket_ranks.py"


rule events_tops:
    input:
        unpack(get_events_tops_inputs),
        code=get_script_sources("events_tops.py"),
    output:
        tops=f"{EVENTS_RESULTS}/{{name}}/work/merge/tops.parquet",
        rows=f"{EVENTS_RESULTS}/{{name}}/work/merge/rows.parquet",
        checks=f"{EVENTS_RESULTS}/{{name}}/work/merge/checks.json",
    log:
        "logs/events_tops/{name}.log",
    benchmark:
        "logs/benchmarks/events_tops/{name}.tsv"
    wildcard_constraints:
        name=get_events_name_pattern(True),
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        options=lambda wildcards: get_events_bucket_params(wildcards.name),
    script:
        "../../scripts/events_tops.py"


rule events_bucket_histograms:
    input:
        split=lambda wildcards: get_events_split(wildcards.name),
        tops=f"{EVENTS_RESULTS}/{{name}}/work/merge/tops.parquet",
        code=get_script_sources("events_bucket_histograms.py"),
    output:
        histograms=f"{EVENTS_RESULTS}/{{name}}/work/bucket~{{bucket}}/histograms.parquet",
        users=f"{EVENTS_RESULTS}/{{name}}/work/bucket~{{bucket}}/users.parquet",
        item_sets=f"{EVENTS_RESULTS}/{{name}}/work/bucket~{{bucket}}/items.parquet",
    log:
        "logs/events_bucket_histograms/{name}/bucket~{bucket}.log",
    benchmark:
        "logs/benchmarks/events_bucket_histograms/{name}/bucket~{bucket}.tsv"
    wildcard_constraints:
        name=get_events_name_pattern(True),
        bucket=r"\d+",
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        options=lambda wildcards: get_events_bucket_params(wildcards.name),
        bucket=lambda wildcards: int(wildcards.bucket),
    script:
        "../../scripts/events_bucket_histograms.py"


rule events_priors:
    input:
        unpack(get_events_priors_inputs),
        code=get_script_sources("events_priors.py"),
    output:
        priors=f"{EVENTS_RESULTS}/{{name}}/work/attribute~{{attribute}}/priors.parquet",
        subcategories=f"{EVENTS_RESULTS}/{{name}}/work/attribute~{{attribute}}/subcategories.parquet",
    log:
        "logs/events_priors/{name}/attribute~{attribute}.log",
    benchmark:
        "logs/benchmarks/events_priors/{name}/attribute~{attribute}.tsv"
    wildcard_constraints:
        name=get_events_name_pattern(True),
        attribute=r"[^/]+",
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        options=lambda wildcards: get_events_bucket_params(wildcards.name),
        prior=lambda wildcards: get_events_histogram_params(
            wildcards.name, wildcards.attribute
        )["prior"],
        kind=lambda wildcards: get_events_prior_kind(wildcards.name),
        attribute=lambda wildcards: wildcards.attribute,
    script:
        "../../scripts/events_priors.py"


rule events_bucket_metrics:
    input:
        histograms=f"{EVENTS_RESULTS}/{{name}}/work/bucket~{{bucket}}/histograms.parquet",
        priors=f"{EVENTS_RESULTS}/{{name}}/work/attribute~{{attribute}}/priors.parquet",
        code=get_script_sources("events_metrics.py"),
    output:
        # per_user is combined into the published per_user.parquet, then removed
        per_user=temp(
            f"{EVENTS_RESULTS}/{{name}}/work/attribute~{{attribute}}/bucket~{{bucket}}/per_user.parquet"
        ),
        audit=f"{EVENTS_RESULTS}/{{name}}/work/attribute~{{attribute}}/bucket~{{bucket}}/audit.parquet",
    log:
        "logs/events_bucket_metrics/{name}/attribute~{attribute}/bucket~{bucket}.log",
    benchmark:
        "logs/benchmarks/events_bucket_metrics/{name}/attribute~{attribute}/bucket~{bucket}.tsv"
    wildcard_constraints:
        name=get_events_name_pattern(True),
        attribute=r"[^/]+",
        bucket=r"\d+",
    conda:
        CONDA_ENV
    threads: 2
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        options=lambda wildcards: {
            **get_events_metrics_params(wildcards.name),
            "prior": "given",
        },
        attribute=lambda wildcards: wildcards.attribute,
    script:
        "../../scripts/events_metrics.py"
