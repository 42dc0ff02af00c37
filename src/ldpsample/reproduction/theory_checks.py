"""Checks of the AISTATS paper's theorem, lemma, corollary, proposition and bound on this run's
priors, each against a computation that does not use the formula it checks.

Which priors: the theory stage's (``q_min`` priors on ``theory.n`` items and the uniform one,
rebuilt from ``results/theory/risk.csv`` with
:func:`ldpsample.experiments.theory.prior_with_minimum`),
Example 1's two priors (config ``theory.example_1``) and, when the MovieLens stage ran, every
variant's public prior per age group (``results/movielens/<variant>/work/priors.parquet``) at
the stage's ε. The tests run the same checks on random instances (hypothesis) and on
deliberately wrong inputs, which must fail.

* :func:`theorem1_lp` -- the run's ``Γ`` against the LP optimum over all ε-LDP kernels with
  ``qK = q`` (:mod:`ldpsample.reproduction.kernel_lp`, HiGHS).
* :func:`lemma1_worst_case` -- the vertex formula ``max_i [K_ii f(1/K_ii) + (1 - K_ii) f(0)]``
  against ``D_f(δ_i || K_i)`` evaluated row by row and against sampled ``p`` (Dirichlet, seeded
  from the config) and the run's users, none of which may exceed it.
* :func:`corollary2_randomized_response` -- the kernel for a uniform prior against
  randomized response written out here, and the run's uniform-prior ``Γ`` against its diagonal.
* :func:`proposition1_binary` -- the kernel for two items against Proposition 1's matrix, and
  the run's Example 1 numbers recomputed from that matrix.
* :func:`tv_bound` -- ``TV(p, pK) <= 2 TV(p, q)`` for every user of every run that records one
  (its worst user reported).
* :func:`lemma3_diagonal` -- ``K_ii <= e^ε q_i / (e^ε q_i + 1 - q_i)``: the bound against the
  LP maximum of ``K_ii`` over all ε-LDP kernels with ``qK = q``, and the run's kernels under it.
* :func:`theorem2_kernel` -- Theorem 2 / Propositions 3-4: the kernel of every run prior is
  ε-LDP, keeps ``q``, and its diagonal is ordered like ``q`` with its smallest entry
  ``e^ε q_min / (e^ε q_min + 1 - q_min)``.
* :func:`example1_tv`, :func:`example1_gamma` -- Example 1's printed numbers, read as
  truncated (the paper's digits are cut, not rounded: :func:`~.outcome.truncates_to`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np
import polars as pl

from ldpsample.audit import worst_case_divergence
from ldpsample.divergences import f_divergence
from ldpsample.experiments.synthetic import draw_priors
from ldpsample.experiments.theory import prior_with_minimum
from ldpsample.minimax import minimax_kernel
from ldpsample.reproduction.kernel_lp import max_diagonal_lp, minimax_kernel_lp
from ldpsample.reproduction.outcome import Missing, Outcome, truncates_to
from ldpsample.reproduction.run_files import (
    avazu_user_tv_to_prior,
    movielens_priors,
    movielens_user_tv_to_prior,
    read_result,
)

__all__ = [
    "corollary2_randomized_response",
    "example1_gamma",
    "example1_tv",
    "lemma1_worst_case",
    "lemma3_diagonal",
    "proposition1_binary",
    "run_priors",
    "theorem1_lp",
    "theorem2_kernel",
    "tv_bound",
]

#: A prior of the run: (label, q, the ε it was used at).
Prior = tuple[str, np.ndarray, list[float]]
KernelFn = Callable[..., np.ndarray]

#: Agreement required between two computations of the same closed-form quantity.
EXACT = 1e-12
#: Agreement required between the LP optimum and a closed form (the optimum is accepted with
#: constraint violations up to kernel_lp.LP_TOLERANCE = 1e-9; in practice it agrees to ~1e-15).
LP_TOLERANCE = 1e-8


def _enabled(ctx: Mapping[str, object], experiment: str) -> bool:
    return bool(dict(ctx.get("enabled") or {}).get(experiment, False))


def _example(ctx: Mapping[str, object]) -> tuple[np.ndarray, np.ndarray, float]:
    ex = dict(ctx.get("example_1") or {})
    if not ex:
        raise Missing("the context has no example_1 (config theory.example_1)")
    return np.asarray(ex["q"], float), np.asarray(ex["p"], float), float(ex["epsilon"])


def _theory_priors(results: Path, ctx: Mapping[str, object]) -> tuple[list[Prior], pl.DataFrame]:
    risk = read_result(results, "theory/risk.csv")
    n = int(ctx.get("theory_n") or 0)
    if n < 2:
        raise Missing("the context has no theory_n (config theory.n)")
    priors = []
    for (label, q_min), rows in risk.group_by("prior", "q_min", maintain_order=True):
        q = np.full(n, 1.0 / n) if label == "uniform" else prior_with_minimum(q_min, n=n)
        priors.append((f"theory {label}", q, sorted(set(rows["epsilon"].to_list()))))
    return priors, risk


def _example_priors(ctx: Mapping[str, object]) -> list[Prior]:
    q, _, eps = _example(ctx)
    return [
        ("Example 1 public q", q / q.sum(), [eps]),
        ("Example 1 uniform", np.full(q.size, 1.0 / q.size), [eps]),
    ]


def _movielens_priors(results: Path, ctx: Mapping[str, object]) -> list[Prior]:
    if not _enabled(ctx, "movielens_any"):
        return []
    priors = []
    for variant, kind in dict(ctx.get("movielens_priors") or {}).items():
        table = movielens_priors(results, variant, kind)
        eps = sorted(
            set(read_result(results, f"movielens/{variant}/max_tv.csv")["epsilon"].to_list())
        )
        for (group,), rows in table.sort("subcategory", "item").group_by(
            "subcategory", maintain_order=True
        ):
            priors.append((f"{variant} {group}", rows["q"].to_numpy(), eps))
    return priors


def run_priors(results: Path, ctx: Mapping[str, object]) -> list[Prior]:
    """Every prior of this run the theory checks use (see the module docstring)."""
    return _theory_priors(results, ctx)[0] + _example_priors(ctx) + _movielens_priors(results, ctx)


def _gamma_tv(q: np.ndarray, eps: float) -> float:
    """Theorem 1's ``Γ_TV = (1 - q_min) / (e^ε q_min + 1 - q_min)``, written with ``e^-ε``."""
    q_min = float(q.min() / q.sum())
    t = math.exp(-eps)
    return (1 - q_min) * t / (q_min + (1 - q_min) * t) if q_min > 0 else 1.0


