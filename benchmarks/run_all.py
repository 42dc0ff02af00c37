"""One entry point for every performance figure of the project, measured side by side in one run.

Each row of :data:`ROWS` runs in a fresh Python process (``run_all.py --child <row>``), which
times the row's subject and its references in that one process (best of ``--repeats``) and
prints the results as JSON. A second fresh process runs the subject alone once, and its peak
resident memory is read from the kernel (``os.wait4`` returns the child's own ``ru_maxrss``):
measured, not estimated. The parent prints the ratios and writes a markdown table with the
machine (nproc, CPU model, RAM) and the date.

Rows (``--only`` takes any of these names, several allowed):

* ``apply-4000``: :func:`apply_minimax`, 5000 users x n = 4000 (unsorted prior, coefficients
  precomputed) vs the dense BLAS product ``P @ K`` (``K`` built beforehand with
  :func:`minimax_kernel`) and one ``np.cumsum`` pass over ``P``;
* ``kl-brentq``: :func:`relative_mollifier_kl`, 10^5 users x n = 100, vs the published per-user
  ``brentq`` on ``[0, 1000]`` (``bench_mollifier.brentq_kl``) timed on a subset and
  extrapolated linearly;
* ``dense-2000``: dense kernel n = 2000, closed form vs the paper's recursion
  (:mod:`ldpsample.reference`, shared with the tests);
* ``dense-10000``: dense kernel n = 10,000, closed form;
* ``apply-1e6x100``: :func:`apply_minimax`, 10^6 users x n = 100;
* ``audit-1e6``: :func:`minimax_realized_epsilon`, the O(n) audit of a 10^6-item kernel
  (target < 1 s), and at n = 10,000 beside the dense ``realized_epsilon(K)``;
* ``sparse-1e6x1e5``: a sparse catalogue (10^6 users, 10^5 items, 1-50 items per user, Zipf
  popularity, 4 subcategories with pooled priors): per subcategory and ε in {1, 4} the kernel,
  its O(n) audit, one draw per user (:func:`sample_minimax_sparse`) and every user's TV and KL
  (:func:`minimax_divergences_sparse`), target < 60 s and < 4 GiB; beside it the dense path on
  500 users, extrapolated;
* ``mollifier-1e5x100``: KL and TV closed forms, 10^5 users x n = 100, and cvxpy with one
  problem per user (extrapolated, as in ``bench_mollifier.py``);
* ``avazu``: Avazu-shaped log (``--avazu-rows``, default 10^6; the README quotes 10^7 and the full
  40.4M): gzip CSV -> parquet and the 9 attribute histograms, through ``bench_avazu.run`` (each
  step in its own process; its own peak memory);
* ``wpm-exact``: exact WPM (network simplex) per input, n = m = 100 and 400;
* ``avazu-stage``: the pipeline's Avazu stage through Snakemake (``snakemake --cores 2``) in a
  temporary copy of the project, on the generated log (``avazu.source: synthetic``,
  ``--avazu-stage-rows``, default the official 40,428,967 rows): a first run generates and
  converts the log (reported, not the target), the timed run is the stage with the parquet
  present; peak memory is the largest process of that run (``ru_maxrss`` of the Snakemake
  process's waited-for descendants, from ``wait4``), and the note names each rule's largest
  job (its ``logs/benchmarks/`` files). Target < 60 s and < 2 GB per job on 2 cores;
* ``events-scale-1e7``, ``events-scale-1e8``, ``events-scale-4e8``: the events stage through
  Snakemake (``--cores 2``, ``buckets: auto``) on the generated table of issue 22 at 10^7,
  10^8 and 4 x 10^8 rows (``bench_scale.py``: N/50 users, 10^4 items with Zipf popularity, one
  attribute of 20 subcategories, zstd parquet files of 10^7 rows), ε 1 and 4, minimax and
  mollifier_tv: the whole stage and its histogram phase (target >= 0.9 M rows/s), each run's
  largest process (target < 4 GiB per job); the larger sizes run the 10^7-row table again for
  the ratio to linear time (target <= 1.2x);
* ``events-metrics-threads``: :func:`ldpsample.events.evaluate_attribute` on one bucket of the
  10^8-row table with ``threads=2`` and ``threads=1`` (target >= 1.7x);
* ``events-sparse-1e6x1e5``: the evaluation of ``sparse-1e6x1e5``'s users through
  ``evaluate_attribute`` (the sparse path of a metrics job), target < 60 s;
* ``test-command``: the README's test command (``CI=true bash .ci/run``: a new venv, ``pip
  install -e '.[test]'``, pytest) on a fresh clone of the committed HEAD in a folder beside the
  project (so ``../shared`` resolves), as CI runs it; the note has pytest's own time and the
  test count. Target < 5 min. Not run with ``--quick`` (it has no small size).

``--baseline <git revision>`` adds "before" lines: the library's ``minimax.py`` and
mollifier (``mollifier.py``, a package ``mollifier/`` since issue 24) as of that revision, timed
in the same process on the same inputs.
``--quick`` shrinks every size (for a smoke test; the ratios are then not the targets' sizes).
To add a row, write a function ``row_<name>(quick) -> Row`` that returns :class:`Measure`
entries, register it in :data:`ROWS` with :func:`register`, and give it a ``subject`` callable
for the memory probe.

The table replaces the part of ``--output`` between the lines :data:`BEGIN` and :data:`END`
(the whole file when it has no such part), so the hand-written notes below it are kept.

Usage: ``.venv/bin/python benchmarks/run_all.py [--quick] [--only apply-4000 kl-brentq]
[--repeats 5] [--output benchmarks/results.md]``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

EPSILON = 1.0
REPEATS = 5
#: Lines around the generated table in ``--output`` (text outside them is kept).
BEGIN = "<!-- run_all.py: generated table begins -->"
END = "<!-- run_all.py: generated table ends -->"
#: Rows with no small size: left out of a ``--quick`` run unless named with ``--only``.
NOT_QUICK = ("test-command",)


# --------------------------------------------------------------------------------------------
# Records and registry
# --------------------------------------------------------------------------------------------


@dataclass
class Measure:
    """One timed call of a row. ``ratio_of`` names another measure of the same row: the ratio
    reported is ``that.seconds / self.seconds`` (``speed-up``) unless ``slowdown`` is set
    (``self.seconds / that.seconds``)."""

    label: str
    seconds: float
    note: str = ""
    ratio_of: str | None = None
    slowdown: bool = False
    target: float | None = None  # >= target for a speed-up, <= target for a slowdown
    limit: float | None = None  # a target on the time itself: < limit seconds


@dataclass
class Row:
    name: str
    title: str
    measures: list[Measure] = field(default_factory=list)
    info: str = ""


@dataclass(frozen=True)
class RowSpec:
    name: str
    measure: Callable[[bool], Row]  # runs in the child: times everything side by side
    subject: Callable[[bool], object]  # runs alone in a second child: its peak memory


ROWS: dict[str, RowSpec] = {}


def register(name: str, subject: Callable[[bool], object]):
    """Decorator: add ``row_fn`` to :data:`ROWS` under ``name`` with its memory ``subject``."""

    def wrap(row_fn: Callable[[bool], Row]) -> Callable[[bool], Row]:
        ROWS[name] = RowSpec(name, row_fn, subject)
        return row_fn

    return wrap


def baseline(module: str):
    """``ldpsample.<module>`` as it was at ``--baseline <git revision>`` (None without one).

    The module's file ``<module>.py``, or every ``.py`` file of its package folder ``<module>/``
    (the mollifier is one since issue 24), is read with ``git show`` and imported under another
    name, ``baseline_<module>``, so the old and the current code are timed side by side in the
    same process on the same inputs. A package's imports of its own modules
    (``ldpsample.<module>.x``) are renamed with it, so they load the old copies too.
    """
    import importlib.util

    rev = os.environ.get("RUN_ALL_BASELINE")
    if not rev:
        return None
    name = f"baseline_{module}"
    folder = Path(tempfile.mkdtemp(prefix="run_all_baseline_"))
    library = _git_tree(rev, "src/ldpsample")
    if library.get(f"{module}.py") == "blob":
        path = folder / f"{name}.py"
        path.write_text(_git("show", f"{rev}:src/ldpsample/{module}.py"))
        spec = importlib.util.spec_from_file_location(name, path)
    elif library.get(module) == "tree":
        package = folder / name
        package.mkdir()
        for file, kind in _git_tree(rev, f"src/ldpsample/{module}").items():
            if kind == "blob" and file.endswith(".py"):
                source = _git("show", f"{rev}:src/ldpsample/{module}/{file}")
                (package / file).write_text(re.sub(rf"\bldpsample\.{module}\b", name, source))
        spec = importlib.util.spec_from_file_location(
            name, package / "__init__.py", submodule_search_locations=[str(package)]
        )
    else:
        raise SystemExit(f"--baseline {rev}: no src/ldpsample/{module}.py or {module}/ there")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def _git(*args: str) -> str:
    """Standard output of ``git <args>`` in the project."""
    return subprocess.run(
        ["git", *args], cwd=HERE.parent, check=True, capture_output=True, text=True
    ).stdout


def _git_tree(rev: str, folder: str) -> dict[str, str]:
    """``{name: "blob" or "tree"}`` of ``folder``'s entries at ``rev``."""
    entries = {}
    for line in _git("ls-tree", f"{rev}:{folder}").splitlines():
        info, entry = line.split("\t", 1)
        entries[entry] = info.split()[1]
    return entries


