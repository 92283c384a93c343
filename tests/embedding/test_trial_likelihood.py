"""The ranked and odd-one-out likelihoods: definitions, twins, gradients, threads; with a
lapse per pick (p = (1 - lapse) q + lapse / s): closed forms, the estimator, bad values."""

import itertools

import numpy as np
import pytest

import tripletsearch as ts
from tripletsearch import _core
from tripletsearch._reference import trials as ref_trials
from tripletsearch.embedding._train import train_options
from tripletsearch.embedding._trials import TrialData, _Set
from tripletsearch.trials import OddOneOut, RankedChoices, trial_log_prob

MODELS = [("GammaCKL", 3.0), ("GammaCKL", 2.3), ("CKL", 0.1), ("TSTE", 1.5), ("STE", 0.0)]


def _spec(kind, param):
    return _core.OracleSpec(getattr(_core.ModelKind, kind), param)


def _ranked(rng, n, m, k, r, ordered=True):
    Z = np.array([rng.choice(n, k + 1, replace=False) for _ in range(m)])
    return RankedChoices(Z[:, 0], Z[:, 1:], Z[:, 1 : 1 + r], ordered=ordered)


def _odd(rng, n, m):
    Z = np.array([rng.choice(n, 3, replace=False) for _ in range(m)])
    return OddOneOut(Z, Z[np.arange(m), rng.integers(0, 3, m)])


def _mixed(rng, n, m, lapse=0.0):
    parts = [
        _ranked(rng, n, m, 2, 1),
        _ranked(rng, n, m, 8, 2),
        _ranked(rng, n, m, 5, 3, ordered=False),
        _ranked(rng, n, m, 7, 4, ordered=False),
        _odd(rng, n, m),
    ]
    return TrialData(parts, lapse).sets()


def _dist2(X, a, b):
    return float(np.sum((X[a] - X[b]) ** 2))


def test_odd_one_out_is_the_choice_of_the_closest_pair():
    """P(odd = a | a, b, c) = d(b, c)^-gamma / sum over the three pairs (gamma-CKL)."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(6, 2))
    gamma = 2.7
    trials = OddOneOut([[0, 1, 2]] * 3, [0, 1, 2])
    got = np.exp(_core.trials_log_prob(_spec("GammaCKL", gamma), X, TrialData([trials]).sets(), 1))
    w = {
        0: _dist2(X, 1, 2) ** (-gamma / 2),
        1: _dist2(X, 0, 2) ** (-gamma / 2),
        2: _dist2(X, 0, 1) ** (-gamma / 2),
    }
    want = np.array([w[a] for a in range(3)]) / sum(w.values())
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert got.sum() == pytest.approx(1.0)


def test_ranked_is_successive_choices_and_sums_to_one():
    """Plackett-Luce by its definition; the orders and the unordered sets each sum to 1."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(8, 3))
    gamma, head, cands = 3.5, 0, [1, 2, 3, 4, 5]
    w = {c: _dist2(X, head, c) ** (-gamma / 2) for c in cands}
    orders = list(itertools.permutations(cands, 2))
    trials = RankedChoices([head] * len(orders), [cands] * len(orders), orders)
    got = np.exp(_core.trials_log_prob(_spec("GammaCKL", gamma), X, TrialData([trials]).sets(), 1))
    total = sum(w.values())
    want = [w[a] / total * w[b] / (total - w[a]) for a, b in orders]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert got.sum() == pytest.approx(1.0)
    sets = list(itertools.combinations(cands, 2))
    unordered = RankedChoices([head] * len(sets), [cands] * len(sets), sets, ordered=False)
    p = np.exp(_core.trials_log_prob(_spec("GammaCKL", gamma), X, TrialData([unordered]).sets(), 1))
    assert p.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(p[0], got[0] + got[orders.index((2, 1))], rtol=1e-12)


@pytest.mark.parametrize("model", [ts.GammaCKL(3.0), ts.CKL(0.2), ts.TSTE(2.0), ts.STE()])
def test_two_candidates_one_pick_is_the_triplet_model(model):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(20, 3))
    trials = _ranked(rng, 20, 50, 2, 1)
    T = trials.to_triplets()
    got = TrialData([trials]).log_prob(model, X)
    np.testing.assert_allclose(got, model.log_prob(X, T), rtol=1e-12, atol=1e-15)


