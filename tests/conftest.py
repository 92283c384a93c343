import numpy as np
import pytest

import tripletsearch as ts
from tripletsearch import _reference as ref

# (public class, reference class, constructor kwargs) for every model
MODELS = [
    pytest.param(ts.GammaCKL, ref.GammaCKL, {"gamma": 3.0}, id="gammackl-3"),
    pytest.param(ts.CKL, ref.CKL, {"mu": 0.05}, id="ckl-0.05"),
    pytest.param(ts.CKL, ref.CKL, {"mu": 0.0}, id="ckl-0"),
    pytest.param(ts.TSTE, ref.TSTE, {}, id="tste-auto"),
    pytest.param(ts.TSTE, ref.TSTE, {"alpha": 1.0}, id="tste-1"),
    pytest.param(ts.STE, ref.STE, {}, id="ste"),
    pytest.param(ts.Probit, ref.Probit, {"sigma": 0.3}, id="probit-0.3"),
]


def random_problem(n, d, m, seed, scale=1.0, degenerate=True):
    """Random embedding and triplets; with `degenerate`, a few rows repeat items."""
    rng = np.random.default_rng(seed)
    X = scale * rng.normal(size=(n, d))
    T = rng.integers(0, n, size=(m, 3))
    if degenerate and m >= 10 and n >= 2:
        T[0, 1] = T[0, 0]  # t == i
        T[1, 2] = T[1, 0]  # t == j
        T[2, 2] = T[2, 1]  # i == j
    return X, T


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


def pytest_collection_modifyitems(config, items):
    """The tests marked ``long`` first (their order kept, and the others'): spread over
    several workers (``-n``), no long test starts last and leaves the others idle."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)
