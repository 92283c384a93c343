"""The price of one opening for every method (issue 40, item 2).

``opening="uniform"`` (the default since issue 40) draws every method's first screen by one
rule from the session's seed (k distinct items uniformly at random), so that no method can
be told by its opening; ``opening="random"`` (0.3.0's default) opened gamma-CKLSearch on its
principal axes turned by a seeded rotation and GaussSearch on its mirror sample. The price
is measured on paired seeds and targets (the same ``random_state`` and targets for both
openings: run i has the same searcher seed and the same simulated user in both):
queries to find, mean with its standard error, and the mean paired difference with its
own, on uniform points in [-1, 1]^d, gamma-CKL users with gamma = 3 and a searcher told it,
1,000 targets (n = 1,000: every item once; n = 40: each item 25 times) under each of 5
seeds: the first seed's 1,000 searches printed, and all 5,000 (a paired difference of
1,000 searches has a standard error of 0.1 to 0.5 queries: too coarse for a +0.5 target).

The targets, on the 5,000: gamma-CKLSearch's mean within +0.5 of today's ("random"),
GaussSearch's no more than one standard error above today's.

    python -m pytest bench/test_bench_openings.py -s --benchmark-group-by=group
"""

import math

import numpy as np
import pytest

import tripletsearch as ts
from tripletsearch.discrete import DiscreteSimulation

CASES = [(1000, 2, 2), (1000, 2, 4), (1000, 5, 2), (1000, 5, 4), (40, 2, 4)]
N_TARGETS = 1000
SEEDS = (11, 12, 13, 14, 15)


def simulate(X, method, k, opening, targets, seeds=SEEDS):
    """The searches of every seed, pooled (each seed: one search per target)."""
    runs = [
        ts.simulate_discrete(
            X,
            method=method,
            n_choices=k,
            gamma=3.0,
            opening=opening,
            targets=targets,
            random_state=seed,
            max_queries=500,
        )
        for seed in seeds
    ]
    return DiscreteSimulation(
        np.concatenate([r.n_queries for r in runs]),
        np.concatenate([r.found for r in runs]),
        np.concatenate([r.targets for r in runs]),
    )


def paired(new, old):
    """(mean difference, its standard error) of paired runs."""
    diff = (new.n_queries - old.n_queries).astype(float)
    return float(diff.mean()), float(diff.std(ddof=1) / math.sqrt(len(diff)))


def line(new, old):
    delta, delta_se = paired(new, old)
    return (
        f"uniform {new.mean:.2f} +- {new.stderr:.2f} (median {new.median:g}), random "
        f"{old.mean:.2f} +- {old.stderr:.2f} (median {old.median:g}); paired difference "
        f"{delta:+.2f} +- {delta_se:.2f}"
    )


@pytest.mark.parametrize("method", ["gamma-ckl", "gauss"])
@pytest.mark.parametrize("n,d,k", CASES)
def test_queries_to_find(benchmark, method, n, d, k):
    """Both openings on the same database, seeds and targets; the uniform one timed."""
    X = np.random.default_rng(100 + d).uniform(-1, 1, size=(n, d))
    targets = np.arange(N_TARGETS) % n
    benchmark.group = f"openings: queries to find, {method} n={n} d={d} k={k}"
    old = simulate(X, method, k, "random", targets)
    new = benchmark.pedantic(
        simulate, args=(X, method, k, "uniform", targets), rounds=1, iterations=1
    )
    delta, delta_se = paired(new, old)
    first = slice(0, N_TARGETS)  # the first seed's searches
    one = [
        DiscreteSimulation(s.n_queries[first], s.found[first], s.targets[first]) for s in (new, old)
    ]
    benchmark.extra_info.update(
        mean=round(new.mean, 3),
        stderr=round(new.stderr, 3),
        median=new.median,
        random_mean=round(old.mean, 3),
        random_stderr=round(old.stderr, 3),
        random_median=old.median,
        paired_difference=round(delta, 3),
        paired_difference_stderr=round(delta_se, 3),
        found=float(new.found.mean()),
        random_found=float(old.found.mean()),
    )
    print(
        f"\n{method} n={n} d={d} k={k}: 1,000 searches: {line(*one)}\n"
        f"{method} n={n} d={d} k={k}: 5,000 searches: {line(new, old)}"
    )
    assert new.found.all() and old.found.all()
    if method == "gamma-ckl":
        assert new.mean <= old.mean + 0.5
    else:
        assert new.mean <= old.mean + old.stderr
