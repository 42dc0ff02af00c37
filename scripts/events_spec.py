"""Events dataset with release: true: the release's spec from public inputs only (the public
prior table or an earlier spec, and the config), never the events table
(ldpsample.publish.build_spec; docs/publishing.md)."""

from pathlib import Path
from typing import TYPE_CHECKING

from ldpsample.pipeline.scripting import start
from ldpsample.publish import build_spec, write_spec

if TYPE_CHECKING:
    from snakemake.script import snakemake

log = start(snakemake)
try:
    spec = build_spec(**snakemake.params.spec)
except (OSError, ValueError) as exc:
    log.error("%s", exc)  # the first line names the config key
    raise
sha = write_spec(spec, Path(snakemake.output.manifest).parent)
log.info(
    "spec %s (%s release): %d subcategories, %d items, ε %s × %d samples: at most %g per user "
    "per release",
    sha,
    spec.release_mode,
    len(spec.subcategories),
    spec.domain.height,
    list(spec.epsilons),
    spec.samples,
    spec.budget_bound,
)
