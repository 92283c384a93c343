"""gamma chosen by held-out likelihood ("auto", learn_gamma), early stopping, new items.

Expectations are independent of the code under test: the gamma that generated synthetic
answers, the NumPy twin of the trainer, closed forms (a parabola's vertex, the scale
invariances of CKL and Probit), and a full refit for the placement of new items.
"""

import math

import numpy as np
import pytest

import tripletsearch as ts
from tripletsearch._testing import ReferenceEmbedding
from tripletsearch.datasets import load_music
from tripletsearch.embedding import _parabola_vertex, native_train, valid_rows


def synthetic(n=60, d=3, m=30000, gamma=6.0, seed=0):
    rng = np.random.default_rng(seed + 2000)
    X = rng.normal(size=(n, d))
    Q = rng.integers(0, n, size=(m, 3))
    Q = Q[valid_rows(Q)]
    return X, ts.GammaCKL(gamma).sample(X, Q, random_state=seed)


LBFGS = dict(
    optimizer="lbfgs",
    lr=1.0,
    batch_size=0,
    max_epochs=200,
    tol=1e-9,
    n_iter_no_change=5,
    l2=0.0,
    learn_gamma=False,
)


# ------------------------------------------------------------------ gamma="auto"


@pytest.mark.parametrize("truth", [2.5, 10.0])
def test_auto_gamma_finds_the_generating_gamma(truth):
    X, T = synthetic(n=50, d=3, m=40000, gamma=truth, seed=int(truth))
    emb = ts.Embedding(dim=3, random_state=0).fit(T)
    # held-out likelihood over 10 % of 39k rows: within a factor 1.35 of the truth
    assert truth / 1.35 < emb.gamma_ < truth * 1.35
    path = emb.gamma_path_
    assert set(path) == {"gamma", "val_nll", "val_accuracy"}
    assert np.all(np.diff(path["gamma"]) > 0)
    # the walk visits consecutive points of the grid sqrt(2)^k and the best is inside it
    k = np.log(path["gamma"]) / np.log(math.sqrt(2.0))
    np.testing.assert_allclose(k, np.round(k), atol=1e-9)
    assert np.all(np.diff(np.round(k)) == 1)
    best = int(np.argmin(path["val_nll"]))
    assert 0 < best < len(k) - 1
    assert abs(math.log(emb.gamma_ / path["gamma"][best])) <= 0.5 * math.log(math.sqrt(2.0)) + 1e-12
    assert emb.oracle_.gamma == emb.gamma_


def test_auto_gamma_is_the_default_and_within_reach_of_the_best_fixed_gamma():
    X, T = synthetic(n=40, d=2, m=16000, gamma=5.0, seed=4)
    tr, te = T[:12000], T[12000:]
    auto = ts.Embedding(dim=2, random_state=0).fit(tr)
    assert ts.Embedding().gamma == "auto"
    fixed = [ts.Embedding(dim=2, gamma=g, random_state=0).fit(tr).log_loss(te) for g in (2, 5, 12)]
    # the held-out NLL of the automatic choice is within 0.01 nats of the best fixed gamma's
    assert auto.log_loss(te) < min(fixed) + 0.01


def test_auto_gamma_walks_a_given_path_and_its_ends():
    X, T = synthetic(n=40, d=2, m=8000, gamma=30.0, seed=5)
    emb = ts.Embedding(dim=2, gammas=[1.0, 2.0, 4.0], random_state=0).fit(T)
    # the best is the top of the path: the answer is that end, not beyond
    assert emb.gamma_ == 4.0
    # the walk starts at 4, cannot go up, goes down once and finds 2 worse
    assert list(emb.gamma_path_["gamma"]) == [2.0, 4.0]


def test_parabola_vertex_closed_form():
    def f(g):
        return (math.log(g) - math.log(5.0)) ** 2 + 0.3

    fits = {g: (None, f(g), 0.0) for g in (2.0, 4.0, 9.0)}  # unequal steps in log gamma
    assert math.isclose(_parabola_vertex(fits, 4.0, limit=1.0), 5.0, rel_tol=1e-12)
    # limited to half the distance to the nearer neighbour
    assert math.isclose(_parabola_vertex(fits, 4.0, limit=0.1), 4.0 * 2.0**0.1, rel_tol=1e-12)
    # at an end, or without upward curvature: the best point itself
    assert _parabola_vertex(fits, 2.0, limit=1.0) == 2.0
    flat = {g: (None, 1.0, 0.0) for g in (2.0, 4.0, 8.0)}
    assert _parabola_vertex(flat, 4.0, limit=1.0) == 4.0


