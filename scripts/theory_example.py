"""Example 1 of the paper: TV(p, pK) with the public prior and with the uniform prior."""

from typing import TYPE_CHECKING

from ldpsample.experiments.theory import example_1
from ldpsample.pipeline.io import write_csv
from ldpsample.pipeline.scripting import start

if TYPE_CHECKING:
    from snakemake.script import snakemake

start(snakemake)
table = example_1(q=snakemake.params.q, p=snakemake.params.p, epsilon=snakemake.params.epsilon)
write_csv(table, snakemake.output.table)
