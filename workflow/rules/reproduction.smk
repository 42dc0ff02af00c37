# Reproduction table: every paper claim beside this run's value. Reads only the
# outputs of the experiments this config switched on; the claims and verdicts are in
# src/ldpsample/reproduction.py, the discussion in docs/reproduction.md. Helpers (get_reproduction_*)
# are in reproduction_common.smk.


include: "reproduction_common.smk"


localrules:
    reproduction,


rule reproduction:
    input:
        unpack(get_reproduction_inputs),
        code=get_library_sources("reproduction.py"),
    output:
        table=report(
            "results/reproduction.csv",
            caption="../report/reproduction.rst",
            category="Reproduction",
            labels={"table": "paper claims vs this run"},
        ),
    log:
        "logs/reproduction/reproduction.log",
    conda:
        CONDA_ENV
    params:
        results=lambda wildcards, output: str(Path(output.table).parent),
        enabled=get_reproduction_enabled(),
        not_run=get_reproduction_not_run(),
        context={
            "avazu_folder": "avazu",
            "avazu_arxiv_folder": get_reproduction_avazu_arxiv_folder(),
            "movielens_variant": get_reproduction_movielens_variant(),
            "ring_n": config["wpm"]["ring"]["n"],
        },
        movielens_log="logs/movielens_data/events.log",
        avazu_source=config["avazu"]["source"],
        wpm_gowalla_data=get_reproduction_wpm_gowalla_data(),
    script:
        "../../scripts/reproduction.py"
