"""Timed workloads for an A/B comparison of two builds (see ``bench/ab_compare.py``).

Each workload runs through the public API only, so the same file times an old and a new
build. Run one workload in the current interpreter::

    python bench/ab_workloads.py food_grad_1t

It prints ``name seconds`` (the minimum over a few repetitions).
"""

from __future__ import annotations

import sys
import time

import numpy as np

import tripletsearch as ts


def _min_time(fn, repeat=5, setup=None):
    best = float("inf")
    for _ in range(repeat):
        arg = setup() if setup is not None else None
        t0 = time.perf_counter()
        fn(arg) if setup is not None else fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _problem(n, d, m, seed):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)), rng.integers(0, n, size=(m, 3))


def _oracle_kernel(oracle, kernel, n, d, m, jobs, repeat=7):
    X, T = _problem(n, d, m, seed=2)
    f = getattr(oracle, kernel)
    f(X, T, n_jobs=jobs)
    return _min_time(lambda: f(X, T, n_jobs=jobs), repeat)


def _fit_per_epoch(jobs):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 10))
    Q = rng.integers(0, 100, size=(152_000, 3))
    T = ts.GammaCKL(10.0).sample(X, Q, random_state=1)
    best = float("inf")
    for _ in range(3):
        emb = ts.Embedding("gamma-ckl", 10, gamma=10.0, random_state=0, n_jobs=jobs)
        t0 = time.perf_counter()
        emb.fit(T, n_items=100)
        best = min(best, (time.perf_counter() - t0) / emb.n_epochs_)
    return best


def _discrete(n, d, jobs, pick=0, rounds=8, repeat=5, **kwargs):
    """Seconds per ask + tell of a DiscreteSearch(X, **kwargs), the user picking the
    `pick`-th item shown."""
    X = np.random.default_rng(n + d).uniform(-1, 1, size=(n, d))

    def setup():
        return ts.DiscreteSearch(X, random_state=1, n_jobs=jobs, **kwargs)

    def run(s):
        for _ in range(rounds):
            s.tell(int(s.ask()[pick]))

    return _min_time(run, repeat, setup) / rounds


def _observe(n, d, jobs, n_choices=2, rounds=8, repeat=3, **kwargs):
    """Seconds per answer to items shown elsewhere (DiscreteSearch.observe): one pass over
    the store with the posterior's update, no selection."""
    X = np.random.default_rng(n + d).uniform(-1, 1, size=(n, d))
    rng = np.random.default_rng(1)
    shown = [rng.choice(n, n_choices, replace=False) for _ in range(rounds)]

    def setup():
        return ts.DiscreteSearch(X, n_choices=n_choices, random_state=1, n_jobs=jobs, **kwargs)

    def run(s):
        for q in shown:
            s.observe(q, int(q[-1]))

    return _min_time(run, repeat, setup) / rounds


def _lbfgs_per_epoch(n, d, m, jobs, epochs=20):
    """Seconds per L-BFGS epoch of a fixed-gamma fit with many items (the optimizer's
    vector arithmetic beside the row-path gradient)."""
    T = np.random.default_rng(3).integers(0, n, size=(m, 3))
    T = T[(T[:, 0] != T[:, 1]) & (T[:, 0] != T[:, 2]) & (T[:, 1] != T[:, 2])]
    best = float("inf")
    for _ in range(3):
        emb = ts.Embedding(
            "gamma-ckl", d, gamma=3.0, max_epochs=epochs, tol=0.0, random_state=0, n_jobs=jobs
        )
        t0 = time.perf_counter()
        emb.fit(T, n_items=n)
        best = min(best, (time.perf_counter() - t0) / emb.n_epochs_)
    return best


def _continuous(d, method, queries=60, repeat=5):
    target = np.full(d, 0.3)

    def setup():
        return ts.ContinuousSearch(d, 3.0, method=method, random_state=0, n_jobs=2)

    def run(s):
        rng = np.random.default_rng(0)
        for _ in range(queries):
            a, b = s.ask()
            da, db = np.sum((a - target) ** 2), np.sum((b - target) ** 2)
            s.tell(bool(rng.random() < 1.0 / (1.0 + (da / db) ** 1.5)))

    return _min_time(run, repeat, setup) / queries


# The file times old and new builds alike: the spellings of the build it runs in (0.2.0
# renamed simulate_discrete's int targets= to n_runs= and put theory's dim first).
_NEW_NAMES = tuple(int(v) for v in ts.__version__.split(".")[:2]) >= (0, 2)
RUNS = {"n_runs": 200} if _NEW_NAMES else {"targets": 200}
MC_ARGS = (5, 3.0) if _NEW_NAMES else (3.0, 5)

