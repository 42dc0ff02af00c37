"""Reproduction table: every paper claim beside this run's value (ldpsample.reproduction), and
its rows per verdict."""

import sys
from typing import TYPE_CHECKING

from ldpsample.pipeline.io import write_csv
from ldpsample.pipeline.scripting import start
from ldpsample.reproduction import reproduction_table, run_data_notes, verdict_counts

if TYPE_CHECKING:
    from snakemake.script import snakemake

log = start(snakemake)
params = snakemake.params
data = run_data_notes(
    movielens_log=params.movielens_log,
    avazu_stats=snakemake.input.get("avazu_stats"),
    avazu_source=params.avazu_source,
    wpm_gowalla=params.wpm_gowalla_data,
    wpm_movielens_log=params.wpm_movielens_log,
)
table = reproduction_table(
    params.results,
    enabled=dict(params.enabled),
    data=data,
    context=dict(params.context),
    not_run=dict(params.not_run),
)
counts = verdict_counts(table)
write_csv(table, snakemake.output.table)
write_csv(counts, snakemake.output.counts)
log.info("reproduction table:\n%s", table)
print(counts, file=sys.stderr)
