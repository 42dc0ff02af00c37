# The analyst's side of a release (docs/analysing.md): for an events table with release: true,
# events_estimate reads the published folder alone (publish/, or
# reproducible_not_for_publication/ for a seeded run; its receipt work/release.json stands for
# it, as for events_publish) and writes results/events/<name>/estimate/estimates.csv (inversion,
# Norm-Sub and EM with analytic standard errors and 95 % intervals), tests.csv (the chi-square
# test of "population = public prior") and figure.png. events_estimate_errors is the evaluation
# side: it also reads the private histograms the release drew from and writes errors.csv, each
# estimator's (and the prior's) error against the truth per subcategory and ε. Nothing here is
# published.


include: "estimate_common.smk"


localrules:
    events_estimate_errors,


rule events_estimate:
    input:
        receipt=f"{EVENTS_RESULTS}/{{name}}/work/release.json",
        code=get_script_sources("events_estimate.py"),
    output:
        estimates=f"{EVENTS_RESULTS}/{{name}}/estimate/estimates.csv",
        tests=f"{EVENTS_RESULTS}/{{name}}/estimate/tests.csv",
        figure=report(
            f"{EVENTS_RESULTS}/{{name}}/estimate/figure.png",
            caption="../report/events_estimate.rst",
            category="Events",
            subcategory="{name}",
            labels={"dataset": "{name}", "figure": "estimates from the publication"},
        ),
    log:
        "logs/events_estimate/{name}.log",
    benchmark:
        "logs/benchmarks/events_estimate/{name}.tsv"
    wildcard_constraints:
        name=get_events_release_pattern(),
    conda:
        CONDA_ENV
    resources:
        mem_mb=4000,
    params:
        folder=lambda wildcards: get_events_publish_folder(wildcards.name),
    script:
        "../../scripts/events_estimate.py"


rule events_estimate_errors:
    input:
        receipt=f"{EVENTS_RESULTS}/{{name}}/work/release.json",
        estimates=f"{EVENTS_RESULTS}/{{name}}/estimate/estimates.csv",
        tests=f"{EVENTS_RESULTS}/{{name}}/estimate/tests.csv",
        histograms=lambda wildcards: get_events_parts(wildcards.name, "histograms"),
        code=get_script_sources("events_estimate_errors.py"),
    output:
        errors=f"{EVENTS_RESULTS}/{{name}}/estimate/errors.csv",
    log:
        "logs/events_estimate_errors/{name}.log",
    wildcard_constraints:
        name=get_events_release_pattern(),
    conda:
        CONDA_ENV
    params:
        folder=lambda wildcards: get_events_publish_folder(wildcards.name),
        key=lambda wildcards: f"events.{wildcards.name}",
    script:
        "../../scripts/events_estimate_errors.py"
