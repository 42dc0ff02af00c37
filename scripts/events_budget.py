"""Events dataset with release: true: the budget gate. Every user of the roster: what the
persistent ledger holds plus the spec's bound (subcategories × Σε × samples) must stay within
events.<name>.budget; otherwise the job fails, naming the key, the budget and the projected
total, and nothing of the table runs. An early warning only: events_publish checks the budget
again, from the current config, under the ledger's lock (ldpsample.publish.check_release_budget)."""

from typing import TYPE_CHECKING

import polars as pl

from ldpsample.pipeline.io import write_json
from ldpsample.pipeline.scripting import start
from ldpsample.publish import check_release_budget, read_spec

if TYPE_CHECKING:
    from snakemake.script import snakemake

log = start(snakemake)
options = snakemake.params.budget
spec = read_spec(snakemake.input.manifest)
users = pl.read_parquet(snakemake.input.roster)["user"].to_list()
try:
    projected = check_release_budget(
        spec,
        users,
        ledger=options["ledger"],
        budget=options["budget"],
        key=options["key"],
        population=spec.population,
    )
except Exception as exc:
    log.error("%s", exc)
    raise
write_json(
    {
        "ledger": options["ledger"],
        "budget": options["budget"],
        "key": options["key"],
        "epsilon_per_user_per_release": spec.budget_bound,
        "largest_projected_total": projected,
        "users": len(users),
    },
    snakemake.output.gate,
)
log.info(
    "%d users; largest projected total %g (budget %s, ledger %s)",
    len(users),
    projected,
    options["budget"],
    options["ledger"],
)
