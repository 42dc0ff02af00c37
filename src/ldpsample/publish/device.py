"""The client on a user's own device: read a published spec and release that user's items with
numpy alone (the core install, ``pip install ldpsample``, no polars).

The draws are those of :func:`ldpsample.publish.client.release_items` for the same spec, data and
uniforms: the same release kernel
(:func:`ldpsample.events.scoring.release_kernel.minimax_release_kernel`), audited before any draw
(:func:`ldpsample.events.scoring.release_kernel.audit_kernel`), the same sparse inverse CDF
(:func:`ldpsample.sample_minimax_sparse`) in the spec's domain order and the same uniform source
(:mod:`ldpsample.publish.randomness`), for a per-subcategory spec and for a joint one (each
attribute's joint domain of (subcategory, item) pairs with ``q = π(s) q_s(i)``, as
:meth:`ldpsample.publish.ReleaseSpec.joint_domain`). Local differential privacy lets users
"randomize their data on their own devices before sharing it with an *untrusted* curator"
(Zamanlooy, Diaz & Asoodeh, AISTATS 2025, ``000_904d48b38ce41b65.txt`` Section 1): nothing but
the public spec, secret uniforms and the user's own counts enters a draw, so each user can run
this alone.

A spec on disk is a folder with ``manifest.json`` and ``domain.csv``
(:mod:`ldpsample.publish.spec`); :func:`read_device_spec` checks the format and the domain's
sha256 as :func:`ldpsample.publish.read_spec` does, with the same :class:`SpecError` messages.
"""

from __future__ import annotations

import csv
import hashlib
import json
import logging
import math
import numbers
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ldpsample.events.scoring import release_kernel as _release
from ldpsample.minimax_sparse import sample_minimax_sparse
from ldpsample.publish.randomness import UniformSource

__all__ = [
    "DEVICE_FORMAT",
    "DeviceSpec",
    "SpecError",
    "read_device_spec",
    "release_on_device",
]

log = logging.getLogger(__name__)

PathLike = str | os.PathLike[str]

#: The spec format this reader understands (``manifest.json``'s ``format``).
DEVICE_FORMAT = "ldpsample-release-spec/1"
#: Release modes: one draw per (subcategory, ε, sample), or one per (attribute, ε, sample) on
#: the attribute's joint (subcategory, item) domain.
PER_SUBCATEGORY = "per_subcategory"
JOINT = "joint"
RELEASE_MODES = (PER_SUBCATEGORY, JOINT)
#: The subcategory label of an attribute's joint domain (release_mode: joint): the uniforms of
#: its draws are named by it, and the operator's report and messages use it.
JOINT_LABEL = "(joint)"
_MANIFEST = "manifest.json"
_DOMAIN_COLUMNS = ("attribute", "subcategory", "position", "item", "q")


class SpecError(ValueError):
    """A spec cannot be built or read; the first line names the config key or file."""


@dataclass(frozen=True)
class DeviceSpec:
    """A published spec as plain Python and numpy (no polars).

    Attributes
    ----------
    name
        The events table's name.
    epsilons
        ε values, ascending; every draw at each.
    samples
        Draws per (user, subcategory, ε).
    attributes_public
        Whether subcategory membership is declared public (then a user releases only where it
        has data on the domain).
    domains
        ``(attribute, subcategory)`` -> (items in position order, ``q`` on them), in spec order.
    manifest
        The whole ``manifest.json``.
    """

    name: str
    epsilons: tuple[float, ...]
    samples: int
    attributes_public: bool
    domains: Mapping[tuple[str, str], tuple[tuple[str, ...], NDArray[np.float64]]]
    manifest: Mapping[str, Any] = field(default_factory=dict)

    @property
    def seeded(self) -> bool:
        """True when the spec says its draws come from a seed (not for publication)."""
        return not self.manifest["randomness"]["publishable"]

    @property
    def release_mode(self) -> str:
        """``per_subcategory``, or ``joint`` (one draw per attribute on the joint domain)."""
        return str(self.manifest.get("release_mode", PER_SUBCATEGORY))

    @property
    def budget_bound(self) -> float:
        """The most ε one run of this spec costs a user: subcategories × Σε × samples, or for
        a joint release attributes × Σε × samples."""
        units = (
            len({attribute for attribute, _ in self.domains})
            if self.release_mode == JOINT
            else len(self.domains)
        )
        return units * float(sum(self.epsilons)) * self.samples


