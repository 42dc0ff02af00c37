"""The tables an events experiment publishes, from the per-attribute parts: worst cases over
users, win summaries, the kernel audit and each user's privacy cost (sequential composition)."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from ldpsample.events.metrics import AUDIT_SCHEMA, METHODS
from ldpsample.events.release import EPSILON_TOLERANCE, PrivacyAuditError
from ldpsample.experiments.real_data import WIN_SUMMARY_SCHEMA, win_summary
from ldpsample.experiments.real_data_tables import max_over_users

__all__ = [
    "AUDIT_USERS_SCHEMA",
    "SUMMARY_SCHEMA",
    "audit_users",
    "check_audit",
    "max_table",
    "summary",
]

SUMMARY_SCHEMA: dict[str, pl.DataType] = {"divergence": pl.String(), **WIN_SUMMARY_SCHEMA}
AUDIT_USERS_SCHEMA: dict[str, pl.DataType] = {
    "user": pl.String(),
    "epsilon": pl.Float64(),
    "releases": pl.Int64(),
    "total_epsilon": pl.Float64(),
}


def _methods(per_user: pl.DataFrame, divergence: str) -> list[str]:
    prefix = f"{divergence}_"
    return [c[len(prefix) :] for c in per_user.columns if c.startswith(prefix)]


def max_table(per_user: pl.DataFrame, divergence: str) -> pl.DataFrame:
    """``epsilon, attribute, subcategory, method, max_<divergence>, n_users``: the worst case
    over each subcategory's users, per ε and method."""
    methods = _methods(per_user, divergence)
    frame = per_user.select(
        "epsilon",
        "attribute",
        "subcategory",
        *[pl.col(f"{divergence}_{m}").alias(m) for m in methods],
    )
    return max_over_users(
        frame, keys=["attribute", "subcategory"], methods=methods, value=f"max_{divergence}"
    )


def summary(max_tv: pl.DataFrame, max_kl: pl.DataFrame) -> pl.DataFrame:
    """Win shares and mean improvements per divergence over the (ε, attribute, subcategory)
    cases (:func:`ldpsample.experiments.real_data.win_summary`); a divergence with fewer than
    two methods has no row."""
    frames = []
    for divergence, frame in (("tv", max_tv), ("kl", max_kl)):
        methods = [m for m in METHODS if m in set(frame["method"])]
        if len(methods) < 2 or frame.height == 0:
            continue
        result = win_summary(
            frame,
            value=f"max_{divergence}",
            methods=methods,
            case_columns=["epsilon", "attribute", "subcategory"],
        )
        frames.append(result.select(pl.lit(divergence).alias("divergence"), pl.all()))
    pooled = _pooled(max_tv, max_kl)
    if pooled is not None:
        frames.append(pooled)
    if not frames:
        return pl.DataFrame(schema=SUMMARY_SCHEMA)
    return pl.concat(frames).cast(SUMMARY_SCHEMA)


#: Method names of the pooled ``tv+kl`` summary (a mollifier is scored with its own divergence).
_POOLED = {"minimax": "minimax", "mollifier_tv": "mollifier", "mollifier_kl": "mollifier"}


def _pooled(max_tv: pl.DataFrame, max_kl: pl.DataFrame) -> pl.DataFrame | None:
    """The ``tv+kl`` row set: a case is one (divergence, ε, attribute, subcategory), minimax
    against the mollifier of that divergence (the MovieLens summary); None unless both
    divergences have minimax and their mollifier."""
    frames = []
    for divergence, frame, mollifier in (
        ("tv", max_tv, "mollifier_tv"),
        ("kl", max_kl, "mollifier_kl"),
    ):
        if not {"minimax", mollifier} <= set(frame["method"]):
            return None
        frames.append(
            frame.filter(pl.col("method").is_in(["minimax", mollifier])).select(
                pl.lit(divergence).alias("divergence"),
                "epsilon",
                "attribute",
                "subcategory",
                pl.col("method").replace_strict(_POOLED),
                pl.col(f"max_{divergence}").alias("value"),
            )
        )
    result = win_summary(
        pl.concat(frames),
        value="value",
        methods=("minimax", "mollifier"),
        case_columns=["divergence", "epsilon", "attribute", "subcategory"],
    )
    return result.select(pl.lit("tv+kl").alias("divergence"), pl.all())


def check_audit(audit: pl.DataFrame) -> None:
    """Raise :class:`PrivacyAuditError` if any realised ε exceeds its ε beyond rounding."""
    bad = audit.filter(
        ~(
            pl.col("realized_epsilon")
            <= pl.col("epsilon")
            + EPSILON_TOLERANCE * pl.max_horizontal(pl.lit(1.0), pl.col("epsilon"))
        )
    )
    if bad.height:
        row = bad.row(0, named=True)
        raise PrivacyAuditError(
            f"privacy audit FAILED: {bad.height} kernels exceed their epsilon, first "
            f"{row['attribute']}={row['subcategory']!r} {row['kernel']} at epsilon "
            f"{row['epsilon']!r}: realised {row['realized_epsilon']!r}"
        )


def audit_users(per_user: pl.DataFrame) -> pl.DataFrame:
    """Per user and ε setting: how many items the user releases (one per kept subcategory of
    every attribute) and their total ε under sequential composition (releases × ε)."""
    if per_user.height == 0:
        return pl.DataFrame(schema=AUDIT_USERS_SCHEMA)
    return (
        per_user.group_by("user", "epsilon")
        .agg(pl.len().cast(pl.Int64).alias("releases"))
        .with_columns((pl.col("releases") * pl.col("epsilon")).alias("total_epsilon"))
        .select(list(AUDIT_USERS_SCHEMA))
        .cast(AUDIT_USERS_SCHEMA)
        .sort("epsilon", "user")
    )


def empty_audit() -> pl.DataFrame:
    return pl.DataFrame(schema=AUDIT_SCHEMA)


def concat(frames: Sequence[pl.DataFrame]) -> pl.DataFrame:
    frames = list(frames)
    return pl.concat(frames, how="vertical") if frames else pl.DataFrame()