WORKLOADS = {
    "food_grad_1t": lambda: _oracle_kernel(ts.GammaCKL(10.0), "grad", 100, 10, 190_376, 1),
    "food_grad_2t": lambda: _oracle_kernel(ts.GammaCKL(10.0), "grad", 100, 10, 190_376, 2),
    "grad_rows_1t": lambda: _oracle_kernel(ts.GammaCKL(10.0), "grad", 1000, 10, 10**6, 1, 3),
    "grad_rows_2t": lambda: _oracle_kernel(ts.GammaCKL(10.0), "grad", 1000, 10, 10**6, 2, 3),
    "prob_int_1t": lambda: _oracle_kernel(ts.GammaCKL(10.0), "prob", 1000, 10, 10**6, 1, 3),
    "prob_real_1t": lambda: _oracle_kernel(ts.GammaCKL(2.5), "prob", 1000, 10, 10**6, 1, 3),
    "loglik_int_1t": lambda: _oracle_kernel(
        ts.GammaCKL(10.0), "log_likelihood", 1000, 10, 10**6, 1, 3
    ),
    "grad_real_1t": lambda: _oracle_kernel(ts.GammaCKL(2.5), "grad", 1000, 10, 10**6, 1, 3),
    "grad_tste_1t": lambda: _oracle_kernel(ts.TSTE(), "grad", 1000, 10, 10**5, 1),
    "grad_probit_1t": lambda: _oracle_kernel(ts.Probit(0.3), "grad", 1000, 10, 10**5, 1),
    "choice4_1t": lambda: _min_time(
        lambda: ts.GammaCKL(3.0).choice_prob(
            *(_problem(1000, 10, 1, 0)[0],),
            np.arange(200_000) % 1000,
            np.random.default_rng(1).integers(0, 1000, (200_000, 4)),
            n_jobs=1,
        )
    ),
    "fit_epoch_2t": lambda: _fit_per_epoch(2),
    "disc_info_1e3_d2": lambda: _discrete(1000, 2, 2, selection="infogain"),
    "disc_info_1e3_d5": lambda: _discrete(1000, 5, 2, selection="infogain"),
    "disc_info_1e3_d10": lambda: _discrete(1000, 10, 2, selection="infogain"),
    "disc_info_1e3_d10_1t": lambda: _discrete(1000, 10, 1, selection="infogain"),
    "disc_wtd_1e3_d10": lambda: _discrete(1000, 10, 2, selection="weighted"),
    "disc_info_k4_1e3_d5": lambda: _discrete(1000, 5, 2, pick=1, n_choices=4),
    "disc_wtd_1e5_d10": lambda: _discrete(100_000, 10, 2, repeat=3, selection="weighted"),
    "disc_wtd_1e6_d10": lambda: _discrete(1_000_000, 10, 2, repeat=3, selection="weighted"),
    "disc_gauss_1e3_d10": lambda: _discrete(1000, 10, 2, method="gauss"),
    # the hypotheses' update (gamma inferred: the AVX2 pair kernel; k = 4 and the lapse rate
    # inferred: the portable body compiled for AVX2), one pass per answer
    "obs_auto_1e6_d10": lambda: _observe(1_000_000, 10, 2, gamma="auto"),
    "obs_auto_1e6_d10_1t": lambda: _observe(1_000_000, 10, 1, gamma="auto"),
    "obs_auto_lapse_1e5_d10": lambda: _observe(100_000, 10, 2, gamma="auto", lapse="auto"),
    "obs_auto_k4_1e5_d10": lambda: _observe(100_000, 10, 2, n_choices=4, gamma="auto"),
    "obs_fixed_1e6_d10": lambda: _observe(1_000_000, 10, 2, gamma=3.0),
    "lbfgs_epoch_2e4_1t": lambda: _lbfgs_per_epoch(20_000, 10, 200_000, 1),
    "cont_global_d2": lambda: _continuous(2, "global"),
    "cont_global_d5": lambda: _continuous(5, "global"),
    "cont_posterior_d2": lambda: _continuous(2, "posterior"),
    "cont_posterior_d5": lambda: _continuous(5, "posterior"),
    "sim_discrete_d5": lambda: _min_time(
        lambda: ts.simulate_discrete(
            np.random.default_rng(5).uniform(-1, 1, size=(1000, 5)),
            **RUNS,
            random_state=7,
            n_jobs=2,
        ),
        3,
    ),
    "sim_continuous_d2": lambda: _min_time(
        lambda: ts.simulate_continuous(2, 3.0, n_runs=20, max_queries=100, random_state=1),
        3,
    ),
    "p_correct_mc_1e6": lambda: _min_time(
        lambda: ts.theory.p_correct_monte_carlo(*MC_ARGS, 10**6, random_state=0, n_jobs=2)
    ),
}


if __name__ == "__main__":
    names = sys.argv[1:] or list(WORKLOADS)
    for name in names:
        print(name, WORKLOADS[name](), flush=True)
