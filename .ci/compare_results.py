"""Compare two results folders table by table (a refactor keeps behaviour).

Usage: python .ci/compare_results.py BEFORE AFTER [--rtol 1e-12] [--ignore GLOB ...]

Every ``.csv`` and ``.parquet`` under either folder is read with polars and compared: the same
files, the same columns in the same order, the same rows, and equal values (floats within
``rtol``/``atol``; everything else exactly). Prints one line per file (``identical bytes``,
``same values`` or what differs) and exits 1 if any table differs or is missing on one side.
Figures are not compared (matplotlib embeds nothing stable across versions). ``--ignore``
globs (fnmatch, on the path under the folder) name intermediate files a change may add or
remove: they are listed, not counted.
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import sys
from pathlib import Path

import polars as pl
from polars.testing import assert_frame_equal

SUFFIXES = (".csv", ".parquet")


def _tables(root: Path) -> set[str]:
    return {
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.suffix in SUFFIXES and p.is_file() and "/cache/" not in str(p)
    }


def _read(path: Path) -> pl.DataFrame:
    return pl.read_parquet(path) if path.suffix == ".parquet" else pl.read_csv(path)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def compare(
    before: Path, after: Path, *, rtol: float, atol: float, ignore: tuple[str, ...] = ()
) -> int:
    old, new = _tables(before), _tables(after)
    failures = 0
    for name in sorted(old | new):
        if name not in new or name not in old:
            side = "after" if name not in new else "before"
            if any(fnmatch.fnmatch(name, pattern) for pattern in ignore):
                print(f"missing in {side} (ignored intermediate): {name}")
                continue
            print(f"MISSING in {side}: {name}")
            failures += 1
            continue
        a, b = before / name, after / name
        if _digest(a) == _digest(b):
            print(f"identical bytes: {name}")
            continue
        try:
            assert_frame_equal(_read(a), _read(b), check_exact=False, rel_tol=rtol, abs_tol=atol)
        except AssertionError as exc:
            print(f"DIFFERS: {name}: {str(exc).splitlines()[0]}")
            failures += 1
        else:
            print(f"same values: {name}")
    print(f"{len(old | new)} tables, {failures} differ or are missing")
    return 1 if failures else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--rtol", type=float, default=1e-12)
    parser.add_argument("--atol", type=float, default=1e-12)
    parser.add_argument("--ignore", action="append", default=[], metavar="GLOB")
    args = parser.parse_args()
    return compare(
        args.before, args.after, rtol=args.rtol, atol=args.atol, ignore=tuple(args.ignore)
    )


if __name__ == "__main__":
    sys.exit(main())
