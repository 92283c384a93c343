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


def answer_continuous(session, target, queries, gamma=3.0, seed=0):
    """`queries` gamma-CKL answers about `target` to a continuous session's queries."""
    import tripletsearch as ts

    oracle = ts.GammaCKL(gamma)
    rng = np.random.default_rng(seed)
    for _ in range(queries):
        a, b = session.ask()
        p = oracle.prob(np.vstack([target, a, b]), [[0, 1, 2]])[0]
        session.tell(bool(rng.random() < p))
