"""Gowalla check-ins (SNAP ``loc-gowalla_totalCheckins`` and the derived LBSN sample).

Readers return one row per check-in with :data:`CHECKIN_SCHEMA`; every fault (truncated gzip,
empty file, wrong field count, a non-numeric field) is a ``ValueError`` naming the file, and
the line where known.
"""

from __future__ import annotations

import os

import polars as pl

from ldpsample.datasets._files import first_bad_line, read_raw_bytes, read_text_table

__all__ = ["CHECKIN_SCHEMA", "read_gowalla_derived", "read_gowalla_snap"]

#: Columns of the readers' output.
CHECKIN_SCHEMA: dict[str, pl.DataType] = {
    "user": pl.Int64(),
    "time": pl.String(),
    "latitude": pl.Float64(),
    "longitude": pl.Float64(),
    "location": pl.Int64(),
}

_SNAP_FIELDS = (
    ("user", int),
    ("time", str),
    ("latitude", float),
    ("longitude", float),
    ("location", int),
)


def read_gowalla_snap(path: str | os.PathLike[str]) -> pl.DataFrame:
    """Read SNAP ``loc-gowalla_totalCheckins`` (tab-separated, no header, optionally gzipped).

    Columns ``user, time (ISO-8601 'Z'), latitude, longitude, location``; returned with
    :data:`CHECKIN_SCHEMA`. Blank lines are ignored. Raises ``ValueError`` naming the file and
    the first malformed line, or a truncated gzip stream or an empty file.
    """
    data = read_raw_bytes(path)
    try:
        frame = read_text_table(data, CHECKIN_SCHEMA, separator="\t").drop("line")
        if frame.null_count().sum_horizontal().item() != 0:
            raise ValueError("empty fields")
    except (pl.exceptions.PolarsError, ValueError) as exc:
        bad = first_bad_line(path, data.decode("utf-8", "replace"), sep="\t", fields=_SNAP_FIELDS)
        raise (bad or ValueError(f"{path}: not in SNAP Gowalla format ({exc})")) from None
    return _finish_checkins(frame, path)


def read_gowalla_derived(path: str | os.PathLike[str]) -> pl.DataFrame:
    """Read the derived ``gowalla3_austin.tsv`` (header ``user_remapped
    time_utc_snap_convention latitude longitude poi_remapped unix_ts_as_published``).

    Returned with :data:`CHECKIN_SCHEMA` (``user = user_remapped``,
    ``time = time_utc_snap_convention``, ``location = poi_remapped``); note that these ids are
    remapped, not SNAP's (PROVENANCE.md).
    """
    expected = [
        "user_remapped",
        "time_utc_snap_convention",
        "latitude",
        "longitude",
        "poi_remapped",
        "unix_ts_as_published",
    ]
    frame = pl.read_csv(path, separator="\t", quote_char=None, infer_schema=False)
    if frame.columns != expected:
        raise ValueError(f"{path}: expected columns {expected}, got {frame.columns}")
    renamed = frame.select(
        pl.col("user_remapped").alias("user"),
        pl.col("time_utc_snap_convention").alias("time"),
        pl.col("latitude"),
        pl.col("longitude"),
        pl.col("poi_remapped").alias("location"),
    )
    try:
        renamed = renamed.cast(CHECKIN_SCHEMA)  # type: ignore[arg-type]
    except pl.exceptions.InvalidOperationError as exc:
        raise ValueError(f"{path}: non-numeric field ({exc})") from exc
    return _finish_checkins(renamed, path)


def _finish_checkins(frame: pl.DataFrame, path: object) -> pl.DataFrame:
    if frame.null_count().sum_horizontal().item() != 0:
        raise ValueError(f"{path}: empty or malformed fields")
    return frame.select(list(CHECKIN_SCHEMA))