def _relative_error(a: float, b: float) -> float:
    """``|a - b| / max(1, |b|)``; 0 for two equal infinities, inf for one."""
    if math.isinf(a) or math.isinf(b):
        return 0.0 if a == b else math.inf
    return abs(a - b) / max(1.0, abs(b))


#: The LP is solved for ε up to this: its constraints carry e^ε, and HiGHS's default
#: tolerances stop solving it reliably between ε = 20 and 30 (e^30 ≈ 1e13); values above are
#: counted as not checked (the theory stage itself accepts ε up to 700).
LP_MAX_EPSILON = 20.0


def theorem1_lp(
    results: Path, ctx: Mapping[str, object], *, lp: Callable[..., object] = minimax_kernel_lp
) -> Outcome:
    """The run's ``Γ_TV``/``Γ_KL`` against the LP optimum (``t*``: ``Γ_TV = 1 - t*``,
    ``Γ_KL = -log t*``): every ``theory/risk.csv`` value, Example 1's ``gamma_tv``, and
    Theorem 1's ``Γ_TV`` of each MovieLens public prior at the stage's ε."""
    priors, risk = _theory_priors(results, ctx)
    worst_tv = worst_kl = 0.0
    compared = skipped = 0
    values = {
        (label, eps, div): value
        for label, eps, div, value in risk.select(
            pl.concat_str(pl.lit("theory "), "prior"), "epsilon", "divergence", "risk"
        ).iter_rows()
    }
    for label, q, eps_list in priors:
        for eps in eps_list:
            if eps > LP_MAX_EPSILON:
                skipped += 1
                continue
            opt = lp(q, epsilon=eps)
            for div, exact in (("tv", opt.gamma_tv), ("kl", opt.gamma_kl)):
                if (label, eps, div) not in values:
                    continue
                run = values[label, eps, div]
                compared += 1
                if div == "tv":
                    worst_tv = max(worst_tv, abs(run - exact))
                else:
                    worst_kl = max(worst_kl, _relative_error(run, exact))
    example = read_result(results, "theory/example_1.csv")
    gamma = dict(zip(example["prior"], example["gamma_tv"], strict=True))
    for (_, q, (eps,)), key in zip(_example_priors(ctx), ("public q", "uniform"), strict=True):
        if eps > LP_MAX_EPSILON:
            skipped += 1
            continue
        worst_tv = max(worst_tv, abs(gamma[key] - lp(q, epsilon=eps).gamma_tv))
        compared += 1
    movielens = _movielens_priors(results, ctx)
    for _, q, eps_list in movielens:
        for eps in eps_list:
            if eps > LP_MAX_EPSILON:
                skipped += 1
                continue
            worst_tv = max(worst_tv, abs(_gamma_tv(q, eps) - lp(q, epsilon=eps).gamma_tv))
            compared += 1
    where = f"theory {len(priors)} priors, Example 1's 2"
    if movielens:
        where += f", MovieLens {len(movielens)} public priors × their ε"
    if skipped:
        where += f"; {skipped} (prior, ε) with ε > {LP_MAX_EPSILON:g} not checked by the LP"
    ok = worst_tv <= LP_TOLERANCE and worst_kl <= LP_TOLERANCE
    return Outcome(
        f"max |Γ − LP optimum| = {worst_tv:.1e} (TV), {worst_kl:.1e} relative (KL) over "
        f"{compared} values ({where})",
        ok,
        "the run's Γ is not the optimum over all ε-LDP kernels with qK = q "
        "(docs/reproduction.md#theorem-1-against-a-linear-program)",
    )


