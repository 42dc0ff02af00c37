"""Unit tests of ldpsample.events (no Snakemake): the filters of the histogram step, the
priors, the audit and the seeds."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from ldpsample import minimax_coefficients
from ldpsample.events import (
    EventsTableError,
    PrivacyAuditError,
    build_event_histograms,
    evaluate_attribute,
)
from ldpsample.events.options import EventsOptions
from ldpsample.events.outputs.tables import concat_attribute_parts, max_table, summary
from ldpsample.experiments.avazu.tables import avazu_max_tv, avazu_max_tv_of_parts


def write(tmp_path, rows, name="events.parquet"):
    frame = pl.DataFrame(rows, schema=["user", "item", "n", "click", "attr"], orient="row")
    path = tmp_path / name
    frame.write_parquet(path)
    return path


def build(path, **options):
    base = dict(
        key="events.t",
        user="user",
        item="item",
        count="n",
        attributes=["attr"],
        top_items=2,
        min_user_count=1,
        min_users=1,
    )
    return build_event_histograms(EventsOptions(path=path, **{**base, **options}))


def test_top_items_by_rank_column_with_ties_by_item(tmp_path):
    rows = [("u1", "b", 1.0, 1, "x"), ("u1", "a", 1.0, 1, "x"), ("u2", "c", 5.0, 0, "x")]
    path = write(tmp_path, rows)
    by_count = build(path).histograms
    assert sorted(set(by_count["item"])) == ["a", "c"]  # c has 5; a, b tie at 1: a wins
    by_click = build(path, rank_items_by="click").histograms
    assert sorted(set(by_click["item"])) == ["a", "b"]  # c has no click


def test_activity_scope_global_counts_the_whole_table(tmp_path):
    # u1: 3 events on item z (not a top item) and 1 on a; threshold 2
    rows = [("u1", "z", 1.0, 0, "x")] * 3 + [
        ("u1", "a", 1.0, 1, "x"),
        ("u2", "a", 2.0, 1, "x"),
        ("u2", "b", 2.0, 1, "x"),
        ("u3", "b", 4.0, 1, "x"),
    ]
    path = write(tmp_path, rows)
    options = dict(top_items=2, rank_items_by="click", min_user_count=2)
    local = build(path, activity_scope="top_items", **options).histograms
    assert sorted(set(local["user"])) == ["u2", "u3"]
    whole = build(path, activity_scope="global", **options).histograms
    assert sorted(set(whole["user"])) == ["u1", "u2", "u3"]


def test_min_users_skips_and_lists(tmp_path):
    rows = [("u1", "a", 1.0, 1, "x"), ("u2", "a", 1.0, 1, "x"), ("u3", "a", 1.0, 1, "y")]
    result = build(write(tmp_path, rows), min_users=2)
    table = result.subcategories.sort("subcategory")
    assert table["status"].to_list() == ["kept", "skipped"]
    assert table["reason"][1] == "1 users < min_users (2)"
    assert set(result.histograms["subcategory"]) == {"x"}


def test_on_null_drop_or_error(tmp_path):
    rows = [("u1", "a", 1.0, 1, "x"), (None, "a", 1.0, 1, "x")]
    path = write(tmp_path, rows)
    assert build(path).stats["null_user"] == 1
    with pytest.raises(EventsTableError) as info:
        build(path, on_null="error")
    assert str(info.value).splitlines()[0].startswith(f"{path}, data row 2: user=None in ")
    assert "column 'user' (config key events.t.user) is null" in str(info.value)


def test_missing_file_and_column_name_both(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"config key events\.t\.path"):
        build(tmp_path / "nowhere.parquet")
    path = write(tmp_path, [("u1", "a", 1.0, 1, "x")])
    with pytest.raises(
        EventsTableError, match=r"column 'weight' \(config key events.t.count\) not found"
    ):
        build(path, count="weight")


def test_public_prior_table(tmp_path):
    rows = [("u1", "a", 1.0, 1, "x"), ("u1", "b", 3.0, 1, "x")]
    path = write(tmp_path, rows)
    public = write(
        tmp_path,
        [("p1", "a", 1.0, 0, "x"), ("p2", "b", 1.0, 0, "x"), ("p2", "c", 7.0, 0, "x")],
        name="public.parquet",
    )
    prior = {
        "path": str(public),
        "user": "user",
        "item": "item",
        "count": "n",
        "attributes": ["attr"],
    }
    result = build(path, prior=prior)
    assert dict(zip(result.priors["item"], result.priors["q"], strict=True)) == {"a": 0.5, "b": 0.5}
    lacking = write(tmp_path, [("p1", "a", 1.0, 0, "y")], name="lacking.parquet")
    with pytest.raises(EventsTableError, match="lacks subcategory 'x' of attribute 'attr'"):
        build(path, prior={**prior, "path": str(lacking)})


def _histograms(users=30, items=5, seed=1):
    rng = np.random.default_rng(seed)
    rows = [
        ("a", "s", f"u{u:02d}", f"i{i}", float(rng.integers(1, 5)))
        for u in range(users)
        for i in range(items)
        if rng.random() < 0.7 or i == 0
    ]
    return pl.DataFrame(
        rows, schema=["attribute", "subcategory", "user", "item", "count"], orient="row"
    )


def test_evaluation_is_deterministic_and_audit_is_tight():
    """Evaluation draws nothing: the same histograms give the same tables, and both kernels'
    realised ε equals ε (they are tight)."""
    hist = _histograms()
    options = dict(
        name="d",
        attribute="a",
        prior="user_mean",
        epsilons=[1, 3],
        methods=["minimax", "randomized_response"],
    )
    first, second = (
        evaluate_attribute(hist, None, **options),
        evaluate_attribute(hist, None, **options),
    )
    assert first.per_user.equals(second.per_user)
    assert not hasattr(first, "released")
    assert np.allclose(first.audit["realized_epsilon"], first.audit["epsilon"], rtol=1e-12)


def test_attribute_parts_concatenate_in_sorted_order_without_a_sort():
    """evaluate_attribute returns rows in (epsilon, subcategory, user) order, whatever order the
    histogram rows come in; concat_attribute_parts interleaves parts given in any attribute
    order into the (epsilon, attribute, subcategory, user) order a sort gives."""
    options = dict(
        name="d",
        prior="user_mean",
        epsilons=[3, 1],
        methods=["minimax", "mollifier_tv"],
        chunk_users=7,  # several chunks per subcategory
    )
    parts = []
    for attribute, seed in (("b", 1), ("a", 2), ("c", 3)):
        hist = pl.concat(
            [
                _histograms(users=20 + seed, seed=seed).with_columns(
                    attribute=pl.lit(attribute), subcategory=pl.lit(sub)
                )
                for sub in ("t", "s", "ü")
            ]
        ).sample(fraction=1.0, shuffle=True, seed=seed)
        parts.append(evaluate_attribute(hist, None, attribute=attribute, **options))
    key = ["epsilon", "attribute", "subcategory", "user"]
    for table in ("per_user",):
        frames = [getattr(part, table) for part in parts]
        for frame in frames:
            assert frame.equals(frame.sort(key)), table
        together = concat_attribute_parts(frames)
        assert together.equals(pl.concat(frames).sort(key)), table
        assert together.height == sum(frame.height for frame in frames) > 0
    empty = parts[0].per_user.clear()
    assert concat_attribute_parts([empty, empty]).equals(empty)
    assert concat_attribute_parts([empty, parts[1].per_user]).equals(parts[1].per_user)


def test_avazu_max_tv_part_by_part_equals_the_whole_table(tmp_path):
    """The figure job's max_tv (avazu_max_tv_of_parts: each attribute's part read alone) is the
    aggregate job's (avazu_max_tv of every part together), bit for bit; no part gives the
    contract's empty table."""
    options = dict(name="avazu", prior="user_mean", epsilons=[4, 1])
    options.update(methods=["minimax", "mollifier_tv"])
    paths, frames = [], []
    for attribute, seed in (("C18", 1), ("C1", 2), ("C15", 3)):
        hist = pl.concat(
            [
                _histograms(users=12 + seed, seed=seed).with_columns(
                    attribute=pl.lit(attribute), subcategory=pl.lit(sub)
                )
                for sub in ("1005", "2", "320")
            ]
        )
        per_user = evaluate_attribute(hist, None, attribute=attribute, **options).per_user
        paths.append(tmp_path / f"{attribute}.parquet")
        per_user.write_parquet(paths[-1])
        frames.append(per_user)
    whole = avazu_max_tv(concat_attribute_parts(frames))
    assert whole.height == 3 * 3 * 2 * 2  # attributes x subcategories x ε x methods
    assert avazu_max_tv_of_parts(paths).equals(whole)
    assert avazu_max_tv_of_parts([]).equals(avazu_max_tv(frames[0].clear()))


