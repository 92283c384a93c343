"""Database search: time per query (ask + tell), native vs NumPy twin, and search quality.

Targets: per query <= 100 us at n = 1000 and <= 10 ms at n = 10^6 (d = 10, 2 threads);
queries-to-find (items uniform in [-1, 1]^d, n = 1000, gamma-CKL user gamma = 3, pairs):
d = 2 median <= 12; d = 5 median <= 15 and mean <= 19 (recorded in extra_info).

    python -m pytest bench/test_bench_discrete.py --benchmark-group-by=group
"""

import numpy as np
import pytest

import tripletsearch as ts
from tripletsearch import _core
from tripletsearch._reference.discrete import DiscreteSearcher as RefSearcher
from tripletsearch.discrete import SELECTIONS

ROUNDS = 8  # ask + tell rounds per timed call


@pytest.fixture(scope="module")
def databases():
    cache = {}

    def get(n, d):
        if (n, d) not in cache:
            cache[(n, d)] = np.random.default_rng(n + d).uniform(-1, 1, size=(n, d))
        return cache[(n, d)]

    return get


def _rounds(searcher):
    for _ in range(ROUNDS):
        q = searcher.select()
        searcher.update(q, 0)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("selection", ["infogain", "weighted"])
@pytest.mark.parametrize("n,d", [(1000, 2), (1000, 5), (1000, 10), (100_000, 10), (1_000_000, 10)])
def test_query_native(benchmark, databases, n, d, selection, threads):
    X = databases(n, d)
    store = _core.ItemStore(X)
    benchmark.group = f"{ROUNDS} queries n={n} d={d}"
    benchmark.extra_info["per_query_us"] = None

    config = _core.SearchConfig(selection=getattr(_core.Selection, SELECTIONS[selection]))

    def setup():
        return (_core.DiscreteSearcher(store, config, 1, threads),), {}

    benchmark.pedantic(_rounds, setup=setup, rounds=5 if n >= 10**5 else 30, iterations=1)
    benchmark.extra_info["per_query_us"] = round(benchmark.stats.stats.min / ROUNDS * 1e6, 1)


@pytest.mark.parametrize("selection", ["infogain", "weighted"])
@pytest.mark.parametrize("n,d", [(1000, 10), (100_000, 10)])
def test_query_reference(benchmark, databases, n, d, selection):
    X = databases(n, d)
    benchmark.group = f"{ROUNDS} queries n={n} d={d}"

    def setup():
        return (RefSearcher(X, selection=selection, seed=1),), {}

    benchmark.pedantic(_rounds, setup=setup, rounds=3, iterations=1)
    benchmark.extra_info["per_query_us"] = round(benchmark.stats.stats.min / ROUNDS * 1e6, 1)


@pytest.mark.parametrize("method", ["gamma-ckl", "gauss"])
def test_session_python_overhead(benchmark, databases, method):
    """The public ask/tell API (validation and bookkeeping included), n = 1000, d = 10."""
    X = databases(1000, 10)
    benchmark.group = "public API: 8 ask+tell n=1000 d=10"

    def setup():
        return (ts.DiscreteSearch(X, method=method, random_state=0, n_jobs=2),), {}

    def run(s):
        for _ in range(ROUNDS):
            s.tell(int(s.ask()[0]))

    benchmark.pedantic(run, setup=setup, rounds=30, iterations=1)
    benchmark.extra_info["per_query_us"] = round(benchmark.stats.stats.min / ROUNDS * 1e6, 1)


@pytest.mark.parametrize("d", [2, 5])
@pytest.mark.parametrize(
    "method,selection",
    [("gamma-ckl", "infogain"), ("gamma-ckl", "weighted"), ("gauss", "weighted")],
)
def test_quality(benchmark, databases, d, method, selection):
    """500 simulated searches (timed once); medians and means in extra_info."""
    X = databases(1000, d)
    benchmark.group = f"quality: 500 searches n=1000 d={d}"
    res = benchmark.pedantic(
        ts.simulate_discrete,
        args=(X,),
        kwargs=dict(
            method=method, selection=selection, n_runs=500, random_state=7, max_queries=500
        ),
        rounds=1,
        iterations=1,
    )
    benchmark.extra_info.update(
        median=res.median,
        mean=round(res.mean, 2),
        stderr=round(res.stderr, 2),
        found=float(res.found.mean()),
    )


def test_simulation_reference_throughput(benchmark, databases):
    """The NumPy twin driving a whole search (for the native simulator's ratio)."""
    X = databases(1000, 5)
    benchmark.group = "quality: 500 searches n=1000 d=5"
    oracle = ts.GammaCKL(3.0)
    rng = np.random.default_rng(0)
    targets = rng.integers(0, 1000, size=20)

    def run():
        total = 0
        for t in targets:
            s = RefSearcher(X, selection="infogain", seed=1)
            for _ in range(200):
                q = s.select()
                total += 1
                if t in q:
                    break
                p = oracle.choice_prob(X, [t], [q])[0]
                s.update(q, int(rng.random() > p[0]))
        return total

    total = benchmark.pedantic(run, rounds=1, iterations=1)
    benchmark.extra_info["queries"] = total
    benchmark.extra_info["per_query_us"] = round(benchmark.stats.stats.min / total * 1e6, 1)


@pytest.mark.parametrize("method", ["gamma-ckl", "gauss"])
@pytest.mark.parametrize("d", [2, 8, 32, 64, 128, 256, 512, 1024])
def test_query_dimension(benchmark, d, method):
    """ask + tell at n = 3000 items across dimensions (2 threads): Jacobi eigenpairs up to
    d = 32, warm-started subspace iteration beyond (the target: well under 0.1 s at 512)."""
    X = np.random.default_rng(d).normal(size=(3000, d)) / np.sqrt(np.arange(1, d + 1))
    benchmark.group = f"ask+tell by dimension ({method}, n=3000)"

    def setup():
        s = ts.DiscreteSearch(X, method=method, random_state=0, n_jobs=2)
        s.tell(int(s.ask()[0]))  # past the first (cold) eigen-solve
        return (s,), {}

    def run(s):
        for _ in range(4):
            s.tell(int(s.ask()[0]))

    benchmark.pedantic(run, setup=setup, rounds=3, iterations=1)
    benchmark.extra_info["per_query_ms"] = round(benchmark.stats.stats.min / 4 * 1e3, 2)