def file_sha256(path: PathLike) -> str:
    """sha256 of a file's bytes (hex), read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_manifest(path: PathLike) -> tuple[dict[str, Any], Path]:
    """A spec's checked ``manifest.json`` and its domain file (``path``: folder or manifest).

    Raises
    ------
    SpecError
        If a file is missing, the format is unknown or the domain's sha256 differs from the
        manifest's.
    """
    path = Path(path)
    manifest_path = path / _MANIFEST if path.is_dir() or path.suffix != ".json" else path
    if not manifest_path.is_file():
        raise SpecError(f"{manifest_path}: release spec not found (no {_MANIFEST})")
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    if manifest.get("format") != DEVICE_FORMAT:
        raise SpecError(
            f"{manifest_path}: format {manifest.get('format')!r} is not {DEVICE_FORMAT!r}"
        )
    domain_path = manifest_path.parent / manifest["domain"]["file"]
    if not domain_path.is_file():
        raise SpecError(f"{domain_path}: the spec's domain file is missing")
    if file_sha256(domain_path) != manifest["domain"]["sha256"]:
        raise SpecError(
            f"{domain_path}: sha256 differs from the one in {manifest_path} (the spec was "
            "changed after it was written)"
        )
    return manifest, domain_path


def read_device_spec(path: PathLike) -> DeviceSpec:
    """A spec written by :func:`ldpsample.publish.write_spec`, read with the standard library.

    Raises
    ------
    SpecError
        As :func:`read_manifest`, or if ``domain.csv``'s header is not
        ``attribute,subcategory,position,item,q``.
    """
    manifest, domain_path = read_manifest(path)
    with open(domain_path, newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        header = tuple(next(reader, ()))
        if header != _DOMAIN_COLUMNS:
            raise SpecError(
                f"{domain_path}: line 1 is {','.join(header)!r}, not {','.join(_DOMAIN_COLUMNS)!r}"
            )
        items: dict[tuple[str, str], list[str]] = {}
        priors: dict[tuple[str, str], list[float]] = {}
        for attribute, subcategory, _position, item, q in reader:
            items.setdefault((attribute, subcategory), []).append(item)
            priors.setdefault((attribute, subcategory), []).append(float(q))
    return DeviceSpec(
        name=manifest["name"],
        epsilons=tuple(float(e) for e in manifest["epsilons"]),
        samples=int(manifest["samples"]),
        attributes_public=bool(manifest["attributes_public"]),
        domains={
            key: (tuple(names), np.asarray(priors[key], dtype=np.float64))
            for key, names in items.items()
        },
        manifest=manifest,
    )


def _check_counts(spec: DeviceSpec, counts: Mapping[tuple[str, str], Mapping[str, float]]) -> None:
    """Every count of the spec's subcategories is a real number in ``[0, inf)``."""
    for key in spec.domains:
        for item, count in counts.get(key, {}).items():
            if isinstance(count, bool) or not isinstance(count, numbers.Real):
                raise TypeError(
                    f"counts[{key!r}][{item!r}]: {count!r} of type {type(count).__name__} is "
                    "not a number"
                )
            if not 0 <= count < math.inf:
                raise ValueError(f"counts[{key!r}][{item!r}]: {count!r} is not a finite count >= 0")


_Domains = Mapping[tuple[str, str], tuple[tuple[Any, ...], NDArray[np.float64]]]


def _joint_domains(spec: DeviceSpec) -> _Domains:
    """A joint spec's domains: per attribute, key ``(attribute, JOINT_LABEL)``, its
    ``(subcategory, item)`` pairs in spec order with ``q = π(s) q_s(i)`` (π: the manifest's
    ``subcategory_shares``), as :meth:`ldpsample.publish.ReleaseSpec.joint_domain`."""
    shares = spec.manifest["subcategory_shares"]
    pairs: dict[str, list[tuple[str, str]]] = {}
    priors: dict[str, list[NDArray[np.float64]]] = {}
    for (attribute, subcategory), (names, q) in spec.domains.items():
        pairs.setdefault(attribute, []).extend((subcategory, name) for name in names)
        priors.setdefault(attribute, []).append(q * float(shares[attribute][subcategory]))
    return {
        (attribute, JOINT_LABEL): (tuple(pairs[attribute]), np.concatenate(priors[attribute]))
        for attribute in pairs
    }


def _joint_counts(
    counts: Mapping[tuple[str, str], Mapping[str, float]],
) -> dict[tuple[str, str], dict[tuple[str, str], float]]:
    """The user's counts on its attributes' joint domains: ``(attribute, JOINT_LABEL)`` ->
    ``{(subcategory, item): count}``."""
    joint: dict[tuple[str, str], dict[tuple[str, str], float]] = {}
    for (attribute, subcategory), mine in counts.items():
        cell = joint.setdefault((attribute, JOINT_LABEL), {})
        cell.update({(subcategory, item): count for item, count in mine.items()})
    return joint


