"""Where a release's randomness comes from: the operating system's secure source (the default,
for publication) or uniforms derived per draw by SHA-256 from a seed (tests and evaluation).

A sampler with known randomness is not private: whoever knows the uniforms recomputes every
draw, and the release becomes a deterministic function of the user's data (ε = ∞). So the
uniforms of a publishable release come from :func:`os.urandom` (the kernel's CSPRNG, as
:mod:`secrets`), are used once and are never written anywhere. A seeded source exists for
tests and for evaluation: each draw's uniform is a pure function of
``(seed, attribute, subcategory, ε, sample, user)``, so a user's draws do not change when other
users are added or removed, and a run is reproducible; the spec's manifest then says
"reproducible, not for publication".

Both sources give 53-bit uniforms ``k / 2**53`` in ``[0, 1)`` (the resolution of a float64 in
that interval).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from ldpsample.events.scoring.release_kernel import epsilon_text

__all__ = ["SecureUniforms", "SeededUniforms", "UniformSource", "uniform_source"]

#: float64 uniforms in [0, 1) have 53 significant bits.
_SCALE = 2.0**-53
#: Tag of the SHA-256 derivation (a new derivation gets a new tag, never reuses this one).
_TAG = b"ldpsample/release-uniforms/v1"


class UniformSource(Protocol):
    """One uniform in ``[0, 1)`` per user for one ``(attribute, subcategory, ε, sample)``."""

    #: Whether the same call gives the same uniforms again (then not for publication).
    reproducible: bool

    def uniforms(
        self,
        users: Sequence[str],
        *,
        attribute: str,
        subcategory: str,
        epsilon: float,
        sample: int,
    ) -> NDArray[np.float64]: ...


def _from_words(words: NDArray[np.uint64]) -> NDArray[np.float64]:
    """64-bit words -> 53-bit uniforms in [0, 1)."""
    return (words >> np.uint64(11)).astype(np.float64) * _SCALE


class SecureUniforms:
    """Uniforms from :func:`os.urandom`: secret, never stored, different at every call.

    This is the source of every publishable release (``release_seed: null``).
    """

    reproducible = False

    def uniforms(
        self,
        users: Sequence[str],
        *,
        attribute: str,
        subcategory: str,
        epsilon: float,
        sample: int,
    ) -> NDArray[np.float64]:
        """``len(users)`` fresh uniforms (the keyword arguments are not used)."""
        del attribute, subcategory, epsilon, sample
        count = len(users)
        return _from_words(np.frombuffer(os.urandom(8 * count), dtype=np.uint64))

    def __repr__(self) -> str:
        return "SecureUniforms()"


def _field(value: str) -> bytes:
    """A length-prefixed field, so that no two different tuples hash the same bytes."""
    data = value.encode("utf-8")
    return len(data).to_bytes(8, "big") + data


class SeededUniforms:
    """Uniforms derived by SHA-256 from ``(seed, attribute, subcategory, ε, sample, user)``.

    Each uniform is the first 53 bits of
    ``SHA-256(tag, seed, attribute, subcategory, ε as plain decimal, sample, user)`` (each field
    length-prefixed), so it depends on nothing else: the same user gets the same draws whatever
    other users are released. For tests and evaluation only: whoever knows the seed knows every
    draw.

    Parameters
    ----------
    seed
        A non-negative integer (``events.<name>.release_seed``).
    """

    reproducible = True

    def __init__(self, seed: int) -> None:
        if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
            raise TypeError(f"seed must be an integer, got {seed!r} of type {type(seed).__name__}")
        if seed < 0:
            raise ValueError(f"seed must be >= 0, got {seed!r}")
        self.seed = int(seed)
        self._base = hashlib.sha256(_field(_TAG.decode()) + _field(str(self.seed)))

    def uniforms(
        self,
        users: Sequence[str],
        *,
        attribute: str,
        subcategory: str,
        epsilon: float,
        sample: int,
    ) -> NDArray[np.float64]:
        """One uniform per user, a function of the seed, the keywords and that user only."""
        head = self._base.copy()
        head.update(
            _field(str(attribute))
            + _field(str(subcategory))
            + _field(epsilon_text(epsilon))
            + _field(str(int(sample)))
        )
        words = np.empty(len(users), dtype=np.uint64)
        for index, user in enumerate(users):
            digest = head.copy()
            digest.update(_field(str(user)))
            words[index] = int.from_bytes(digest.digest()[:8], "big")
        return _from_words(words)

    def __repr__(self) -> str:
        return f"SeededUniforms({self.seed})"


def uniform_source(release_seed: int | None) -> UniformSource:
    """:class:`SecureUniforms` for ``None`` (publication), else :class:`SeededUniforms`."""
    return SecureUniforms() if release_seed is None else SeededUniforms(release_seed)
