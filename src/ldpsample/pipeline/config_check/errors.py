"""The config error and its message: ``config error at <key path>: <what is wrong>``.

:class:`ConfigError` with a first line such as ``config error at synthetic.epsilons[0]: -1 must be >
0`` (:func:`config_error`, the key path written by :func:`key_path`), values shown as the user wrote
them (``_show``), and several problems in one message, the first on the first line and then ``...
and N more:`` (``_combined``). Every other module of the config check raises through these. Standard
library only (loaded by path at Snakemake parse time).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any


class ConfigError(ValueError):
    """An invalid config value; the message's first line names the key path and the value."""


def key_path(parts: Sequence[str | int]) -> str:
    """``["synthetic", "epsilons", 0]`` -> ``"synthetic.epsilons[0]"``."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "<root>"


def _show(value: Any) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return str(int(value)) if not math.isinf(value) else repr(value)
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, dict):
        return "a mapping"
    return repr(value)


def config_error(parts: Sequence[str | int] | str, message: str) -> ConfigError:
    """A :class:`ConfigError` for the key at ``parts`` (a path list or a dotted string)."""
    where = parts if isinstance(parts, str) else key_path(parts)
    return ConfigError(f"config error at {where}: {message}")


def _combined(lines: list[str]) -> str:
    """One message for several problems: the first as the first line (a key path), then every
    other one, each on its own line."""
    if len(lines) == 1:
        return lines[0]
    return "\n".join(
        [lines[0], f"  ... and {len(lines) - 1} more:", *(f"  {line}" for line in lines[1:])]
    )
