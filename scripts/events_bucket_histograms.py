"""Events dataset in buckets, one bucket: its users' histograms on each subcategory's top items,
and per subcategory its kept users and their items' counts
(ldpsample.events.bucketed.steps.bucket_histograms)."""

from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from ldpsample.events.bucketed.steps import bucket_histograms
from ldpsample.pipeline.io import write_parquet
from ldpsample.pipeline.scripting import start

if TYPE_CHECKING:
    from snakemake.script import snakemake

log = start(snakemake)
bucket = snakemake.params.bucket
files = [Path(folder) / f"bucket~{bucket}.parquet" for folder in snakemake.input.split]
histograms, users, items = bucket_histograms(
    files, pl.read_parquet(snakemake.input.tops), options=snakemake.params.options
)
write_parquet(histograms, snakemake.output.histograms, private=True)
write_parquet(users, snakemake.output.users, private=True)
write_parquet(items, snakemake.output.item_sets)
log.info("%d histogram rows, %d kept (subcategory, user) counts", histograms.height, users.height)
