# Reproduction table: every quantitative claim of the papers beside this run's value. Reads
# only the outputs of the experiments this config switched on (and, for the WPM MovieLens row,
# the ML-100K files to rebuild the stage's split); the claims are data
# (src/ldpsample/reproduction/claims.toml), the computations and verdicts are in
# src/ldpsample/reproduction/, the discussion in docs/reproduction.md. Helpers
# (get_reproduction_*) are in reproduction_common.smk.


include: "reproduction_common.smk"


localrules:
    reproduction,


rule reproduction:
    input:
        unpack(get_reproduction_inputs),
        code=get_script_sources("reproduction.py", "reproduction/"),
    output:
        table=report(
            "results/reproduction.csv",
            caption="../report/reproduction.rst",
            category="Reproduction",
            labels={"table": "paper claims vs this run"},
        ),
        counts=report(
            "results/reproduction_counts.csv",
            caption="../report/reproduction_counts.rst",
            category="Reproduction",
            labels={"table": "rows per verdict"},
        ),
    log:
        "logs/reproduction/reproduction.log",
    conda:
        CONDA_ENV
    # The last job of a run, alone: its polars joins and group-bys over every Avazu device's
    # histogram (the TV(p, pK) <= 2 TV(p, q) claim) gain from a second thread.
    threads: 2
    params:
        results=lambda wildcards, output: str(Path(output.table).parent),
        enabled=get_reproduction_enabled(),
        not_run=get_reproduction_not_run(),
        context=get_reproduction_context(),
        movielens_log="logs/movielens_data/events.log",
        avazu_source=config["avazu"]["source"],
        wpm_gowalla_data=get_reproduction_wpm_gowalla_data(),
        wpm_movielens_log=get_reproduction_wpm_movielens_log(),
    script:
        "../../scripts/reproduction.py"
