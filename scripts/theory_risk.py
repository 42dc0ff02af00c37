"""Theorem 1 table: optimal risk against epsilon for several q_min and the uniform prior."""

from typing import TYPE_CHECKING

from ldpsample.experiments.theory import risk_curves
from ldpsample.pipeline.io import write_csv
from ldpsample.pipeline.scripting import start

if TYPE_CHECKING:
    from snakemake.script import snakemake

start(snakemake)
table = risk_curves(
    epsilons=snakemake.params.epsilons,
    q_mins=snakemake.params.q_mins,
    n=snakemake.params.n,
    divergences=snakemake.params.divergences,
)
write_csv(table, snakemake.output.table)
