"""The Avazu CSV (gzipped or not) to parquet, once (ldpsample.datasets.convert_avazu_to_parquet),
with what was read in a JSON next to it."""

import dataclasses
from typing import TYPE_CHECKING

from ldpsample.datasets import convert_avazu_to_parquet
from ldpsample.pipeline.io import write_json
from ldpsample.pipeline.scripting import start

if TYPE_CHECKING:
    from snakemake.script import snakemake

log = start(snakemake)
stats = convert_avazu_to_parquet(
    snakemake.params.src, snakemake.output.parquet, on_bad_rows=snakemake.params.on_bad_rows
)
write_json(dataclasses.asdict(stats), snakemake.output.stats)  # paths as strings
log.info("%s", stats)
