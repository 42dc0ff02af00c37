"""WPM MovieLens-100K: Hit Rate@1 of each method at params.epsilon (None: the non-private
reference alone).

ldpsample.experiments.wpm_movielens. The split and the user subsets come from the same seed in
every job (the seed does not depend on ε), so all ε share one split and one set of users.
"""

from typing import TYPE_CHECKING

import numpy as np

from ldpsample.experiments.movielens.data import read_ml100k
from ldpsample.experiments.wpm_movielens import movielens_hit_rates, prepare_movielens
from ldpsample.pipeline.io import write_parquet
from ldpsample.pipeline.scripting import start

if TYPE_CHECKING:
    from snakemake.script import snakemake

log = start(snakemake)
params = snakemake.params
split_seed, users_seed = np.random.SeedSequence(params.seed).spawn(2)
data = read_ml100k(params.files)
setup = prepare_movielens(
    data["ratings"],
    data["movie_genres"],
    rng=np.random.default_rng(split_seed),
    n_components=params.n_components,
    n_outputs=params.n_outputs,
    train_fraction=params.train_fraction,
    validation_fraction=params.validation_fraction,
    like_threshold=params.like_threshold,
)
log.info(
    "setup: %d input movies, %d output movies, %d validation and %d test users",
    *setup.cost.shape,
    setup.validation_P.shape[0],
    setup.test_P.shape[0],
)
validation, test = movielens_hit_rates(
    setup,
    epsilons=[] if params.epsilon is None else [params.epsilon],
    rng=np.random.default_rng(users_seed),
    methods=params.methods,
    n_scales=params.n_scales,
    wpm_method=params.wpm_method,
    eta=params.eta,
    max_validation_users=params.max_validation_users,
    max_test_users=params.max_test_users,
    include_nonprivate=params.include_nonprivate,
    progress=True,
    base_measure=params.base_measure,
)
write_parquet(validation, snakemake.output.validation)
write_parquet(test, snakemake.output.test)
log.info("test hit rates:\n%s", test)
