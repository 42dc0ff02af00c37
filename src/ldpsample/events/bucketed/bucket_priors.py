"""The reduce step of one attribute's buckets (:func:`attribute_priors`): its subcategories
table (``min_users`` counting the users of every bucket) and the prior ``q`` of every kept
subcategory on its items, pooled, uniform, the ``user_mean`` fold over the buckets in user
order, a public table's or a release spec's.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from ldpsample.events.bucketed.partials import _options
from ldpsample.events.counting.data_priors import UserMeanFold, csr_rows, normalised
from ldpsample.events.counting.public_priors import public_prior_masses, public_priors, spec_priors
from ldpsample.events.counting.subcategories import subcategory_table
from ldpsample.events.reading.prepared import domain_frame
from ldpsample.events.schemas import PRIOR_SCHEMA

__all__ = ["attribute_priors"]

PathLike = str | os.PathLike[str]


def attribute_priors(
    name: str,
    *,
    rows: pl.DataFrame,
    users: Sequence[pl.DataFrame],
    items: Sequence[pl.DataFrame],
    histograms: Sequence[PathLike],
    checks: Mapping[str, Any],
    prior: str | Mapping[str, Any],
    options: Mapping[str, Any],
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The reduce step of one attribute's buckets: its subcategories table and the prior ``q``
    of every kept subcategory on its items.

    Parameters
    ----------
    rows
        :data:`~ldpsample.events.schemas.ROWS_SCHEMA` rows of the table
        (:func:`~ldpsample.events.bucketed.merge.merge_partials`).
    users, items
        Every bucket's kept users and items per subcategory
        (:func:`~ldpsample.events.bucketed.bucket_histograms.bucket_histograms`).
    histograms
        Every bucket's histograms, in bucket order (read for ``prior="user_mean"`` only).
    checks
        The merged checks (:func:`~ldpsample.events.bucketed.merge.merge_partials`), for the reason
        of an empty attribute.
    prior
        ``pooled``, ``user_mean``, ``uniform``, a public table (``{path, user, item, count,
        attributes}``, this attribute's column only) or ``"spec"`` (``options["domain"]``).

    Returns
    -------
    (subcategories, priors)
        :data:`~ldpsample.events.schemas.SUBCATEGORY_SCHEMA` rows (``min_users`` counts the
        users of every bucket) and :data:`~ldpsample.events.schemas.PRIOR_SCHEMA` rows of
        every kept subcategory, sorted by subcategory and item: the items kept users hold (a
        release spec's whole domain) and ``q`` on them, as the one-job metrics compute it.
    """
    opts = _options(options)
    key = opts.key
    domain = options.get("domain")
    if domain is not None:
        domain = domain_frame(domain)
    mine = pl.col("attribute") == name
    sub_rows = rows.filter(mine).select("subcategory", "rows")
    user_counts = pl.concat(list(users)).filter(mine)
    item_sets = pl.concat(list(items)).filter(mine)
    per_sub = (
        user_counts.group_by("subcategory")
        .agg(pl.col("kept_users").sum())
        .join(
            item_sets.group_by("subcategory").agg(
                pl.col("item").n_unique().cast(pl.Int64).alias("items")
            ),
            on="subcategory",
            how="left",
        )
    )
    table, kept = subcategory_table(
        name,
        sub_rows,
        per_sub,
        key=key,
        domain=domain,
        min_users=opts.min_users,
        min_user_count=opts.min_user_count,
        checks=checks,
    )
    kept_items = item_sets.join(kept, on="subcategory", how="semi")
    if domain is not None:
        return table, spec_priors(name, domain, kept).sort("subcategory", "item")
    if isinstance(prior, Mapping):
        listed = opts.items
        (masses,) = pl.collect_all(
            public_prior_masses(
                prior,
                key=key,
                attributes=[name] if opts.attributes else [],
                items=[str(i) for i in listed] if listed is not None else None,
            )
        )
        pairs = kept_items.select("subcategory", "item").unique()
        q = public_priors(name, masses, kept, pairs, prior=prior, key=key)
        return table, q.sort("subcategory", "item")
    # Data-derived priors: each kept subcategory's items sorted (the one-job matrix columns).
    pooled = (
        kept_items.group_by("subcategory", "item")
        .agg(pl.col("mass").sum())
        .sort("subcategory", "item")
    )
    subs = pooled.partition_by("subcategory", as_dict=True, maintain_order=True)
    values: dict[str, np.ndarray] = {}
    if prior == "pooled":
        for (sub,), frame in subs.items():
            values[sub] = normalised(frame["mass"].to_numpy())
    elif prior == "uniform":
        for (sub,), frame in subs.items():
            values[sub] = normalised(np.ones(frame.height))
    elif prior == "user_mean":
        positions = {
            sub: pl.DataFrame({"item": frame["item"], "_j": np.arange(frame.height)})
            for (sub,), frame in subs.items()
        }
        folds = {sub: UserMeanFold(frame.height) for (sub,), frame in subs.items()}
        for path in histograms:  # bucket by bucket: users in sorted order
            hist = (
                pl.scan_parquet(str(path))
                .filter(mine & pl.col("subcategory").is_in(list(folds)))
                .collect()
            )
            for (sub,), part in hist.partition_by(
                "subcategory", as_dict=True, maintain_order=True
            ).items():
                index = part.join(positions[sub], on="item", how="left", maintain_order="left")
                users_index = (part["user"].rank("dense") - 1).to_numpy().astype(np.intp)
                indptr, indices, data = csr_rows(
                    users_index,
                    index["_j"].to_numpy().astype(np.intp),
                    part["count"].to_numpy().astype(float),
                    int(users_index.max()) + 1,
                )
                folds[sub].add(indptr, indices, data)
        values = {sub: fold.q() for sub, fold in folds.items()}
    else:
        raise ValueError(f"prior must be pooled, user_mean, uniform, a table or a spec: {prior!r}")
    frames = [
        pl.DataFrame(
            {
                "attribute": pl.repeat(name, frame.height, dtype=pl.String, eager=True),
                "subcategory": frame["subcategory"],
                "item": frame["item"],
                "q": values[sub],
            }
        )
        for (sub,), frame in subs.items()
    ]
    priors = pl.concat(frames).cast(PRIOR_SCHEMA) if frames else pl.DataFrame(schema=PRIOR_SCHEMA)
    return table, priors.sort("subcategory", "item")
