"""One attribute's private histograms (ldpsample.datasets.build_avazu_histograms) and how many
of its subcategories were kept and skipped."""

from typing import TYPE_CHECKING

from ldpsample.datasets import build_avazu_histograms
from ldpsample.experiments.real_data_tables import avazu_subcategory_counts
from ldpsample.io import write_json, write_parquet
from ldpsample.scripting import start

if TYPE_CHECKING:
    from snakemake.script import snakemake

log = start(snakemake)
params = snakemake.params
histograms = build_avazu_histograms(
    snakemake.input.parquet,
    params.attribute,
    top_sites=params.top_sites,
    site_rank_by=params.site_rank_by,
    min_rows=params.min_rows,
    user_activity=params.user_activity,
    activity_scope=params.activity_scope,
    min_users=params.min_users,
    exclude_placeholder_device=params.exclude_placeholder_device,
)
counts = avazu_subcategory_counts(
    snakemake.input.parquet,
    params.attribute,
    histograms,
    exclude_placeholder_device=params.exclude_placeholder_device,
)
write_parquet(histograms, snakemake.output.histograms)
write_json(counts, snakemake.output.counts)
log.info("%s", counts)
if counts["kept"] == 0:
    log.warning(
        "%s: SKIPPED all %d subcategories (none has %d devices with %d %s); empty histograms",
        params.attribute,
        counts["subcategories"],
        params.min_users,
        params.min_rows,
        params.user_activity,
    )
