"""WPM at small ε on MovieLens-100K: does the base measure explain WPM < KPM-genre? Read from
``--data`` (default ``../shared/data``, the real data copies; its ``ml-100k/``), so these rows
are left out of a ``--quick`` run unless named:

* ``wpm-small-epsilon``: Hit Rate@1 of the WPM with each base-measure shape (``uniform``, the
  pipeline's default, ``kpm_genre``, ``popularity``, ``optimal``) beside ``kpm_genre`` and
  ``exponential``, ε 0.25, 0.5, 1 and 2, over the seeds 2025-2029 (each seed draws its own
  movie/user split and user subsets, as one pipeline run with ``seed: s`` would), at most 100
  validation users; a line per method, its time over every seed and ε, its Hit@1 mean ± sd
  over seeds per ε in the note; the per-seed table is written to
  ``benchmarks/results/wpm_small_epsilon.csv`` (git-ignored);
* ``wpm-small-epsilon-limit``: the ε -> 0 limit, where every mechanism releases its base
  measure: each shape's Hit@1 on all test users, mean ± sd over the seeds.

Results and discussion: docs/wpm-small-epsilon.md. Imports the standard library, numpy and
:mod:`runner` at the top; ``ldpsample`` and ``polars`` inside each function (see :mod:`rows`).
"""

from __future__ import annotations

import os
import time
import zlib
from pathlib import Path

import numpy as np
from runner.measure import ROOT, Measure, Row
from runner.registry import DATA_ENV, in_own_processes, register

#: Where the per-seed table of ``wpm-small-epsilon`` is written.
CSV = ROOT / "benchmarks" / "results" / "wpm_small_epsilon.csv"


def _settings(quick: bool) -> dict:
    if quick:
        return dict(seeds=(2025,), epsilons=(1.0,), n_scales=2, validation=10, test=50)
    return dict(
        seeds=(2025, 2026, 2027, 2028, 2029),
        epsilons=(0.25, 0.5, 1.0, 2.0),
        n_scales=6,
        validation=100,
        test=None,
    )


def _read_ml100k():
    from ldpsample.experiments.movielens.data import read_ml100k

    root = Path(os.environ.get(DATA_ENV) or ROOT.parent / "shared" / "data") / "ml-100k"
    files = {"ratings": "u.data", "items": "u.item", "users": "u.user", "genres": "u.genre"}
    missing = [str(root / name) for name in files.values() if not (root / name).exists()]
    if missing:
        raise SystemExit(f"--data: MovieLens-100K file not found: {missing[0]}")
    return read_ml100k({role: root / name for role, name in files.items()})


def _seeded_setup(data, seed: int):
    """The split of a pipeline run with root seed ``seed`` (common.smk's get_wpm_seed) and
    the seed of its user subsets."""
    from ldpsample.experiments.wpm_movielens import prepare_movielens

    split_seed, users_seed = np.random.SeedSequence([seed, zlib.crc32(b"wpm_movielens")]).spawn(2)
    setup = prepare_movielens(
        data["ratings"], data["movie_genres"], rng=np.random.default_rng(split_seed)
    )
    return setup, users_seed


def _mean_sd(values) -> str:
    values = np.asarray(values, dtype=float)
    sd = float(np.std(values, ddof=1)) if values.size > 1 else 0.0
    return f"{values.mean():.4f} ± {sd:.4f}"


@register("wpm-small-epsilon", in_own_processes)
def row_wpm_small_epsilon(quick: bool) -> Row:
    import polars as pl

    from ldpsample.experiments.wpm_movielens import BASE_MEASURES, movielens_hit_rates
    from ldpsample.pipeline.io import write_csv

    settings = _settings(quick)
    data = _read_ml100k()
    runs = [("kpm_genre", "-"), ("exponential", "-")] + [("wpm", b) for b in BASE_MEASURES]
    seconds: dict[str, float] = {}
    frames = []
    for seed in settings["seeds"]:
        setup, users_seed = _seeded_setup(data, seed)
        for method, base in runs:
            name = f"wpm[{base}]" if method == "wpm" else method
            start = time.perf_counter()
            _, test = movielens_hit_rates(
                setup,
                epsilons=list(settings["epsilons"]),
                # the same user subset for every method (a fresh generator from one seed)
                rng=np.random.default_rng(users_seed),
                methods=[method],
                n_scales=settings["n_scales"],
                max_validation_users=settings["validation"],
                max_test_users=settings["test"],
                include_nonprivate=False,
                base_measure=base if method == "wpm" else "uniform",
            )
            seconds[name] = seconds.get(name, 0.0) + time.perf_counter() - start
            frames.append(test.with_columns(method=pl.lit(name), seed=pl.lit(seed)))
    table = pl.concat(frames).sort("method", "epsilon", "seed")
    CSV.parent.mkdir(parents=True, exist_ok=True)
    write_csv(table, CSV)
    row = Row(
        "wpm-small-epsilon",
        f"MovieLens-100K Hit@1 at small ε, {len(settings['seeds'])} seeds, at most "
        f"{settings['validation']} validation users (per-seed table: {CSV.relative_to(ROOT)})",
    )
    for name in seconds:
        rates = table.filter(pl.col("method") == name)
        cells = [
            f"ε = {eps:g}: {_mean_sd(rates.filter(pl.col('epsilon') == eps)['hit_rate_mean'])}"
            for eps in sorted(set(rates["epsilon"].to_list()))
        ]
        row.measures.append(Measure(name, seconds[name], "Hit@1 " + "; ".join(cells)))
    return row


@register("wpm-small-epsilon-limit", in_own_processes)
def row_wpm_small_epsilon_limit(quick: bool) -> Row:
    from ldpsample.experiments.wpm_movielens import base_measure_shape

    settings = _settings(quick)
    data = _read_ml100k()
    row = Row(
        "wpm-small-epsilon-limit",
        f"MovieLens-100K, ε -> 0: each base measure released as is, Hit@1 on all test users, "
        f"{len(settings['seeds'])} seeds",
    )
    for shape in ("uniform", "kpm_genre", "popularity"):
        start = time.perf_counter()
        values = []
        for seed in settings["seeds"]:
            setup, _ = _seeded_setup(data, seed)
            mu = base_measure_shape(setup, shape, 1.0)
            values.append(float((setup.test_liked @ mu).mean()))
        seconds = time.perf_counter() - start
        row.measures.append(Measure(shape, seconds, f"Hit@1 {_mean_sd(values)}"))
    return row
