# Fig. 2 of Zamanlooy et al. (2025): one job per (n, epsilon), combined into one tidy table.
# Helpers: synthetic_common.smk.


include: "synthetic_common.smk"


localrules:
    synthetic_combine,
    synthetic_figure,


rule synthetic_part:
    input:
        code=get_script_sources("synthetic_part.py"),
    output:
        values="results/synthetic/parts/n~{n}/eps~{eps}/values.parquet",
    log:
        "logs/synthetic_part/n~{n}_eps~{eps}.log",
    benchmark:
        "logs/benchmarks/synthetic_part/n~{n}_eps~{eps}.tsv"
    conda:
        CONDA_ENV
    threads: get_synthetic_threads
    resources:
        mem_mb=1000,
        runtime=15,
    params:
        n=lambda wildcards: int(wildcards.n),
        epsilon=lambda wildcards: float(wildcards.eps),
        runs=config["synthetic"]["runs"],
        grid_size=config["synthetic"]["grid_size"],
        seed=config["seed"],
    script:
        "../../scripts/synthetic_part.py"


rule synthetic_combine:
    input:
        values=get_synthetic_parts(),
    output:
        values="results/synthetic/values.parquet",
    log:
        "logs/synthetic_combine/combine.log",
    conda:
        CONDA_ENV
    params:
        tables=["values"],
        sort_by=None,
    script:
        "../../scripts/combine_parquet.py"


rule synthetic_figure:
    input:
        values="results/synthetic/values.parquet",
        code=get_script_sources("synthetic_figure.py"),
    output:
        figure=report(
            "results/synthetic/figure.png",
            caption="../report/synthetic.rst",
            category="Synthetic (Fig. 2)",
            labels={"figure": "TV and KL against p1"},
        ),
    log:
        "logs/synthetic_figure/figure.log",
    conda:
        CONDA_ENV
    script:
        "../../scripts/synthetic_figure.py"
