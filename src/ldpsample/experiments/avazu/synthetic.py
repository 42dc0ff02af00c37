"""An Avazu-shaped CSV generator, for tests and benchmarks without the Kaggle download.

The file has the official 24-column header and value formats (8-hex-digit ids, ``hour`` as
``YYMMDDHH`` over ten days in order, decimal ``id``) and the skew that matters for the
experiment:

* a placeholder device (``a99f214a``) on about ``placeholder_share`` of the rows (0.8; 82 %
  in the full official file, 87 % in its first hour);
* the other rows' devices and every row's website drawn from Zipf-like laws (``P(rank k) ∝
  k^-s``), so a few devices and sites are heavy hitters and most are rare;
* clicks at about ``click_rate`` (0.17), varying by website (a Beta law around the rate);
* attributes ``C1, C14..C21`` with few values each (Zipf-like shares), half the time tied to
  the website so that subcategories differ in which websites are popular.

Everything is drawn from one ``numpy.random.Generator`` seeded by ``seed``; the same arguments
give byte-identical files. Rows are produced and written in chunks through pyarrow's CSV
writer, so memory does not grow with ``rows`` (10 M rows take about a minute uncompressed).
"""

from __future__ import annotations

import gzip
import logging
import os
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
from numpy.typing import NDArray

from ldpsample._validation import check_integer
from ldpsample.experiments.avazu.data import AVAZU_ATTRIBUTES, AVAZU_COLUMNS, PLACEHOLDER_DEVICE_ID
from ldpsample.pipeline.io import atomic_path

__all__ = ["DEFAULT_ATTRIBUTE_VALUES", "generate_avazu_like"]

log = logging.getLogger(__name__)

PathLike = str | os.PathLike[str]

#: Number of distinct values per attribute (the official data has 7 for C1, 8 for C15, 9 for
#: C16, 4 for C18 and a few dozen to a few thousand for the others; fewer here so that small
#: files still have populated subcategories).
DEFAULT_ATTRIBUTE_VALUES: dict[str, int] = {
    "C1": 7,
    "C14": 60,
    "C15": 8,
    "C16": 9,
    "C17": 40,
    "C18": 4,
    "C19": 30,
    "C20": 40,
    "C21": 30,
}

# Where each attribute's codes start (shapes like the official values).
_CODE_BASE = {
    "C1": 1001,
    "C14": 15000,
    "C15": 120,
    "C16": 20,
    "C17": 1000,
    "C18": 0,
    "C19": 33,
    "C20": 100000,
    "C21": 1,
}

_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
_SHIFTS = np.arange(28, -1, -4, dtype=np.uint32)


def _hex8(values: NDArray[np.uint32]) -> pa.StringArray:
    """8-digit lowercase hex strings of uint32 values, built without Python objects."""
    values = np.ascontiguousarray(values, dtype=np.uint32)
    chars = _HEX[(values[:, None] >> _SHIFTS) & 0xF]
    offsets = np.arange(0, 8 * (values.size + 1), 8, dtype=np.int32)
    return pa.StringArray.from_buffers(
        values.size, pa.py_buffer(offsets.tobytes()), pa.py_buffer(chars.tobytes())
    )


def _unique_uint32(rng: np.random.Generator, n: int, *, exclude: int) -> NDArray[np.uint32]:
    """``n`` distinct random uint32 values, none equal to ``exclude``, in random order."""
    out = np.empty(0, dtype=np.uint32)
    while out.size < n:
        draw = rng.integers(0, 2**32, size=int((n - out.size) * 1.1) + 16, dtype=np.uint64)
        out = np.unique(np.concatenate([out, draw.astype(np.uint32)]))
        out = out[out != exclude]
    return rng.permutation(out)[:n]


def _zipf_cdf(n: int, exponent: float) -> NDArray[np.float64]:
    weights = np.arange(1, n + 1, dtype=np.float64) ** -exponent
    cdf = np.cumsum(weights)
    return cdf / cdf[-1]


def _draw(rng: np.random.Generator, cdf: NDArray[np.float64], size: int) -> NDArray[np.int64]:
    return np.minimum(np.searchsorted(cdf, rng.random(size), side="right"), cdf.size - 1)


