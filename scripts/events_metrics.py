"""Events dataset, one attribute (of one bucket's users, with buckets), every ε: per-user
divergences of each method and the realised ε of every kernel used
(ldpsample.events.evaluate_attribute, on the job's threads; a kernel above its ε fails the job
before anything is written). Evaluation only: nothing is drawn here."""

from typing import TYPE_CHECKING

import polars as pl

from ldpsample.events import evaluate_attribute
from ldpsample.pipeline.io import write_parquet
from ldpsample.pipeline.scripting import start

if TYPE_CHECKING:
    from snakemake.script import snakemake

log = start(snakemake)
priors = pl.read_parquet(snakemake.input.priors)
histograms = pl.scan_parquet(snakemake.input.histograms).filter(
    pl.col("attribute") == snakemake.params.attribute
)
if snakemake.params.options["prior"] == "given":  # one bucket's users: its kept subcategories
    kept = priors.select("attribute", "subcategory").unique().lazy()
    histograms = histograms.join(kept, on=["attribute", "subcategory"], how="semi")
try:
    result = evaluate_attribute(
        histograms.collect(),
        priors,
        attribute=snakemake.params.attribute,
        progress=True,
        threads=snakemake.threads,
        **snakemake.params.options,
    )
except Exception as exc:
    log.error("%s", exc)
    raise
write_parquet(result.per_user, snakemake.output.per_user, private=True)
write_parquet(result.audit, snakemake.output.audit)
log.info("%d per-user rows, %d kernels audited", result.per_user.height, result.audit.height)
