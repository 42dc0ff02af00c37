"""Plain-text tables for the command line's output (standard library only)."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

__all__ = ["paragraph", "text_table"]


def paragraph(text: str, width: int = 88) -> str:
    """``text`` filled to ``width`` columns (a help text's description)."""
    return textwrap.fill(" ".join(text.split()), width)


def text_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """``rows`` under ``headers`` in left-aligned columns two spaces apart, one line per row
    (floats as ``repr``, so no digit is lost)."""
    cells = [[str(h) for h in headers]] + [[_cell(v) for v in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    return "\n".join(
        "  ".join(value.ljust(width) for value, width in zip(row, widths, strict=True)).rstrip()
        for row in cells
    )


def _cell(value: object) -> str:
    return repr(value) if isinstance(value, float) else str(value)