def _attribute_values(value: int | Mapping[str, int] | None) -> dict[str, int]:
    if value is None:
        return dict(DEFAULT_ATTRIBUTE_VALUES)
    if isinstance(value, int) and not isinstance(value, bool):
        counts = dict.fromkeys(AVAZU_ATTRIBUTES, value)
    elif isinstance(value, Mapping):
        unknown = sorted(set(value) - set(AVAZU_ATTRIBUTES))
        if unknown:
            raise ValueError(f"unknown attributes {unknown}; known: {AVAZU_ATTRIBUTES}")
        counts = {**DEFAULT_ATTRIBUTE_VALUES, **value}
    else:
        raise TypeError(f"attributes must be an int or a mapping, got {value!r}")
    for name, count in counts.items():
        check_integer(count, name=f"attributes[{name!r}]", minimum=1)
    return counts


def generate_avazu_like(
    path: PathLike,
    *,
    rows: int,
    users: int | None = None,
    sites: int | None = None,
    attributes: int | Mapping[str, int] | None = None,
    seed: int,
    placeholder_share: float = 0.8,
    click_rate: float = 0.17,
    user_exponent: float = 1.1,
    site_exponent: float = 1.2,
    attribute_exponent: float = 1.0,
    chunk_rows: int = 500_000,
    compress: bool | None = None,
    compresslevel: int = 6,
) -> Path:
    """Write an Avazu-shaped CSV with the official header.

    Parameters
    ----------
    path
        Output file; gzip-compressed if ``compress`` is True, or if ``compress`` is None and
        the name ends in ``.gz``. Written atomically.
    rows
        Data rows (without the header).
    users
        Distinct devices other than the placeholder (default ``max(100, rows // 15)``).
    sites
        Distinct websites (default ``max(20, min(4000, rows // 500))``).
    attributes
        Distinct values per attribute: one int for all, or a mapping overriding
        :data:`DEFAULT_ATTRIBUTE_VALUES`.
    seed
        Seed of the ``numpy.random.Generator`` all draws come from.
    placeholder_share
        Expected share of rows on the placeholder device ``a99f214a``.
    click_rate
        Mean click rate (per-site rates are Beta distributed around it).
    user_exponent, site_exponent, attribute_exponent
        Zipf exponents of the device, website and attribute-value laws.
    chunk_rows
        Rows generated and written per chunk.
    compress, compresslevel
        gzip on/off (None: by suffix) and level.

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    users, sites, values_per_attribute = _check_options(
        rows=rows,
        users=users,
        sites=sites,
        attributes=attributes,
        placeholder_share=placeholder_share,
        click_rate=click_rate,
        chunk_rows=chunk_rows,
    )
    path = Path(path)
    gz = path.name.endswith(".gz") if compress is None else compress
    rng = np.random.default_rng(seed)
    pools = _draw_pools(
        rng,
        rows=rows,
        users=users,
        sites=sites,
        values_per_attribute=values_per_attribute,
        click_rate=click_rate,
        user_exponent=user_exponent,
        site_exponent=site_exponent,
        attribute_exponent=attribute_exponent,
    )

    def make_batch(written: int, n: int) -> pa.RecordBatch:
        return _make_batch(
            rng, pools, written=written, n=n, rows=rows, placeholder_share=placeholder_share
        )

    _write_csv(
        path, make_batch, rows=rows, chunk_rows=chunk_rows, gz=gz, compresslevel=compresslevel
    )
    log.info("wrote %d Avazu-like rows to %s (seed %d)", rows, path, seed)
    return path


def _check_options(
    *,
    rows: int,
    users: int | None,
    sites: int | None,
    attributes: int | Mapping[str, int] | None,
    placeholder_share: float,
    click_rate: float,
    chunk_rows: int,
) -> tuple[int, int, dict[str, int]]:
    """Check :func:`generate_avazu_like`'s options; return ``users``, ``sites`` (defaults
    filled in) and the number of values per attribute."""
    check_integer(rows, name="rows", minimum=0)
    check_integer(chunk_rows, name="chunk_rows", minimum=0)
    if chunk_rows == 0:
        raise ValueError("chunk_rows must be positive, got 0")
    if not (0.0 <= placeholder_share <= 1.0):
        raise ValueError(f"placeholder_share must be in [0, 1], got {placeholder_share!r}")
    if not (0.0 < click_rate < 1.0):
        raise ValueError(f"click_rate must be in (0, 1), got {click_rate!r}")
    users = max(100, rows // 15) if users is None else users
    sites = max(20, min(4000, rows // 500)) if sites is None else sites
    check_integer(users, name="users", minimum=1)
    check_integer(sites, name="sites", minimum=1)
    return users, sites, _attribute_values(attributes)


@dataclass(frozen=True)
class _Pools:
    """What every chunk draws from: id pools (hex strings), Zipf CDFs, per-site click rates and
    the attributes' code tables, CDFs and per-site values."""

    device_pool: pa.StringArray
    site_pool: pa.StringArray
    domain_pool: pa.StringArray
    category_pool: pa.StringArray
    site_category: NDArray[np.int64]
    ip_pool: pa.StringArray
    model_pool: pa.StringArray
    site_ctr: NDArray[np.float64]
    user_cdf: NDArray[np.float64]
    site_cdf: NDArray[np.float64]
    ip_cdf: NDArray[np.float64]
    model_cdf: NDArray[np.float64]
    codes: dict[str, NDArray[np.int64]]
    cdfs: dict[str, NDArray[np.float64]]
    site_value: dict[str, NDArray[np.int64]]


