"""Download one dataset into resources/ (verified, atomic) and write its marker file."""

import logging
import sys
from typing import TYPE_CHECKING

from ldpsample.datasets.download import download_dataset
from ldpsample.pipeline.io import write_text
from ldpsample.pipeline.scripting import start

if TYPE_CHECKING:
    from snakemake.script import snakemake

log = start(snakemake)
# The download's own lines (start, each retry with its reason, end) on the console too, as they
# happen: a slow or failing mirror is visible, not a silent wait (the job's log has them all).
console = logging.StreamHandler(sys.__stderr__)
console.setFormatter(logging.Formatter(f"{snakemake.rule} {snakemake.params.dataset}: %(message)s"))
logging.getLogger("ldpsample.datasets.download").addHandler(console)
source = snakemake.params.source
files = download_dataset(
    snakemake.params.dataset,
    snakemake.params.dest_dir,
    url=source.get("url"),
    md5=source.get("md5"),
    sha256=source.get("sha256"),
    progressbar=True,
)
write_text(
    "".join(f"{role}\t{path}\n" for role, path in sorted(files.items())), snakemake.output.done
)
log.info("%s ready: %s", snakemake.params.dataset, files)