def _samples(n: int, rng: np.random.Generator, count: int) -> np.ndarray:
    """Sampled ``p``: near the vertices (Dirichlet 0.1), spread (Dirichlet 1), and uniform."""
    return np.vstack(
        [
            rng.dirichlet(np.full(n, 0.1), size=count),
            rng.dirichlet(np.ones(n), size=count),
            np.full((1, n), 1.0 / n),
        ]
    )


def _movielens_users(results: Path, ctx: Mapping[str, object]) -> dict[str, np.ndarray]:
    """Each MovieLens variant's users' ``p`` per age group, as dense rows (items sorted)."""
    users: dict[str, np.ndarray] = {}
    if not _enabled(ctx, "movielens_any"):
        return users
    for variant, kind in dict(ctx.get("movielens_priors") or {}).items():
        hist = read_result(results, f"movielens/{variant}/work/histograms.parquet")
        items = sorted(movielens_priors(results, variant, kind)["item"].unique())
        wide = hist.pivot(on="item", index=["subcategory", "user"], values="count").fill_null(0)
        for col in items:
            if col not in wide.columns:
                wide = wide.with_columns(pl.lit(0.0).alias(col))
        for (group,), rows in wide.group_by("subcategory"):
            counts = rows.select(items).to_numpy().astype(float)
            users[f"{variant} {group}"] = counts / counts.sum(axis=1, keepdims=True)
    return users


