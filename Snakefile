# ldpsample: locally private sampling with public data (Zamanlooy, Diaz, Asoodeh, AISTATS 2025)
# and the Wasserstein projection mechanism. Thin entry point: rules live in workflow/rules/.
from snakemake.utils import min_version

min_version("9.14.8")


configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


# common.smk first: it checks the config (finite numbers, workflow/schemas/config.schema.yaml,
# cross-field rules) before anything reads it, naming the key path of any error.
include: "workflow/rules/common.smk"
include: "workflow/rules/synthetic.smk"
include: "workflow/rules/theory.smk"
include: "workflow/rules/download.smk"
include: "workflow/rules/movielens.smk"
include: "workflow/rules/avazu.smk"
include: "workflow/rules/wpm.smk"
include: "workflow/rules/events.smk"
include: "workflow/rules/estimate.smk"
include: "workflow/rules/reproduction.smk"


rule all:
    default_target: True
    input:
        get_final_outputs(),
        get_events_outputs(),
        get_estimate_outputs(),
        get_reproduction_outputs() if writes_reproduction_table() else [],