def best_time(fn: Callable[[], object], repeats: int | None = None) -> float:
    """Best wall-clock time of ``repeats`` calls (stops early once a call takes over 20 s)."""
    best = float("inf")
    for _ in range(repeats or REPEATS):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
        if best > 20.0:
            break
    return best


# --------------------------------------------------------------------------------------------
# Inputs (deterministic) and subjects
# --------------------------------------------------------------------------------------------


def _users(users: int, n: int, seed: int, alpha: float | None = None) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if alpha is not None:
        return rng.dirichlet(np.full(n, alpha), size=users)
    P = rng.random((users, n))
    P /= P.sum(axis=1, keepdims=True)
    return P


def _prior(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).dirichlet(np.ones(n))  # unsorted


def _apply_4000_sizes(quick: bool) -> tuple[int, int]:
    return (500, 1000) if quick else (5000, 4000)


def _apply_4000_subject(quick: bool) -> object:
    from ldpsample.minimax import apply_minimax, minimax_coefficients

    users, n = _apply_4000_sizes(quick)
    kernel = minimax_coefficients(_prior(n, 1), epsilon=EPSILON)
    return apply_minimax(_users(users, n, 2), kernel)


def _mollifier_sizes(quick: bool) -> tuple[int, int]:
    return (10_000, 100) if quick else (100_000, 100)


def _kl_subject(quick: bool) -> object:
    from ldpsample.mollifier import relative_mollifier_kl

    users, n = _mollifier_sizes(quick)
    return relative_mollifier_kl(_users(users, n, 4, alpha=0.5), _prior(n, 3), epsilon=EPSILON)


def _tv_subject(quick: bool) -> object:
    from ldpsample.mollifier import relative_mollifier_tv

    users, n = _mollifier_sizes(quick)
    return relative_mollifier_tv(_users(users, n, 4, alpha=0.5), _prior(n, 3), epsilon=EPSILON)


def _dense_2000_n(quick: bool) -> int:
    return 500 if quick else 2000


def _dense_2000_subject(quick: bool) -> object:
    from ldpsample.minimax import minimax_kernel

    return minimax_kernel(_prior(_dense_2000_n(quick), 5), epsilon=EPSILON)


def _dense_10000_subject(quick: bool) -> object:
    from ldpsample.minimax import minimax_kernel

    return minimax_kernel(_prior(2000 if quick else 10_000, 6), epsilon=EPSILON)


def _apply_1e6_sizes(quick: bool) -> tuple[int, int]:
    return (100_000, 100) if quick else (1_000_000, 100)


def _apply_1e6_subject(quick: bool) -> object:
    from ldpsample.minimax import apply_minimax, minimax_coefficients

    users, n = _apply_1e6_sizes(quick)
    kernel = minimax_coefficients(_prior(n, 7), epsilon=EPSILON)
    return apply_minimax(_users(users, n, 8), kernel)


def _wpm_sizes(quick: bool) -> list[tuple[int, int]]:
    return [(100, 4), (400, 2)] if quick else [(100, 32), (400, 8)]  # (n = m, inputs)


def _wpm_inputs(n: int, inputs: int):
    from ldpsample.wasserstein import optimal_uniform_base_measure

    rng = np.random.default_rng(n)
    x = rng.random((n, 2))
    C = np.linalg.norm(x[:, None] - x[None], axis=2)
    P = rng.dirichlet(np.full(n, 0.5), size=inputs)
    mu = optimal_uniform_base_measure(C, epsilon=EPSILON).mu
    return P, C, mu


def _wpm_subject(quick: bool) -> object:
    from ldpsample.wasserstein import wasserstein_projection

    n, inputs = _wpm_sizes(quick)[-1]
    P, C, mu = _wpm_inputs(n, inputs)
    return wasserstein_projection(P, C, mu, epsilon=EPSILON, solver="pot")


def _audit_n(quick: bool) -> int:
    return 100_000 if quick else 1_000_000


def _audit_subject(quick: bool) -> object:
    from ldpsample.audit import minimax_realized_epsilon
    from ldpsample.minimax import minimax_coefficients

    kernel = minimax_coefficients(_prior(_audit_n(quick), 9), epsilon=EPSILON)
    return minimax_realized_epsilon(kernel)