def lemma1_worst_case(
    results: Path,
    ctx: Mapping[str, object],
    *,
    worst_case: Callable[[np.ndarray, str], float] = worst_case_divergence,
    kernel: KernelFn = minimax_kernel,
    samples: int = 100,
) -> Outcome:
    """Lemma 1 on the run's kernels: ``worst_case(K, f)`` (the library's vertex formula) must
    equal ``max_i D_f(δ_i || K_i)`` computed row by row with :func:`f_divergence`, and no
    sampled ``p`` nor any of the run's MovieLens users may have a larger ``D_f(p || pK)``
    (TV and KL; ``samples`` Dirichlet draws of each kind, seeded with the config's seed)."""
    rng = np.random.default_rng([int(ctx.get("seed") or 0), 1])
    users = _movielens_users(results, ctx)
    formula_error = excess = 0.0
    kernels = drawn = 0
    for label, q, eps_list in run_priors(results, ctx):
        P = np.vstack([_samples(q.size, rng, samples), users.get(label, np.empty((0, q.size)))])
        eye = np.eye(q.size)
        for eps in eps_list:
            K = kernel(q, epsilon=eps)
            kernels += 1
            drawn += P.shape[0]
            released = P @ K
            for div in ("tv", "kl"):
                claimed = worst_case(K, div)
                direct = float(np.max(f_divergence(eye, K, div)))
                formula_error = max(formula_error, _relative_error(claimed, direct))
                sup = float(np.max(f_divergence(P, released, div)))
                excess = max(excess, sup - claimed)
    ok = formula_error <= EXACT and excess <= EXACT
    return Outcome(
        f"vertex formula vs max_i D_f(δ_i‖K_i): {formula_error:.1e} relative; largest "
        f"D_f(p‖pK) − formula over {drawn} sampled p and run users: {excess:.1e} "
        f"({kernels} kernels, TV and KL)",
        ok,
        "the worst case over p is not the vertex formula on this run's kernels "
        "(docs/reproduction.md#lemmas-corollary-and-proposition)",
    )


def _randomized_response(n: int, eps: float) -> np.ndarray:
    """``(e^ε I + J - I) / (e^ε + n - 1)``, written with ``e^-ε``."""
    t = math.exp(-eps)
    K = np.full((n, n), t / (1 + (n - 1) * t))
    np.fill_diagonal(K, 1 / (1 + (n - 1) * t))
    return K


def corollary2_randomized_response(
    results: Path, ctx: Mapping[str, object], *, kernel: KernelFn = minimax_kernel
) -> Outcome:
    """Corollary 2: the kernel for a uniform prior on ``n`` items is randomized response, so
    its ``Γ_TV = (n - 1)/(e^ε + n - 1)`` and ``Γ_KL = log((e^ε + n - 1)/e^ε)``. Checked for the
    uniform priors of the run (theory, Example 1, MovieLens' genre count) at their ε, and
    against the run's uniform-prior rows of ``theory/risk.csv`` and ``example_1.csv``."""
    priors, risk = _theory_priors(results, ctx)
    sizes: dict[int, set[float]] = {}
    for _, q, eps_list in priors + _example_priors(ctx) + _movielens_priors(results, ctx):
        sizes.setdefault(q.size, set()).update(eps_list)
    kernel_error = 0.0
    for n, eps_set in sizes.items():
        for eps in eps_set:
            K = kernel(np.full(n, 1.0 / n), epsilon=eps)
            kernel_error = max(kernel_error, float(np.abs(K - _randomized_response(n, eps)).max()))
    n = int(ctx["theory_n"])
    risk_error = 0.0
    uniform = risk.filter(pl.col("prior") == "uniform")
    for eps, div, value in uniform.select("epsilon", "divergence", "risk").iter_rows():
        diagonal = _randomized_response(n, eps)[0, 0]
        expected = {"tv": 1 - diagonal, "kl": -math.log(diagonal)}.get(div)
        if expected is not None:
            risk_error = max(risk_error, abs(value - expected) / max(1.0, abs(expected)))
    example = read_result(results, "theory/example_1.csv").filter(pl.col("prior") == "uniform")
    q, _, eps = _example(ctx)
    if example.height:
        risk_error = max(
            risk_error,
            abs(example["gamma_tv"][0] - (1 - _randomized_response(q.size, eps)[0, 0])),
        )
    ok = kernel_error <= EXACT and risk_error <= EXACT
    shown = ", ".join(f"n={k}: {len(v)} ε" for k, v in sorted(sizes.items()))
    return Outcome(
        f"max |K_(uniform) − RR| = {kernel_error:.1e} ({shown}); run's uniform-prior Γ vs "
        f"RR's diagonal {risk_error:.1e}",
        ok,
        "the kernel for a uniform prior is not randomized response "
        "(docs/reproduction.md#lemmas-corollary-and-proposition)",
    )


