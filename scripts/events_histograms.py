"""Events dataset, one attribute: kept users' histograms per subcategory, the subcategory table
(kept/skipped and why) and a public table's priors, or a release spec's domain and q
(ldpsample.events.build_event_histograms)."""

from typing import TYPE_CHECKING

import polars as pl

from ldpsample.events import build_event_histograms
from ldpsample.events.options import EventsOptions, PriorKind
from ldpsample.pipeline.io import write_parquet
from ldpsample.pipeline.scripting import start
from ldpsample.publish.spec import DOMAIN_SCHEMA

if TYPE_CHECKING:
    from snakemake.script import snakemake

log = start(snakemake)
options = EventsOptions.from_params(snakemake.params.options)
domain = None
if options.prior == PriorKind.SPEC:  # a release: the spec's domain replaces the data-derived items
    domain = pl.read_csv(snakemake.input.domain, schema=DOMAIN_SCHEMA)
try:
    result = build_event_histograms(options, domain=domain)
except (OSError, ValueError) as exc:
    log.error("%s", exc)  # the first line names the file, config key and value
    raise
write_parquet(result.histograms, snakemake.output.histograms, private=True)
write_parquet(result.priors, snakemake.output.priors)
write_parquet(result.subcategories, snakemake.output.subcategories)
log.info("table stats %s; %d histogram rows", result.stats, result.histograms.height)