def _user_rows(
    domains: _Domains, counts: Mapping[tuple[str, str], Mapping[Any, float]]
) -> dict[tuple[str, str], tuple[NDArray[np.int64], NDArray[np.float64]]]:
    """Per domain, the user's positive counts as (positions, counts)."""
    unknown = [key for key in counts if key not in domains]
    outside = sum(len(counts[key]) for key in unknown)
    rows = {}
    for key, (names, _q) in domains.items():
        mine = counts.get(key, {})
        position = {name: index for index, name in enumerate(names)}
        kept = sorted(
            (position[item], float(count))
            for item, count in mine.items()
            if item in position and count > 0
        )
        outside += sum(1 for item in mine if item not in position)
        rows[key] = (
            np.array([p for p, _ in kept], dtype=np.int64),
            np.array([c for _, c in kept], dtype=np.float64),
        )
    if outside:
        log.warning(
            "%d of the user's counts are outside the spec's domain (other items or "
            "subcategories) and are not used",
            outside,
        )
    return rows


def release_on_device(
    spec: DeviceSpec,
    counts: Mapping[tuple[str, str], Mapping[str, float]],
    *,
    user: str,
    uniforms: UniformSource,
) -> list[dict[str, Any]]:
    """One user's released items under ``spec``: one per (subcategory, ε, sample), or for a
    joint spec (``release_mode: joint``) one per (attribute, ε, sample), drawn on the attribute's
    joint ``(subcategory, item)`` domain with ``q = π(s) q_s(i)`` from the user's counts there
    (``p := q`` without any), its row naming the drawn subcategory and item.

    Parameters
    ----------
    spec
        The public spec (:func:`read_device_spec`).
    counts
        The user's own counts: ``(attribute, subcategory)`` -> ``{item: count}`` (counts >= 0;
        a table without attributes has the one subcategory ``("all", "all")``). Items and
        subcategories outside the spec are not used (logged).
    user
        The user's id (the seeded uniforms depend on it; secure ones do not).
    uniforms
        :class:`~ldpsample.publish.SecureUniforms` to publish,
        :class:`~ldpsample.publish.SeededUniforms` for tests.

    Returns
    -------
    list of dict
        ``epsilon, user, attribute, subcategory, sample, item`` per draw, in (ε, attribute,
        subcategory, sample) order: the user's rows of
        :func:`~ldpsample.publish.release_items` for the same uniforms.

    Raises
    ------
    TypeError
        A count that is not a real number.
    ValueError
        A negative, NaN or infinite count.
    SpecError
        A ``release_mode`` other than ``per_subcategory`` and ``joint``.
    ldpsample.events.PrivacyAuditError
        If a kernel's realised ε exceeds its ε (nothing is returned).
    """
    if spec.release_mode not in RELEASE_MODES:
        raise SpecError(
            f"spec {spec.name!r}: release_mode {spec.release_mode!r} is not one of "
            f"{list(RELEASE_MODES)}"
        )
    user = str(user)
    _check_counts(spec, counts)
    joint = spec.release_mode == JOINT
    domains = _joint_domains(spec) if joint else spec.domains
    rows = _user_rows(domains, _joint_counts(counts) if joint else counts)
    draws = []
    for (attribute, subcategory), (names, q) in domains.items():
        positions, data = rows[(attribute, subcategory)]
        if spec.attributes_public and positions.size == 0:
            continue
        indptr = np.array([0, positions.size], dtype=np.int64)
        for eps in spec.epsilons:
            what = f"release of {spec.name}, {attribute}={subcategory!r}, epsilon={eps!r}"
            K = _release.minimax_release_kernel(q, epsilon=eps)
            _release.audit_kernel(K, epsilon=eps, what=f"{what}, minimax")
            for sample in range(spec.samples):
                u = uniforms.uniforms(
                    [user], attribute=attribute, subcategory=subcategory, epsilon=eps, sample=sample
                )
                (index,) = sample_minimax_sparse(K, indptr, positions, data, uniforms=u)
                drawn_subcategory, item = names[index] if joint else (subcategory, names[index])
                draws.append(
                    {
                        "epsilon": eps,
                        "user": user,
                        "attribute": attribute,
                        "subcategory": drawn_subcategory,
                        "sample": sample,
                        "item": item,
                    }
                )
    draws.sort(key=lambda d: (d["epsilon"], d["attribute"], d["subcategory"], d["sample"]))
    return draws
