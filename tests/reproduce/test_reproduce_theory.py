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
