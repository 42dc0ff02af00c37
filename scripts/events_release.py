"""Events dataset, released items per ε: for each ε of params.epsilons, every attribute's
released items in one file (user, attribute, subcategory, item), the outputs in the same order
(events_release: one ε per job; avazu_release: every ε of a run folder in one job)."""

from typing import TYPE_CHECKING

import polars as pl

from ldpsample.events import tables
from ldpsample.pipeline.io import write_parquet
from ldpsample.pipeline.scripting import start

if TYPE_CHECKING:
    from snakemake.script import snakemake

log = start(snakemake)
# every ε of the parts in (epsilon, attribute, subcategory, user) order
released = tables.concat_attribute_parts([pl.read_parquet(p) for p in snakemake.input.released])
for epsilon, path in zip(snakemake.params.epsilons, snakemake.output, strict=True):
    part = released.filter(pl.col("epsilon") == epsilon).select(
        "user", "attribute", "subcategory", "item"
    )
    write_parquet(part, path)
    log.info("ε=%g: %d released items", epsilon, part.height)