def _sparse_sizes(quick: bool) -> tuple[int, int]:
    return (100_000, 10_000) if quick else (1_000_000, 100_000)


#: Shares of the users in each subcategory of the sparse-catalogue row.
_SPARSE_SUBCATEGORIES = (0.4, 0.3, 0.2, 0.1)
_SPARSE_EPSILONS = (1.0, 4.0)


def _sparse_users(quick: bool):
    """The sparse-catalogue row's users, subcategory after subcategory, in CSR form: each
    draws 1 to 50 items (uniform) from a Zipf(1.1) popularity over shuffled item ids, repeated
    draws summed into counts (so at most 50 distinct items). Built in chunks of users so that
    the input's own peak stays small. Returns ``(indptr, indices, counts, bounds)`` with the
    subcategories' first users in ``bounds``."""
    users, n = _sparse_sizes(quick)
    rng = np.random.default_rng(2026)
    popularity = 1.0 / np.arange(1, n + 1) ** 1.1
    cumulative = np.cumsum(popularity[rng.permutation(n)])
    cumulative /= cumulative[-1]
    lengths, indices, counts = [], [], []
    chunk = 100_000
    for first in range(0, users, chunk):
        size = min(chunk, users - first)
        k = rng.integers(1, 51, size)
        items = np.minimum(np.searchsorted(cumulative, rng.random(int(k.sum()))), n - 1)
        keys, repeats = np.unique(np.repeat(np.arange(size), k) * n + items, return_counts=True)
        lengths.append(np.bincount(keys // n, minlength=size))
        indices.append(keys % n)
        counts.append(repeats.astype(np.float64))
    indptr = np.zeros(users + 1, dtype=np.int64)
    np.cumsum(np.concatenate(lengths), out=indptr[1:])
    shares = np.cumsum((0.0, *_SPARSE_SUBCATEGORIES))
    bounds = np.round(shares * users).astype(int)
    return indptr, np.concatenate(indices), np.concatenate(counts), bounds


def _sparse_subcategories(quick: bool, data=None):
    """Each subcategory's CSR slice and pooled prior (its users' counts per item)."""
    indptr, indices, counts, bounds = data or _sparse_users(quick)
    n = _sparse_sizes(quick)[1]
    for first, last in itertools.pairwise(bounds):
        lo, hi = indptr[first], indptr[last]
        csr = (indptr[first : last + 1] - lo, indices[lo:hi], counts[lo:hi])
        prior = np.bincount(csr[1], weights=csr[2], minlength=n)
        yield csr, prior / prior.sum()


def _sparse_release(quick: bool, data=None) -> list[dict]:
    """What a release of the sparse catalogue computes, per subcategory and ε: the kernel,
    its O(n) audit, one draw per user and every user's TV and KL (their maxima reported)."""
    from ldpsample.audit import minimax_realized_epsilon
    from ldpsample.minimax import minimax_coefficients
    from ldpsample.minimax_sparse import minimax_divergences_sparse, sample_minimax_sparse

    results = []
    rng = np.random.default_rng(7)
    for number, (csr, prior) in enumerate(_sparse_subcategories(quick, data)):
        for epsilon in _SPARSE_EPSILONS:
            kernel = minimax_coefficients(prior, epsilon=epsilon)
            realized = minimax_realized_epsilon(kernel)
            if not realized <= epsilon * (1 + 1e-9):
                raise RuntimeError(f"audit failed: realised {realized!r} > {epsilon!r}")
            users = csr[0].size - 1
            drawn = sample_minimax_sparse(kernel, *csr, uniforms=rng.random(users))
            tv, kl = minimax_divergences_sparse(kernel, *csr)
            results.append(
                {
                    "subcategory": number,
                    "epsilon": epsilon,
                    "users": users,
                    "realized": realized,
                    "tv": float(tv.max()),
                    "kl": float(kl.max()),
                    "draws": int(drawn.size),
                }
            )
    return results


def _sparse_subject(quick: bool) -> object:
    return _sparse_release(quick)


def _avazu_rows(quick: bool) -> int:
    return 200_000 if quick else int(os.environ.get("RUN_ALL_AVAZU_ROWS", 1_000_000))


def _in_own_processes(quick: bool) -> object:
    """The memory probe of a row whose steps each run, and are measured, in processes of their
    own (the Avazu and pipeline rows): nothing to run alone."""
    return None


# --------------------------------------------------------------------------------------------
# Rows
# --------------------------------------------------------------------------------------------


def _one_thread(row: Row, call: Callable[[], object]) -> Measure:
    """The row's subject again with ``threads=1`` (no thread pool), its ratios to the row's
    references in the note: on a machine loaded by other jobs the default threads may not help."""
    seconds = best_time(call)
    subject = row.measures[0]
    ratios = []
    for m in row.measures[1:]:
        if m.ratio_of == subject.label:
            value = seconds / m.seconds if m.slowdown else m.seconds / seconds
            ratios.append(f"{m.label}: {value:,.2f}x {'its time' if m.slowdown else 'faster'}")
    return Measure("same, threads=1 (one core, no thread pool)", seconds, "; ".join(ratios))


@register("apply-4000", _apply_4000_subject)
def row_apply_4000(quick: bool) -> Row:
    from ldpsample.minimax import apply_minimax, minimax_coefficients, minimax_kernel

    users, n = _apply_4000_sizes(quick)
    q = _prior(n, 1)
    P = _users(users, n, 2)
    kernel = minimax_coefficients(q, epsilon=EPSILON)
    K = minimax_kernel(q, epsilon=EPSILON)
    diff = float(np.abs(apply_minimax(P[:200], kernel) - P[:200] @ K).max())
    row = Row("apply-4000", f"apply_minimax, {users:,} users x n = {n:,} (unsorted q)")
    row.measures = [
        Measure(
            "apply_minimax (coefficients precomputed)",
            best_time(lambda: apply_minimax(P, kernel)),
            f"max abs diff vs P @ K: {diff:.1e}",
        ),
        Measure(
            "dense P @ K (K built beforehand)",
            best_time(lambda: P @ K),
            ratio_of="apply_minimax (coefficients precomputed)",
            target=5.0,
        ),
        Measure(
            "one np.cumsum pass over P",
            best_time(lambda: np.cumsum(P, axis=1)),
            ratio_of="apply_minimax (coefficients precomputed)",
            slowdown=True,
            target=4.0,
        ),
    ]
    row.measures.append(_one_thread(row, lambda: apply_minimax(P, kernel, threads=1)))
    old = baseline("minimax")
    if old is not None:
        row.measures.append(
            Measure(
                f"before: apply_minimax at {os.environ['RUN_ALL_BASELINE']}",
                best_time(
                    lambda: old.apply_minimax(P, old.minimax_coefficients(q, epsilon=EPSILON))
                ),
                ratio_of="apply_minimax (coefficients precomputed)",
            )
        )
    return row


@register("kl-brentq", _kl_subject)
def row_kl_brentq(quick: bool) -> Row:
    from bench_mollifier import brentq_kl, kl_value

    from ldpsample.mollifier import relative_mollifier_kl

    users, n = _mollifier_sizes(quick)
    q = _prior(n, 3)
    P = _users(users, n, 4, alpha=0.5)
    subset = 2_000 if quick else 20_000
    fast = relative_mollifier_kl(P, q, epsilon=EPSILON)
    few = P[:subset]
    reference, failures = brentq_kl(few, q, EPSILON, bracket=1e3)
    ok = ~np.isnan(reference).any(axis=1)
    diff = float(np.abs(reference[ok] - fast[:subset][ok]).max())
    dvalue = float(
        np.abs(kl_value(few[ok], reference[ok]) - kl_value(few[ok], fast[:subset][ok])).max()
    )
    per_user = best_time(lambda: brentq_kl(few, q, EPSILON, bracket=1e3), 3) / subset
    row = Row("kl-brentq", f"relative_mollifier_kl, {users:,} users x n = {n} (P ~ Dirichlet(0.5))")
    row.measures = [
        Measure(
            "relative_mollifier_kl (closed form, validation included)",
            best_time(lambda: relative_mollifier_kl(P, q, epsilon=EPSILON)),
            f"max abs diff of Q vs brentq: {diff:.1e}; of KL value: {dvalue:.1e}",
        ),
        Measure(
            "published brentq per user on [0, 1000]",
            per_user * users,
            f"best of 3 on {subset:,} users, extrapolated; {failures} raised",
            ratio_of="relative_mollifier_kl (closed form, validation included)",
            target=20.0,
        ),
    ]
    row.measures.append(
        _one_thread(row, lambda: relative_mollifier_kl(P, q, epsilon=EPSILON, threads=1))
    )
    old = baseline("mollifier")
    if old is not None:
        diff_old = float(np.abs(old.relative_mollifier_kl(P, q, epsilon=EPSILON) - fast).max())
        row.measures.append(
            Measure(
                f"before: relative_mollifier_kl at {os.environ['RUN_ALL_BASELINE']}",
                best_time(lambda: old.relative_mollifier_kl(P, q, epsilon=EPSILON)),
                f"max abs diff vs now: {diff_old:.1e}",
                ratio_of="relative_mollifier_kl (closed form, validation included)",
            )
        )
    return row


@register("dense-2000", _dense_2000_subject)
def row_dense_2000(quick: bool) -> Row:
    from ldpsample.minimax import minimax_kernel
    from ldpsample.reference import recursion_kernel

    n = _dense_2000_n(quick)
    q = _prior(n, 5)
    diff = float(np.abs(minimax_kernel(q, epsilon=EPSILON) - recursion_kernel(q, EPSILON)).max())
    row = Row("dense-2000", f"dense minimax kernel, n = {n:,}")
    row.measures = [
        Measure(
            "minimax_kernel (closed form)",
            best_time(lambda: minimax_kernel(q, epsilon=EPSILON)),
            f"max abs diff vs recursion: {diff:.1e}",
        ),
        Measure(
            "paper's recursion, Algorithm 1 (O(n^3))",
            best_time(lambda: recursion_kernel(q, EPSILON), 3),
            "best of 3",
            ratio_of="minimax_kernel (closed form)",
        ),
    ]
    return row


@register("dense-10000", _dense_10000_subject)
def row_dense_10000(quick: bool) -> Row:
    from ldpsample.minimax import minimax_kernel

    n = 2000 if quick else 10_000
    q = _prior(n, 6)
    row = Row("dense-10000", f"dense minimax kernel, n = {n:,}")
    row.measures = [
        Measure(
            "minimax_kernel (closed form)", best_time(lambda: minimax_kernel(q, epsilon=EPSILON))
        )
    ]
    return row


@register("apply-1e6x100", _apply_1e6_subject)
def row_apply_1e6(quick: bool) -> Row:
    from ldpsample.minimax import apply_minimax, minimax_coefficients

    users, n = _apply_1e6_sizes(quick)
    q = _prior(n, 7)
    P = _users(users, n, 8)
    kernel = minimax_coefficients(q, epsilon=EPSILON)
    row = Row("apply-1e6x100", f"apply_minimax, {users:,} users x n = {n}")
    row.measures = [
        Measure(
            "apply_minimax (coefficients precomputed)", best_time(lambda: apply_minimax(P, kernel))
        ),
        Measure(
            "apply_minimax (q given, coefficients in the call)",
            best_time(lambda: apply_minimax(P, q, epsilon=EPSILON)),
        ),
        Measure(
            "one np.cumsum pass over P",
            best_time(lambda: np.cumsum(P, axis=1)),
            ratio_of="apply_minimax (coefficients precomputed)",
            slowdown=True,
        ),
    ]
    old = baseline("minimax")
    if old is not None:
        old_kernel = old.minimax_coefficients(q, epsilon=EPSILON)
        row.measures.append(
            Measure(
                f"before: apply_minimax at {os.environ['RUN_ALL_BASELINE']}",
                best_time(lambda: old.apply_minimax(P, old_kernel)),
                ratio_of="apply_minimax (coefficients precomputed)",
            )
        )
    return row


@register("audit-1e6", _audit_subject)
def row_audit(quick: bool) -> Row:
    from ldpsample.audit import minimax_realized_epsilon, realized_epsilon
    from ldpsample.minimax import minimax_coefficients

    n = _audit_n(quick)
    kernel = minimax_coefficients(_prior(n, 9), epsilon=EPSILON)
    realized = minimax_realized_epsilon(kernel)
    small = 2_000 if quick else 10_000
    small_kernel = minimax_coefficients(_prior(small, 10), epsilon=EPSILON)
    K = small_kernel.dense()
    same = minimax_realized_epsilon(small_kernel) == realized_epsilon(K)
    mib = K.nbytes / 2**20
    row = Row("audit-1e6", f"realised ε of the minimax kernel, n = {n:,} (O(n), no matrix)")
    row.measures = [
        Measure(
            "minimax_realized_epsilon (kernel's arrays)",
            best_time(lambda: minimax_realized_epsilon(kernel)),
            f"realised ε = {realized!r} for ε = {EPSILON:g}",
            limit=1,
        ),
        Measure(
            "minimax_coefficients (building the kernel, for scale)",
            best_time(lambda: minimax_coefficients(_prior(n, 9), epsilon=EPSILON)),
        ),
        Measure(
            f"minimax_realized_epsilon, n = {small:,}",
            best_time(lambda: minimax_realized_epsilon(small_kernel)),
            f"equal to the dense audit: {'yes' if same else 'NO'}",
        ),
        Measure(
            f"dense realized_epsilon(K), n = {small:,} (K built beforehand, {mib:,.0f} MiB)",
            best_time(lambda: realized_epsilon(K)),
            ratio_of=f"minimax_realized_epsilon, n = {small:,}",
        ),
    ]
    return row


@register("sparse-1e6x1e5", _sparse_subject)
def row_sparse(quick: bool) -> Row:
    from ldpsample.divergences import kl_divergence, tv_distance
    from ldpsample.minimax import apply_minimax, minimax_coefficients
    from ldpsample.minimax_sparse import (
        inverse_cdf_sorted,
        minimax_divergences_sparse,
        sample_minimax_sparse,
    )

    users, n = _sparse_sizes(quick)
    start = time.perf_counter()
    data = _sparse_users(quick)
    generated = time.perf_counter() - start
    nnz = data[1].size
    results = _sparse_release(quick, data)
    worst = "worst case over users (subcategory, ε: TV, KL; realised ε): " + "; ".join(
        f"s{r['subcategory']} ({r['users']:,} users), {r['epsilon']:g}: {r['tv']:.4f}, "
        f"{r['kl']:.3f}; {r['realized']:.15g}"
        for r in results
    )
    row = Row(
        "sparse-1e6x1e5",
        f"sparse catalogue: {users:,} users, {n:,} items, 1-50 items per user ({nnz:,} "
        f"non-zeros, Zipf(1.1) popularity), {len(_SPARSE_SUBCATEGORIES)} subcategories "
        "(pooled priors), ε = 1 and 4",
    )
    subject = "release + audit + TV and KL per subcategory and ε"
    row.measures.append(
        Measure(subject, best_time(lambda: _sparse_release(quick, data), 3), worst, limit=60)
    )
    # The parts, on the largest subcategory at ε = 1, and the dense path on a few of its users.
    csr, prior = next(_sparse_subcategories(quick, data))
    kernel = minimax_coefficients(prior, epsilon=1.0)
    count = csr[0].size - 1
    u = np.random.default_rng(8).random(count)
    label = f"sample_minimax_sparse, subcategory 0 ({count:,} users), ε = 1"
    row.measures.append(
        Measure(label, best_time(lambda: sample_minimax_sparse(kernel, *csr, uniforms=u), 3))
    )
    row.measures.append(
        Measure(
            f"minimax_divergences_sparse, subcategory 0 ({count:,} users), ε = 1",
            best_time(lambda: minimax_divergences_sparse(kernel, *csr), 3),
        )
    )
    few = 500
    dense = np.zeros((few, n))
    rows = np.repeat(np.arange(few), np.diff(csr[0][: few + 1]))
    dense[rows, csr[1][: csr[0][few]]] = csr[2][: csr[0][few]]
    dense /= dense.sum(axis=1, keepdims=True)

    def dense_path() -> None:
        released = apply_minimax(dense, kernel)
        inverse_cdf_sorted(released, kernel, uniforms=u[:few])
        tv_distance(dense, released)
        kl_divergence(dense, released)

    sparse_few = tuple(x[: csr[0][few]] for x in csr[1:])
    head = (csr[0][: few + 1], *sparse_few)
    same_draws = np.array_equal(
        sample_minimax_sparse(kernel, *head, uniforms=u[:few]),
        inverse_cdf_sorted(apply_minimax(dense, kernel), kernel, uniforms=u[:few]),
    )
    tv_sparse = minimax_divergences_sparse(kernel, *head)[0]
    tv_gap = float(np.abs(tv_sparse - tv_distance(dense, apply_minimax(dense, kernel))).max())
    row.measures.append(
        Measure(
            "dense path (apply_minimax, inverse CDF, TV, KL) on subcategory 0",
            best_time(dense_path, 3) * count / few,
            f"{few} users timed, extrapolated to {count:,}; on them the sparse draws are the "
            f"same: {'yes' if same_draws else 'NO'}, largest TV difference {tv_gap:.1e}",
            ratio_of=label,
        )
    )
    row.measures.append(
        Measure("generating the input (not part of the target)", generated, f"{nnz:,} non-zeros")
    )
    return row


@register("mollifier-1e5x100", _kl_subject)
def row_mollifier(quick: bool) -> Row:
    import cvxpy  # noqa: F401  (imported before timing: its import takes ~1 s)

    from ldpsample.mollifier import (
        mollifier_projection,
        relative_mollifier_kl,
        relative_mollifier_tv,
    )

    users, n = _mollifier_sizes(quick)
    q = _prior(n, 3)
    P = _users(users, n, 4, alpha=0.5)
    few = P[: 5 if quick else 20]
    row = Row("mollifier-1e5x100", f"relative mollifier, {users:,} users x n = {n}")
    for name, fn, divergence in (
        ("KL", relative_mollifier_kl, "kl"),
        ("TV", relative_mollifier_tv, "tv"),
    ):
        label = f"{name} closed form `{fn.__name__}`"
        row.measures.append(Measure(label, best_time(lambda fn=fn: fn(P, q, epsilon=EPSILON))))
        start = time.perf_counter()
        for p in few:
            mollifier_projection(p[None], q, epsilon=EPSILON, divergence=divergence)
        per_user = (time.perf_counter() - start) / len(few)
        row.measures.append(
            Measure(
                f"{name} cvxpy, one problem per user",
                per_user * users,
                f"{len(few)} users timed once, extrapolated",
                ratio_of=label,
            )
        )
        old = baseline("mollifier")
        if old is not None:
            old_fn = getattr(old, fn.__name__)
            row.measures.append(
                Measure(
                    f"before: {name} `{fn.__name__}` at {os.environ['RUN_ALL_BASELINE']}",
                    best_time(lambda f=old_fn: f(P, q, epsilon=EPSILON)),
                    ratio_of=label,
                )
            )
    return row


@register("avazu", _in_own_processes)
def row_avazu(quick: bool) -> Row:
    import shutil

    from bench_avazu import run

    from ldpsample.datasets.avazu import AVAZU_ATTRIBUTES

    rows = _avazu_rows(quick)
    row = Row(
        "avazu", f"Avazu-shaped log, {rows:,} rows (bench_avazu.py; each step its own process)"
    )
    work = Path(tempfile.mkdtemp(prefix="run_all_avazu_"))
    try:
        src, parquet = work / "train.gz", work / "train.parquet"
        t, peak, info = run("generate", src=str(src), rows=rows, seed=2025)
        row.measures.append(
            Measure(
                "generate train.gz (input, not timed in README)", t, f"{info}; peak {peak:,.0f} MiB"
            )
        )
        t, peak, info = run("convert", src=str(src), parquet=str(parquet))
        row.measures.append(Measure("CSV.gz -> parquet", t, f"{info}; peak {peak:,.0f} MiB"))
        total, worst = 0.0, 0.0
        for attribute in AVAZU_ATTRIBUTES:
            out = work / f"histograms-{attribute}.parquet"
            t, peak, _ = run("histograms", parquet=str(parquet), attribute=attribute, out=str(out))
            total += t
            worst = max(worst, peak)
        row.measures.append(
            Measure(
                f"{len(AVAZU_ATTRIBUTES)} attribute histograms", total, f"peak <= {worst:,.0f} MiB"
            )
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return row


@register("wpm-exact", _wpm_subject)
def row_wpm(quick: bool) -> Row:
    from ldpsample.wasserstein import wasserstein_projection

    row = Row("wpm-exact", "exact WPM (POT network simplex), per input, Dirichlet(0.5) inputs")
    for n, inputs in _wpm_sizes(quick):
        P, C, mu = _wpm_inputs(n, inputs)
        wasserstein_projection(P[:1], C, mu, epsilon=EPSILON, solver="pot")  # warm-up
        seconds = best_time(
            lambda P=P, C=C, mu=mu: wasserstein_projection(P, C, mu, epsilon=EPSILON, solver="pot"),
            2,
        )
        row.measures.append(
            Measure(f"n = m = {n}, per input", seconds / inputs, f"batch of {inputs}, best of 2")
        )
    return row


def _avazu_stage_rows(quick: bool) -> int:
    return 100_000 if quick else int(os.environ.get("RUN_ALL_AVAZU_STAGE_ROWS", 40_428_967))


def _timed_run(
    cmd: list[str],
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    *,
    stderr: int | None = subprocess.STDOUT,
):
    """Run ``cmd`` in ``cwd``; return (seconds, peak MiB of its largest process, output). The
    peak is ``ru_maxrss`` from ``wait4``: the largest of the process and the descendants it
    waited for, each measured by the kernel. The output is stdout, with stderr unless
    ``stderr=None`` (then it goes to this process's stderr)."""
    with tempfile.TemporaryFile("w+") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=stderr)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        out.seek(0)
        text = out.read()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed in {cwd}:\n{text[-4000:]}")
    return seconds, usage.ru_maxrss / 1024, text


def _benchmark_peaks(workdir: Path, prefix: str, skip: tuple[str, ...] = ()) -> str:
    """Each rule's largest job (rules named ``prefix*`` but not in ``skip``), from the run's
    ``logs/benchmarks/<rule>/...tsv`` files: Snakemake samples each job's memory, so a job of
    less than a second may show a few MB."""
    peaks: dict[str, float] = {}
    for path in sorted((workdir / "logs" / "benchmarks").glob(f"{prefix}*/**/*.tsv")):
        rule = path.relative_to(workdir / "logs" / "benchmarks").parts[0]
        if rule in skip:
            continue
        header, values = path.read_text().splitlines()[:2]
        max_rss = float(dict(zip(header.split("\t"), values.split("\t"), strict=True))["max_rss"])
        peaks[rule] = max(peaks.get(rule, 0.0), max_rss)
    return ", ".join(f"{rule} {mib:,.0f}" for rule, mib in sorted(peaks.items()))


@register("avazu-stage", _in_own_processes)
def row_avazu_stage(quick: bool) -> Row:
    import shutil

    import yaml

    rows = _avazu_stage_rows(quick)
    row = Row(
        "avazu-stage",
        f"Avazu stage through Snakemake, generated log of {rows:,} rows, parquet present, "
        "`--cores 2`",
    )
    from bench_scale import copy_project

    work = Path(tempfile.mkdtemp(prefix="run_all_avazu_stage_"))
    try:
        copy_project(work)
        off = ("synthetic", "theory", "movielens", "wpm_ring", "wpm_movielens", "wpm_gowalla")
        overlay = {
            "experiments": {**{name: False for name in off}, "avazu": True},
            "avazu": {"source": "synthetic", "synthetic": {"rows": rows}},
        }
        (work / "config" / "run_all.yaml").write_text(yaml.safe_dump(overlay))
        snakemake = [sys.executable, "-m", "snakemake", "--configfile", "config/run_all.yaml"]
        prepare = [*snakemake, "--cores", "2", "--until", "avazu_convert"]
        seconds, peak, _ = _timed_run(prepare, work)
        row.measures.append(
            Measure(
                "generate and convert the log (input, not the target)",
                seconds,
                f"peak {peak:,.0f} MiB",
            )
        )
        seconds, peak, _ = _timed_run([*snakemake, "--cores", "2"], work)
        row.measures.append(
            Measure(
                "the stage (9 histogram, 9 metrics, aggregate, release, figure jobs)",
                seconds,
                f"largest process {peak:,.0f} MiB (target < 2 GB per job); largest "
                f"job by rule (Snakemake's benchmark files, MB): "
                f"{_benchmark_peaks(work, 'avazu_', skip=('avazu_generate', 'avazu_convert'))}",
                limit=60,
            )
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return row


def _scale_rows(size: str, quick: bool) -> int:
    rows = {"1e7": 10_000_000, "1e8": 100_000_000, "4e8": 400_000_000}[size]
    return rows // 100 if quick else rows


def _scale_note(run) -> str:
    """A bench_scale run's layout, phases, rates and each rule's largest job."""
    largest = ", ".join(f"{rule} {mb:,.0f}" for rule, mb in sorted(run.job_peaks_mb.items()))
    jobs = sum(run.jobs.values())
    return (
        f"{run.files} files, {run.buckets} buckets, {jobs} jobs; histogram phase "
        f"{run.histogram_seconds:,.1f} s ({run.rows_per_second / 1e6:.2f} M rows/s, largest "
        f"process {run.histogram_peak_mib:,.0f} MiB), metrics and tables {run.rest_seconds:,.1f} s "
        f"(largest process {run.rest_peak_mib:,.0f} MiB); largest job by rule (MB): {largest}"
    )


def _scale_row(size: str, quick: bool) -> Row:
    """The generated events table of issue 22 (bench_scale.py), partitioned, through Snakemake
    on 2 cores with ``buckets: auto``; beside a larger size, the 10^7-row table again in the
    same process, for the ratio to linear time."""
    import bench_scale

    rows = _scale_rows(size, quick)
    row = Row(
        f"events-scale-{size}",
        f"events stage through Snakemake, generated table of {rows:,} rows (N/50 users, 10^4 "
        "items, 20 subcategories; zstd parquet files), `buckets: auto`, `--cores 2`",
    )
    start = time.perf_counter()
    bench_scale.generate(rows)
    generated = time.perf_counter() - start
    run = bench_scale.run(rows)
    subject = "the events stage (histograms, metrics at ε 1 and 4, tables)"
    largest = max(run.histogram_peak_mib, run.rest_peak_mib)
    row.measures.append(
        Measure(
            subject,
            run.seconds,
            f"{_scale_note(run)}; largest process {largest:,.0f} MiB (target < 4 GiB per job)",
        )
    )
    row.measures.append(
        Measure(
            "its histogram phase (split, buckets, merges, bucket histograms, priors)",
            run.histogram_seconds,
            f"{run.rows_per_second / 1e6:.2f} M rows/s (target >= 0.9 M rows/s on 2 cores)",
            limit=rows / 0.9e6,
        )
    )
    if size != "1e7":
        base_rows = _scale_rows("1e7", quick)
        bench_scale.generate(base_rows)
        base = bench_scale.run(base_rows)
        factor = rows // base_rows
        row.measures.append(
            Measure(
                f"{factor} x the {base_rows:,}-row table's stage (linear time)",
                factor * base.seconds,
                f"that run: {base.seconds:,.1f} s; {_scale_note(base)}",
                ratio_of=subject,
                slowdown=True,
                target=1.2,
            )
        )
    row.measures.append(
        Measure("generating the table (input, not timed above)", generated, "once per size")
    )
    return row


@register("events-scale-1e7", _in_own_processes)
def row_events_scale_1e7(quick: bool) -> Row:
    return _scale_row("1e7", quick)


@register("events-scale-1e8", _in_own_processes)
def row_events_scale_1e8(quick: bool) -> Row:
    return _scale_row("1e8", quick)


@register("events-scale-4e8", _in_own_processes)
def row_events_scale_4e8(quick: bool) -> Row:
    return _scale_row("4e8", quick)


def _metrics_threads_input(quick: bool):
    """One bucket's histograms of the generated table (its first of 8 buckets at 10^8 rows:
    about 12.5 million rows, as a bucket of ``buckets: auto``), built once."""
    import bench_scale
    import polars as pl

    rows = _scale_rows("1e8", quick)
    path = bench_scale.DATA / f"metrics_bucket_{rows}.parquet"
    if not path.exists():
        from ldpsample.events.buckets import histograms_in_buckets

        folder = bench_scale.generate(rows)
        options = {
            "key": "events.scale",
            **{k: v for k, v in bench_scale.events_entry(str(folder)).items() if k in _HIST},
            "min_user_count": 0,
            "min_users": 1,
        }
        work = Path(tempfile.mkdtemp(prefix="run_all_metrics_"))
        try:
            got = histograms_in_buckets(folder, buckets=8, workdir=work, options=options)
            hist = pl.read_parquet(got.histograms[0])
            got.priors.write_parquet(path.with_suffix(".priors.parquet"))
            hist.write_parquet(path)
        finally:
            import shutil

            shutil.rmtree(work, ignore_errors=True)
    return pl.read_parquet(path), pl.read_parquet(path.with_suffix(".priors.parquet"))


_HIST = ("user", "item", "attributes", "top_items")


def _metrics_threads_subject(quick: bool) -> object:
    from ldpsample.events import evaluate_attribute

    hist, priors = _metrics_threads_input(quick)
    return evaluate_attribute(hist, priors, threads=2, **_METRICS)


_METRICS = dict(
    name="scale",
    attribute="category",
    prior="given",
    epsilons=[1, 4],
    methods=["minimax", "mollifier_tv"],
)


@register("events-metrics-threads", _metrics_threads_subject)
def row_events_metrics_threads(quick: bool) -> Row:
    from ldpsample.events import evaluate_attribute

    hist, priors = _metrics_threads_input(quick)
    users = hist.select("subcategory", "user").unique().height
    row = Row(
        "events-metrics-threads",
        f"evaluate_attribute on one bucket of the generated 10^8-row table: {hist.height:,} "
        f"histogram rows, {users:,} (subcategory, user) pairs, 20 subcategories x 100 items; ε 1 "
        "and 4, minimax and mollifier_tv",
    )
    two = evaluate_attribute(hist, priors, threads=2, **_METRICS)
    one = evaluate_attribute(hist, priors, threads=1, **_METRICS)
    same = two.per_user.equals(one.per_user) and two.audit.equals(one.audit)
    row.measures = [
        Measure(
            "threads=2 (users in chunks on 2 threads)",
            best_time(lambda: evaluate_attribute(hist, priors, threads=2, **_METRICS), 3),
            f"best of 3; results equal to threads=1: {'yes' if same else 'NO'}",
        ),
        Measure(
            "threads=1",
            best_time(lambda: evaluate_attribute(hist, priors, threads=1, **_METRICS), 3),
            "best of 3",
            ratio_of="threads=2 (users in chunks on 2 threads)",
            target=1.7,
        ),
    ]
    return row


def _sparse_evaluation_input(quick: bool):
    """The sparse-catalogue row's users (``_sparse_users``) as events histograms: one
    attribute, 4 subcategories, text ids."""
    import polars as pl

    indptr, indices, counts, bounds = _sparse_users(quick)
    users = indptr.size - 1
    user_index = np.repeat(np.arange(users), np.diff(indptr))
    subcategory = np.searchsorted(bounds, user_index, side="right") - 1
    return pl.DataFrame(
        {
            "attribute": "a",
            "subcategory": pl.Series(subcategory).cast(pl.String),
            "user": pl.Series(user_index).cast(pl.String).str.zfill(7),
            "item": pl.Series(indices).cast(pl.String).str.zfill(6),
            "count": counts,
        }
    )


def _sparse_evaluation(hist) -> object:
    from ldpsample.events import evaluate_attribute

    return evaluate_attribute(
        hist,
        None,
        name="sparse",
        attribute="a",
        prior="pooled",
        epsilons=list(_SPARSE_EPSILONS),
        methods=["minimax"],
        threads=2,
    )


def _sparse_evaluation_subject(quick: bool) -> object:
    return _sparse_evaluation(_sparse_evaluation_input(quick))


@register("events-sparse-1e6x1e5", _sparse_evaluation_subject)
def row_events_sparse(quick: bool) -> Row:
    users, n = _sparse_sizes(quick)
    start = time.perf_counter()
    hist = _sparse_evaluation_input(quick)
    generated = time.perf_counter() - start
    result = _sparse_evaluation(hist)
    tv, kl = result.per_user["tv_minimax"].max(), result.per_user["kl_minimax"].max()
    row = Row(
        "events-sparse-1e6x1e5",
        f"the evaluation of a sparse catalogue (evaluate_attribute, as a metrics job): {users:,} "
        f"users, {n:,} items, {hist.height:,} histogram rows (sparse-1e6x1e5's users), 4 "
        "subcategories, pooled prior, minimax TV and KL per user, ε 1 and 4, 2 threads",
    )
    row.measures = [
        Measure(
            "evaluate_attribute (sparse: no users x items matrix)",
            best_time(lambda: _sparse_evaluation(hist), 3),
            f"best of 3; {result.audit.height} kernels audited; largest TV {tv:.4f}, KL {kl:.3f}",
            limit=60,
        ),
        Measure("building the histograms (input, not timed above)", generated),
    ]
    return row


@register("test-command", _in_own_processes)
def row_test_command(quick: bool) -> Row:
    import re
    import shutil

    row = Row("test-command", "README's test command on a fresh clone (`CI=true bash .ci/run`)")
    folder = HERE.parent.parent / f".run_all_clone_{os.getpid()}"
    try:
        subprocess.run(
            ["git", "clone", "--quiet", str(HERE.parent), str(folder)],
            check=True,
            capture_output=True,
        )
        env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
        seconds, peak, output = _timed_run(["bash", ".ci/run"], folder, {**env, "CI": "true"})
        pytest_line = re.findall(r"(\d+ passed.*? in [\d.]+s[^=]*)", output)
        row.measures.append(
            Measure(
                "venv, pip install -e '.[test]', pytest (3 workers)",
                seconds,
                f"pytest: {pytest_line[-1].strip() if pytest_line else '?'}; largest process "
                f"{peak:,.0f} MiB",
                limit=300,
            )
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return row


# --------------------------------------------------------------------------------------------
# Processes, machine, report
# --------------------------------------------------------------------------------------------


def _child(name: str, quick: bool, memory: bool) -> None:
    spec = ROWS[name]
    if memory:
        spec.subject(quick)
        print(json.dumps({"ok": True}))
    else:
        print(json.dumps(asdict(spec.measure(quick))))


def _spawn(name: str, quick: bool, memory: bool) -> tuple[dict, float]:
    """Run one child; return its JSON output and its own peak RSS in MiB (from ``wait4``)."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", name]
    if quick:
        cmd.append("--quick")
    if memory:
        cmd.append("--memory")
    cmd += ["--repeats", str(REPEATS)]
    _, peak, text = _timed_run(cmd, stderr=None)  # the row's progress stays on the terminal
    return json.loads(text.strip().splitlines()[-1]), peak


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram = "?"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                ram = f"{int(line.split()[1]) / 2**20:.1f} GiB"
                break
    except OSError:
        pass
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"{os.cpu_count()} CPUs (nproc), {cpu}, {ram} RAM; Python {platform.python_version()}, "
        f"numpy {np.__version__}; load average at start {load}"
    )


def _ratio(row: dict, m: dict) -> tuple[str, str]:
    if m.get("limit") is not None:
        return "", f"< {m['limit']:g} s {'yes' if m['seconds'] < m['limit'] else 'NO'}"
    if not m["ratio_of"]:
        return "", ""
    base = next(x for x in row["measures"] if x["label"] == m["ratio_of"])
    if m["slowdown"]:
        value = base["seconds"] / m["seconds"]
        text = f"{value:,.2f}x its time"
        met = "" if m["target"] is None else ("yes" if value <= m["target"] else "NO")
        target = "" if m["target"] is None else f"<= {m['target']:g}x"
    else:
        value = m["seconds"] / base["seconds"]
        text = f"{value:,.1f}x faster"
        met = "" if m["target"] is None else ("yes" if value >= m["target"] else "NO")
        target = "" if m["target"] is None else f">= {m['target']:g}x"
    return text, f"{target} {met}".strip()


def report(
    results: list[tuple[dict, float, float]],
    quick: bool,
    elapsed: float,
    started: str,
    host: str,
) -> str:
    """The markdown table; ``started`` and ``host`` (:func:`machine`) are taken when the run
    starts (the load average before the rows, not after them)."""
    lines = [
        "# Benchmarks (benchmarks/run_all.py)",
        "",
        f"Date: {started}. Machine: {host}. Best of {REPEATS} repeats unless noted; "
        f"{'QUICK sizes (smoke test, not the targets)' if quick else 'full sizes'}; "
        f"total {elapsed:,.0f} s.",
        "",
        "Ratios compare the row's subject (first line of the row) with the line's method, "
        "timed in the same process. Peak MiB: `ru_maxrss` of a fresh process that runs the "
        "subject alone once (interpreter and imports included), then of the process that "
        "timed the whole row.",
        "",
        "| row | method | time (s) | ratio vs subject | target | note | peak MiB (subject / row) |",
        "|---|---|---:|---|---|---|---:|",
    ]
    for row, peak_subject, peak_row in results:
        for i, m in enumerate(row["measures"]):
            ratio, target = _ratio(row, m)
            peak = f"{peak_subject:,.0f} / {peak_row:,.0f}" if i == 0 else ""
            title = f"**{row['name']}**: {row['title']}" if i == 0 else ""
            lines.append(
                f"| {title} | {m['label']} | {m['seconds']:,.4f} | {ratio} | {target} | "
                f"{m['note']} | {peak} |"
            )
    return "\n".join(lines) + "\n"


def write_table(path: Path, table: str) -> None:
    """Put ``table`` between :data:`BEGIN` and :data:`END` in ``path``, keeping the text before
    and after them; a file without them (or no file) becomes the table alone. Written to a
    temporary file beside ``path``, then renamed over it."""
    block = f"{BEGIN}\n{table}{END}\n"
    old = path.read_text() if path.exists() else ""
    if BEGIN in old and END in old:
        head, rest = old.split(BEGIN, 1)
        text = head + block + rest.split(END, 1)[1].removeprefix("\n")
    else:
        text = block
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(text)
    partial.replace(path)


def main(argv: list[str] | None = None) -> None:
    global REPEATS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    parser.add_argument("--only", nargs="+", choices=sorted(ROWS), help="rows to run")
    parser.add_argument("--repeats", type=int, default=REPEATS, help="best of this many")
    parser.add_argument("--output", type=Path, default=HERE / "results.md")
    parser.add_argument("--avazu-rows", type=int, default=1_000_000)
    parser.add_argument(
        "--avazu-stage-rows",
        type=int,
        default=40_428_967,
        help="rows of the generated log of the avazu-stage row (default: the official size)",
    )
    parser.add_argument(
        "--baseline",
        metavar="GIT_REV",
        help="also time the library's minimax.py / mollifier/ as of this revision ('before')",
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--memory", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    REPEATS = args.repeats
    os.environ["RUN_ALL_AVAZU_ROWS"] = str(args.avazu_rows)
    os.environ["RUN_ALL_AVAZU_STAGE_ROWS"] = str(args.avazu_stage_rows)
    if args.baseline:
        os.environ["RUN_ALL_BASELINE"] = args.baseline
    if args.child:
        _child(args.child, args.quick, args.memory)
        return
    names = args.only or [n for n in ROWS if not (args.quick and n in NOT_QUICK)]
    if args.quick and not args.only:
        left_out = ", ".join(NOT_QUICK)
        print(f"[run_all] --quick leaves out {left_out} (no small size)", file=sys.stderr)
    started = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    host = machine()
    start = time.perf_counter()
    results = []
    for name in names:
        print(f"[run_all] {name} ...", file=sys.stderr, flush=True)
        row, peak_row = _spawn(name, args.quick, memory=False)
        _, peak_subject = _spawn(name, args.quick, memory=True)
        results.append((row, peak_subject, peak_row))
        for m in row["measures"]:
            ratio, target = _ratio(row, m)
            print(f"  {m['label']}: {m['seconds']:.4f} s {ratio} {target}", file=sys.stderr)
    text = report(results, args.quick, time.perf_counter() - start, started, host)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    write_table(args.output, text)
    print(text)
    print(f"written to {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