def _proposition1(alpha: float, eps: float) -> np.ndarray:
    """Proposition 1's matrix for ``q = (α, 1 - α)``, ``α <= 1/2``, divided through by
    ``e^ε`` (``t = e^-ε``): ``[[α, (1-α) t], [α t, α (1-t) + (1-α) t]] / (α + (1-α) t)``."""
    t = math.exp(-eps)
    d = alpha + (1 - alpha) * t
    return np.array(
        [[alpha / d, (1 - alpha) * t / d], [alpha * t / d, (alpha * (1 - t) + (1 - alpha) * t) / d]]
    )


def proposition1_binary(
    results: Path, ctx: Mapping[str, object], *, kernel: KernelFn = minimax_kernel
) -> Outcome:
    """Proposition 1: for two items the kernel is the closed-form matrix above. Checked for
    Example 1's priors at its ε and for ``(q_min, 1 - q_min)`` of every theory ``q_min`` at the
    risk grid's ε; the run's ``example_1.csv`` (``gamma_tv`` and ``TV(p, pK)``) is recomputed
    from Proposition 1's matrix."""
    priors, _ = _theory_priors(results, ctx)
    binary = [
        (np.array([q.min(), 1 - q.min()]), eps_list)
        for label, q, eps_list in priors
        if label != "theory uniform"
    ] + [(q, eps) for _, q, eps in _example_priors(ctx)]
    kernel_error = 0.0
    count = 0
    for q, eps_list in binary:
        low = int(np.argmin(q))
        order = [low, 1 - low]
        for eps in eps_list:
            expected = _proposition1(float(q[low]), eps)[np.ix_(order, order)]
            kernel_error = max(kernel_error, float(np.abs(kernel(q, epsilon=eps) - expected).max()))
            count += 1
    example = read_result(results, "theory/example_1.csv")
    _, p, eps = _example(ctx)
    run_error = 0.0
    for label, prior, _ in _example_priors(ctx):
        key = "public q" if label.endswith("public q") else "uniform"
        row = example.filter(pl.col("prior") == key)
        low = int(np.argmin(prior))
        K = _proposition1(float(prior[low]), eps)[np.ix_([low, 1 - low], [low, 1 - low])]
        tv = 0.5 * float(np.abs(p / p.sum() - (p / p.sum()) @ K).sum())
        run_error = max(
            run_error,
            abs(row["tv_of_p"][0] - tv),
            abs(row["gamma_tv"][0] - (1 - float(np.diagonal(K).min()))),
        )
    ok = kernel_error <= EXACT and run_error <= EXACT
    return Outcome(
        f"max |K − Proposition 1's matrix| = {kernel_error:.1e} over {count} (prior, ε); "
        f"example_1.csv vs the matrix {run_error:.1e}",
        ok,
        "the two-item kernel is not Proposition 1's matrix "
        "(docs/reproduction.md#lemmas-corollary-and-proposition)",
    )


