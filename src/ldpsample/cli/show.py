"""``ldpsample show``: print a release spec or a privacy ledger readably.

A spec needs numpy only (it works in the core install); a ledger needs the ``events`` extra
(polars).
"""

from __future__ import annotations

import argparse
import json
import textwrap
from pathlib import Path

from ldpsample.cli import CommandError
from ldpsample.cli._text import paragraph, text_table

__all__ = ["add_parser", "show"]

_SQLITE_MAGIC = b"SQLite format 3\x00"

EPILOG = """\
examples:
  ldpsample show results/events/ml1m/publish/spec
      the spec a release published: its mechanism, epsilon values, samples, membership,
      randomness, each user's cost per release, the provenance of the prior, and every
      subcategory's items with their prior q (in the kernel's order, ascending q)
  ldpsample show privacy/ledger.sqlite --top 5
      the ledger: every recorded release, then the users with the most epsilon spent
"""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Add ``show`` to the ``ldpsample`` parser."""
    parser = subparsers.add_parser(
        "show",
        help="print a release spec or a privacy ledger readably",
        description=paragraph(
            "Print a release spec (a publish/spec folder or its manifest.json: checked against "
            "its domain.csv's sha256) or a privacy ledger (a .sqlite file) as plain text."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("path", type=Path, help="a spec folder, its manifest.json, or a ledger")
    parser.add_argument(
        "--items",
        type=int,
        default=None,
        metavar="N",
        help="a spec: show at most N items per subcategory, those of largest q (default: all)",
    )
    parser.add_argument(
        "--top",
        type=int,
        default=10,
        metavar="N",
        help="a ledger: show the N users with the most epsilon spent (default 10)",
    )
    parser.set_defaults(func=show)


def show(args: argparse.Namespace) -> int:
    """Print ``args.path`` (a spec or a ledger); return 0."""
    path: Path = args.path
    if not path.exists():
        raise CommandError(f"{path}: no such file or folder")
    if path.is_file() and path.read_bytes()[: len(_SQLITE_MAGIC)] == _SQLITE_MAGIC:
        print(_ledger_text(path, top=args.top))
    elif path.is_dir() or path.suffix == ".json":
        print(_spec_text(path, items=args.items))
    else:
        raise CommandError(
            f"{path}: neither a release spec (a folder with manifest.json, or the manifest) "
            "nor a ledger (an SQLite file)"
        )
    return 0


def _spec_text(path: Path, *, items: int | None) -> str:
    from ldpsample.publish.device import SpecError, read_device_spec

    try:
        spec = read_device_spec(path)
    except SpecError as error:
        raise CommandError(str(error)) from None
    m = spec.manifest
    randomness = "publishable" if not spec.seeded else "NOT publishable"
    fields = [
        ("mechanism", m["mechanism"]),
        ("epsilons", ", ".join(repr(e) for e in spec.epsilons)),
        ("samples", f"{spec.samples} per user, subcategory and epsilon"),
        (
            "cost per run",
            f"{spec.budget_bound!r} epsilon per user ("
            f"{'attributes' if spec.release_mode == 'joint' else 'subcategories'} x sum of "
            "epsilons x samples)",
        ),
        ("release mode", spec.release_mode),
        ("membership", m["membership"]),
        ("randomness", f"{m['randomness']['source']} ({randomness})"),
        ("smoothing", repr(m["prior_smoothing"])),
        ("participation", str(m["participation"])),
        ("provenance", json.dumps(m["provenance"], sort_keys=True)),
        ("domain", f"{m['domain']['file']} sha256 {m['domain']['sha256']}"),
        ("subcategories", f"{len(spec.domains)}, items: {m['items']}"),
    ]
    lines = [f"release spec {spec.name!r} ({m['format']}, ldpsample {m['ldpsample']})"]
    lines += [
        textwrap.fill(
            value,
            width=100,
            initial_indent=f"  {label + ':':<16}",
            subsequent_indent=" " * 18,
            break_on_hyphens=False,
        )
        for label, value in fields
    ]
    for (attribute, subcategory), (names, q) in spec.domains.items():
        order = list(range(len(names)))[::-1]  # largest q first (the file is ascending)
        shown = order if items is None else order[:items]
        lines += ["", f"{attribute}={subcategory} ({len(names)} items)"]
        lines.append(
            text_table(["position", "item", "q"], [(i, names[i], float(q[i])) for i in shown])
        )
        if len(shown) < len(names):
            lines.append(f"... and {len(names) - len(shown)} more items")
    return "\n".join(lines)


def _ledger_text(path: Path, *, top: int) -> str:
    try:
        from ldpsample.publish.ledger import Ledger
    except ImportError as error:
        raise CommandError(
            f"{path}: showing a ledger needs the events extra (pip install 'ldpsample[events]'): "
            f"{error}"
        ) from None
    ledger = Ledger(path)
    releases = ledger.releases()
    totals = ledger.totals().sort(["total_epsilon", "user"], descending=[True, False])
    lines = [f"privacy ledger {path}", "", f"{releases.height} releases"]
    if releases.height:
        lines.append(text_table(releases.columns, releases.rows()))
    lines += ["", f"{totals.height} users"]
    if totals.height:
        spent = totals["total_epsilon"]
        lines.append(f"total epsilon per user: min {spent.min()!r}, max {spent.max()!r}")
        lines.append(f"the {min(top, totals.height)} users with the most epsilon spent:")
        lines.append(text_table(totals.columns, totals.head(top).rows()))
    return "\n".join(lines)