@pytest.mark.twin
@pytest.mark.parametrize("lapse", [0.0, 0.07])
@pytest.mark.parametrize("kind,param", MODELS)
def test_native_matches_reference(kind, param, lapse):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(30, 4))
    sets = _mixed(rng, 30, 12, lapse)
    spec = _spec(kind, param)
    np.testing.assert_allclose(
        _core.trials_log_prob(spec, X, sets, 2),
        ref_trials.log_prob(kind, param, X, sets),
        rtol=1e-10,
    )
    lp, G, dlg = _core.trials_loss_grad(spec, X, sets, 2)
    lp_r, G_r, dlg_r = ref_trials.loss_grad(kind, param, X, sets)
    assert lp == pytest.approx(lp_r, rel=1e-10)
    np.testing.assert_allclose(G, G_r, rtol=1e-10, atol=1e-12 * np.abs(G_r).max())
    assert dlg == pytest.approx(dlg_r, rel=1e-10, abs=1e-12)


@pytest.mark.twin
@pytest.mark.parametrize("d", [1, 6, 50])
def test_odd_one_out_gradient_in_one_pass_matches_reference(d):
    """The odd-one-out gradient reads and writes each item's rows once (vector tails at d
    = 1, 6 and 50); a row that repeats an item (only the core's own callers can give one)
    goes pair by pair. Both as the twin's."""
    rng = np.random.default_rng(11)
    X = rng.normal(size=(9, d))
    rows = np.array([rng.choice(9, 3, replace=False) for _ in range(40)] + [[2, 2, 5], [4, 7, 4]])
    sets = [(rows, 1, 3, 1, True, 0.0)]
    for kind, param in [("GammaCKL", 3.0), ("TSTE", 1.5)]:
        lp, G, dlg = _core.trials_loss_grad(_spec(kind, param), X, sets, 2)
        lp_r, G_r, _ = ref_trials.loss_grad(kind, param, X, [_Set(*sets[0])])
        assert lp == pytest.approx(lp_r, rel=1e-10)
        np.testing.assert_allclose(G, G_r, rtol=1e-10, atol=1e-12 * np.abs(G_r).max())


@pytest.mark.twin
@pytest.mark.parametrize("lapse", [0.0, 0.1])
def test_native_trainer_matches_reference(lapse):
    rng = np.random.default_rng(5)
    X0 = 0.1 * rng.normal(size=(15, 2))
    sets = _mixed(rng, 15, 10, lapse)
    opts = dict(optimizer="lbfgs", lr=1.0, batch_size=0, max_epochs=15, tol=0.0)
    opts.update(n_iter_no_change=10, l2=0.01, learn_gamma=True)
    native = _core.train_trials(_spec("GammaCKL", 3.0), X0, sets, train_options(opts), 2)
    X, loss, gamma, epochs, status = ref_trials.train("GammaCKL", 3.0, X0, sets, opts)
    assert native[3] == epochs
    np.testing.assert_allclose(native[1], loss, rtol=1e-8)
    np.testing.assert_allclose(native[2], gamma, rtol=1e-8)
    np.testing.assert_allclose(native[0], X, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("lapse", [0.0, 0.15])
@pytest.mark.parametrize("kind,param", MODELS)
def test_gradient_by_finite_differences(kind, param, lapse):
    rng = np.random.default_rng(6)
    X = rng.normal(size=(12, 3))
    sets = _mixed(rng, 12, 4, lapse)
    lp, G, dlg = _core.trials_loss_grad(_spec(kind, param), X, sets, 1)
    h = 1e-6
    for a, b in [(0, 0), (3, 1), (7, 2), (11, 0)]:
        Xp, Xm = X.copy(), X.copy()
        Xp[a, b] += h
        Xm[a, b] -= h
        fp = _core.trials_loss_grad(_spec(kind, param), Xp, sets, 1)[0]
        fm = _core.trials_loss_grad(_spec(kind, param), Xm, sets, 1)[0]
        assert G[a, b] == pytest.approx((fp - fm) / (2 * h), rel=1e-5, abs=1e-6)
    if kind == "GammaCKL":  # d log p / d log gamma
        up = _core.trials_loss_grad(_spec(kind, param * np.exp(h)), X, sets, 1)[0]
        down = _core.trials_loss_grad(_spec(kind, param * np.exp(-h)), X, sets, 1)[0]
        assert dlg == pytest.approx((up - down) / (2 * h), rel=1e-5)


@pytest.mark.parametrize("lapse", [0.0, 0.05])
def test_identical_for_any_thread_count(lapse):
    rng = np.random.default_rng(7)
    X = rng.normal(size=(20, 3))
    sets = _mixed(rng, 20, 400, lapse)
    runs = [_core.trials_loss_grad(_spec("GammaCKL", 3.0), X, sets, t) for t in (1, 2, 3, 4)]
    for lp, G, dlg in runs[1:]:
        assert lp == runs[0][0] and dlg == runs[0][2]
        np.testing.assert_array_equal(G, runs[0][1])


def test_coincident_points_are_finite():
    X = np.zeros((4, 2))
    sets = TrialData(
        [_odd(np.random.default_rng(0), 4, 3), _ranked(np.random.default_rng(1), 4, 3, 3, 2)]
    ).sets()
    lp, G, dlg = _core.trials_loss_grad(_spec("GammaCKL", 25.0), X, sets, 1)
    assert np.isfinite(lp) and np.isfinite(G).all() and np.isfinite(dlg)


def test_far_picks_do_not_underflow():
    """A pick 1e6 times farther than the others at gamma 60: log p finite and exact."""
    X = np.array([[0.0], [1.0], [1e6], [1.1]])
    trials = RankedChoices([0], [[1, 2, 3]], [[2, 1]])
    lp = _core.trials_log_prob(_spec("GammaCKL", 60.0), X, TrialData([trials]).sets(), 1)
    want = ref_trials.log_prob("GammaCKL", 60.0, X, TrialData([trials]).sets())
    assert np.isfinite(lp).all() and lp[0] < -700  # below log(1e-300): the log-space path
    np.testing.assert_allclose(lp, want, rtol=1e-10)


def test_errors():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(10, 2))
    sets = TrialData([_ranked(rng, 10, 3, 4, 2)]).sets()
    with pytest.raises(ValueError, match="model: Probit models pairs only"):
        _core.trials_log_prob(_spec("Probit", 0.1), X, sets, 1)
    six = TrialData([_ranked(rng, 10, 2, 8, 5, ordered=False)]).sets()
    with pytest.raises(ValueError, match="picks: .* at most 4 picks"):
        _core.trials_log_prob(_spec("GammaCKL", 3.0), X, six, 1)
    with pytest.raises(ValueError, match="trials: index .* out of range for 1 items"):
        _core.trials_log_prob(_spec("GammaCKL", 3.0), X[:1], sets, 1)


