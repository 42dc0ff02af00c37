"""``ldpsample show``: print a release spec or a privacy ledger readably.

A spec needs numpy only (it works in the core install, as on a user's device); a ledger needs
the ``events`` extra (polars), so its view is :mod:`ldpsample.cli.commands.show_ledger`,
imported when the path is a ledger: in the core install that import fails and the command
says which extra to install, in one line.
"""

from __future__ import annotations

import argparse
import json
import textwrap
from pathlib import Path

from ldpsample.cli import CommandError, load_command
from ldpsample.cli._text import text_table
from ldpsample.publish.device import SpecError, read_device_spec

__all__ = ["run"]

_SQLITE_MAGIC = b"SQLite format 3\x00"


def run(args: argparse.Namespace) -> int:
    """Print ``args.path`` (a spec or a ledger); return 0."""
    path: Path = args.path
    if not path.exists():
        raise CommandError(f"{path}: no such file or folder")
    if path.is_file() and path.read_bytes()[: len(_SQLITE_MAGIC)] == _SQLITE_MAGIC:
        try:
            ledger = load_command("show_ledger")
        except ImportError as error:
            raise CommandError(
                f"{path}: showing a ledger needs the events extra (pip install "
                f"'ldpsample[events]'): {error}"
            ) from None
        print(ledger.ledger_text(path, top=args.top))
    elif path.is_dir() or path.suffix == ".json":
        print(_spec_text(path, items=args.items))
    else:
        raise CommandError(
            f"{path}: neither a release spec (a folder with manifest.json, or the manifest) "
            "nor a ledger (an SQLite file)"
        )
    return 0


def _spec_text(path: Path, *, items: int | None) -> str:
    """The spec at ``path`` (checked by :func:`~ldpsample.publish.device.read_device_spec`):
    its fields, then each subcategory's items, largest ``q`` first, at most ``items`` each."""
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
