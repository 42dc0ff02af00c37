"""Events dataset with release: true, the analyst's side: the published folder alone (publish/,
or reproducible_not_for_publication/ for a seeded run) in, per (attribute, subcategory, ε) the
inversion, Norm-Sub and EM estimates with analytic standard errors and 95 % intervals, the
chi-square tests of "population = public prior" and their figure out
(ldpsample.estimate.estimate_publication, ldpsample.figures.estimate.plot_estimates;
docs/analysing.md). The same as `ldpsample estimate <folder> --out ... --tests ... --figure ...`.
"""

from typing import TYPE_CHECKING

from ldpsample.estimate import estimate_publication, read_publication
from ldpsample.figures.estimate import plot_estimates
from ldpsample.figures.style import close
from ldpsample.pipeline.io import write_csv, write_figure
from ldpsample.pipeline.scripting import start

if TYPE_CHECKING:
    from snakemake.script import snakemake

log = start(snakemake)
log.info("publication folder: %s", snakemake.params.folder)
publication = read_publication(snakemake.params.folder)
estimates = estimate_publication(publication)
write_csv(estimates.table, snakemake.output.estimates)
write_csv(estimates.tests, snakemake.output.tests)
figure = plot_estimates(estimates.table, publication.spec.domain)
write_figure(figure, snakemake.output.figure, dpi=120)
close(figure)
for row in estimates.tests.iter_rows(named=True):
    log.info(
        "%s=%s epsilon=%g: %d draws from %d users, chi2 test of population = prior: p = %.3g",
        row["attribute"],
        row["subcategory"],
        row["epsilon"],
        row["draws"],
        row["users"],
        row["p_value"],
    )
