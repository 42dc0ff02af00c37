"""The two release modes at an equal per-user budget on MovieLens, the worked example of
docs/publishing.md: ML-1M users (private, one age group each), the ML-100K prior per age group
(public), 18 genres. Per budget B the per-subcategory release (ε = B / 6 in each of the 6 age
groups) against the joint release (ε = B on the 108 (age group, genre) pairs, shares π of the
ML-100K table), by :func:`ldpsample.estimate.modes.compare_release_modes`: the users' worst-case
and median TV of their released distribution, and the analyst's TV error of each age group's
genre distribution (EM, Norm-Sub; mean over age groups and seeded releases) and of the age
groups' shares. Prints a markdown table (the numbers of docs/publishing.md).

    .venv/bin/python benchmarks/release_modes.py --data ../shared/data --budgets 6 24 60 \\
        --repeats 5
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import polars as pl

from ldpsample.datasets.registry import locate_dataset_files
from ldpsample.estimate.modes import compare_release_modes
from ldpsample.events.movielens import movielens_events
from ldpsample.publish import build_spec


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default="../shared/data", help="folder with ml-1m/, ml-100k/")
    parser.add_argument("--budgets", type=float, nargs="+", default=[6.0, 24.0, 60.0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    start = time.perf_counter()
    ml1m, ml100k, _ = movielens_events(
        locate_dataset_files(args.data, "ml-1m"), locate_dataset_files(args.data, "ml-100k")
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
        spec, histograms, budgets=args.budgets, users=users, repeats=args.repeats, seed=args.seed
    )
    print(
        f"{len(users):,} ML-1M users, {len(spec.subcategories)} age groups × 18 genres, "
        f"ML-100K shares {spec.shares}; {args.repeats} seeded releases per row; "
        f"{time.perf_counter() - start:.0f} s"
    )
    print()
    print(
        "| budget B | mode | ε | users' worst TV | users' median TV | analyst TV (EM) | "
        "analyst TV (Norm-Sub) | shares TV (EM) |"
    )
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for row in table.iter_rows(named=True):
        share = "—" if row["share_tv_em"] != row["share_tv_em"] else f"{row['share_tv_em']:.4f}"
        print(
            f"| {row['budget']:g} | {row['mode']} | {row['epsilon']:g} | "
            f"{row['user_tv_worst']:.4f} | {row['user_tv_median']:.4f} | "
            f"{row['analyst_tv_em']:.4f} | {row['analyst_tv_norm_sub']:.4f} | {share} |"
        )


if __name__ == "__main__":
    main()
