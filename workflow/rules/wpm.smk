# Wasserstein projection mechanism experiments: ring, MovieLens-100K, Gowalla.
# Config: the `wpm:` section (workflow/schemas/wpm.schema.yaml); helpers: wpm_common.smk.
# Per-ε jobs write results/<stage>/parts/eps~<ε>/; seeds come from get_wpm_seed.


include: "wpm_common.smk"


localrules:
    wpm_ring_example,
    wpm_ring_example_figure,
    wpm_ring_convergence_figure,
    wpm_sphere_figure,
    wpm_movielens_combine,
    wpm_movielens_figure,
    wpm_gowalla_combine,
    wpm_gowalla_figure,
    wpm_gowalla_maps_figure,


# ---- sphere S^{d-1} (Appendix H): closed form against exact LPs on grids ---------------------


rule wpm_sphere:
    input:
        code=get_script_sources("wpm_sphere.py"),
    output:
        scales="results/wpm_sphere/scales.parquet",
        convergence="results/wpm_sphere/convergence.parquet",
    log:
        "logs/wpm_sphere/sphere.log",
    benchmark:
        "logs/benchmarks/wpm_sphere/sphere.tsv"
    conda:
        CONDA_ENV
    resources:
        mem_mb=1000,
        runtime=20,
    params:
        dims=sorted(config["wpm"]["sphere"]["dims"]),
        epsilons=sorted(config["wpm"]["sphere"]["epsilons"]),
        r=config["wpm"]["sphere"]["r"],
        grid_epsilons=sorted(config["wpm"]["sphere"]["grid_epsilons"]),
        grid_sizes=get_wpm_sphere_grids(),
    script:
        "../../scripts/wpm_sphere.py"


rule wpm_sphere_figure:
    input:
        scales="results/wpm_sphere/scales.parquet",
        convergence="results/wpm_sphere/convergence.parquet",
        code=get_script_sources("wpm_sphere_figure.py"),
    output:
        figure=report(
            "results/wpm_sphere/sphere.png",
            caption="../report/wpm_sphere.rst",
            category="WPM",
            subcategory="sphere",
            labels={"figure": "density, scale parameter, LP convergence"},
        ),
    log:
        "logs/wpm_sphere_figure/figure.log",
    conda:
        CONDA_ENV
    script:
        "../../scripts/wpm_sphere_figure.py"


# ---- synthetic ring ------------------------------------------------------------------------


rule wpm_ring_example:
    input:
        code=get_script_sources("wpm_ring_example.py"),
    output:
        table="results/wpm_ring/example.parquet",
    log:
        "logs/wpm_ring_example/example.log",
    conda:
        CONDA_ENV
    params:
        n=config["wpm"]["ring"]["n"],
        r=config["wpm"]["ring"]["r"],
        alpha=config["wpm"]["ring"]["alpha"],
        epsilons=sorted(config["wpm"]["ring"]["epsilons"]),
        seed=get_wpm_seed("wpm_ring_example"),
    script:
        "../../scripts/wpm_ring_example.py"


rule wpm_ring_example_figure:
    input:
        table="results/wpm_ring/example.parquet",
        code=get_script_sources("wpm_figure.py"),
    output:
        figure=report(
            "results/wpm_ring/example.png",
            caption="../report/wpm_ring_example.rst",
            category="WPM",
            subcategory="ring",
            labels={"figure": "input, WPM and KPM outputs"},
        ),
    log:
        "logs/wpm_ring_example_figure/figure.log",
    conda:
        CONDA_ENV
    params:
        plot="plot_ring_example",
    script:
        "../../scripts/wpm_figure.py"


rule wpm_ring_convergence:
    input:
        code=get_script_sources("wpm_ring_convergence.py"),
    output:
        table="results/wpm_ring/convergence.parquet",
    log:
        "logs/wpm_ring_convergence/convergence.log",
    benchmark:
        "logs/benchmarks/wpm_ring_convergence/convergence.tsv"
    conda:
        CONDA_ENV
    resources:
        mem_mb=1000,
        runtime=20,
    params:
        n=config["wpm"]["ring"]["n"],
        r=config["wpm"]["ring"]["r"],
        alpha=config["wpm"]["ring"]["alpha"],
        epsilon=config["wpm"]["ring"]["convergence"]["epsilon"],
        etas=sorted(config["wpm"]["ring"]["convergence"]["etas"], reverse=True),
        inputs=config["wpm"]["ring"]["convergence"]["inputs"],
        max_iter=config["wpm"]["ring"]["convergence"]["max_iter"],
        variant=config["wpm"]["ring"]["convergence"]["variant"],
        seed=get_wpm_seed("wpm_ring_convergence"),
    script:
        "../../scripts/wpm_ring_convergence.py"


