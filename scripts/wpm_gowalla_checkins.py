"""Gowalla check-ins inside the study box, read once (SNAP or derived format) into parquet,
so the per-ε jobs do not re-read a large (gzipped) raw file."""

from typing import TYPE_CHECKING

import polars as pl

from ldpsample.datasets.gowalla import read_gowalla_derived, read_gowalla_snap
from ldpsample.pipeline.io import write_parquet
from ldpsample.pipeline.scripting import start

if TYPE_CHECKING:
    from snakemake.script import snakemake

log = start(snakemake)
params = snakemake.params
read = {"snap": read_gowalla_snap, "derived": read_gowalla_derived}[params.source]
checkins = read(params.path)
lat_min, lat_max, lon_min, lon_max = params.bbox
inside = checkins.filter(
    pl.col("latitude").is_between(lat_min, lat_max),
    pl.col("longitude").is_between(lon_min, lon_max),
)
write_parquet(inside, snakemake.output.checkins)
log.info(
    "%d of %d check-ins inside the box, %d users",
    inside.height,
    checkins.height,
    inside["user"].n_unique(),
)
