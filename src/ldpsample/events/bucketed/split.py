"""The map step of one partition (one file of a table): its checks, rows per subcategory and
ranking partial sums, and its rows streamed into one parquet file per bucket
(:func:`split_partition`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from ldpsample.events.bucketed.bounds import bucket_of
from ldpsample.events.bucketed.partials import Partials, _options
from ldpsample.events.reading.files import TableFiles
from ldpsample.events.reading.prepared import _prepare
from ldpsample.events.reading.scan import EventsTableError, polars_reason, table_files
from ldpsample.events.reading.table_checks import raise_on_checks
from ldpsample.events.schemas import RANK_SCHEMA, ROWS_SCHEMA
from ldpsample.pipeline.progress import phase

__all__ = ["BATCH_ROWS", "split_partition"]

log = logging.getLogger(__name__)

PathLike = str | os.PathLike[str]

#: Rows per batch of a partition's stream into the bucket files.
BATCH_ROWS = 1_000_000


def split_partition(
    partition: PathLike | TableFiles,
    *,
    boundaries: Sequence[str],
    outputs: Sequence[PathLike],
    rank_rows: bool,
    options: Mapping[str, Any],
) -> Partials:
    """The map step of one partition (one file of a table).

    Reads the partition twice as streams: once for the checks (raised here, naming the file and the
    data row in it), the rows per subcategory and, with ``rank_rows``, the item ranking's partial
    sums over all its rows; once to write its rows (after the filters of
    :func:`~ldpsample.events.counting.histograms.build_event_histograms`: null ids, ``items``, the
    spec's items, ``exclude_users``), with the columns ``user, item``, the weights that are columns
    and ``a:<attribute>``, into ``outputs[b]`` for the users of bucket ``b`` (every file is written,
    empty or not).

    ``options`` are :func:`~ldpsample.events.counting.histograms.build_event_histograms`' keyword
    arguments (``key``, ``user``, ..., ``on_null``, ``on_bad_rows``, ``domain``); a partition
    without rows is no error (the table's emptiness is checked by
    :func:`~ldpsample.events.bucketed.merge.merge_partials`).
    """
    import pyarrow.parquet as pq

    opts = _options(options)
    key = opts.key
    files = table_files(partition, key=f"{key}.path")
    if len(files.files) != 1:
        raise ValueError(f"a partition is one file, got {len(files.files)}: {files.path}")
    where = files.files[0]
    prepared = _prepare(dataclasses.replace(opts, path=files), domain=options.get("domain"))
    base, names = prepared.base, prepared.names
    try:
        with phase(log, f"{key}: checks of {where}") as done:
            results = pl.collect_all(prepared.small, engine="streaming")
            done.add(results[0]["rows"][0])
    except pl.exceptions.PolarsError as exc:
        raise EventsTableError(
            f"{where}: cannot read the events table (config key {key}.path): {polars_reason(exc)}"
        ) from exc
    checks = results[0].row(0, named=True)
    if prepared.listed is not None:
        checks["listed_found"] = sorted(results[1]["item"].to_list())
    raise_on_checks(
        checks,
        path=where,
        key=key,
        columns=prepared.numeric,
        user=opts.user,
        item=opts.item,
        on_null=opts.on_null,
        raw=prepared.raw,
        whole_table=False,
        attributes=list(opts.attributes),
        on_bad_rows=opts.on_bad_rows,
    )
    # The rows themselves, bucket by bucket: only the weights that are columns travel.
    count = opts.count is not None
    columns = ["user", "item", *prepared.sums, *[f"a:{n}" for n in names]]
    if not count:
        columns.remove("count")
    stream = base.select(columns).with_columns(bucket_of(boundaries))
    schema = base.select(columns).collect_schema()
    empty = pl.DataFrame(schema=schema).to_arrow()
    rank = pl.col("rank") if "rank" in columns else pl.col("count") if count else pl.lit(1.0)
    rows_parts: list[pl.DataFrame] = []
    rank_parts: list[pl.DataFrame] = []
    writers: dict[int, Any] = {}
    written = 0
    try:
        with phase(log, f"{key}: splitting {where} into {len(outputs)} buckets") as done:
            for batch in stream.collect_batches(chunk_size=BATCH_ROWS):
                # rows per subcategory and the ranking's partial sums, batch by batch (grouped
                # on the attribute's own type; text once summed)
                for name in names:
                    a = f"a:{name}"
                    part = batch.lazy().filter(pl.col(a).is_not_null())
                    sums = [part.group_by(a).agg(pl.len().alias("rows"))]
                    if rank_rows:
                        sums.append(
                            part.with_columns(rank.alias("_rank"))
                            .group_by(a, "item")
                            .agg(pl.col("_rank").sum().alias("rank"))
                        )
                    got = pl.collect_all(sums, engine="streaming")
                    label = [pl.lit(name).alias("attribute"), pl.col(a).alias("subcategory")]
                    rows_parts.append(got[0].select(*label, "rows"))
                    if rank_rows:
                        rank_parts.append(got[1].select(*label, "item", "rank"))
                for (bucket,), part in batch.partition_by(
                    "_bucket", as_dict=True, include_key=False
                ).items():
                    table = part.to_arrow()
                    if bucket not in writers:
                        writers[bucket] = pq.ParquetWriter(
                            _tmp(outputs[bucket]), table.schema, compression="zstd"
                        )
                    writers[bucket].write_table(table)
                written += batch.height
                done.add(batch.height)
        for bucket, writer in writers.items():
            writer.close()
            os.replace(_tmp(outputs[bucket]), outputs[bucket])
        for bucket, output in enumerate(outputs):
            if bucket not in writers:
                pq.write_table(empty, _tmp(output), compression="zstd")
                os.replace(_tmp(output), output)
    except BaseException:
        for bucket, writer in writers.items():
            writer.close()
            _remove(_tmp(outputs[bucket]))
        raise
    log.info(
        "%s: %d rows of %d kept, into %d buckets", where, written, checks["rows"], len(writers)
    )
    text = pl.col("subcategory").cast(pl.String)
    rows = (
        pl.concat(rows_parts, how="vertical_relaxed")
        .with_columns(text)
        .group_by("attribute", "subcategory")
        .agg(pl.col("rows").sum())
        if rows_parts
        else pl.DataFrame(schema=ROWS_SCHEMA)
    )
    ranks = (
        pl.concat(rank_parts, how="vertical_relaxed")
        .with_columns(text)
        .group_by("attribute", "subcategory", "item")
        .agg(pl.col("rank").sum())
        if rank_parts
        else pl.DataFrame(schema=RANK_SCHEMA)
    )
    return Partials(
        checks,
        rows.cast(ROWS_SCHEMA).sort("attribute", "subcategory"),
        ranks.cast(RANK_SCHEMA).sort("attribute", "subcategory", "item"),
    )


def _tmp(path: PathLike) -> str:
    return f"{path}.tmp"


def _remove(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.remove(path)