@pytest.mark.twin
def test_auto_path_matches_the_twin():
    X, T = synthetic(n=20, d=2, m=1500, gamma=4.0, seed=6)
    args = dict(dim=2, random_state=1, max_epochs=40, gammas=[2.0, 4.0, 8.0, 16.0])
    a = ts.Embedding(**args).fit(T)
    b = ReferenceEmbedding(**args).fit(T)
    np.testing.assert_allclose(a.gamma_path_["val_nll"], b.gamma_path_["val_nll"], rtol=1e-8)
    assert math.isclose(a.gamma_, b.gamma_, rel_tol=1e-8)
    np.testing.assert_allclose(a.embedding_, b.embedding_, rtol=1e-6, atol=1e-8)


# ------------------------------------------------------------------ learn_gamma


@pytest.mark.parametrize("start", [1.5, 25.0])
def test_learn_gamma_reaches_the_generating_gamma_from_either_side(start):
    X, T = synthetic(n=50, d=3, m=40000, gamma=6.0, seed=7)
    emb = ts.Embedding(dim=3, gamma=start, learn_gamma=True, random_state=0).fit(T)
    assert 6.0 / 1.35 < emb.gamma_ < 6.0 * 1.35
    # refined past the grid: a vertex within 2 % of a fitted gamma ends the search
    fitted = emb.gamma_path_["gamma"]
    assert np.min(np.abs(np.log(fitted / emb.gamma_))) < 0.02 + 1e-12


def test_joint_maximum_likelihood_runs_off_and_held_out_learning_does_not():
    # the observation: Musical Artists, d = 20, joint ML sends gamma past 50
    T = load_music().triplets
    T = T[valid_rows(T)]
    joint = ts.Embedding(
        dim=20, gamma=3.0, learn_gamma=True, validation_fraction=0.0, random_state=0
    ).fit(T)
    held = ts.Embedding(dim=20, gamma=3.0, learn_gamma=True, random_state=0).fit(T)
    assert joint.gamma_ > 50.0
    assert 2.0 < held.gamma_ < 15.0


# ------------------------------------------------------------------ early stopping


@pytest.mark.parametrize("optimizer", ["lbfgs", "adam"])
def test_early_stopping_keeps_the_best_epoch(optimizer):
    X, T = synthetic(n=30, d=2, m=3000, gamma=4.0, seed=8)
    V, F = T[:300], T[300:]
    opts = dict(LBFGS, optimizer=optimizer, lr=0.3 if optimizer == "adam" else 1.0)
    X0 = 0.1 * np.random.default_rng(0).normal(size=(30, 2))
    out = native_train(ts.GammaCKL(4.0), X0, F, opts, 1, 2, None, V)
    assert len(out.val_loss) == out.epochs
    best = int(np.argmin(out.val_loss)) + 1
    assert out.best_epoch == best
    # the kept embedding is the best epoch's: its held-out NLL is the smallest recorded
    nll = -ts.GammaCKL(4.0).log_likelihood(out.embedding, V) / len(V)
    assert math.isclose(nll, out.val_loss[best - 1], rel_tol=1e-10)
    if out.status == "early_stopped":
        assert out.epochs - out.best_epoch == opts["n_iter_no_change"]


def test_early_stopping_estimator_trains_on_the_rest():
    X, T = synthetic(n=30, d=2, m=3000, gamma=4.0, seed=9)
    emb = ts.Embedding(dim=2, gamma=4.0, optimizer="adam", early_stopping=True, random_state=0)
    emb.fit(T)
    assert emb.status_ in ("early_stopped", "max_epochs", "converged")
    assert emb.gamma_path_ is None


# ------------------------------------------------------------------ the other models


@pytest.mark.parametrize(
    "model, key, values", [("probit", "sigma", (0.1, 1.0)), ("ckl", "mu", (0.01, 1.0))]
)
def test_ckl_mu_and_probit_sigma_are_absorbed_by_the_scale(model, key, values):
    """Scaling X by c acts as mu / c**2 (CKL) and sigma / c (Probit): same likelihoods."""
    X, T = synthetic(n=30, d=2, m=3000, gamma=4.0, seed=10)
    a, b = values
    c = math.sqrt(b / a) if model == "ckl" else b / a
    oa = ts.Embedding(model, **{key: a})._make_oracle()
    ob = ts.Embedding(model, **{key: b})._make_oracle()
    np.testing.assert_allclose(oa.log_prob(X, T), ob.log_prob(c * X, T), rtol=1e-10)


