"""The claims file (``claims.toml``, shipped with the package) and its loader.

Each claim is data: the paper and where in it, the value as printed, how this run's value is
computed (a named check of this package with its arguments), which experiments and data notes
it reads, the tolerance and why. :func:`load_claims` reads and validates the file; an error's
first line names the file, the claim and the key.
"""

from __future__ import annotations

import importlib
import inspect
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

__all__ = [
    "CHECK_MODULES",
    "CLAIMS_FILE",
    "DATA_KEYS",
    "EXPERIMENTS",
    "SOURCE_PATTERN",
    "Claim",
    "ClaimsError",
    "load_claims",
]

#: The claims shipped with the package.
CLAIMS_FILE = resources.files("ldpsample.reproduction") / "claims.toml"

#: Modules of this package a claim's ``check`` may name.
CHECK_MODULES = (
    "avazu_checks",
    "cost_checks",
    "data_size_checks",
    "movielens_checks",
    "synthetic_checks",
    "theory_checks",
    "wpm_checks",
)

#: Experiments a claim may read (``*_any``: any variant of the stage ran).
EXPERIMENTS = (
    "synthetic",
    "theory",
    "movielens",
    "movielens_ml1m",
    "movielens_any",
    "avazu",
    "avazu_arxiv",
    "avazu_any",
    "wpm_ring",
    "wpm_movielens",
    "wpm_gowalla",
)

#: Data notes a claim may show -> the experiment whose run they describe.
DATA_KEYS = {
    "synthetic": "synthetic",
    "theory": "theory",
    "movielens": "movielens_any",
    "avazu": "avazu_any",
    "wpm_movielens": "wpm_movielens",
    "wpm_gowalla": "wpm_gowalla",
    "generated": "wpm_ring",
}

_REQUIRED = {
    "id": str,
    "paper": str,
    "location": str,
    "quoted": str,
    "computed": str,
    "check": str,
    "experiment": list,
    "data": list,
    "tolerance": str,
    "why": str,
    "kind": str,
    "source": str,
}
_OPTIONAL = {"args": dict, "note": str, "unavailable": str}

#: A claim's ``source``: ``<text file>, <place>: "<quoted sentence>"``.
SOURCE_PATTERN = re.compile(r'^(?P<file>[^,\s]+\.txt), (?P<place>[^:"]+): "(?P<quote>[^"]+)"$')


class ClaimsError(ValueError):
    """The claims file is malformed (the message's first line names the file and the key)."""


@dataclass(frozen=True)
class Claim:
    """One row of the reproduction table (see ``claims.toml`` for the meaning of each field)."""

    id: str
    paper: str
    location: str
    quoted: str
    computed: str
    check: str
    experiment: tuple[str, ...]
    data: tuple[str, ...]
    tolerance: str
    why: str
    kind: str
    source: str
    args: Mapping[str, Any] = field(default_factory=dict)
    note: str = ""
    unavailable: str = ""

    def function(self) -> Callable[..., Any] | None:
        """The check named by ``check`` (None when the claim has none)."""
        if not self.check:
            return None
        module, name = self.check.split(".")
        return getattr(importlib.import_module(f"ldpsample.reproduction.{module}"), name)


def _fail(where: str, message: str) -> ClaimsError:
    return ClaimsError(f"{where}: {message}")


def _claim(raw: Mapping[str, Any], where: str) -> Claim:
    for key, kind in _REQUIRED.items():
        if key not in raw:
            raise _fail(where, f"key {key!r} is missing")
        if not isinstance(raw[key], kind):
            raise _fail(where, f"key {key!r} must be a {kind.__name__}, got {raw[key]!r}")
    for key, kind in _OPTIONAL.items():
        if key in raw and not isinstance(raw[key], kind):
            raise _fail(where, f"key {key!r} must be a {kind.__name__}, got {raw[key]!r}")
    unknown = set(raw) - set(_REQUIRED) - set(_OPTIONAL)
    if unknown:
        raise _fail(where, f"unknown key(s) {sorted(unknown)}")
    if raw["kind"] not in ("claim", "extra"):
        raise _fail(where, f"key 'kind' must be 'claim' or 'extra', got {raw['kind']!r}")
    if raw["kind"] == "extra" and not raw.get("note"):
        raise _fail(where, "an extra row needs a 'note' saying what it is")
    for name in raw["experiment"]:
        if name not in EXPERIMENTS:
            raise _fail(where, f"key 'experiment': unknown experiment {name!r}")
    for name in raw["data"]:
        if name not in DATA_KEYS:
            raise _fail(where, f"key 'data': unknown data note {name!r}")
    check = raw["check"]
    if check:
        module, _, name = check.partition(".")
        if module not in CHECK_MODULES or not name:
            raise _fail(where, f"key 'check' must be '<module>.<function>' of {CHECK_MODULES}")
        function = getattr(importlib.import_module(f"ldpsample.reproduction.{module}"), name, None)
        if not callable(function):
            raise _fail(where, f"key 'check': {check!r} is not a function of the package")
        try:
            inspect.signature(function).bind(None, None, **raw.get("args", {}))
        except TypeError as exc:
            raise _fail(where, f"key 'args' does not fit {check}: {exc}") from exc
    elif not raw.get("unavailable"):
        raise _fail(where, "a claim without a 'check' must say why in 'unavailable'")
    if not SOURCE_PATTERN.match(raw["source"]):
        raise _fail(
            where,
            "key 'source' must read '<text file>, <section/figure/table>: \"<quoted sentence>\"', "
            f"got {raw['source']!r}",
        )
    return Claim(
        **{
            **raw,
            "experiment": tuple(raw["experiment"]),
            "data": tuple(raw["data"]),
            "args": dict(raw.get("args", {})),
        }
    )


def load_claims(path: str | Path | None = None) -> tuple[dict[str, str], tuple[Claim, ...]]:
    """``(papers, claims)`` from a claims file (default: the one shipped, :data:`CLAIMS_FILE`).

    Every claim's ``source`` must name a text file of its own paper (table ``[texts]``), the
    place in it, and the quoted sentence (:data:`SOURCE_PATTERN`).

    Raises
    ------
    ClaimsError
        If the file is not valid TOML or a claim is malformed (first line: file, claim, key).
    """
    source = Path(path) if path is not None else CLAIMS_FILE
    name = str(path) if path is not None else "ldpsample/reproduction/claims.toml"
    try:
        data = tomllib.loads(source.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ClaimsError(f"{name}: not valid TOML: {exc}") from exc
    papers = data.get("papers")
    if not isinstance(papers, dict) or not papers:
        raise ClaimsError(f"{name}: table [papers] is missing")
    texts = data.get("texts")
    if not isinstance(texts, dict) or not texts:
        raise ClaimsError(f"{name}: table [texts] is missing")
    raws = data.get("claim")
    if not isinstance(raws, list) or not raws:
        raise ClaimsError(f"{name}: no [[claim]] entries")
    claims, seen = [], set()
    for i, raw in enumerate(raws):
        where = f"{name}: claim #{i + 1} ({raw.get('id', '?')})"
        claim = _claim(raw, where)
        if claim.id in seen:
            raise _fail(where, f"key 'id': {claim.id!r} is repeated")
        if claim.paper not in papers:
            raise _fail(where, f"key 'paper': {claim.paper!r} is not in [papers]")
        text = SOURCE_PATTERN.match(claim.source)["file"]
        if texts.get(text) != claim.paper:
            raise _fail(
                where, f"key 'source': {text!r} is not a text of paper {claim.paper!r} in [texts]"
            )
        seen.add(claim.id)
        claims.append(claim)
    return dict(papers), tuple(claims)
