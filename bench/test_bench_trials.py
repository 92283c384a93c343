"""Speed of the ranked and odd-one-out likelihoods against the triplets they imply.

Simulated people answer by gamma-CKL (gamma 3) over items from a standard Gaussian:
odd-one-out trials (P(odd = a) proportional to d(b, c)^-gamma) and 8-rank-2 screens
(Plackett-Luce, drawn exactly by the Gumbel trick). Measured, in one run:

* the gradient over odd-one-out trials against the gradient over their cut triplets;
* a fit of 8-rank-2 screens against a fit of the triplets they imply (13 a screen), gamma
  fixed at 3: time per implied triplet, as a ratio; and with ``gamma="auto"`` (the ranked
  fit chooses gamma on the implied triplets, then fits the screens);
* a THINGS-sized fit: 4.7 million odd-one-out trials over 1,854 items in d = 50, gamma
  fixed at 3 (``TS_BENCH_THINGS_M`` sets the number of trials, ``TS_BENCH_THINGS_EPOCHS``
  caps the L-BFGS iterations; default 4,700,000 and 1000). The machine's load is printed
  beside the times.

    python -m pytest bench/test_bench_trials.py -s
"""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

import tripletsearch as ts
from tripletsearch import _core
from tripletsearch.embedding import TrialData

RESULTS: dict[str, float] = {}


def _odd_one_out(rng, X, m, gamma=3.0):
    n = len(X)
    Z = rng.integers(0, n, size=(int(m * 1.01) + 10, 3))
    Z = Z[(Z[:, 0] != Z[:, 1]) & (Z[:, 0] != Z[:, 2]) & (Z[:, 1] != Z[:, 2])][:m]
    pairs = [(1, 2), (0, 2), (0, 1)]  # odd a: the pair (b, c) is the closest
    lw = np.stack(
        [-gamma / 2 * np.log(((X[Z[:, b]] - X[Z[:, c]]) ** 2).sum(1)) for b, c in pairs], 1
    )
    odd = np.argmax(lw + rng.gumbel(size=lw.shape), axis=1)
    return ts.OddOneOut(Z, Z[np.arange(len(Z)), odd])


def _ranked(rng, X, m, k=8, r=2, gamma=3.0):
    n = len(X)
    keys = rng.random((m, n))
    Z = np.argpartition(keys, k + 1, axis=1)[:, : k + 1]  # k + 1 distinct items a screen
    H, C = Z[:, 0], Z[:, 1:]
    lw = -gamma / 2 * np.log(((X[C] - X[H][:, None]) ** 2).sum(-1))
    order = np.argsort(-(lw + rng.gumbel(size=lw.shape)), axis=1)[:, :r]
    return ts.RankedChoices(H, C, np.take_along_axis(C, order, axis=1))


@pytest.mark.parametrize("m", [100_000, 1_000_000])
def test_gradient_odd_one_out(benchmark, m):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1854, 50))
    trials = _odd_one_out(rng, X, m)
    sets, T = TrialData([trials]).sets(), trials.to_triplets()
    spec = _core.OracleSpec(_core.ModelKind.GammaCKL, 3.0)
    t0 = time.perf_counter()
    ts.GammaCKL(3.0).grad(X, T, n_jobs=2)
    cut = time.perf_counter() - t0
    benchmark.pedantic(_core.trials_loss_grad, args=(spec, X, sets, 2), rounds=3)
    RESULTS[f"gradient odd-one-out / cut triplets, m={m}"] = benchmark.stats["min"] / cut


def _rank_problem():
    """20,000 8-rank-2 screens over 300 items in d = 5, and the triplets they imply."""
    rng = np.random.default_rng(1)
    screens = _ranked(rng, rng.normal(size=(300, 5)), 20_000)
    return screens, screens.to_triplets()


def test_fit_rank_vs_cut_triplets(benchmark):
    screens, T = _rank_problem()

    def fit(data):
        t0 = time.perf_counter()
        est = ts.Embedding(dim=5, gamma=3.0, random_state=0, n_jobs=2).fit(data)
        return time.perf_counter() - t0, est.n_epochs_

    t_cut, e_cut = fit(T)
    t_rank, e_rank = benchmark.pedantic(fit, args=(screens,), rounds=1)
    RESULTS["8-rank-2 fit / its cut-triplet fit, time (per implied triplet)"] = t_rank / t_cut
    RESULTS["8-rank-2 fit / its cut-triplet fit, seconds per L-BFGS iteration"] = (
        t_rank / e_rank
    ) / (t_cut / e_cut)
    RESULTS["8-rank-2 fit iterations"] = e_rank
    RESULTS["cut-triplet fit iterations"] = e_cut


def test_fit_rank_vs_cut_triplets_gamma_auto():
    """gamma="auto": the ranked fit chooses gamma on its implied triplets (their path), then
    fits the screens; best of 3 each, interleaved."""
    screens, T = _rank_problem()

    def fit(data):
        t0 = time.perf_counter()
        ts.Embedding(dim=5, random_state=0, n_jobs=2).fit(data)
        return time.perf_counter() - t0

    t_cut, t_rank = [], []
    for _ in range(3):
        t_cut.append(fit(T))
        t_rank.append(fit(screens))
    RESULTS["8-rank-2 fit / its cut-triplet fit, gamma='auto' (best of 3 each)"] = min(
        t_rank
    ) / min(t_cut)


def test_things_sized_fit(benchmark):
    m = int(os.environ.get("TS_BENCH_THINGS_M", "4700000"))
    epochs = int(os.environ.get("TS_BENCH_THINGS_EPOCHS", "1000"))
    rng = np.random.default_rng(2)
    X = rng.normal(size=(1854, 50))
    trials = _odd_one_out(rng, X, m)
    load0 = os.getloadavg()[0]

    def fit():
        t0 = time.perf_counter()
        est = ts.Embedding(dim=50, gamma=3.0, max_epochs=epochs, random_state=0, n_jobs=2)
        est.fit(trials)
        return time.perf_counter() - t0, est

    elapsed, est = benchmark.pedantic(fit, rounds=1)
    RESULTS[f"THINGS-sized fit ({len(trials)} trials, n=1854, d=50), seconds"] = elapsed
    RESULTS["THINGS-sized fit, L-BFGS iterations"] = est.n_epochs_
    RESULTS["THINGS-sized fit, seconds per iteration"] = elapsed / max(1, est.n_epochs_)
    RESULTS["load average (1 min) before / after"] = f"{load0:.1f} / {os.getloadavg()[0]:.1f}"


def test_print_table():
    print()
    print(f"{_core.max_threads()} threads, SIMD {_core.simd_isa()}")
    for name, value in RESULTS.items():
        print(f"  {name:70s} {value if isinstance(value, str) else f'{value:.3g}'}")
