"""Publishing a release: the public spec, the client-side draws, secret randomness and the
persistent privacy ledger with its budget (docs/publishing.md).

Modules: :mod:`~ldpsample.publish.spec` (the spec and its files), :mod:`~ldpsample.publish.build`
(building it from public inputs only),
:mod:`~ldpsample.publish.randomness` (secure and seeded uniforms),
:mod:`~ldpsample.publish.client` (a spec and users' own histograms -> released items),
:mod:`~ldpsample.publish.ledger` (every user's spent ε, outside ``results/``) and
:mod:`~ldpsample.publish.publication` (budget check, draws and ledger entry as one step).
It uses :mod:`ldpsample.events` (table reading, the release kernel and its audit), never the
other way round.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ldpsample._lazy import lazy_exports

#: Public name -> module defining it (loaded on first use, as :mod:`ldpsample`).
_EXPORTS: dict[str, str] = {
    "BudgetExceededError": "ldpsample.publish.ledger",
    "Ledger": "ldpsample.publish.ledger",
    "PublishedRelease": "ldpsample.publish.publication",
    "Release": "ldpsample.publish.client",
    "ReleaseSpec": "ldpsample.publish.spec",
    "SecureUniforms": "ldpsample.publish.randomness",
    "SeededUniforms": "ldpsample.publish.randomness",
    "SpecError": "ldpsample.publish.spec",
    "build_spec": "ldpsample.publish.build",
    "check_release_budget": "ldpsample.publish.publication",
    "publish_release": "ldpsample.publish.publication",
    "read_spec": "ldpsample.publish.spec",
    "release_items": "ldpsample.publish.client",
    "spec_sha256": "ldpsample.publish.spec",
    "uniform_source": "ldpsample.publish.randomness",
    "write_spec": "ldpsample.publish.spec",
}

__all__ = [
    "BudgetExceededError",
    "Ledger",
    "PublishedRelease",
    "Release",
    "ReleaseSpec",
    "SecureUniforms",
    "SeededUniforms",
    "SpecError",
    "build_spec",
    "check_release_budget",
    "publish_release",
    "read_spec",
    "release_items",
    "spec_sha256",
    "uniform_source",
    "write_spec",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())


if TYPE_CHECKING:  # static analysers see the eager imports
    from ldpsample.publish.build import build_spec
    from ldpsample.publish.client import Release, release_items
    from ldpsample.publish.ledger import BudgetExceededError, Ledger
    from ldpsample.publish.publication import (
        PublishedRelease,
        check_release_budget,
        publish_release,
    )
    from ldpsample.publish.randomness import SecureUniforms, SeededUniforms, uniform_source
    from ldpsample.publish.spec import (
        ReleaseSpec,
        SpecError,
        read_spec,
        spec_sha256,
        write_spec,
    )