def test_a_non_private_kernel_fails_the_audit(monkeypatch):
    """The evaluation's audit passes the release's kernel and fails one built for 2ε in its
    place (the kernel code the metrics call, replaced)."""
    from ldpsample.events.scoring import release_kernel as release_module

    def evaluate():
        return evaluate_attribute(
            _histograms(),
            None,
            name="d",
            attribute="a",
            prior="uniform",
            epsilons=[1],
            methods=["minimax"],
        )

    assert (evaluate().audit["realized_epsilon"] <= 1 + 1e-9).all()

    def leaky(q, *, epsilon):
        return minimax_coefficients(q, epsilon=2 * epsilon)

    monkeypatch.setattr(release_module, "minimax_release_kernel", leaky)
    with pytest.raises(PrivacyAuditError, match=r"exceeds the claimed epsilon"):
        evaluate()


def test_tables():
    result = evaluate_attribute(
        _histograms(),
        None,
        name="d",
        attribute="a",
        prior="pooled",
        epsilons=[1, 2],
        methods=["minimax", "mollifier_tv", "mollifier_kl"],
    )
    tv, kl = max_table(result.per_user, "tv"), max_table(result.per_user, "kl")
    assert set(tv["method"]) == {"minimax", "mollifier_tv"} and set(kl["method"]) == {
        "minimax",
        "mollifier_kl",
    }
    assert set(summary(tv, kl)["divergence"]) == {"tv", "kl", "tv+kl"}


