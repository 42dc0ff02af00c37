"""Events dataset in buckets, one attribute: the subcategories table over every bucket's users
(min_users) and the prior q of each kept subcategory on its items: pooled counts, the user_mean
fold in user order, uniform, a public table or the release spec
(ldpsample.events.bucketed.steps.attribute_priors)."""

import json
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from ldpsample.events.bucketed.steps import attribute_priors
from ldpsample.pipeline.io import write_parquet
from ldpsample.pipeline.scripting import start
from ldpsample.publish.spec import DOMAIN_SCHEMA

if TYPE_CHECKING:
    from snakemake.script import snakemake

log = start(snakemake)
options = dict(snakemake.params.options)
if options["prior"] == "spec":
    options["domain"] = pl.read_csv(snakemake.input.domain, schema=DOMAIN_SCHEMA)
try:
    subcategories, priors = attribute_priors(
        snakemake.params.attribute,
        rows=pl.read_parquet(snakemake.input.rows),
        users=[pl.read_parquet(path) for path in snakemake.input.users],
        items=[pl.read_parquet(path) for path in snakemake.input.item_sets],
        histograms=list(snakemake.input.get("histograms", [])),
        checks=json.loads(Path(snakemake.input.checks).read_text(encoding="utf-8")),
        prior=snakemake.params.prior,
        options=options,
    )
except (OSError, ValueError) as exc:
    log.error("%s", exc)  # the first line names the file, config key and value
    raise
write_parquet(priors, snakemake.output.priors)
write_parquet(subcategories, snakemake.output.subcategories)
log.info(
    "%d subcategories (%d kept), prior %s on %d (subcategory, item) pairs",
    subcategories.height,
    (subcategories["status"] == "kept").sum(),
    snakemake.params.kind,
    priors.height,
)
