"""Fitting people's gamma and lapse rate to recorded choices (tripletsearch.users)."""

import math

import numpy as np
import pytest

from tripletsearch.users import choice_log_likelihood, fit_choice_model


def simulate(X, m, k, gamma, lapse, rng):
    """m choices of a gamma-CKL person with lapses (targets never on screen)."""
    n = len(X)
    H = rng.integers(0, n, m)
    S = np.array([rng.choice(np.setdiff1d(np.arange(n), [h]), k, replace=False) for h in H])
    D = ((X[S] - X[H][:, None]) ** 2).sum(-1)
    w = D ** (-gamma / 2)
    p = (1 - lapse) * w / w.sum(1, keepdims=True) + lapse / k
    C = np.array([S[i, rng.choice(k, p=p[i])] for i in range(m)])
    return H, S, C


def test_log_likelihood_is_the_closed_form():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    H, S, C = simulate(X, 50, 3, 2.5, 0.1, rng)
    expected = 0.0
    for h, s, c in zip(H, S, C):  # the model, term by term
        w = [np.sum((X[j] - X[h]) ** 2) ** (-1.25) for j in s]
        expected += math.log(0.9 * w[list(s).index(c)] / sum(w) + 0.1 / 3)
    assert choice_log_likelihood(X, H, S, C, 2.5, 0.1) == pytest.approx(expected, rel=1e-12)


@pytest.mark.once  # a statistical run: once, not again under the sanitizers (the fit's
# kernels have their own tests above)
@pytest.mark.parametrize("gamma,lapse,seed", [(3.0, 0.1, 1), (8.0, 0.02, 2), (1.5, 0.0, 3)])
def test_fit_recovers_the_model(gamma, lapse, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(400, 3))
    H, S, C = simulate(X, 3000, 4, gamma, lapse, rng)
    fit = fit_choice_model(X, H, S, C)
    # the 95% intervals cover the truth (3 fixed seeds) and are informative
    assert fit.gamma_interval[0] <= gamma <= fit.gamma_interval[1], fit
    assert fit.lapse_interval[0] <= lapse <= fit.lapse_interval[1], fit
    assert fit.gamma_interval[1] / fit.gamma_interval[0] < 1.5
    assert fit.n_answers == 3000 and "profile-likelihood" in str(fit)


def test_rows_showing_the_target_are_left_out_and_bad_input():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(20, 2))
    H, S, C = simulate(X, 40, 3, 3.0, 0.0, rng)
    S2 = S.copy()
    S2[0, 1] = H[0]  # the target on screen: not a comparison
    C2 = C.copy()
    C2[0] = S2[0, 0]
    assert fit_choice_model(X, H, S2, C2).n_answers == 39
    C_bad = C.copy()
    C_bad[3] = next(i for i in range(20) if i not in S[3])
    for args, exc, match in [
        ((H, S, C[:-1]), ValueError, "lengths differ"),
        ((H, S[:, :1], C), ValueError, "at least 2 items"),
        ((H, S, C_bad), ValueError, "item: row 3 picks .* not shown"),
        ((H + 100, S, C), ValueError, "heads: item ids must lie in 0..19"),
        ((H.astype(float), S, C), TypeError, "heads: expected a 1-d integer array"),
    ]:
        with pytest.raises(exc, match=match):
            fit_choice_model(X, *args)
    with pytest.raises(ValueError, match="level"):
        fit_choice_model(X, H, S, C, level=0.5)
    with pytest.raises(ValueError, match="gamma_range"):
        fit_choice_model(X, H, S, C, gamma_range=(2.0, 1.0))


def test_the_fits_old_count_name_warns():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(30, 2))
    H = rng.integers(0, 30, 40)
    S = np.stack([(H + 1) % 30, (H + 2) % 30], axis=1)
    fit = fit_choice_model(X, H, S, S[:, 0])
    with pytest.warns(DeprecationWarning, match="'n_choices' was renamed 'n_answers'"):
        assert fit.n_choices == fit.n_answers == 40
