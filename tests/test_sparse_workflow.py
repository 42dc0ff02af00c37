"""A catalogue of more than 4096 items through Snakemake with every method: the metrics job's
sparse path (no users x items matrix) gives the dense path's numbers."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from _workflow import OTHERS_OFF, copy_workflow, snakemake, write_config

from ldpsample.events import evaluate_attribute
from ldpsample.events.scoring import metrics as metrics_module

METHODS = ["minimax", "mollifier_tv", "mollifier_kl", "randomized_response"]


@pytest.mark.workflow
def test_a_large_catalogue_runs_every_method_sparsely_with_the_dense_numbers(tmp_path, monkeypatch):
    wd = copy_workflow(tmp_path / "wf")
    rng = np.random.default_rng(35)
    users, n = 150, 5000  # > DENSE_ITEMS = 4096 items: the sparse path
    per_user = rng.integers(1, 7, users)
    user = np.repeat(np.arange(users), per_user)
    item = rng.integers(0, n, user.size)
    (wd / "data").mkdir()
    table = pl.DataFrame(
        {
            "user": [f"u{u:04d}" for u in user],
            "item": [f"i{i:05d}" for i in item],
            "n": rng.integers(1, 4, user.size).astype(float),
        }
    )
    # every item held by someone: a spare user holds the items nobody drew
    missing = np.setdiff1d(np.arange(n), item)
    table = pl.concat(
        [
            table,
            pl.DataFrame(
                {
                    "user": ["u9999"] * missing.size,
                    "item": [f"i{i:05d}" for i in missing],
                    "n": np.ones(missing.size),
                }
            ),
        ]
    )
    table.write_parquet(wd / "data/log.parquet")
    entry = {
        "path": "data/log.parquet",
        "user": "user",
        "item": "item",
        "count": "n",
        "attributes": [],
        "prior": "user_mean",
        "top_items": None,
        "min_users": 1,
        "min_user_count": 0,
        "epsilons": [1, 4],
        "methods": METHODS,
    }
    config = write_config(wd, "sparse", {**OTHERS_OFF, "events": {"big": entry}})
    # the per-user table only (what is compared below; not the entry's figures)
    per_user = "results/events/big/per_user.parquet"  # before --configfile (nargs +)
    snakemake(wd, per_user, "-c2", "--configfile", config)
    got = pl.read_parquet(wd / per_user)
    log = next((wd / "logs").rglob("events_metrics/big/*.log")).read_text()
    assert "(sparse)" in log and "chunks of" in log  # the sparse path, with its progress

    hist = (
        table.group_by("user", "item")
        .agg(pl.col("n").sum().alias("count"))
        .with_columns(attribute=pl.lit("all"), subcategory=pl.lit("all"))
    )
    monkeypatch.setattr(metrics_module, "DENSE_ITEMS", 10**6)  # the dense path, in process
    dense = evaluate_attribute(
        hist,
        None,
        name="big",
        attribute="all",
        prior="user_mean",
        epsilons=[1, 4],
        methods=METHODS,
    ).per_user
    assert got.select("epsilon", "subcategory", "user").equals(
        dense.select("epsilon", "subcategory", "user")
    )
    columns = [c for c in dense.columns if c.startswith(("tv_", "kl_"))]
    assert len(columns) == 6
    for column in columns:
        np.testing.assert_allclose(got[column], dense[column], rtol=1e-12, atol=1e-12)
