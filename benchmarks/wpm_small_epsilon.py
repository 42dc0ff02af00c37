"""WPM at small ε on MovieLens-100K: does the base measure explain WPM < KPM-genre?

Hit Rate@1 of the WPM with each base-measure shape (``uniform`` = the pipeline's default,
``kpm_genre``, ``popularity``, ``optimal``) beside ``kpm_genre`` and ``exponential``, over
several seeds (each seed draws its own movie/user split and user subsets, as one pipeline run
with ``seed: s`` would), printed as a markdown table of mean ± sd over seeds.

    .venv/bin/python benchmarks/wpm_small_epsilon.py --data ../shared/data/ml-100k \\
        --seeds 2025 2026 2027 2028 2029 --epsilons 0.25 0.5 1 2 --max-validation-users 100 \\
        --out benchmarks/results/wpm_small_epsilon.csv
    .venv/bin/python benchmarks/wpm_small_epsilon.py --limit-only   # the ε -> 0 limit

Results and discussion: docs/wpm-small-epsilon.md.
"""

from __future__ import annotations

import argparse
import sys
import time
import zlib
from pathlib import Path

import numpy as np
import polars as pl

from ldpsample.experiments.movielens.data import read_ml100k
from ldpsample.experiments.wpm_movielens import (
    BASE_MEASURES,
    base_measure_shape,
    movielens_hit_rates,
    prepare_movielens,
)


def seeded_setup(data, seed: int):
    """The split of a pipeline run with root seed ``seed`` (common.smk get_wpm_seed)."""
    split_seed, users_seed = np.random.SeedSequence([seed, zlib.crc32(b"wpm_movielens")]).spawn(2)
    setup = prepare_movielens(
        data["ratings"], data["movie_genres"], rng=np.random.default_rng(split_seed)
    )
    return setup, users_seed


def limit_hit_rates(data, seeds, shapes=("uniform", "kpm_genre", "popularity")) -> None:
    """ε -> 0: every mechanism releases its base measure; its Hit@1 on all test users."""
    values: dict[str, list[float]] = {shape: [] for shape in shapes}
    for seed in seeds:
        setup, _ = seeded_setup(data, seed)
        for shape in shapes:
            mu = base_measure_shape(setup, shape, 1.0)
            values[shape].append(float((setup.test_liked @ mu).mean()))
    print("| base measure released as is (ε → 0) | Hit@1 |")
    print("| --- | ---: |")
    for shape, v in values.items():
        print(f"| {shape} | {np.mean(v):.4f} ± {np.std(v, ddof=1):.4f} |")


def run_seed(data, seed: int, args) -> pl.DataFrame:
    setup, users_seed = seeded_setup(data, seed)
    frames = []
    runs = [("kpm_genre", "-"), ("exponential", "-")] + [("wpm", b) for b in args.base_measures]
    for method, base in runs:
        _, test = movielens_hit_rates(
            setup,
            epsilons=args.epsilons,
            # same user subset for every method (fresh generator from the same seed)
            rng=np.random.default_rng(users_seed),
            methods=[method],
            n_scales=args.n_scales,
            max_validation_users=args.max_validation_users,
            max_test_users=args.max_test_users,
            include_nonprivate=False,
            base_measure=base if method == "wpm" else "uniform",
        )
        name = f"wpm[{base}]" if method == "wpm" else method
        frames.append(test.with_columns(method=pl.lit(name), seed=pl.lit(seed)))
    return pl.concat(frames)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data/ml-100k")
    parser.add_argument("--seeds", type=int, nargs="+", default=[2025, 2026, 2027, 2028, 2029])
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.25, 0.5, 1.0, 2.0])
    parser.add_argument("--base-measures", nargs="+", default=list(BASE_MEASURES))
    parser.add_argument("--n-scales", type=int, default=6)
    parser.add_argument("--max-validation-users", type=int, default=100)
    parser.add_argument("--max-test-users", type=int, default=None)
    parser.add_argument("--out", default="benchmarks/results/wpm_small_epsilon.csv")
    parser.add_argument(
        "--limit-only", action="store_true", help="only the ε -> 0 limit (the base measures)"
    )
    args = parser.parse_args(argv)
    root = Path(args.data)
    data = read_ml100k(
        {
            k: root / f
            for k, f in {
                "ratings": "u.data",
                "items": "u.item",
                "users": "u.user",
                "genres": "u.genre",
            }.items()
        }
    )
    if args.limit_only:
        limit_hit_rates(data, args.seeds)
        return
    frames = []
    for seed in args.seeds:
        start = time.perf_counter()
        frames.append(run_seed(data, seed, args))
        print(f"seed {seed}: {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    table = pl.concat(frames).sort("method", "epsilon", "seed")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    table.write_csv(args.out)
    summary = (
        table.group_by("method", "epsilon")
        .agg(
            mean=pl.col("hit_rate_mean").mean(),
            sd=pl.col("hit_rate_mean").std(),
            n_test=pl.col("n_users").mean(),
        )
        .sort("method", "epsilon")
    )
    eps_list = sorted(set(summary["epsilon"].to_list()))
    print("| method | " + " | ".join(f"ε = {e:g}" for e in eps_list) + " |")
    print("| --- |" + " ---: |" * len(eps_list))
    for method in summary["method"].unique(maintain_order=True):
        rows = summary.filter(pl.col("method") == method)
        cells = [f"{r['mean']:.4f} ± {r['sd'] or 0.0:.4f}" for r in rows.iter_rows(named=True)]
        print(f"| {method} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