def test_public_trial_log_prob():
    rng = np.random.default_rng(9)
    X = rng.normal(size=(12, 2))
    odd, ranked = _odd(rng, 12, 5), _ranked(rng, 12, 4, 5, 2)
    got = ts.trials.trial_log_prob(ts.GammaCKL(3.0), X, [odd, ranked])
    want = ref_trials.log_prob("GammaCKL", 3.0, X, TrialData([odd, ranked]).sets())
    np.testing.assert_allclose(got, want, rtol=1e-10)
    with pytest.raises(ValueError, match="items: index"):
        ts.trials.trial_log_prob(ts.GammaCKL(3.0), X[:5], odd)
    with pytest.raises(ValueError, match="Probit models pairs only"):
        ts.trials.trial_log_prob(ts.Probit(0.1), X, odd)


# ------------------------------------------------------------------ a lapse per pick
def _w(X, head, c, gamma):
    return float(np.sum((X[head] - X[c]) ** 2)) ** (-gamma / 2)


def test_each_pick_mixes_the_model_with_a_uniform_choice_of_those_left():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(8, 3))
    gamma, lapse, head, cands = 3.5, 0.2, 0, [1, 2, 3, 4, 5]
    w = {c: _w(X, head, c, gamma) for c in cands}
    total = sum(w.values())
    orders = list(itertools.permutations(cands, 2))
    trials = RankedChoices([head] * len(orders), [cands] * len(orders), orders)
    got = np.exp(trial_log_prob(ts.GammaCKL(gamma), X, trials, lapse=lapse))
    want = [
        ((1 - lapse) * w[a] / total + lapse / 5) * ((1 - lapse) * w[b] / (total - w[a]) + lapse / 4)
        for a, b in orders
    ]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert got.sum() == pytest.approx(1.0)  # still a distribution over the answers
    sets = list(itertools.combinations(cands, 2))
    unordered = RankedChoices([head] * len(sets), [cands] * len(sets), sets, ordered=False)
    p = np.exp(trial_log_prob(ts.GammaCKL(gamma), X, unordered, lapse=lapse))
    assert p.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(p[0], got[0] + got[orders.index((2, 1))], rtol=1e-12)
    # odd-one-out: the closest pair's choice among three, mixed with a third each
    odd = OddOneOut([[0, 1, 2]] * 3, [0, 1, 2])
    q = {0: _w(X, 1, 2, gamma), 1: _w(X, 0, 2, gamma), 2: _w(X, 0, 1, gamma)}
    want_odd = [(1 - lapse) * q[a] / sum(q.values()) + lapse / 3 for a in range(3)]
    got_odd = np.exp(trial_log_prob(ts.GammaCKL(gamma), X, odd, lapse=lapse))
    np.testing.assert_allclose(got_odd, want_odd, rtol=1e-12)


