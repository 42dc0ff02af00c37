"""Events dataset in buckets: the whole table's checks and rows per subcategory, and every
subcategory's top items from the summed ranking (ldpsample.events.bucketed.steps.merge_partials)."""

from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from ldpsample.events.bucketed.steps import merge_partials, read_checks
from ldpsample.pipeline.io import write_json, write_parquet
from ldpsample.pipeline.scripting import start
from ldpsample.publish.spec import DOMAIN_SCHEMA

if TYPE_CHECKING:
    from snakemake.script import snakemake

log = start(snakemake)
options = dict(snakemake.params.options)
if options["prior"] == "spec":
    options["domain"] = pl.read_csv(snakemake.input.domain, schema=DOMAIN_SCHEMA)
folders = [Path(folder) for folder in snakemake.input.split]
# the buckets' ranking where it needs each user's activity first, else the partitions'
rank_files = list(snakemake.input.get("ranks", [])) or [
    folder / "ranks.parquet" for folder in folders
]
try:
    checks, rows, tops = merge_partials(
        read_checks([folder / "checks.json" for folder in folders]),
        [pl.read_parquet(folder / "rows.parquet") for folder in folders],
        (pl.read_parquet(path) for path in rank_files),  # read one at a time
        path=options["path"],
        options=options,
    )
except (OSError, ValueError) as exc:
    log.error("%s", exc)  # the first line names the file, config key and value
    raise
write_parquet(tops, snakemake.output.tops)
write_parquet(rows, snakemake.output.rows)
write_json(checks, snakemake.output.checks)
log.info("checks %s; %d top (subcategory, item) pairs", checks, tops.height)