def _random_events(rng, rows, *, fractional):
    users = [f"u{i:03d}" for i in range(40)]
    items = [f"i{i:02d}" for i in range(12)]
    n = rng.integers(1, 4, rows).astype(float)
    if fractional:
        n = n + rng.choice([0.0, 0.1, 0.25], rows)
    return pl.DataFrame(
        {
            "user": rng.choice(users, rows),
            "item": rng.choice(items, rows),
            "n": n,
            "click": rng.integers(0, 2, rows),
            "attr": [None if a == "-" else a for a in rng.choice(["x", "y", "z", "-"], rows)],
            "other": rng.integers(0, 3, rows),
        }
    )


@pytest.mark.parametrize("scope", ["global", "top_items"])
@pytest.mark.parametrize("count", [None, "n"])
@pytest.mark.parametrize("rank", [None, "click"])
def test_aggregate_path_equals_row_path(tmp_path, monkeypatch, scope, count, rank):
    """Integer weights take the one-group-by path (sums over the (subcategory, user, item)
    aggregate); it gives the same frames, bit for bit, as the row-by-row path that fractional
    weights take, for every scope, weight, ranking and for two attributes with nulls."""
    import ldpsample.events.counting.histograms as histograms

    path = tmp_path / "e.parquet"
    _random_events(np.random.default_rng(7), 3000, fractional=False).write_parquet(path)
    options = dict(
        count=count,
        rank_items_by=rank,
        attributes=["attr", "other"],
        activity_scope=scope,
        top_items=5,
        # about the median activity of a user (75 rows of weight 1, or about 2 with count="n")
        min_user_count=(75 if scope == "global" else 8) * (2 if count else 1),
        min_users=3,
        on_bad_rows="skip",  # rows with a null attribute are in no subcategory of it
    )
    fast = build(path, **options)
    everyone = build(path, **{**options, "min_user_count": 0})
    assert 0 < fast.histograms.height < everyone.histograms.height  # the filter bites
    monkeypatch.setattr(histograms, "_exact_sums", lambda checks, columns: False)
    slow = build(path, **options)
    for name in ("histograms", "priors", "subcategories"):
        assert getattr(fast, name).equals(getattr(slow, name)), name
    assert fast.stats == slow.stats


def test_fractional_weights_take_the_row_path(tmp_path):
    import ldpsample.events.counting.histograms as histograms

    path = tmp_path / "e.parquet"
    _random_events(np.random.default_rng(8), 500, fractional=True).write_parquet(path)
    checks = histograms._check_numbers(
        pl.scan_parquet(path), {"n": "events.t.count"}, "user", "item"
    ).collect()
    assert not histograms._exact_sums(checks.row(0, named=True), {"n": "events.t.count"})
    result = build(path, min_user_count=2, top_items=5, on_bad_rows="skip")
    assert result.histograms["count"].sum() > 0


def test_subcategory_matrix_sorts_like_numpy():
    from ldpsample.events.scoring.metrics import subcategory_matrix

    rows = pl.DataFrame(
        {
            "user": ["b", "a", "é", "B", "a", "z"],
            "item": ["y", "x", "x", "ü", "y", "x"],
            "count": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
        }
    )
    users, items, counts = subcategory_matrix(rows)
    assert users.tolist() == sorted(set(rows["user"]))
    assert items.tolist() == sorted(set(rows["item"]))
    expected = np.zeros((users.size, items.size))
    for u, i, c in rows.iter_rows():
        expected[users.tolist().index(u), items.tolist().index(i)] += c
    assert np.array_equal(counts, expected)