def test_lapse_zero_is_the_model_alone_and_one_is_uniform():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(20, 3))
    trials = [_ranked(rng, 20, 30, 8, 2), _odd(rng, 20, 30)]
    spec = _spec("GammaCKL", 3.0)
    five = [s[:5] for s in TrialData(trials).sets()]
    assert np.array_equal(
        trial_log_prob(ts.GammaCKL(3.0), X, trials, lapse=0.0),
        _core.trials_log_prob(spec, X, five, 1),
    )
    near_one = trial_log_prob(ts.GammaCKL(3.0), X, trials, lapse=1 - 1e-12)
    uniform = np.r_[np.full(30, np.log(1 / 8 * 1 / 7)), np.full(30, np.log(1 / 3))]
    np.testing.assert_allclose(near_one, uniform, rtol=1e-9)


def test_far_picks_with_a_lapse_are_exact():
    """A pick 1e6 times farther at gamma 60: its model probability underflows, the lapse
    keeps p finite (the fast path); a tiny lapse takes the log path. Both as the twin."""
    X = np.array([[0.0], [1.0], [1e6], [1.1]])
    trials = RankedChoices([0], [[1, 2, 3]], [[2, 1]])
    for lapse in (0.05, 1e-300):
        sets = TrialData([trials], lapse).sets()
        lp = _core.trials_log_prob(_spec("GammaCKL", 60.0), X, sets, 1)
        want = ref_trials.log_prob("GammaCKL", 60.0, X, sets)
        assert np.isfinite(lp).all()
        np.testing.assert_allclose(lp, want, rtol=1e-10)


def test_the_estimator_fits_and_scores_with_its_lapse():
    rng = np.random.default_rng(8)
    n, lapse = 15, 0.1
    trials = _ranked(rng, n, 200, 2, 1)
    T = trials.to_triplets()
    est = ts.Embedding(dim=2, gamma=3.0, lapse=lapse, random_state=0, n_jobs=1, max_epochs=30)
    from_trials = est.fit(trials, n_items=n).embedding_.copy()
    # triplet rows with a lapse: the same fit as the two-candidate trials they are
    np.testing.assert_array_equal(est.fit(T, n_items=n).embedding_, from_trials)
    q = est.oracle_.prob(est.embedding_, T)
    np.testing.assert_allclose(est.predict_proba(T), (1 - lapse) * q + lapse / 2, rtol=1e-12)
    np.testing.assert_allclose(est.predict_proba(trials), (1 - lapse) * q + lapse / 2, rtol=1e-12)
    assert est.log_loss(T) == pytest.approx(-np.mean(np.log((1 - lapse) * q + lapse / 2)))
    assert est.log_loss(trials) == pytest.approx(est.log_loss(T), rel=1e-12)


@pytest.mark.parametrize(
    "bad,error,match",
    [
        (1.0, ValueError, "lapse"),
        (-0.1, ValueError, "lapse"),
        (float("nan"), ValueError, "lapse"),
        ("0.1", TypeError, "lapse"),
        (True, TypeError, "lapse"),
    ],
)
def test_a_bad_lapse_is_refused_naming_it(bad, error, match):
    rng = np.random.default_rng(9)
    X = rng.normal(size=(10, 2))
    trials = _ranked(rng, 10, 5, 4, 2)
    with pytest.raises(error, match=match):
        trial_log_prob(ts.GammaCKL(3.0), X, trials, lapse=bad)
    with pytest.raises((ValueError, TypeError), match=match):
        ts.Embedding(dim=2, gamma=3.0, lapse=bad).fit(trials, n_items=10)


def test_native_sets_refuse_a_bad_lapse_and_probit_refuses_one():
    rng = np.random.default_rng(10)
    X = rng.normal(size=(10, 2))
    (s,) = TrialData([_ranked(rng, 10, 5, 4, 2)]).sets()
    for bad in (1.0, -0.5, float("nan")):
        with pytest.raises(ValueError, match="lapse: a probability in"):
            _core.trials_log_prob(_spec("GammaCKL", 3.0), X, [(*s[:5], bad)], 1)
    with pytest.raises(ValueError, match="lapse: Probit"):
        ts.Embedding("probit", dim=2, lapse=0.1).fit(np.array([[0, 1, 2], [1, 2, 3]]))
