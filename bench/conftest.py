import numpy as np
import pytest


def make_problem(n, d, m, seed=0):
    """Gaussian embedding and uniformly random triplets (seeded with default_rng)."""
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)), rng.integers(0, n, size=(m, 3))


@pytest.fixture(scope="session")
def food_problem():
    """The Food data set's size: n = 100 items, d = 10, m = 190,376 triplets."""
    return make_problem(100, 10, 190_376, seed=1)