def _draw_pools(
    rng: np.random.Generator,
    *,
    rows: int,
    users: int,
    sites: int,
    values_per_attribute: dict[str, int],
    click_rate: float,
    user_exponent: float,
    site_exponent: float,
    attribute_exponent: float,
) -> _Pools:
    """Draw the pools, in the order the generator's stream has always used (same file)."""
    placeholder = int(PLACEHOLDER_DEVICE_ID, 16)
    device_pool = _hex8(_unique_uint32(rng, users, exclude=placeholder))
    site_codes = _unique_uint32(rng, sites, exclude=placeholder)
    site_pool = _hex8(site_codes)
    domain_pool = _hex8(_unique_uint32(rng, sites, exclude=placeholder))
    category_pool = _hex8(_unique_uint32(rng, 20, exclude=placeholder))
    site_category = _draw(rng, _zipf_cdf(20, 1.5), sites)
    ip_pool = _hex8(_unique_uint32(rng, max(1000, min(rows // 4, 2_000_000)), exclude=placeholder))
    model_pool = _hex8(_unique_uint32(rng, 2000, exclude=placeholder))
    strength = 20.0
    site_ctr = rng.beta(click_rate * strength, (1 - click_rate) * strength, size=sites)
    user_cdf = _zipf_cdf(users, user_exponent)
    site_cdf = _zipf_cdf(sites, site_exponent)
    # Rescale so that the popularity-weighted mean rate is click_rate (heavy sites dominate).
    site_weight = np.diff(site_cdf, prepend=0.0)
    site_ctr = np.clip(site_ctr * click_rate / float(site_weight @ site_ctr), 0.0, 0.95)
    codes: dict[str, NDArray[np.int64]] = {}
    cdfs: dict[str, NDArray[np.float64]] = {}
    site_value: dict[str, NDArray[np.int64]] = {}
    for name, count in values_per_attribute.items():
        spacing = 1 if name in ("C1", "C18") else 7
        offsets = np.sort(rng.choice(count * spacing, size=count, replace=False))
        table = _CODE_BASE[name] + offsets
        if name == "C20":
            table[0] = -1  # the official C20 has -1 as its most common value
        codes[name] = table
        cdfs[name] = _zipf_cdf(count, attribute_exponent)
        site_value[name] = _draw(rng, cdfs[name], sites)
    return _Pools(
        device_pool=device_pool,
        site_pool=site_pool,
        domain_pool=domain_pool,
        category_pool=category_pool,
        site_category=site_category,
        ip_pool=ip_pool,
        model_pool=model_pool,
        site_ctr=site_ctr,
        user_cdf=user_cdf,
        site_cdf=site_cdf,
        ip_cdf=_zipf_cdf(len(ip_pool), 1.0),
        model_cdf=_zipf_cdf(len(model_pool), 1.1),
        codes=codes,
        cdfs=cdfs,
        site_value=site_value,
    )


#: Constant app columns of every row.
_APP = {
    "app_id": "ecad2386",
    "app_domain": "7801e8d9",
    "app_category": "07d7df22",
}

#: Arrow types of the written columns (integers for the numeric ones, strings otherwise).
_INTEGER_COLUMNS = (
    "id",
    "click",
    "hour",
    "banner_pos",
    "device_type",
    "device_conn_type",
    *AVAZU_ATTRIBUTES,
)
_SCHEMA = pa.schema(
    [
        (c, pa.uint64() if c == "id" else pa.int64()) if c in _INTEGER_COLUMNS else (c, pa.string())
        for c in AVAZU_COLUMNS
    ]
)

_HOURS = 240  # 10 days, 2014-10-21 00h .. 2014-10-30 23h


def _make_batch(
    rng: np.random.Generator,
    pools: _Pools,
    *,
    written: int,
    n: int,
    rows: int,
    placeholder_share: float,
) -> pa.RecordBatch:
    """Rows ``written .. written + n`` of the file (hours advance with the row index)."""
    index = np.arange(written, written + n)
    hour_index = index * _HOURS // max(rows, 1)
    hour = 14_100_000 + (21 + hour_index // 24) * 100 + hour_index % 24
    site = _draw(rng, pools.site_cdf, n)
    is_placeholder = rng.random(n) < placeholder_share
    device = _draw(rng, pools.user_cdf, n)
    device_ids = pools.device_pool.take(pa.array(device))
    device_ids = pc.if_else(pa.array(is_placeholder), PLACEHOLDER_DEVICE_ID, device_ids)
    columns: dict[str, pa.Array] = {
        "id": pa.array(
            rng.integers(0, 2**63, size=n, dtype=np.uint64)
            + rng.integers(0, 2**63, size=n, dtype=np.uint64)
        ),
        "click": pa.array((rng.random(n) < pools.site_ctr[site]).astype(np.int64)),
        "hour": pa.array(hour.astype(np.int64)),
        "banner_pos": pa.array(
            np.where(rng.random(n) < 0.72, 0, np.where(rng.random(n) < 0.95, 1, 7))
        ),
        "site_id": pools.site_pool.take(pa.array(site)),
        "site_domain": pools.domain_pool.take(pa.array(site)),
        "site_category": pools.category_pool.take(pa.array(pools.site_category[site])),
        "device_id": device_ids,
        "device_ip": pools.ip_pool.take(pa.array(_draw(rng, pools.ip_cdf, n))),
        "device_model": pools.model_pool.take(pa.array(_draw(rng, pools.model_cdf, n))),
        "device_type": pa.array(
            np.where(rng.random(n) < 0.92, 1, np.where(rng.random(n) < 0.5, 0, 4))
        ),
        "device_conn_type": pa.array(
            np.where(rng.random(n) < 0.86, 0, np.where(rng.random(n) < 0.6, 2, 3))
        ),
    }
    for name, const in _APP.items():
        columns[name] = pa.repeat(pa.scalar(const, pa.string()), n)
    for name in AVAZU_ATTRIBUTES:
        tied = rng.random(n) < 0.5
        value = np.where(tied, pools.site_value[name][site], _draw(rng, pools.cdfs[name], n))
        columns[name] = pa.array(pools.codes[name][value])
    return pa.RecordBatch.from_arrays(
        [columns[c].cast(_SCHEMA.field(c).type) for c in AVAZU_COLUMNS],
        schema=_SCHEMA,
    )


def _write_csv(
    path: Path,
    make_batch: Callable[[int, int], pa.RecordBatch],
    *,
    rows: int,
    chunk_rows: int,
    gz: bool,
    compresslevel: int,
) -> None:
    """Write the header and ``rows`` rows chunk by chunk, atomically (gzip when ``gz``)."""
    options = pacsv.WriteOptions(include_header=False, quoting_style="none")
    with atomic_path(path) as tmp:
        raw = gzip.open(tmp, "wb", compresslevel=compresslevel) if gz else open(tmp, "wb")  # noqa: SIM115
        # Compression (zlib releases the GIL) overlaps with generating the next chunk.
        with raw, ThreadPoolExecutor(max_workers=1) as pool:
            raw.write((",".join(AVAZU_COLUMNS) + "\n").encode())  # unquoted, as the official
            pending: Future[int] | None = None  # the previous chunk being written
            written = 0
            while written < rows:
                n = min(chunk_rows, rows - written)
                buffer = pa.BufferOutputStream()
                pacsv.write_csv(make_batch(written, n), buffer, write_options=options)
                data = memoryview(buffer.getvalue())
                if pending is not None:
                    pending.result()
                pending = pool.submit(raw.write, data)
                written += n
            if pending is not None:
                pending.result()
