"""Oracle kernels, native (1 and 2 threads) vs the NumPy reference.

Run:  python -m pytest bench --benchmark-group-by=group --benchmark-columns=min,median,rounds
Compare within one run (ratios): these machines are noisy.
"""

import numpy as np
import pytest
from conftest import make_problem

import tripletsearch as ts
from tripletsearch import _reference as ref

BACKENDS = {
    "native-1t": (ts.GammaCKL(10.0), {"n_jobs": 1}),
    "native-2t": (ts.GammaCKL(10.0), {"n_jobs": 2}),
    "reference": (ref.GammaCKL(10.0), {}),
}


@pytest.mark.parametrize("backend", list(BACKENDS))
def test_food_grad(benchmark, food_problem, backend):
    """Target: native 1 thread >= 20x the NumPy reference; 2 threads >= 1.7x 1 thread."""
    X, T = food_problem
    oracle, kw = BACKENDS[backend]
    benchmark.group = "food gamma-CKL grad n=100 d=10 m=190376"
    G = benchmark(oracle.grad, X, T, **kw)
    assert G.shape == X.shape


@pytest.mark.parametrize("backend", list(BACKENDS))
@pytest.mark.parametrize("d", [2, 10, 90])
@pytest.mark.parametrize("m", [10**3, 10**5, 10**6])
@pytest.mark.parametrize("kernel", ["prob", "log_likelihood", "grad"])
def test_kernel(benchmark, kernel, m, d, backend):
    n = 1000
    X, T = make_problem(n, d, m, seed=2)
    oracle, kw = BACKENDS[backend]
    benchmark.group = f"{kernel} n={n} d={d} m={m:.0e}"
    if backend == "reference" and m * d > 10**7:
        benchmark.pedantic(getattr(oracle, kernel), args=(X, T), kwargs=kw, rounds=2, iterations=1)
    else:
        benchmark(getattr(oracle, kernel), X, T, **kw)


@pytest.mark.parametrize("backend", list(BACKENDS))
@pytest.mark.parametrize("model", ["ckl", "tste", "probit"])
def test_models_grad(benchmark, model, backend):
    X, T = make_problem(1000, 10, 10**5, seed=3)
    cls = {"ckl": "CKL", "tste": "TSTE", "probit": "Probit"}[model]
    args = {"ckl": (), "tste": (), "probit": (0.3,)}[model]
    oracle = getattr(ref if backend == "reference" else ts, cls)(*args)
    kw = BACKENDS[backend][1]
    benchmark.group = f"grad {model} n=1000 d=10 m=1e5"
    G = benchmark(oracle.grad, X, T, **kw)
    assert np.all(np.isfinite(G))