def _ratio_summary(tv: np.ndarray, tv_prior: np.ndarray) -> tuple[float, float, int]:
    """``(largest TV(p,pK) - 2 TV(p,q), largest TV(p,pK) / (2 TV(p,q)), users)``."""
    if tv.size == 0:
        return -math.inf, 0.0, 0
    bound = 2 * tv_prior
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(bound > 0, tv / bound, np.where(tv > EXACT, math.inf, 0.0))
    return float(np.max(tv - bound)), float(np.max(ratio)), int(tv.size)


def tv_bound(results: Path, ctx: Mapping[str, object]) -> Outcome:
    """``TV(p, pK) <= 2 TV(p, q)`` (any kernel with ``qK = q``) for every ``p`` of every run
    that records ``TV(p, pK)`` of the minimax sampler: Example 1, the synthetic runs (priors
    redrawn from the config's seed), every MovieLens user and every Avazu device; ``TV(p, q)``
    is computed here from the run's histograms and priors."""
    parts: list[tuple[str, float, float, int]] = []
    if _enabled(ctx, "theory"):
        q, p, _ = _example(ctx)
        table = read_result(results, "theory/example_1.csv")
        tv_prior = {
            "public q": 0.5 * float(np.abs(p / p.sum() - q / q.sum()).sum()),
            "uniform": 0.5 * float(np.abs(p / p.sum() - 1.0 / q.size).sum()),
        }
        parts.append(
            (
                "Example 1",
                *_ratio_summary(
                    table["tv_of_p"].to_numpy(), np.array([tv_prior[k] for k in table["prior"]])
                ),
            )
        )
    if _enabled(ctx, "synthetic"):
        values = read_result(results, "synthetic/values.parquet").filter(
            (pl.col("method") == "minimax") & (pl.col("divergence") == "tv")
        )
        tv_all, prior_all = [], []
        for (n,), rows in values.group_by("n"):
            q = draw_priors(n=n, runs=int(rows["run"].max()) + 1, seed=int(ctx.get("seed") or 0))
            qr = q[rows["run"].to_numpy()]
            p1 = rows["p1"].to_numpy()
            rest = (1 - p1) / (n - 1)
            prior_tv = 0.5 * (np.abs(p1 - qr[:, 0]) + np.abs(rest[:, None] - qr[:, 1:]).sum(1))
            tv_all.append(rows["value"].to_numpy())
            prior_all.append(prior_tv)
        parts.append(
            ("synthetic", *_ratio_summary(np.concatenate(tv_all), np.concatenate(prior_all)))
        )
    if _enabled(ctx, "movielens_any"):
        for variant, kind in dict(ctx.get("movielens_priors") or {}).items():
            users = movielens_user_tv_to_prior(results, variant, kind)
            parts.append(
                (
                    f"MovieLens {variant}",
                    *_ratio_summary(users["tv"].to_numpy(), users["tv_to_prior"].to_numpy()),
                )
            )
    if _enabled(ctx, "avazu_any"):
        attributes = list(ctx.get("avazu_attributes") or [])
        for folder in ctx.get("avazu_folders") or []:
            users = avazu_user_tv_to_prior(results, folder, attributes, str(ctx["avazu_prior"]))
            if users.height:
                parts.append(
                    (
                        f"Avazu {folder}",
                        *_ratio_summary(users["tv"].to_numpy(), users["tv_to_prior"].to_numpy()),
                    )
                )
    if not parts:
        raise Missing("no stage of this run records TV(p, pK) of the minimax sampler")
    worst = max(part[1] for part in parts)
    shown = "; ".join(f"{name} {ratio:.3f} ({count} p)" for name, _, ratio, count in parts)
    return Outcome(
        f"largest TV(p, pK) / 2 TV(p, q): {shown}",
        worst <= EXACT,
        "a user's TV(p, pK) exceeds 2 TV(p, q) (docs/reproduction.md#the-bound-tvp-pk--2tvp-q)",
    )


