"""Events dataset with release: true, the evaluation side (it reads the private histograms the
release drew from; not for publication): each estimator's error, and the error of reporting the
prior q, against the truth (the releasing users' mean distribution) per (attribute,
subcategory, ε) (ldpsample.estimate.estimator_errors; docs/analysing.md). The histograms' user
ids are read as the ledger keys of the released rows (ldpsample.publish.canonical_user_ids).
errors.csv is written 0600, like the other files computed from the private data at row level."""

from typing import TYPE_CHECKING

import polars as pl

from ldpsample.estimate import Estimates, estimator_errors, read_publication, summarise_errors
from ldpsample.estimate.table import ESTIMATE_SCHEMA, TEST_SCHEMA
from ldpsample.pipeline.io import write_csv
from ldpsample.pipeline.scripting import start
from ldpsample.publish.ledger import canonical_user_ids

if TYPE_CHECKING:
    from snakemake.script import snakemake

log = start(snakemake)
log.info("publication folder: %s", snakemake.params.folder)
publication = read_publication(snakemake.params.folder)
estimates = Estimates(
    table=pl.read_csv(snakemake.input.estimates, schema=ESTIMATE_SCHEMA),
    tests=pl.read_csv(snakemake.input.tests, schema=TEST_SCHEMA),
)
histograms = pl.concat([pl.read_parquet(path) for path in snakemake.input.histograms])
histograms = histograms.with_columns(
    pl.Series("user", canonical_user_ids(histograms["user"], key=snakemake.params.key))
)
errors = estimator_errors(publication, estimates, histograms)
write_csv(errors, snakemake.output.errors, private=True)
for row in summarise_errors(errors).iter_rows(named=True):
    log.info(
        "epsilon=%g %s %s: mean TV error %.3g, largest %.3g over %d subcategories",
        row["epsilon"],
        row["quantity"],
        row["method"],
        row["mean_tv_error"],
        row["max_tv_error"],
        row["subcategories"],
    )
