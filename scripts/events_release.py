"""Events dataset, one ε: every attribute's released items in one file (user, attribute,
subcategory, item)."""

from typing import TYPE_CHECKING

import polars as pl

from ldpsample.pipeline.io import write_parquet
from ldpsample.pipeline.scripting import start

if TYPE_CHECKING:
    from snakemake.script import snakemake

log = start(snakemake)
epsilon = snakemake.params.epsilon
released = (
    pl.concat([pl.scan_parquet(p) for p in snakemake.input.released])
    .filter(pl.col("epsilon") == epsilon)
    .select("user", "attribute", "subcategory", "item")
    .collect()
    .sort("attribute", "subcategory", "user")
)
write_parquet(released, snakemake.output.released)
log.info("ε=%g: %d released items", epsilon, released.height)
