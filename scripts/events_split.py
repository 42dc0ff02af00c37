"""Events dataset in buckets, one file of the table: its checks, rows per subcategory and item
ranking partial sums, and its rows streamed into one file per bucket
(ldpsample.events.bucketed.steps.split_partition)."""

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from ldpsample.events.bucketed.steps import split_partition, write_partials
from ldpsample.events.reading.scan import table_files
from ldpsample.pipeline.scripting import start
from ldpsample.publish.spec import DOMAIN_SCHEMA

if TYPE_CHECKING:
    from snakemake.script import snakemake

log = start(snakemake)
options = dict(snakemake.params.options)
if options["prior"] == "spec":  # a release: the spec's items only
    options["domain"] = pl.read_csv(snakemake.input.domain, schema=DOMAIN_SCHEMA)
buckets = json.loads(Path(snakemake.input.buckets).read_text(encoding="utf-8"))
out = Path(snakemake.output.split)
out.mkdir(parents=True, exist_ok=True)
try:
    partition = table_files(options["path"], key=f"{options['key']}.path").partition(
        snakemake.params.part
    )
    if os.path.normpath(partition.files[0]) != os.path.normpath(snakemake.input.data):
        raise FileNotFoundError(
            f"{options['path']}: its files changed since the workflow started (partition "
            f"{snakemake.params.part} is now {partition.files[0]}, not {snakemake.input.data}); "
            "run snakemake again"
        )
    partials = split_partition(
        partition,
        boundaries=buckets["boundaries"],
        outputs=[out / f"bucket~{b}.parquet" for b in range(buckets["buckets"])],
        rank_rows=options["rank_rows"],
        options=options,
    )
except (OSError, ValueError) as exc:
    log.error("%s", exc)  # the first line names the file, config key and value
    raise
write_partials(
    partials, checks=out / "checks.json", rows=out / "rows.parquet", ranks=out / "ranks.parquet"
)
log.info("checks %s", partials.checks)
