"""``buckets: auto`` counts a parquet table's rows from the files' footers
(ldpsample.events.reading.files.parquet_rows, standard library only), so a well-compressed table is
not taken for a small one (one histogram job of 5.6 GB for 2*10^7 zstd rows sized as < 10^7)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ldpsample.events.reading import files as files_module
from ldpsample.events.reading.files import (
    auto_buckets,
    estimated_rows,
    list_table_files,
    parquet_rows,
)


@settings(max_examples=25)
@given(
    rows=st.integers(0, 5_000),
    group=st.integers(1, 2_000),
    compression=st.sampled_from(["zstd", "snappy", "uncompressed", "gzip"]),
)
def test_the_footers_row_count_is_the_tables(tmp_path_factory, rows, group, compression):
    path = tmp_path_factory.mktemp("p") / "t.parquet"
    frame = pl.DataFrame({"user": np.arange(rows) % 7, "item": [f"i{k}" for k in range(rows)]})
    frame.write_parquet(path, row_group_size=group, compression=compression)
    assert parquet_rows(path) == pl.scan_parquet(path).select(pl.len()).collect().item() == rows


def test_a_footer_with_nested_columns_and_key_value_metadata(tmp_path):
    """pyarrow writes lists, maps and key/value metadata before and after the row count."""
    table = pa.table(
        {"a": list(range(777)), "m": [{"x": 1, "y": [1, 2]}] * 777, "l": [[1.5, 2.5]] * 777}
    ).replace_schema_metadata({"origin": "test", "pandas": "{}"})
    pq.write_table(table, tmp_path / "nested.parquet", row_group_size=100)
    assert parquet_rows(tmp_path / "nested.parquet") == 777


@pytest.mark.parametrize(
    "content", [b"", b"user,item\n1,2\n", b"PAR1" + b"\0" * 20 + b"PAR1", b"x" * 40 + b"PAR1"]
)
def test_a_file_that_is_no_parquet_file_is_a_value_error_naming_it(tmp_path, content):
    path = tmp_path / "broken.parquet"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=r"broken\.parquet"):
        parquet_rows(path)


def test_auto_buckets_count_a_compressed_tables_rows_exactly(tmp_path, monkeypatch):
    """The same rows, well compressed: the size estimate sees few rows, the footers all."""
    folder = tmp_path / "events"
    folder.mkdir()
    for part in range(3):
        pl.DataFrame({"user": np.zeros(40_000, dtype=np.int64), "item": 1}).write_parquet(
            folder / f"part-{part}.parquet", compression="zstd"
        )
    table = list_table_files(folder)
    size_estimate = int(table.total_bytes() / files_module.BYTES_PER_ROW["parquet"])
    assert size_estimate < 12_000  # 120,000 rows in a few kB
    assert estimated_rows(table) == 120_000
    monkeypatch.setattr(files_module, "ROWS_PER_BUCKET", 50_000)
    assert auto_buckets(table) == 3


def test_an_unreadable_footer_falls_back_to_the_size_estimate(tmp_path):
    (tmp_path / "t.parquet").write_bytes(b"x" * 800)
    assert estimated_rows(list_table_files(tmp_path / "t.parquet")) == 100


def test_csv_tables_keep_the_size_estimate(tmp_path):
    (tmp_path / "t.csv").write_text("user,item\n" + "1,2\n" * 600)
    table = list_table_files(tmp_path / "t.csv")
    assert estimated_rows(table) == int(table.total_bytes() / 24.0)
