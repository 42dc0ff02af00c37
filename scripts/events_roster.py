"""Events dataset with release: true: every user of the table, sorted (the roster each spec
subcategory is released to; ldpsample.events.counting.histograms.event_users)."""

from typing import TYPE_CHECKING

from ldpsample.events.counting.histograms import event_users
from ldpsample.events.options import EventsOptions
from ldpsample.pipeline.io import write_parquet
from ldpsample.pipeline.scripting import start

if TYPE_CHECKING:
    from snakemake.script import snakemake

log = start(snakemake)
options = EventsOptions.from_params(snakemake.params.options)
try:  # the table's path: one file, or a folder or glob of them (its files are the inputs)
    users = event_users(options)
except (OSError, ValueError) as exc:
    log.error("%s", exc)  # the first line names the file, config key and value
    raise
write_parquet(users.to_frame(), snakemake.output.roster, private=True)
log.info("%d users", users.len())
