"""Events dataset with release: true: the publication. The budget (from the current config,
whatever the re-run triggers) is checked again under the ledger's write lock, the spend of
every user of the roster is recorded before any draw exists, the users draw their items
(ldpsample.publish.release_items, with the kernel audit), and the published folder (publish/,
or reproducible_not_for_publication/ for a seeded run) is built beside and swapped in whole. The
ledger totals of the table's users and the operator's release report are written beside it,
never in it, 0600 (ldpsample.publish.publish_release; docs/publishing.md). Before any draw the
accuracy plan is computed from public inputs only (the spec and the number of releasing users;
ldpsample.estimate.accuracy_plan), its warnings and a summary go to the console, and it is
written into the published release.json."""

from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from ldpsample.estimate.plan import accuracy_plan, plan_summary, releasing_users
from ldpsample.pipeline.io import write_csv, write_text
from ldpsample.pipeline.progress import PROGRESS
from ldpsample.pipeline.scripting import start
from ldpsample.publish import Ledger, publish_release, read_spec, uniform_source
from ldpsample.publish.publication import RELEASE_FILE

if TYPE_CHECKING:
    from snakemake.script import snakemake

log = start(snakemake)
options = snakemake.params.budget
seed = snakemake.params.release_seed
spec_folder = Path(snakemake.input.manifest).parent
spec = read_spec(spec_folder)
if spec.seeded != (seed is not None):
    raise ValueError(f"the spec says seeded={spec.seeded} but release_seed is {seed!r}")
histograms = pl.concat([pl.read_parquet(path) for path in snakemake.input.histograms])
users = pl.read_parquet(snakemake.input.roster)["user"].to_list()
plan = accuracy_plan(spec, users=releasing_users(spec, histograms, users=users))
for warning in plan.warnings:
    log.warning("accuracy plan: %s", warning)
log.info("%s", plan_summary(plan), extra=PROGRESS)
try:
    published = publish_release(
        spec,
        histograms,
        spec_folder=spec_folder,
        uniforms=uniform_source(seed),
        ledger=options["ledger"],
        budget=options["budget"],
        key=options["key"],
        population=spec.population,
        folder=snakemake.params.folder,
        users=users,
        accuracy_plan=plan.to_json(),
    )
except Exception as exc:
    log.error("%s", exc)
    raise
receipt = (published.folder / RELEASE_FILE).read_text(encoding="utf-8")
write_text(receipt, snakemake.output.receipt)
ledger = Ledger(options["ledger"])
roster = pl.DataFrame({"user": published.release.released["user"].unique().sort()})
totals = ledger.totals(population=spec.population).join(roster, on="user", how="semi")
write_csv(totals, snakemake.output.ledger, private=True)
report = published.release.report
write_csv(report, snakemake.output.report, private=True)
log.info(
    "release %s into %s: %d draws for %d users (%s); %d histogram rows outside the spec's "
    "domain; users holding mass on items of q = 0: %d",
    published.release_id,
    published.folder,
    published.release.released.height,
    len(users),
    "seeded: reproducible, not for publication" if spec.seeded else "secret randomness",
    published.release.rows_outside_domain,
    int(report["users_zero_mass"].max() or 0) if report.height else 0,
)
log.info(
    "ledger %s, population %r: largest total ε %s (budget %s)",
    options["ledger"],
    spec.population,
    totals["total_epsilon"].max(),
    options["budget"],
)
