# Theorem 1 (optimal risk against epsilon) and Example 1 of Zamanlooy et al. (2025).
# Helpers: theory_common.smk.


include: "theory_common.smk"


localrules:
    theory_risk,
    theory_figure,
    theory_example,


rule theory_risk:
    input:
        code=get_script_sources("theory_risk.py"),
    output:
        table=report(
            "results/theory/risk.csv",
            caption="../report/theory_risk_table.rst",
            category="Theory",
            labels={"table": "Γ_f(q, ε)"},
        ),
    log:
        "logs/theory_risk/risk.log",
    conda:
        CONDA_ENV
    params:
        epsilons=get_theory_epsilons(),
        q_mins=sorted(config["theory"]["q_mins"]),
        n=config["theory"]["n"],
        divergences=sorted(config["theory"]["divergences"]),
    script:
        "../../scripts/theory_risk.py"


rule theory_figure:
    input:
        table="results/theory/risk.csv",
        code=get_script_sources("theory_figure.py"),
    output:
        figure=report(
            "results/theory/risk.png",
            caption="../report/theory_risk.rst",
            category="Theory",
            labels={"figure": "Γ_f(q, ε) against ε"},
        ),
    log:
        "logs/theory_figure/figure.log",
    conda:
        CONDA_ENV
    script:
        "../../scripts/theory_figure.py"


rule theory_example:
    input:
        code=get_script_sources("theory_example.py"),
    output:
        table=report(
            "results/theory/example_1.csv",
            caption="../report/theory_example.rst",
            category="Theory",
            labels={"table": "Example 1"},
        ),
    log:
        "logs/theory_example/example.log",
    conda:
        CONDA_ENV
    params:
        q=config["theory"]["example_1"]["q"],
        p=config["theory"]["example_1"]["p"],
        epsilon=config["theory"]["example_1"]["epsilon"],
    script:
        "../../scripts/theory_example.py"
