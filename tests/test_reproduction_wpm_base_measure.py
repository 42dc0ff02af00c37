"""The WPM MovieLens base-measure option (docs/wpm-small-epsilon.md)."""

from __future__ import annotations

import numpy as np
import pytest
from _workflow import need_shared_data

from ldpsample.datasets.registry import locate_dataset_files
from ldpsample.experiments.movielens.data import read_ml100k
from ldpsample.experiments.wpm_movielens import (
    BASE_MEASURES,
    base_measure_shape,
    movielens_hit_rates,
    prepare_movielens,
)

pytestmark = pytest.mark.data  # reads ../shared/data's MovieLens 100K


@pytest.fixture(scope="module")
def setup():
    shared = need_shared_data("ml-100k/u.data")
    data = read_ml100k(locate_dataset_files(shared, "ml-100k"))
    return prepare_movielens(
        data["ratings"],
        data["movie_genres"],
        rng=np.random.default_rng(0),
        n_components=16,
        n_outputs=60,
    )


@pytest.mark.parametrize("name", BASE_MEASURES)
def test_shapes_are_distributions(setup, name):
    shape = base_measure_shape(setup, name, 0.5)
    assert shape.shape == (setup.cost.shape[1],)
    assert np.all(shape >= 0) and shape.sum() == pytest.approx(1.0)


def test_default_is_the_uniform_base_measure_bit_for_bit(setup):
    kwargs = dict(
        epsilons=[0.5],
        methods=["wpm", "kpm_genre"],
        n_scales=3,
        max_validation_users=20,
        max_test_users=20,
    )
    _, before = movielens_hit_rates(setup, rng=np.random.default_rng(1), **kwargs)
    _, uniform = movielens_hit_rates(
        setup, rng=np.random.default_rng(1), base_measure="uniform", **kwargs
    )
    assert before.equals(uniform)
    _, genre = movielens_hit_rates(
        setup, rng=np.random.default_rng(1), base_measure="kpm_genre", **kwargs
    )
    assert not genre.filter(genre["method"] == "wpm").equals(
        uniform.filter(uniform["method"] == "wpm")
    )
    with pytest.raises(ValueError, match="base_measure"):
        movielens_hit_rates(setup, rng=np.random.default_rng(1), base_measure="nope", **kwargs)
