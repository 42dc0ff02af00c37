"""Events dataset: every attribute's max TV and max KL per subcategory and method, a panel per ε
(ldpsample.figures.events.plot_attribute), as <attribute>.png in the rule's figures/ folder, and
the table's trade-off, worst case and median of TV and KL against ε, a row per attribute
(ldpsample.figures.events.plot_tradeoff), as tradeoff.png."""

from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from ldpsample.figures.events import plot_attribute, plot_tradeoff
from ldpsample.figures.style import close
from ldpsample.pipeline.io import write_figure
from ldpsample.pipeline.scripting import start

if TYPE_CHECKING:
    from snakemake.script import snakemake

log = start(snakemake)
keys = {"attribute": pl.String, "subcategory": pl.String}
max_tv = pl.read_csv(snakemake.input.max_tv, schema_overrides=keys)
max_kl = pl.read_csv(snakemake.input.max_kl, schema_overrides=keys)
folder = Path(snakemake.output.figures)
folder.mkdir(parents=True, exist_ok=True)
for attribute in snakemake.params.attributes:
    figure = plot_attribute(max_tv, max_kl, name=snakemake.params.name, attribute=attribute)
    write_figure(figure, folder / f"{attribute}.png", dpi=120)
    close(figure)
    log.info("%s: %s", attribute, folder / f"{attribute}.png")
tradeoff = pl.read_csv(snakemake.input.tradeoff, schema_overrides={"attribute": pl.String})
figure = plot_tradeoff(tradeoff, name=snakemake.params.name)
write_figure(figure, snakemake.output.tradeoff, dpi=120)
close(figure)
log.info("trade-off: %s", snakemake.output.tradeoff)
