"""The appendix's gamma-d experiment: in the theorem's setting the grid search lands on
the exact line gamma = k(p) d; with random targets it does not (distances concentrate)."""

import numpy as np

from tripletsearch.reproduce import THEORY_REFERENCES, reproduce_theory


def test_theory_grid_search_follows_the_exact_line(tmp_path):
    rows = reproduce_theory(tmp_path, quick=True, n_items=500, n_triplets=6000, random_state=1)
    assert (tmp_path / "theory.csv").exists()
    for d_hat, g_hat in THEORY_REFERENCES:
        centre = [r for r in rows if r["d_hat"] == d_hat and r["setting"] == "centre"]
        assert [r["d"] for r in centre] == list(range(d_hat, 4 * d_hat + 1, 10))
        # p_hat estimates the theorem's p_Q (the closed form) from 6000 queries
        assert abs(centre[0]["p_hat"] - centre[0]["p_exact"]) < 0.015
        rel = np.array([abs(r["gamma"] - g_hat / d_hat * r["d"]) / r["line"] for r in centre])
        assert rel.max() < 0.15, rel
        rand = [r for r in rows if r["d_hat"] == d_hat and r["setting"] == "random"]
        assert rand[-1]["gamma"] < 0.7 * rand[-1]["line"]


def test_the_bisection_finds_the_grid_searchs_gamma():
    # the paper's procedure scans every gamma of the grid; the bisection asks log2 of them
    # and must land on the same point (the first closest) with the same gap
    from tripletsearch.reproduce.theory import (
        _ball,
        _closest_on_grid,
        _empirical_p,
        _oriented_triplets,
    )

    rng = np.random.default_rng(3)
    for d, centre, target in [(10, True, 0.62), (25, False, 0.55), (5, True, 0.99), (5, True, 0.3)]:
        X = _ball(rng, 200, d)
        if centre:
            X = np.vstack([X, np.zeros((1, d))])
        T = _oriented_triplets(rng, X, 2000, centre)
        grid = np.arange(0.05, 3.0 + 0.05, 0.05)
        scan = np.array([abs(_empirical_p(X, T, g, 1) - target) for g in grid])
        calls = []

        def f(g, X=X, T=T, calls=calls):
            calls.append(g)
            return _empirical_p(X, T, g, 1)

        best, gap = _closest_on_grid(f, grid, target)
        assert best == int(np.argmin(scan)) and gap == scan[best]
        assert len(calls) <= 2 + int(np.ceil(np.log2(len(grid))))
