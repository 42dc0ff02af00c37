"""Events dataset in buckets: the user ids that split the users into ranges of about equal
rows, from a sample of the user column (ldpsample.events.bucketed.steps.bucket_boundaries)."""

from typing import TYPE_CHECKING

from ldpsample.events.bucketed.steps import bucket_boundaries
from ldpsample.pipeline.io import write_json
from ldpsample.pipeline.scripting import start

if TYPE_CHECKING:
    from snakemake.script import snakemake

log = start(snakemake)
options = snakemake.params.options
try:
    boundaries = bucket_boundaries(
        options["path"], key=options["key"], user=options["user"], buckets=options["buckets"]
    )
except (OSError, ValueError) as exc:
    log.error("%s", exc)  # the first line names the file, config key and value
    raise
write_json({"buckets": options["buckets"], "boundaries": boundaries}, snakemake.output.buckets)
log.info("%d buckets, %d distinct boundaries", options["buckets"], len(boundaries))
