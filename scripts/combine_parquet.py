"""Concatenate per-wildcard parquet parts into one table (same schema), sorted for stability."""

from typing import TYPE_CHECKING

import polars as pl

from ldpsample.io import write_parquet
from ldpsample.scripting import start

if TYPE_CHECKING:
    from snakemake.script import snakemake

log = start(snakemake)
combined = pl.concat([pl.read_parquet(path) for path in snakemake.input.parts])
combined = combined.sort(combined.columns)
write_parquet(combined, snakemake.output.values)
log.info("combined %d parts into %d rows", len(snakemake.input.parts), combined.height)
