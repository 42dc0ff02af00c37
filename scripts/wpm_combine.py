"""Concatenate per-ε parquet parts into one table per name in params.tables (sorted by
params.sort_by for byte-stable output); also a CSV copy when an output `<name>_csv` exists."""

from typing import TYPE_CHECKING

import polars as pl

from ldpsample.io import write_csv, write_parquet
from ldpsample.scripting import start

if TYPE_CHECKING:
    from snakemake.script import snakemake

log = start(snakemake)
for name in snakemake.params.tables:
    parts = getattr(snakemake.input, name)
    parts = [parts] if isinstance(parts, str) else list(parts)
    table = pl.concat([pl.read_parquet(path) for path in parts]).sort(snakemake.params.sort_by)
    write_parquet(table, getattr(snakemake.output, name))
    csv = getattr(snakemake.output, f"{name}_csv", None)  # Namedlist: `in` tests values
    if csv is not None:
        write_csv(table, csv)
    log.info("%s: %d parts, %d rows", name, len(parts), table.height)
