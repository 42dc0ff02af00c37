"""Concatenate per-wildcard parquet parts (ldpsample.pipeline.io.concat_parquet): for each name in
params.tables, input <name> (the parts) -> output <name>, sorted by params.sort_by (None: every
column) for byte-stable output; also a CSV copy when an output `<name>_csv` exists."""

from typing import TYPE_CHECKING

from ldpsample.pipeline.io import concat_parquet, write_csv, write_parquet
from ldpsample.pipeline.scripting import start

if TYPE_CHECKING:
    from snakemake.script import snakemake

log = start(snakemake)
for name in snakemake.params.tables:
    parts = getattr(snakemake.input, name)
    table = concat_parquet(parts, sort_by=snakemake.params.sort_by)
    write_parquet(table, getattr(snakemake.output, name))
    csv = getattr(snakemake.output, f"{name}_csv", None)  # Namedlist: `in` tests values
    if csv is not None:
        write_csv(table, csv)
    count = 1 if isinstance(parts, str) else len(parts)
    log.info("%s: combined %d parts into %d rows", name, count, table.height)