# ------------------------------------------------------------------ new items


def _catalogue(seed=11, n=200, k=15, d=4, gamma=8.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n + k, d))
    Q = rng.integers(0, n + k, size=(50000, 3))
    Q = Q[valid_rows(Q)]
    T = ts.GammaCKL(gamma).sample(X, Q, random_state=rng)
    new = (T >= n).any(axis=1)
    return X, T[~new], T[new], n, k


def test_transform_places_new_items_as_well_as_a_full_refit():
    X, old, new, n, k = _catalogue()
    cut = int(0.8 * len(new))
    place, test = new[:cut], new[cut:]
    emb = ts.Embedding(dim=4, gamma=8.0, random_state=0).fit(old, n_items=n)
    before = emb.embedding_.copy()
    P = emb.transform(place)
    assert P.shape == (k, 4)
    assert np.array_equal(emb.embedding_, before)  # transform changes nothing
    emb.add_items(place)
    assert emb.n_items_ == n + k and np.array_equal(emb.embedding_[:n], before)
    np.testing.assert_array_equal(emb.embedding_[n:], P)
    full = ts.Embedding(dim=4, gamma=8.0, random_state=0).fit(np.concatenate([old, place]))
    bayes = float(np.mean(ts.GammaCKL(8.0).prob(X, test) > 0.5))
    # the new items' held-out rows: as well explained as by a refit of everything (s.e. ~0.6 pt)
    assert emb.score(test) > full.score(test) - 0.02
    assert emb.score(test) > bayes - 0.04


@pytest.mark.twin
def test_transform_matches_the_twin():
    X, old, new, n, k = _catalogue(seed=12, n=30, k=4, d=2)
    args = dict(dim=2, gamma=8.0, random_state=0, max_epochs=30)
    a = ts.Embedding(**args).fit(old[:3000], n_items=n)
    b = ReferenceEmbedding(**args).fit(old[:3000], n_items=n)
    np.testing.assert_allclose(a.transform(new[:400]), b.transform(new[:400]), rtol=1e-7, atol=1e-9)


@pytest.mark.twin
def test_fixed_items_do_not_move_in_the_native_trainer_and_its_twin():
    X, T = synthetic(n=20, d=2, m=2000, gamma=4.0, seed=13)
    X0 = 0.5 * np.random.default_rng(1).normal(size=(20, 2))
    opts = dict(LBFGS, max_epochs=20, n_fixed=12)
    a = native_train(ts.GammaCKL(4.0), X0, T, opts, 1, 2)
    b = ReferenceEmbedding._train(ts.GammaCKL(4.0), X0, T, opts, 1, 1)
    assert np.array_equal(a.embedding[:12], X0[:12])
    assert not np.allclose(a.embedding[12:], X0[12:])
    np.testing.assert_allclose(a.embedding, b.embedding, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(a.loss, b.loss, rtol=1e-10)


# ------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    "kw, exc, name",
    [
        (dict(gamma="best"), ValueError, "gamma"),
        (dict(gammas=[1.0, -2.0]), ValueError, "gammas"),
        (dict(gammas=[]), ValueError, "gammas"),
        (dict(gammas=["a", "b"]), TypeError, "gammas"),
        (dict(validation_fraction=1.0), ValueError, "validation_fraction"),
        (dict(validation_fraction=-0.1), ValueError, "validation_fraction"),
        (dict(validation_fraction="0.1"), TypeError, "validation_fraction"),
        (dict(validation_fraction=0.0), ValueError, "validation_fraction"),  # with "auto"
        (
            dict(gamma=3.0, early_stopping=True, validation_fraction=0.0),
            ValueError,
            "validation_fraction",
        ),
        (dict(early_stopping="yes"), TypeError, "early_stopping"),
    ],
)
def test_bad_gamma_parameters(kw, exc, name):
    X, T = synthetic(n=10, d=2, m=200)
    with pytest.raises(exc, match=name):
        ts.Embedding(**kw).fit(T)