def example1_tv(results: Path, ctx: Mapping[str, object]) -> Outcome:
    """The printed "Γ_TV ≈ 0.03" / "≈ 0.1" against ``TV(p, pK)`` for Example 1's ``p``: each
    must truncate to the printed digits (0.03: [0.03, 0.04); 0.1: [0.1, 0.2))."""
    df = read_result(results, "theory/example_1.csv")
    tv = dict(zip(df["prior"], df["tv_of_p"], strict=True))
    public, uniform = truncates_to(tv["public q"], "0.03"), truncates_to(tv["uniform"], "0.1")
    reasons = []
    if not public:
        reasons.append(
            f"TV(p, pK) = {tv['public q']:.4f} with the public prior does not truncate to "
            "the printed 0.03"
        )
    if not uniform:
        reasons.append(
            f"TV(p, pK) = {tv['uniform']:.4f} with the uniform prior does not truncate to 0.1"
        )
    return Outcome(
        f"TV(p, pK) = {tv['public q']:.4f} (public q) / {tv['uniform']:.4f} (uniform)",
        public and uniform,
        "; ".join(reasons) + "; the text also calls these Γ_TV, which they are not "
        "(example1_gamma; docs/minimax.md#example-1-of-the-paper-a-discrepancy)",
    )


def example1_gamma(results: Path, ctx: Mapping[str, object]) -> Outcome:
    """The printed 0.03 / 0.1 against Theorem 1's ``Γ_TV`` of Example 1's priors, which the
    text names (the run's ``gamma_tv``), under the same truncation rule."""
    df = read_result(results, "theory/example_1.csv")
    g = dict(zip(df["prior"], df["gamma_tv"], strict=True))
    ok = truncates_to(g["public q"], "0.03") and truncates_to(g["uniform"], "0.1")
    return Outcome(
        f"Γ_TV = {g['public q']:.4f} / {g['uniform']:.4f}",
        ok,
        "erratum: the paper's 0.03 / 0.1 are TV(p, pK) for this p, not Theorem 1's Γ_TV "
        "(docs/minimax.md#example-1-of-the-paper-a-discrepancy)",
    )


def _lemma3_bound(q: np.ndarray, eps: float) -> np.ndarray:
    """Lemma 3's ``e^ε q_i / (e^ε q_i + 1 - q_i)``, written with ``e^-ε``."""
    t = math.exp(-eps)
    return q / (q + (1 - q) * t)


def _distinct_items(q: np.ndarray) -> list[int]:
    """One item per distinct prior mass (items of equal mass have the same LP maximum)."""
    _, first = np.unique(np.round(q, 15), return_index=True)
    return sorted(int(i) for i in first)


#: The Lemma 3 linear programs run at this many ε per prior (evenly spread over the prior's
#: sorted ε list, its ends included); the kernels are checked at every ε.
LEMMA3_LP_EPSILONS = 12


