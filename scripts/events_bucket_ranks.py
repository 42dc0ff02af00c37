"""Events dataset in buckets, one bucket: the item ranking's partial sums over the users kept by
the global activity filter (ldpsample.events.bucketed.steps.bucket_ranks)."""

from pathlib import Path
from typing import TYPE_CHECKING

from ldpsample.events.bucketed.steps import bucket_ranks
from ldpsample.pipeline.io import write_parquet
from ldpsample.pipeline.scripting import start

if TYPE_CHECKING:
    from snakemake.script import snakemake

log = start(snakemake)
bucket = snakemake.params.bucket
files = [Path(folder) / f"bucket~{bucket}.parquet" for folder in snakemake.input.split]
ranks = bucket_ranks(files, options=snakemake.params.options)
write_parquet(ranks, snakemake.output.ranks)
log.info("%d (subcategory, item) partial sums", ranks.height)