def test_auto_gamma_needs_two_rows():
    with pytest.raises(ValueError, match="triplets"):
        ts.Embedding().fit([[0, 1, 2]])


def test_transform_bad_input():
    X, old, new, n, k = _catalogue(seed=14, n=30, k=3, d=2)
    emb = ts.Embedding(dim=2, gamma=8.0, random_state=0)
    with pytest.raises(RuntimeError, match="fit"):
        emb.transform(new)
    emb.fit(old, n_items=n)
    with pytest.raises(ValueError, match="negative"):
        emb.transform([[0, 1, -1]])
    with pytest.raises(ValueError, match="n_new"):
        emb.transform(new, n_new=1)
    with pytest.raises(TypeError, match="n_new"):
        emb.transform(new, n_new=1.5)
    with pytest.raises(ValueError, match="no informative row"):
        emb.transform(new[(new != n + 2).all(axis=1)], n_new=3)
    with pytest.raises(ValueError, match="triplets"):
        emb.transform(np.zeros((2, 2), dtype=int))
    assert emb.transform(old[:10]).shape == (0, 2)  # no new item: nothing to place


@pytest.mark.filterwarnings("ignore::tripletsearch.embedding.GammaAtEdgeWarning")
@pytest.mark.parametrize("d, n_init, starts", [(1, 1, 1), (2, 3, 3)])  # the lift; 3 starts
def test_starts_never_see_the_held_out_rows(monkeypatch, d, n_init, starts):
    X, T = synthetic(n=20, d=d, m=3000, gamma=4.0, seed=15)
    seen = []
    real = ts.Embedding._run_train

    def spy(self, oracle, X0, rows, *args, **kw):
        seen.append(len(rows))
        return real(self, oracle, X0, rows, *args, **kw)

    monkeypatch.setattr(ts.Embedding, "_run_train", spy)
    emb = ts.Embedding(dim=d, n_init=n_init, random_state=0, gammas=[2.0, 4.0]).fit(T)
    k = int(round(0.1 * len(T)))
    # the starts (the lift, n_init's), the path's fits: the fit rows only; then the refit
    assert len(seen) >= starts + 2 and seen[-1] == len(T)
    assert seen[:-1] == [len(T) - k] * (len(seen) - 1)
    assert emb.embedding_.shape == (20, d)


def test_transform_uses_lbfgs_whatever_the_fit_optimizer():
    X, old, new, n, k = _catalogue(seed=16, n=40, k=3, d=2)
    adam = ts.Embedding(dim=2, gamma=8.0, optimizer="adam", batch_size=64, random_state=0)
    adam.fit(old, n_items=n)
    lbfgs = ts.Embedding(dim=2, gamma=8.0, random_state=0)
    lbfgs.embedding_, lbfgs.n_items_, lbfgs.oracle_ = adam.embedding_, n, adam.oracle_
    lbfgs.gamma_ = adam.gamma_
    np.testing.assert_array_equal(adam.transform(new), lbfgs.transform(new))


def test_native_train_casts_validation_rows_to_the_rows_type():
    X, T = synthetic(n=20, d=2, m=1000, gamma=4.0, seed=17)
    X0 = 0.1 * np.random.default_rng(0).normal(size=(20, 2))
    opts = dict(LBFGS, max_epochs=10)
    a = native_train(ts.GammaCKL(4.0), X0, T[100:].astype(np.int32), opts, 0, 1, None, T[:100])
    b = native_train(ts.GammaCKL(4.0), X0, T[100:], opts, 0, 1, None, T[:100])
    assert np.array_equal(a.embedding, b.embedding)


# ------------------------------------------------------------------ the gamma path as a function


def test_fit_walks_the_path_by_the_public_function(monkeypatch):
    """Embedding(gamma="auto") is gamma_path's walk: its chosen gamma and validation curve
    are what the function returned."""
    X, T = synthetic(n=20, d=2, m=1500, gamma=4.0, seed=6)
    calls = []
    real = ts.embedding._estimator.gamma_path

    def spy(*args, **kwargs):
        calls.append(real(*args, **kwargs))
        return calls[-1]

    monkeypatch.setattr(ts.embedding._estimator, "gamma_path", spy)
    emb = ts.Embedding(dim=2, random_state=1, max_epochs=40, gammas=[2.0, 4.0, 8.0, 16.0])
    emb.fit(T)
    (path,) = calls
    assert emb.gamma_ == path.gamma
    for key, values in path.curve().items():
        np.testing.assert_array_equal(emb.gamma_path_[key], values)


