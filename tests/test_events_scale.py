"""Events tables at scale, at the library level: partitioned input (a folder, a glob,
a hive dataset), the map/reduce steps of ldpsample.events.bucketed.steps giving the one job's
histograms, subcategories and priors bit for bit for any partitioning and bucket count, the
user_mean fold equal to P.mean(axis=0), metrics independent of threads and chunks, randomized
response's closed form, the sparse path of large subcategories against the dense one, and the
combine's streaming tables (exact medians, the per-user file written run by run). The same
through Snakemake is tests/test_events_buckets_workflow.py's."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ldpsample import randomized_response, realized_epsilon
from ldpsample.audit import randomized_response_realized_epsilon
from ldpsample.baselines import linear_minimax
from ldpsample.divergences import kl_divergence, tv_distance
from ldpsample.events import EventsTableError, build_event_histograms, evaluate_attribute
from ldpsample.events.bucketed.steps import histograms_in_buckets
from ldpsample.events.counting import data_priors as priors_module
from ldpsample.events.counting.data_priors import UserMeanFold, csr_rows
from ldpsample.events.options import EventsOptions
from ldpsample.events.outputs import tables
from ldpsample.events.reading.files import list_table_files
from ldpsample.events.reading.scan import scan_events
from ldpsample.events.scoring import metrics

ALL_METHODS = ["minimax", "mollifier_tv", "mollifier_kl", "randomized_response"]
BASE = dict(
    key="events.t",
    user="user_id",
    item="item_id",
    count="n",
    attributes=["country", "device"],
    top_items=5,
    min_user_count=3,
    min_users=5,
    activity_scope="top_items",
    # the tables hold null countries: such a row is in no country subcategory
    on_bad_rows="skip",
)


def table(seed=0, rows=6000, users=300, fractional=False):
    """Events with integer weights (or fractional ones), a click column, some null countries."""
    rng = np.random.default_rng(seed)
    weights = rng.integers(1, 4, rows).astype(float)
    if fractional:  # continuous: no sum ties exactly with another or with a threshold
        weights = 0.5 + 2 * rng.random(rows)
    return pl.DataFrame(
        {
            "user_id": [f"u{x}" for x in rng.integers(0, users, rows)],
            "item_id": [f"i{x}" for x in rng.zipf(1.5, rows) % 30],
            "n": weights,
            "clicks": rng.integers(0, 3, rows),
            "country": rng.choice(["de", "fr", "it", None], rows).tolist(),
            "device": rng.choice(["phone", "tablet"], rows).tolist(),
        }
    )


def write_parts(frame: pl.DataFrame, folder: Path, parts: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    bounds = np.linspace(0, frame.height, parts + 1).astype(int)
    for index in range(parts):
        frame.slice(bounds[index], bounds[index + 1] - bounds[index]).write_parquet(
            folder / f"part-{index:03d}.parquet"
        )
    return folder


# --- partitioned input ----------------------------------------------------------------------


def test_a_folder_a_glob_and_a_hive_dataset_list_their_files_in_order(tmp_path):
    frame = table(rows=100)
    write_parts(frame, tmp_path / "folder", 3)
    (tmp_path / "folder" / "_SUCCESS").write_text("")
    (tmp_path / "folder" / ".part-000.parquet.crc").write_text("")
    (tmp_path / "folder" / "notes.txt").write_text("not rows")
    listed = list_table_files(tmp_path / "folder")
    assert [Path(f).name for f in listed.files] == [f"part-{i:03d}.parquet" for i in range(3)]
    assert listed.format == "parquet" and listed.hive_columns == []
    globbed = list_table_files(str(tmp_path / "folder" / "part-00[12].parquet"))
    assert [Path(f).name for f in globbed.files] == ["part-001.parquet", "part-002.parquet"]
    for day, part in (("2024-01-02", frame.head(40)), ("2024-01-01", frame.tail(60))):
        (tmp_path / "hive" / f"date={day}" / "kind=a%20b").mkdir(parents=True)
        part.write_parquet(tmp_path / "hive" / f"date={day}" / "kind=a%20b" / "0.parquet")
    hive = list_table_files(tmp_path / "hive")
    assert hive.hive_columns == ["date", "kind"]
    assert [h["date"] for h in hive.hive] == ["2024-01-01", "2024-01-02"]
    assert hive.hive[0]["kind"] == "a b"  # percent-decoded


def test_a_partitioned_table_reads_as_the_one_file(tmp_path):
    frame = table(rows=500)
    frame.write_parquet(tmp_path / "one.parquet")
    write_parts(frame, tmp_path / "parts", 4)
    for index, part in enumerate(frame.iter_slices(150)):
        part.write_csv(tmp_path / f"p{index}.csv")
    columns = [("user_id", "k"), ("item_id", "k"), ("n", "k")]
    one = scan_events(tmp_path / "one.parquet", columns, key="k", strings=["user_id"]).collect()
    for source in (tmp_path / "parts", str(tmp_path / "parts" / "*.parquet")):
        assert scan_events(source, columns, key="k", strings=["user_id"]).collect().equals(one)
    csv = scan_events(
        str(tmp_path / "p*.csv"), columns, key="k", strings=["user_id"], numbers=["n"]
    ).collect()
    assert csv.select(pl.col("n").cast(pl.Float64)).equals(one.select("n"))


def test_hive_folders_are_text_columns_usable_as_attributes(tmp_path):
    frame = table(rows=400).drop("country")
    for country in ("de", "fr"):
        folder = tmp_path / "hive" / f"country={country}"
        folder.mkdir(parents=True)
        frame.write_parquet(folder / "part.parquet")
    stacked = pl.concat([frame.with_columns(pl.lit(c).alias("country")) for c in ("de", "fr")])
    stacked.write_parquet(tmp_path / "stacked.parquet")
    options = {**BASE, "attributes": ["country"]}
    assert build_event_histograms(
        EventsOptions(path=tmp_path / "hive", **options)
    ).histograms.equals(
        build_event_histograms(
            EventsOptions(path=tmp_path / "stacked.parquet", **options)
        ).histograms
    )


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p / "absent", "events table not found (config key k"),
        (lambda p: (p / "empty").mkdir() or p / "empty", "the folder holds no table file"),
        (lambda p: str(p / "*.parquet"), "no file matches this pattern (config key k"),
    ],
)
def test_a_missing_table_names_the_path_and_the_key(tmp_path, make, message):
    path = make(tmp_path)
    with pytest.raises(FileNotFoundError, match=message.replace("(", r"\(")):
        list_table_files(path, key="k")


def test_mixed_formats_and_differing_hive_folders_are_refused(tmp_path):
    frame = table(rows=20)
    (tmp_path / "mixed").mkdir()
    frame.write_parquet(tmp_path / "mixed" / "a.parquet")
    frame.write_csv(tmp_path / "mixed" / "b.csv")
    with pytest.raises(ValueError, match="mix formats"):
        list_table_files(tmp_path / "mixed", key="k")
    (tmp_path / "hive" / "date=1").mkdir(parents=True)
    (tmp_path / "hive" / "day=2").mkdir(parents=True)
    frame.write_parquet(tmp_path / "hive" / "date=1" / "a.parquet")
    frame.write_parquet(tmp_path / "hive" / "day=2" / "a.parquet")
    with pytest.raises(ValueError, match="differ from"):
        list_table_files(tmp_path / "hive", key="k")


def test_a_bad_value_in_a_partition_names_its_file_and_row(tmp_path):
    frame = table(rows=90).with_columns(
        pl.col("n").cast(pl.String), pl.col("country").fill_null("de")
    )
    frame = frame.with_columns(
        pl.when(pl.int_range(pl.len()) == 70).then(pl.lit("x")).otherwise("n").alias("n")
    )
    for index, part in enumerate(frame.iter_slices(30)):
        part.write_csv(tmp_path / f"p{index}.csv")
    named = r"p2\.csv, data row 11 \(line 12 of a CSV with a header\): n='x' in "
    options = {**BASE, "on_bad_rows": "error"}
    with pytest.raises(EventsTableError, match=named):
        build_event_histograms(EventsOptions(path=str(tmp_path / "p*.csv"), **options))
    # the map/reduce path: the split job of that file says the same
    with pytest.raises(EventsTableError, match=named):
        histograms_in_buckets(
            str(tmp_path / "p*.csv"), buckets=2, workdir=tmp_path / "w", options=options
        )


# --- the map/reduce steps give the one job's results -----------------------------------------

OPTION_SETS = [
    {},
    {"activity_scope": "global", "rank_items_by": "clicks", "min_user_count": 10},
    {"top_items": None},
    {"count": None, "activity_by": "clicks", "min_user_count": 2, "attributes": []},
    {"items": ["i1", "i2", "i3", "i5", "i7"], "exclude_users": ["u3", "u5"], "min_user_count": 0},
]


def check_buckets_equal_one_job(source, one_file, options, prior, buckets, work):
    one = build_event_histograms(EventsOptions(path=one_file, **options))
    got = histograms_in_buckets(source, buckets=buckets, workdir=work, prior=prior, options=options)
    kept = got.priors.select("attribute", "subcategory").unique()
    histograms = pl.concat([pl.read_parquet(h) for h in got.histograms])
    histograms = histograms.join(
        kept, on=["attribute", "subcategory"], how="semi", maintain_order="left"
    )
    assert histograms.sort("attribute", "subcategory", "user", "item").equals(one.histograms)
    # buckets are ranges of the sorted users: taken bucket after bucket, the rows of each
    # subcategory are in user order already (what lets the combine job merge without a sort)
    in_bucket_order = histograms.sort("attribute", "subcategory", maintain_order=True)
    assert in_bucket_order.equals(one.histograms)
    assert got.subcategories.equals(one.subcategories)
    for attribute in options.get("attributes") or ["all"]:
        reference = evaluate_attribute(
            one.histograms,
            one.priors,
            name="t",
            attribute=attribute,
            prior=prior if isinstance(prior, str) else "table",
            epsilons=[1, 4],
            methods=ALL_METHODS,
        )
        parts = []
        for bucket, path in enumerate(got.histograms):
            part = pl.read_parquet(path).join(kept, on=["attribute", "subcategory"], how="semi")
            result = evaluate_attribute(
                part,
                got.priors,
                name="t",
                attribute=attribute,
                prior="given",
                epsilons=[1, 4],
                methods=ALL_METHODS,
                threads=1 + bucket % 2,
            )
            file = os.path.join(work, f"per_user_{attribute}_{bucket}.parquet")
            result.per_user.write_parquet(file)
            parts.append((attribute, bucket, file))
            assert result.audit.join(reference.audit, on=list(result.audit.columns)).height == (
                result.audit.height
            )
        merged = os.path.join(work, f"per_user_{attribute}.parquet")
        tables.write_per_user_parts(parts, merged)
        assert pl.read_parquet(merged).equals(reference.per_user)
        files = [p for _, _, p in parts]
        assert tables.tradeoff_table(files).equals(tables.tradeoff_table(reference.per_user))
        for divergence in ("tv", "kl"):
            assert tables.max_table(pl.scan_parquet(files), divergence).equals(
                tables.max_table(reference.per_user, divergence)
            )


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(OPTION_SETS)))
def test_buckets_and_partitions_give_the_one_jobs_tables_bit_for_bit(tmp_path, index):
    options = {**BASE, **OPTION_SETS[index]}
    frame = table(seed=index)
    frame.write_parquet(tmp_path / "one.parquet")
    write_parts(frame, tmp_path / "parts", 3)
    priors = ["pooled", "user_mean", "uniform"]
    for case, (source, buckets) in enumerate(
        [(tmp_path / "one.parquet", 1), (tmp_path / "parts", 2), (tmp_path / "parts", 5)]
    ):
        check_buckets_equal_one_job(
            source,
            tmp_path / "one.parquet",
            options,
            priors[(index + case) % 3],
            buckets,
            tmp_path / f"work{case}",
        )


def test_a_public_prior_table_in_buckets(tmp_path):
    frame = table(seed=7)
    write_parts(frame, tmp_path / "parts", 2)
    frame.write_parquet(tmp_path / "one.parquet")
    table(seed=8).write_parquet(tmp_path / "public.parquet")
    prior = {
        "path": str(tmp_path / "public.parquet"),
        "user": "user_id",
        "item": "item_id",
        "count": "n",
        "attributes": ["country", "device"],
    }
    options = {**BASE, "prior": prior}
    check_buckets_equal_one_job(
        tmp_path / "parts", tmp_path / "one.parquet", options, prior, 3, tmp_path / "w"
    )


def test_fractional_weights_in_buckets_agree_to_rounding(tmp_path):
    """Sums of fractional weights per partition and bucket may round differently from one
    sum over the rows (documented): the same histograms, counts equal to rounding."""
    frame = table(seed=3, fractional=True)
    write_parts(frame, tmp_path / "parts", 3)
    frame.write_parquet(tmp_path / "one.parquet")
    one = build_event_histograms(EventsOptions(path=tmp_path / "one.parquet", **BASE))
    got = histograms_in_buckets(tmp_path / "parts", buckets=4, workdir=tmp_path / "w", options=BASE)
    kept = got.priors.select("attribute", "subcategory").unique()
    histograms = (
        pl.concat([pl.read_parquet(h) for h in got.histograms])
        .join(kept, on=["attribute", "subcategory"], how="semi")
        .sort("attribute", "subcategory", "user", "item")
    )
    assert histograms.drop("count").equals(one.histograms.drop("count"))
    np.testing.assert_allclose(histograms["count"], one.histograms["count"], rtol=1e-14)


@pytest.mark.slow
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 2**16), buckets=st.integers(1, 7), parts=st.integers(1, 4))
def test_any_bucket_count_gives_the_same_histograms(tmp_path_factory, seed, buckets, parts):
    work = tmp_path_factory.mktemp("any")
    frame = table(seed=seed, rows=800, users=60)
    frame.write_parquet(work / "one.parquet")
    write_parts(frame, work / "parts", parts)
    options = {**BASE, "min_users": 2}
    one = build_event_histograms(EventsOptions(path=work / "one.parquet", **options))
    got = histograms_in_buckets(
        work / "parts", buckets=buckets, workdir=work / "w", options=options
    )
    kept = got.priors.select("attribute", "subcategory").unique()
    histograms = pl.concat([pl.read_parquet(h) for h in got.histograms]).join(
        kept, on=["attribute", "subcategory"], how="semi"
    )
    assert histograms.sort("attribute", "subcategory", "user", "item").equals(one.histograms)
    assert got.subcategories.equals(one.subcategories)


# --- priors, metrics ---------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    users=st.integers(1, 300),
    n=st.integers(1, 40),
    cuts=st.lists(st.integers(0, 300), max_size=5),
    seed=st.integers(0, 2**16),
)
def test_the_user_mean_fold_is_p_mean_axis_0_bit_for_bit(users, n, cuts, seed):
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 4, size=(users, n)).astype(float) * (rng.random((users, n)) < 0.4)
    counts[counts.sum(axis=1) == 0, rng.integers(0, n)] = 1.0
    P = counts / counts.sum(axis=1, keepdims=True)
    loop = np.zeros(n)
    for row in P:  # the oracle: one user after the other
        loop = loop + row
    assert np.array_equal(P.mean(axis=0), loop / users)  # numpy's axis-0 sum is that loop
    fold = UserMeanFold(n)
    for start, stop in zip([0, *sorted(cuts)], [*sorted(cuts), users], strict=True):
        block = counts[min(start, users) : min(stop, users)]
        rows, cols = np.nonzero(block)
        fold.add(*csr_rows(rows, cols, block[rows, cols], block.shape[0]))
    assert np.array_equal(fold.q(), (P.mean(axis=0)) / P.mean(axis=0).sum())


def test_the_sparse_user_mean_fold_does_not_depend_on_the_chunks(monkeypatch):
    monkeypatch.setattr(priors_module, "DENSE_ITEMS", 4)
    rng = np.random.default_rng(1)
    counts = rng.integers(0, 3, size=(500, 50)).astype(float)
    counts[counts.sum(axis=1) == 0, 0] = 1.0
    rows, cols = np.nonzero(counts)
    whole = UserMeanFold(50)
    whole.add(*csr_rows(rows, cols, counts[rows, cols], 500))
    parts = UserMeanFold(50)
    for start in range(0, 500, 77):
        block = counts[start : start + 77]
        r, c = np.nonzero(block)
        parts.add(*csr_rows(r, c, block[r, c], block.shape[0]))
    assert np.array_equal(whole.q(), parts.q())
    np.testing.assert_allclose(whole.q(), normalised(counts), rtol=1e-13)


def normalised(counts):
    P = counts / counts.sum(axis=1, keepdims=True)
    q = P.mean(axis=0)
    return q / q.sum()


def histograms_frame(counts: np.ndarray, subcategory="s") -> pl.DataFrame:
    rows, cols = np.nonzero(counts)
    return pl.DataFrame(
        {
            "attribute": "a",
            "subcategory": subcategory,
            "user": [f"u{r:05d}" for r in rows],
            "item": [f"i{c:05d}" for c in cols],
            "count": counts[rows, cols],
        }
    )


@pytest.mark.parametrize("prior", ["pooled", "user_mean", "uniform"])
def test_metrics_do_not_depend_on_threads_or_chunks(prior):
    rng = np.random.default_rng(4)
    counts = rng.integers(0, 3, size=(1000, 30)).astype(float) * (rng.random((1000, 30)) < 0.3)
    counts[counts.sum(axis=1) == 0, 0] = 1.0
    hist = pl.concat([histograms_frame(counts[:600], "s1"), histograms_frame(counts[600:], "s2")])
    options = dict(name="t", attribute="a", prior=prior, epsilons=[0.5, 3], methods=ALL_METHODS)
    reference = evaluate_attribute(hist, None, threads=1, **options)
    for threads, chunk in ((2, 4096), (3, 7), (1, 100), (5, 1)):
        other = evaluate_attribute(hist, None, threads=threads, chunk_users=chunk, **options)
        assert other.per_user.equals(reference.per_user), (threads, chunk)
        assert other.audit.equals(reference.audit)


def test_randomized_response_closed_form_is_the_matrix_product_to_1e_15():
    rng = np.random.default_rng(5)
    for n in (1, 2, 7, 100, 1000):
        P = rng.dirichlet(np.full(n, 0.3), size=200) if n > 1 else np.ones((200, 1))
        for eps in (0.1, 1.0, 8.0):
            K = randomized_response(n, epsilon=eps)
            closed = linear_minimax(P, epsilon=eps)
            assert np.abs(closed - P @ K).max() <= 1e-15
            assert np.abs(tv_distance(P, closed) - tv_distance(P, P @ K)).max() <= 1e-14
            assert np.abs(kl_divergence(P, closed) - kl_divergence(P, P @ K)).max() <= 1e-14
            # the O(1) audit is the dense audit, bit for bit, and tight
            assert randomized_response_realized_epsilon(n, epsilon=eps) == realized_epsilon(K)
            if n > 1:
                assert randomized_response_realized_epsilon(n, epsilon=eps) == pytest.approx(eps)


def test_a_large_subcategory_is_evaluated_sparsely_and_matches_the_dense_path(monkeypatch, capsys):
    rng = np.random.default_rng(6)
    users, n = 400, 300
    counts = np.zeros((users, n))
    for u in range(users):  # a few items each
        counts[u, rng.choice(n, rng.integers(1, 8), replace=False)] = rng.integers(1, 5)
    hist = histograms_frame(counts)
    for prior in ("pooled", "user_mean", "uniform"):
        options = dict(name="t", attribute="a", prior=prior, epsilons=[1, 4], methods=ALL_METHODS)
        dense = evaluate_attribute(hist, None, **options)
        monkeypatch.setattr(metrics, "DENSE_ITEMS", 50)
        monkeypatch.setattr(metrics, "SPARSE_CHUNK_USERS", 37)
        capsys.readouterr()
        sparse = evaluate_attribute(hist, None, threads=2, chunk_users=33, progress=True, **options)
        monkeypatch.undo()
        # progress inside the subcategory: its 11 chunks of 37 users (400 users)
        assert "ε 4: chunks of 37 users" in capsys.readouterr().err
        assert sparse.audit.select(pl.exclude("realized_epsilon")).equals(
            dense.audit.select(pl.exclude("realized_epsilon"))
        )
        np.testing.assert_allclose(
            sparse.audit["realized_epsilon"], dense.audit["realized_epsilon"], rtol=1e-12
        )
        assert sparse.per_user.select("epsilon", "subcategory", "user").equals(
            dense.per_user.select("epsilon", "subcategory", "user")
        )
        for column in sparse.per_user.columns[4:]:
            np.testing.assert_allclose(
                sparse.per_user[column], dense.per_user[column], rtol=1e-10, atol=1e-12
            )


@settings(max_examples=40, deadline=None)
@given(
    values=st.lists(
        st.one_of(
            st.floats(min_value=-1e-15, max_value=10, allow_nan=False),
            st.just(0.0),
            st.just(-0.0),
            st.just(float("inf")),
            st.sampled_from([0.25, 0.5]),
        ),
        min_size=1,
        max_size=60,
    ),
    split=st.integers(1, 5),
)
def test_the_streamed_median_is_polars_median(tmp_path_factory, values, split):
    work = tmp_path_factory.mktemp("median")
    frame = pl.DataFrame({"epsilon": [1.0] * len(values), "tv_minimax": values})
    files = []
    for index, part in enumerate(frame.iter_slices(max(1, -(-len(values) // split)))):
        files.append(work / f"{index}.parquet")
        part.write_parquet(files[-1])
    medians = tables._exact_medians(files, ["tv_minimax"], [(1.0, len(values))])
    expected = frame["tv_minimax"].median()
    got = medians[(1.0, "tv_minimax")]
    assert (np.isnan(got) and np.isnan(expected)) or got == expected


@pytest.mark.parametrize("dense_items", [4096, 50])
def test_the_metrics_do_not_depend_on_the_order_of_the_histogram_rows(monkeypatch, dense_items):
    """A sorted table takes the fast path (subcategories as slices, users by their runs); the
    same rows shuffled take the general one (partition_by, hash lookups, a sort of the cells):
    the same tables, dense and sparse."""
    rng = np.random.default_rng(9)
    counts = np.zeros((120, 300))
    for u in range(120):
        counts[u, rng.choice(300, rng.integers(1, 6), replace=False)] = rng.integers(1, 4)
    hist = pl.concat([histograms_frame(counts[:60], "s0"), histograms_frame(counts[60:], "s1")])
    shuffled = hist.sample(fraction=1.0, shuffle=True, seed=3)
    assert not shuffled["user"].is_sorted() and not shuffled["subcategory"].is_sorted()
    monkeypatch.setattr(metrics, "DENSE_ITEMS", dense_items)
    options = dict(name="t", attribute="a", prior="user_mean", epsilons=[1, 4], methods=ALL_METHODS)
    one = evaluate_attribute(hist, None, threads=2, **options)
    other = evaluate_attribute(shuffled, None, threads=2, **options)
    assert one.per_user.equals(other.per_user) and one.audit.equals(other.audit)