rule wpm_ring_convergence_figure:
    input:
        table="results/wpm_ring/convergence.parquet",
        code=get_script_sources("wpm_figure.py"),
    output:
        figure=report(
            "results/wpm_ring/convergence.png",
            caption="../report/wpm_ring_convergence.rst",
            category="WPM",
            subcategory="ring",
            labels={"figure": "convergence of the entropic WPM"},
        ),
    log:
        "logs/wpm_ring_convergence_figure/figure.log",
    conda:
        CONDA_ENV
    params:
        plot="plot_ring_convergence",
    script:
        "../../scripts/wpm_figure.py"


# ---- MovieLens-100K next-movie recommendation ----------------------------------------------


rule wpm_movielens_part:
    input:
        data=get_dataset_inputs("ml-100k"),
        code=get_script_sources("wpm_movielens_part.py"),
    output:
        validation="results/wpm_movielens/parts/eps~{eps}/validation.parquet",
        test="results/wpm_movielens/parts/eps~{eps}/test.parquet",
    log:
        "logs/wpm_movielens_part/eps~{eps}.log",
    benchmark:
        "logs/benchmarks/wpm_movielens_part/eps~{eps}.tsv"
    conda:
        CONDA_ENV
    resources:
        mem_mb=2000,
        runtime=60,
    params:
        **get_wpm_movielens_params(),
        epsilon=lambda wildcards: float(wildcards.eps),
        include_nonprivate=False,
    script:
        "../../scripts/wpm_movielens_part.py"


rule wpm_movielens_nonprivate:
    input:
        data=get_dataset_inputs("ml-100k"),
        code=get_script_sources("wpm_movielens_part.py"),
    output:
        validation="results/wpm_movielens/parts/nonprivate/validation.parquet",
        test="results/wpm_movielens/parts/nonprivate/test.parquet",
    log:
        "logs/wpm_movielens_nonprivate/nonprivate.log",
    benchmark:
        "logs/benchmarks/wpm_movielens_nonprivate/nonprivate.tsv"
    conda:
        CONDA_ENV
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        **get_wpm_movielens_params(),
        epsilon=None,
        include_nonprivate=True,
    script:
        "../../scripts/wpm_movielens_part.py"


rule wpm_movielens_combine:
    input:
        validation=get_wpm_movielens_parts("validation"),
        test=get_wpm_movielens_parts("test"),
    output:
        validation="results/wpm_movielens/validation.parquet",
        test="results/wpm_movielens/test.parquet",
        test_csv=report(
            "results/wpm_movielens/test.csv",
            caption="../report/wpm_movielens_table.rst",
            category="WPM",
            subcategory="MovieLens-100K",
            labels={"table": "Hit Rate@1 on test users"},
        ),
    log:
        "logs/wpm_movielens_combine/combine.log",
    conda:
        CONDA_ENV
    params:
        tables=["validation", "test"],
        sort_by=["method", "epsilon", "scale"],
    script:
        "../../scripts/combine_parquet.py"


rule wpm_movielens_figure:
    input:
        table="results/wpm_movielens/test.parquet",
        code=get_script_sources("wpm_figure.py"),
    output:
        figure=report(
            "results/wpm_movielens/hit_rate.png",
            caption="../report/wpm_movielens.rst",
            category="WPM",
            subcategory="MovieLens-100K",
            labels={"figure": "Hit Rate@1 against ε"},
        ),
    log:
        "logs/wpm_movielens_figure/figure.log",
    conda:
        CONDA_ENV
    params:
        plot="plot_movielens_hit_rates",
    script:
        "../../scripts/wpm_figure.py"


# ---- Gowalla (Austin) location release -----------------------------------------------------


