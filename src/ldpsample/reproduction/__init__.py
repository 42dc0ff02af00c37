"""Every quantitative claim of the papers beside this run's value, each citing the paper's text.

The claims are data (``claims.toml``, shipped with the package, read by
:func:`~ldpsample.reproduction.claims.load_claims`); the computations live in modules named for
what they check:

* :mod:`~ldpsample.reproduction.theory_checks` -- Theorem 1 (against the linear program of
  :mod:`~ldpsample.reproduction.kernel_lp`), Lemmas 1 and 3, Theorem 2 with Propositions 3-4,
  Corollary 2, Proposition 1, the bound ``TV(p, pK) <= 2 TV(p, q)`` and Example 1, on this
  run's priors;
* :mod:`~ldpsample.reproduction.synthetic_checks`,
  :mod:`~ldpsample.reproduction.movielens_checks`, :mod:`~ldpsample.reproduction.avazu_checks`,
  :mod:`~ldpsample.reproduction.wpm_checks` -- the experiments' numbers and orderings;
* :mod:`~ldpsample.reproduction.data_size_checks` -- the papers' data-size statements against
  the files the run read, and the poster's Avazu click rule against the paper's;
* :mod:`~ldpsample.reproduction.outcome` -- what a check returns and the verdict that follows
  (``reproduced``, ``differs``, ``not run``, ``extra``);
* :mod:`~ldpsample.reproduction.data_notes` -- the ``data`` cell (full, partial with its
  fraction, generated);
* :mod:`~ldpsample.reproduction.table` -- :func:`reproduction_table` and
  :func:`verdict_counts`.

Discussion: ``docs/reproduction.md``.
"""

from __future__ import annotations

from ldpsample.reproduction.claims import (
    CLAIMS_FILE,
    SOURCE_PATTERN,
    Claim,
    ClaimsError,
    load_claims,
)
from ldpsample.reproduction.data_notes import (
    ML1M_SHARED_RATINGS,
    OFFICIAL_ROWS,
    fraction_from_log,
    partial_note,
    run_data_notes,
)
from ldpsample.reproduction.outcome import (
    VERDICTS,
    Missing,
    Outcome,
    count_verdicts,
    rounds_to,
    truncates_to,
    verdict,
    within,
)
from ldpsample.reproduction.table import (
    COLUMNS,
    COUNT_COLUMNS,
    reproduction_table,
    verdict_counts,
)

__all__ = [
    "CLAIMS_FILE",
    "COLUMNS",
    "COUNT_COLUMNS",
    "ML1M_SHARED_RATINGS",
    "OFFICIAL_ROWS",
    "SOURCE_PATTERN",
    "VERDICTS",
    "Claim",
    "ClaimsError",
    "Missing",
    "Outcome",
    "count_verdicts",
    "fraction_from_log",
    "load_claims",
    "partial_note",
    "reproduction_table",
    "rounds_to",
    "run_data_notes",
    "truncates_to",
    "verdict",
    "verdict_counts",
    "within",
]