def lemma3_diagonal(
    results: Path, ctx: Mapping[str, object], *, kernel: KernelFn = minimax_kernel
) -> Outcome:
    """Lemma 3: every ε-LDP kernel with ``qK = q`` has ``K_ii <= e^ε q_i / (e^ε q_i + 1 - q_i)``.

    For every prior of the run at up to :data:`LEMMA3_LP_EPSILONS` of its ε (up to
    :data:`LP_MAX_EPSILON`) and one item per distinct mass, the largest ``K_ii`` over all such
    kernels (a linear program, :func:`~ldpsample.reproduction.kernel_lp.max_diagonal_lp`) must
    not exceed the bound and
    must reach it at ``q_min`` (eq. 23, the bound Theorem 1 rests on, is tight); the run's
    kernel (``kernel``) stays under the bound at every item.
    """
    lp_excess, tight_gap, kernel_excess, solved = -math.inf, 0.0, -math.inf, 0
    for _, q, eps_list in run_priors(results, ctx):
        q = q / q.sum()
        picks = np.linspace(0, len(eps_list) - 1, min(len(eps_list), LEMMA3_LP_EPSILONS))
        lp_grid = {eps_list[int(k)] for k in np.round(picks)}
        for eps in eps_list:
            bound = _lemma3_bound(q, eps)
            K = kernel(q, epsilon=eps)
            kernel_excess = max(kernel_excess, float((np.diagonal(K) - bound).max()))
            if eps > LP_MAX_EPSILON or eps not in lp_grid:
                continue
            smallest = int(np.argmin(q))
            for i in _distinct_items(q):
                best = max_diagonal_lp(q, epsilon=eps, item=i)
                lp_excess = max(lp_excess, best - bound[i])
                if q[i] == q[smallest]:
                    tight_gap = max(tight_gap, abs(best - bound[i]))
                solved += 1
    ok = lp_excess <= LP_TOLERANCE and tight_gap <= LP_TOLERANCE and kernel_excess <= EXACT
    return Outcome(
        f"LP max K_ii − bound ≤ {lp_excess:.1e} over {solved} (prior, ε, item), "
        f"|gap| at q_min {tight_gap:.1e}; run's K_ii − bound ≤ {kernel_excess:.1e}",
        ok,
        "an ε-LDP kernel with qK = q has a diagonal entry above Lemma 3's bound, the bound is "
        "not reached at q_min, or the run's kernel exceeds it "
        "(docs/reproduction.md#lemmas-corollary-and-proposition)",
    )


def theorem2_kernel(
    results: Path, ctx: Mapping[str, object], *, kernel: KernelFn = minimax_kernel
) -> Outcome:
    """Theorem 2 / Propositions 3-4 on the kernel of every prior of the run at its ε: rows sum
    to 1, ``qK = q``, every column's largest over smallest entry ``<= e^ε`` (ε-LDP), the diagonal
    ordered like ``q`` (eq. 20's ``K_11 <= ... <= K_nn`` for increasingly sorted ``q``) and its
    smallest entry ``e^ε q_min / (e^ε q_min + 1 - q_min)``."""
    worst = {"rows": 0.0, "invariance": 0.0, "ldp": -math.inf, "order": 0.0, "minimum": 0.0}
    count = 0
    for _, q, eps_list in run_priors(results, ctx):
        q = q / q.sum()
        order = np.argsort(q, kind="stable")
        for eps in eps_list:
            K = kernel(q, epsilon=eps)
            count += 1
            worst["rows"] = max(worst["rows"], float(np.abs(K.sum(axis=1) - 1).max()))
            worst["invariance"] = max(worst["invariance"], float(np.abs(q @ K - q).max()))
            ratio = np.log(K.max(axis=0)) - np.log(K.min(axis=0))
            worst["ldp"] = max(worst["ldp"], float((ratio - eps).max()))
            diagonal = np.diagonal(K)[order]
            worst["order"] = max(worst["order"], float(np.maximum(-np.diff(diagonal), 0).max()))
            expected = _lemma3_bound(np.array([q.min()]), eps)[0]
            worst["minimum"] = max(worst["minimum"], abs(float(diagonal.min()) - expected))
    ok = (
        worst["rows"] <= EXACT
        and worst["invariance"] <= EXACT
        and worst["ldp"] <= EXACT
        and worst["order"] <= EXACT
        and worst["minimum"] <= EXACT
    )
    return Outcome(
        f"{count} (prior, ε): max |row sum − 1| {worst['rows']:.1e}, |qK − q| "
        f"{worst['invariance']:.1e}, log column ratio − ε ≤ {worst['ldp']:.1e}, diagonal out of "
        f"order by {worst['order']:.1e}, |min K_ii − e^ε q_min/(e^ε q_min + 1 − q_min)| "
        f"{worst['minimum']:.1e}",
        ok,
        "a run kernel is not ε-LDP, moves q, or its diagonal is not ordered with the stated "
        "minimum (docs/reproduction.md#lemmas-corollary-and-proposition)",
    )