rule wpm_gowalla_checkins:
    input:
        data=get_wpm_gowalla_inputs(),
        code=get_script_sources("wpm_gowalla_checkins.py"),
    output:
        checkins="results/wpm_gowalla/checkins.parquet",
    log:
        "logs/wpm_gowalla_checkins/checkins.log",
    benchmark:
        "logs/benchmarks/wpm_gowalla_checkins/checkins.tsv"
    conda:
        CONDA_ENV
    resources:
        mem_mb=4000,
        runtime=20,
    params:
        source=config["wpm"]["gowalla"]["source"],
        path=get_wpm_gowalla_path(),
        bbox=get_wpm_gowalla_bbox(),
    script:
        "../../scripts/wpm_gowalla_checkins.py"


rule wpm_gowalla_w1:
    input:
        checkins="results/wpm_gowalla/checkins.parquet",
        code=get_script_sources("wpm_gowalla_w1.py"),
    output:
        table="results/wpm_gowalla/parts/eps~{eps}/w1.parquet",
    log:
        "logs/wpm_gowalla_w1/eps~{eps}.log",
    benchmark:
        "logs/benchmarks/wpm_gowalla_w1/eps~{eps}.tsv"
    conda:
        CONDA_ENV
    resources:
        mem_mb=2000,
        runtime=60,
    params:
        **get_wpm_gowalla_grid_params(),
        epsilon=lambda wildcards: float(wildcards.eps),
        repeats=config["wpm"]["gowalla"]["repeats"],
        seed=lambda wildcards: get_wpm_seed("wpm_gowalla_w1", wildcards.eps),
    script:
        "../../scripts/wpm_gowalla_w1.py"


rule wpm_gowalla_combine:
    input:
        table=get_wpm_gowalla_parts(),
    output:
        table="results/wpm_gowalla/w1.parquet",
        table_csv=report(
            "results/wpm_gowalla/w1.csv",
            caption="../report/wpm_gowalla_table.rst",
            category="WPM",
            subcategory="Gowalla",
            labels={"table": "W1 per ε, method and repeat"},
        ),
    log:
        "logs/wpm_gowalla_combine/combine.log",
    conda:
        CONDA_ENV
    params:
        tables=["table"],
        sort_by=["method", "epsilon", "repeat"],
    script:
        "../../scripts/combine_parquet.py"


rule wpm_gowalla_figure:
    input:
        table="results/wpm_gowalla/w1.parquet",
        code=get_script_sources("wpm_figure.py"),
    output:
        figure=report(
            "results/wpm_gowalla/w1.png",
            caption="../report/wpm_gowalla_w1.rst",
            category="WPM",
            subcategory="Gowalla",
            labels={"figure": "W1 against ε"},
        ),
    log:
        "logs/wpm_gowalla_figure/figure.log",
    conda:
        CONDA_ENV
    params:
        plot="plot_gowalla_w1",
    script:
        "../../scripts/wpm_figure.py"


rule wpm_gowalla_maps:
    input:
        checkins="results/wpm_gowalla/checkins.parquet",
        code=get_script_sources("wpm_gowalla_maps.py"),
    output:
        table="results/wpm_gowalla/maps/eps~{eps}/maps.parquet",
    log:
        "logs/wpm_gowalla_maps/eps~{eps}.log",
    benchmark:
        "logs/benchmarks/wpm_gowalla_maps/eps~{eps}.tsv"
    conda:
        CONDA_ENV
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        **get_wpm_gowalla_grid_params(),
        epsilon=lambda wildcards: float(wildcards.eps),
        seed=lambda wildcards: get_wpm_seed("wpm_gowalla_maps", wildcards.eps),
    script:
        "../../scripts/wpm_gowalla_maps.py"


rule wpm_gowalla_maps_figure:
    input:
        table="results/wpm_gowalla/maps/eps~{eps}/maps.parquet",
        code=get_script_sources("wpm_figure.py"),
    output:
        figure=report(
            "results/wpm_gowalla/maps/eps~{eps}/maps.png",
            caption="../report/wpm_gowalla_maps.rst",
            category="WPM",
            subcategory="Gowalla",
            labels={"figure": "maps", "ε": "{eps}"},
        ),
    log:
        "logs/wpm_gowalla_maps_figure/eps~{eps}.log",
    conda:
        CONDA_ENV
    params:
        plot="plot_gowalla_maps",
    script:
        "../../scripts/wpm_figure.py"
