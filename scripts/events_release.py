"""Events dataset, released items per ε: for each ε of params.epsilons, every attribute's
released items in one file (user, attribute, subcategory, item), the outputs in the same order
(events_release: one ε per job; avazu_release: every ε of a run folder in one job)."""

from typing import TYPE_CHECKING

import polars as pl

from ldpsample.pipeline.io import write_parquet
from ldpsample.pipeline.scripting import start

if TYPE_CHECKING:
    from snakemake.script import snakemake

log = start(snakemake)
for epsilon, path in zip(snakemake.params.epsilons, snakemake.output, strict=True):
    released = (
        pl.concat([pl.scan_parquet(p) for p in snakemake.input.released])
        .filter(pl.col("epsilon") == epsilon)
        .select("user", "attribute", "subcategory", "item")
        .collect()
        .sort("attribute", "subcategory", "user")
    )
    write_parquet(released, path)
    log.info("ε=%g: %d released items", epsilon, released.height)