def test_gamma_path_scores_every_fit_on_the_held_out_rows():
    X, T = synthetic(n=25, d=2, m=3000, gamma=4.0, seed=7)
    fit, val = T[300:], T[:300]
    est = ts.Embedding(dim=2, max_epochs=60)
    path = ts.embedding.gamma_path(est, fit, val, random_state=3)
    assert list(path.gammas) == sorted(path.gammas) and len(path.embeddings) == len(path.gammas)
    # the walk starts at the default path's gamma nearest 4
    assert np.isclose(path.gammas, 4.0, rtol=1e-12).any()
    for g, E, nll, acc in zip(path.gammas, path.embeddings, path.val_nll, path.val_accuracy):
        lp = ts.GammaCKL(g).log_prob(E, val)  # an independent score of each fit
        assert nll == pytest.approx(-lp.mean(), rel=1e-12)
        d_close, d_far = (((E[val[:, k]] - E[val[:, 0]]) ** 2).sum(axis=1) for k in (1, 2))
        assert acc == np.mean(np.where(d_close == d_far, 0.5, 1.0 * (d_close < d_far)))
    # the chosen gamma is the parabola's vertex: within half a step of the best fitted one
    best = path.gammas[np.argmin(path.val_nll)]
    assert abs(math.log(path.gamma / best)) <= 0.5 * math.log(math.sqrt(2.0)) + 1e-12
    # where a refit starts: the fit at the fitted gamma nearest the chosen one
    nearest = int(np.argmin(np.abs(np.log(path.gammas / path.gamma))))
    np.testing.assert_array_equal(path.embedding, path.embeddings[nearest])
    again = ts.embedding.gamma_path(est, fit, val, random_state=3)
    np.testing.assert_array_equal(again.val_nll, path.val_nll)
    # the same walk from a given start, on a given path
    X0 = 0.1 * np.random.default_rng(0).standard_normal((25, 2))
    short = ts.embedding.gamma_path(est, fit, val, X0, [3.0, 6.0], start=6.0, random_state=3)
    assert set(short.gammas) <= {3.0, 6.0} and 6.0 in short.gammas


def test_a_gamma_at_an_end_of_the_path_warns_and_one_inside_does_not():
    """People of gamma 4: a path of 8 to 32 chooses its lowest end (the held-out likelihood
    would improve below it) and says so; a path around 4 does not warn."""
    import warnings

    X, T = synthetic(n=25, d=2, m=3000, gamma=4.0, seed=7)
    fit, val = T[300:], T[:300]
    est = ts.Embedding(dim=2, max_epochs=60)
    with pytest.warns(ts.embedding.GammaAtEdgeWarning, match="lowest of the gammas searched"):
        path = ts.embedding.gamma_path(est, fit, val, gammas=[8.0, 16.0, 32.0], random_state=3)
    assert path.gammas[np.argmin(path.val_nll)] == 8.0
    with warnings.catch_warnings():
        warnings.simplefilter("error", ts.embedding.GammaAtEdgeWarning)
        inside = ts.embedding.gamma_path(
            est, fit, val, gammas=[1.0, 2.0, 4.0, 8.0, 16.0], random_state=3
        )
    assert inside.gammas[np.argmin(inside.val_nll)] not in (1.0, 16.0)


def test_gamma_path_bad_input():
    X, T = synthetic(n=20, d=2, m=600, gamma=4.0, seed=8)
    est = ts.Embedding(dim=2, max_epochs=5)
    fit, val = T[100:], T[:100]
    with pytest.raises(ValueError, match="estimator: the gamma path is gamma-CKL's"):
        ts.embedding.gamma_path(ts.Embedding("t-ste"), fit, val)
    with pytest.raises(ValueError, match="init: shape"):
        ts.embedding.gamma_path(est, fit, val, np.zeros((5, 2)))
    with pytest.raises(ValueError, match="gammas: entry 0 must be > 0"):
        ts.embedding.gamma_path(est, fit, val, gammas=[-1.0, 2.0])
    with pytest.raises(TypeError, match="validation: expected an integer array"):
        ts.embedding.gamma_path(est, fit, np.ones((3, 3)))
    with pytest.raises(ValueError, match="dim: must be >= 1"):
        ts.embedding.gamma_path(ts.Embedding(dim=0), fit, val)
