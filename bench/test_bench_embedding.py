"""Embedding training: the Food-size task, a scale point, and cblearn as an optional peer.

Food-size task: n = 100 items, true X ~ N(0, I_10), 190,376 random triplets answered by
gamma-CKL with gamma = 10, 80/20 split. Target: held-out accuracy >= 0.822 (Bayes ~0.828)
in at most 0.3 s on 2 threads. Held-out accuracies are recorded in extra_info.

    python -m pytest bench/test_bench_embedding.py --benchmark-group-by=group
"""

import warnings

import numpy as np
import pytest

import tripletsearch as ts
from tripletsearch._testing import ReferenceEmbedding
from tripletsearch.embedding import valid_rows


def make_task(n, d, m, gamma=10.0, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    Q = rng.integers(0, n, size=(m, 3))
    Q = Q[valid_rows(Q)]
    T = ts.GammaCKL(gamma).sample(X, Q, random_state=rng)
    perm = rng.permutation(len(T))
    cut = int(0.8 * len(T))
    train, test = T[perm[:cut]], T[perm[cut:]]
    bayes = float(np.mean(ts.GammaCKL(gamma).prob(X, test) > 0.5))
    return train, test, bayes


@pytest.fixture(scope="module")
def food():
    return make_task(100, 10, 190_376, seed=11)


@pytest.fixture(scope="module")
def large():
    return make_task(1000, 10, 10**6, seed=12)


def _record(benchmark, est, test, bayes):
    benchmark.extra_info["heldout_accuracy"] = round(float(est.score(test)), 4)
    benchmark.extra_info["bayes_accuracy"] = round(bayes, 4)
    benchmark.extra_info["epochs"] = int(est.n_epochs_)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_food_fit_native(benchmark, food, n_jobs):
    train, test, bayes = food
    benchmark.group = "fit food-size (n=100, d=10, 152k train triplets)"

    def fit():
        return ts.Embedding("gamma-ckl", dim=10, gamma=10, random_state=0, n_jobs=n_jobs).fit(train)

    est = benchmark(fit)
    _record(benchmark, est, test, bayes)
    assert est.score(test) >= 0.80


def test_food_fit_reference(benchmark, food):
    train, test, bayes = food
    benchmark.group = "fit food-size (n=100, d=10, 152k train triplets)"

    def fit():
        return ReferenceEmbedding("gamma-ckl", dim=10, gamma=10, random_state=0).fit(train)

    est = benchmark.pedantic(fit, rounds=1, iterations=1)
    _record(benchmark, est, test, bayes)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_large_fit_native(benchmark, large, n_jobs):
    train, test, bayes = large
    benchmark.group = "fit n=1000, d=10, 800k train triplets"

    def fit():
        return ts.Embedding("gamma-ckl", dim=10, gamma=10, random_state=0, n_jobs=n_jobs).fit(train)

    est = benchmark.pedantic(fit, rounds=3, iterations=1)
    _record(benchmark, est, test, bayes)


@pytest.mark.parametrize("model", ["SOE", "TSTE", "CKL"])
@pytest.mark.parametrize("task", ["food", "large"])
def test_cblearn_peer(benchmark, request, task, model):
    """cblearn 0.4 (scipy backend), when installed: pip install cblearn."""
    cbl = pytest.importorskip("cblearn.embedding")
    train, test, bayes = request.getfixturevalue(task)
    benchmark.group = (
        "fit food-size (n=100, d=10, 152k train triplets)"
        if task == "food"
        else "fit n=1000, d=10, 800k train triplets"
    )
    est = getattr(cbl, model)(n_components=10, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        benchmark.pedantic(est.fit, args=(train,), rounds=1, iterations=1)
    benchmark.extra_info["heldout_accuracy"] = round(float(est.score(test)), 4)
    benchmark.extra_info["bayes_accuracy"] = round(bayes, 4)
