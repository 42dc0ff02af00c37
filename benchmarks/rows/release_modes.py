"""The two release modes at an equal per-user budget on MovieLens, the worked example of
docs/publishing.md: ML-1M users (private, one age group each), the ML-100K prior per age group
(public), 18 genres. Per budget B the per-subcategory release (ε = B / 6 in each of the 6 age
groups) against the joint release (ε = B on the 108 (age group, genre) pairs, shares π of the
ML-100K table), by :func:`ldpsample.estimate.modes.compare_release_modes`.

* ``release-modes``: per budget and mode, the users' worst-case and median TV of their released
  distribution and the analyst's TV error of each age group's genre distribution (EM,
  Norm-Sub; mean over age groups and seeded releases) and of the age groups' shares, in the
  note; the table is written to ``benchmarks/results/release_modes.csv`` (git-ignored).

Reads ``--data`` (default ``../shared/data``, its ``ml-1m/`` and ``ml-100k/``), so the row is
left out of a ``--quick`` run unless named. Imports the standard library and :mod:`runner` at
the top; ``ldpsample`` and ``polars`` inside the function (see :mod:`rows`).
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from runner.measure import ROOT, Measure, Row
from runner.registry import DATA_ENV, in_own_processes, register

#: Where the comparison table is written.
CSV = ROOT / "benchmarks" / "results" / "release_modes.csv"


def _settings(quick: bool) -> dict:
    if quick:
        return dict(budgets=(6.0,), repeats=1)
    return dict(budgets=(1.5, 3.0, 6.0, 12.0), repeats=5)


@register("release-modes", in_own_processes)
def row_release_modes(quick: bool) -> Row:
    import polars as pl

    from ldpsample.datasets.registry import locate_dataset_files
    from ldpsample.estimate.modes import compare_release_modes
    from ldpsample.experiments.movielens.tables import movielens_events
    from ldpsample.pipeline.io import write_csv
    from ldpsample.publish import build_spec

    settings = _settings(quick)
    data = Path(os.environ.get(DATA_ENV) or ROOT.parent / "shared" / "data")
    start = time.perf_counter()
    ml1m, ml100k, _ = movielens_events(
        locate_dataset_files(data, "ml-1m"), locate_dataset_files(data, "ml-100k")
    )
    with tempfile.TemporaryDirectory() as folder:
        public = Path(folder) / "ml-100k.parquet"
        ml100k.write_parquet(public)
        spec = build_spec(
            name="ml1m",
            key="events.ml1m",
            attributes=["age_group"],
            prior={
                "path": str(public),
                "user": "user_id",
                "item": "genre",
                "count": "ratings",
                "attributes": ["age_group"],
            },
            epsilons=[1.0],
            release_mode="joint",
            seeded=True,
        )
    histograms = ml1m.select(
        pl.col("user_id").cast(pl.String).alias("user"),
        pl.lit("age_group").alias("attribute"),
        pl.col("age_group").alias("subcategory"),
        pl.col("genre").alias("item"),
        pl.col("ratings").alias("count"),
    )
    users = histograms["user"].unique().sort().to_list()
    table = compare_release_modes(
        spec,
        histograms,
        budgets=list(settings["budgets"]),
        users=users,
        repeats=settings["repeats"],
        seed=0,
    )
    seconds = time.perf_counter() - start
    CSV.parent.mkdir(parents=True, exist_ok=True)
    write_csv(table, CSV)
    row = Row(
        "release-modes",
        f"the two release modes at an equal budget: {len(users):,} ML-1M users, "
        f"{len(spec.subcategories)} age groups × 18 genres, {settings['repeats']} seeded releases "
        f"per budget (table: {CSV.relative_to(ROOT)})",
    )
    for record in table.iter_rows(named=True):
        share = record["share_tv_em"]
        note = (
            f"ε = {record['epsilon']:g}; users' TV worst {record['user_tv_worst']:.4f}, median "
            f"{record['user_tv_median']:.4f}; analyst TV EM {record['analyst_tv_em']:.4f}, "
            f"Norm-Sub {record['analyst_tv_norm_sub']:.4f}"
            + ("" if share != share else f"; shares TV (EM) {share:.4f}")
        )
        row.measures.append(
            Measure(f"B = {record['budget']:g}, {record['mode']}", seconds / table.height, note)
        )
    return row
