"""Events dataset with release: true: the publication. Under the ledger's lock: the budget is
checked again, every user of the roster draws its items (ldpsample.publish.release_items, with
the kernel audit), the spend is appended to the persistent ledger, then publish/released/ is
moved into place; publish/spec/ is a copy of the spec. The ledger totals of the table's users
and the operator's release report are written beside publish/, never in it
(ldpsample.publish.publish_release; docs/publishing.md)."""

import json
import shutil
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from ldpsample.events.release import epsilon_text
from ldpsample.pipeline.io import write_csv, write_text
from ldpsample.pipeline.scripting import start
from ldpsample.publish import Ledger, publish_release, read_spec, spec_sha256, uniform_source

if TYPE_CHECKING:
    from snakemake.script import snakemake

log = start(snakemake)
gate = json.loads(Path(snakemake.input.gate).read_text())
spec = read_spec(snakemake.input.manifest)
seed = snakemake.params.release_seed
if spec.seeded != (seed is not None):
    raise ValueError(f"the spec says seeded={spec.seeded} but release_seed is {seed!r}")
sha = spec_sha256(snakemake.input.manifest)
histograms = pl.concat([pl.read_parquet(path) for path in snakemake.input.histograms])
users = pl.read_parquet(snakemake.input.roster)["user"].to_list()
for source, target in (
    (snakemake.input.domain, snakemake.output.spec_domain),
    (snakemake.input.manifest, snakemake.output.spec_manifest),
):
    write_text(Path(source).read_text(encoding="utf-8"), target)
released = Path(snakemake.output.released)  # work/released: events_publish_file publishes each file
staging = released.parent / f".released-{uuid.uuid4().hex}"
staging.mkdir(parents=True)
try:
    published = publish_release(
        spec,
        histograms,
        spec_sha256=sha,
        uniforms=uniform_source(seed),
        ledger=gate["ledger"],
        budget=gate["budget"],
        key=gate["key"],
        released={eps: staging / f"eps~{epsilon_text(eps)}.parquet" for eps in spec.epsilons},
        manifest=staging / "release.json",
        users=users,
    )
    staging.rename(released)
except Exception as exc:
    shutil.rmtree(staging, ignore_errors=True)
    log.error("%s", exc)
    raise
roster = pl.DataFrame({"user": users}, schema={"user": pl.String})
totals = Ledger(gate["ledger"]).totals().join(roster, on="user", how="semi")
write_csv(totals, snakemake.output.ledger)
report = published.release.report
write_csv(report, snakemake.output.report)
log.info(
    "release %s of spec %s: %d draws for %d users (%s); %d histogram rows outside the spec's "
    "domain; users holding mass on items of q = 0: %d",
    published.release_id,
    sha,
    published.release.released.height,
    len(users),
    "seeded: reproducible, not for publication" if spec.seeded else "secret randomness",
    published.release.rows_outside_domain,
    int(report["users_zero_mass"].max() or 0) if report.height else 0,
)
log.info("ledger %s: largest total ε %s", gate["ledger"], totals["total_epsilon"].max())
