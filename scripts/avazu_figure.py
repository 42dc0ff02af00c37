"""Avazu bar plots of every attribute of a run folder: per attribute, subcategories on x,
worst-case TV per method, a panel per ε (ldpsample.figures.real_data.plot_avazu_attribute),
from the variant's max_tv (computed from the per-user parts, one at a time, as avazu_aggregate
computes it from all of them, so that both jobs run side by side); one output per attribute,
named by it."""

from typing import TYPE_CHECKING

from ldpsample.experiments.avazu.tables import avazu_max_tv_of_parts
from ldpsample.figures.real_data import plot_avazu_attribute
from ldpsample.figures.style import close
from ldpsample.pipeline.io import write_figure
from ldpsample.pipeline.scripting import start

if TYPE_CHECKING:
    from snakemake.script import snakemake

log = start(snakemake)
max_tv = avazu_max_tv_of_parts(snakemake.input.per_user)
for attribute in snakemake.params.attributes:
    figure = plot_avazu_attribute(max_tv, attribute=attribute)
    write_figure(figure, getattr(snakemake.output, attribute), dpi=150, bbox_inches="tight")
    close(figure)
    log.info("%s: %s", attribute, getattr(snakemake.output, attribute))
