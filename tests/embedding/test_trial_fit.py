"""Embedding fits, scores and cross-validation on ranked and odd-one-out trials."""

import numpy as np
import pytest

import tripletsearch as ts
from tripletsearch.model_selection import cross_validate
from tripletsearch.trials import OddOneOut, RankedChoices


def _people(n=40, d=2, seed=0):
    rng = np.random.default_rng(seed)
    return rng, rng.normal(size=(n, d))


def _answer_ranked(rng, X, m, k, r, gamma=4.0):
    """Simulated people: successive gamma-CKL choices among the candidates left."""
    n = len(X)
    Z = np.array([rng.choice(n, k + 1, replace=False) for _ in range(m)])
    H, C = Z[:, 0], Z[:, 1:]
    D = ((X[C] - X[H][:, None]) ** 2).sum(-1)
    picks = []
    for q in range(m):
        left, row = list(range(k)), []
        for _ in range(r):
            w = D[q, left] ** (-gamma / 2)
            c = rng.choice(len(left), p=w / w.sum())
            row.append(C[q, left.pop(c)])
        picks.append(row)
    return RankedChoices(H, C, picks)


def _answer_odd(rng, X, m, gamma=4.0):
    Z = np.array([rng.choice(len(X), 3, replace=False) for _ in range(m)])
    pair = [(1, 2), (0, 2), (0, 1)]  # odd a: the pair (b, c)
    w = np.stack([((X[Z[:, b]] - X[Z[:, c]]) ** 2).sum(-1) ** (-gamma / 2) for b, c in pair], 1)
    odd = [Z[q, rng.choice(3, p=w[q] / w[q].sum())] for q in range(m)]
    return OddOneOut(Z, odd)


def _truth_triplets(rng, X, m):
    T = rng.integers(0, len(X), (3 * m, 3))
    T = T[(T[:, 0] != T[:, 1]) & (T[:, 0] != T[:, 2]) & (T[:, 1] != T[:, 2])][:m]
    far = ((X[T[:, 1]] - X[T[:, 0]]) ** 2).sum(1) > ((X[T[:, 2]] - X[T[:, 0]]) ** 2).sum(1)
    T[far] = T[far][:, [0, 2, 1]]
    return T


@pytest.mark.parametrize("kind", ["ranked", "odd", "unordered", "mixed"])
def test_fit_recovers_the_embedding(kind):
    rng, X = _people()
    if kind == "ranked":
        trials = _answer_ranked(rng, X, 300, 8, 2)
    elif kind == "odd":
        trials = _answer_odd(rng, X, 1200)
    elif kind == "unordered":
        t = _answer_ranked(rng, X, 300, 8, 3)
        trials = RankedChoices(t.heads, t.candidates, t.picks, ordered=False)
    else:
        trials = [_answer_ranked(rng, X, 150, 8, 2), _answer_odd(rng, X, 400)]
    test = _truth_triplets(rng, X, 2000)
    emb = ts.Embedding(dim=2, gamma=4.0, random_state=0).fit(trials)
    assert emb.embedding_.shape == (40, 2) and emb.status_ == "converged"
    assert emb.score(test) > 0.85  # random: 0.5
    assert 0.0 < emb.score(trials) <= 1.0
    # the fitted embedding explains its trials better than the truth's scrambled copy
    worse = ts.Embedding.from_fitted(X[rng.permutation(40)], gamma_=4.0, dim=2, gamma=4.0)
    assert emb.log_loss(trials) < worse.log_loss(trials)


@pytest.mark.parametrize("learn", [False, True])
def test_gamma_auto_and_learned_on_trials(learn):
    rng, X = _people(seed=1)
    trials = [_answer_odd(rng, X, 600), _answer_ranked(rng, X, 150, 6, 2)]
    emb = ts.Embedding(dim=2, gamma="auto", learn_gamma=learn, random_state=0).fit(trials)
    assert 1.5 < emb.gamma_ < 12.0  # the people's gamma is 4
    assert emb.gamma_path_ is not None and len(emb.gamma_path_["gamma"]) >= 2
    joint = ts.Embedding(dim=2, gamma=2.0, learn_gamma=True, validation_fraction=0.0)
    gamma = joint.fit(trials).gamma_  # learned with the embedding (gradient in log gamma)
    assert np.isfinite(gamma) and gamma != 2.0 and joint.gamma_path_ is None


def test_score_is_the_share_of_first_picks_made_likeliest():
    X = np.array([[0.0], [1.0], [3.0], [-2.0]])
    emb = ts.Embedding.from_fitted(X, gamma_=3.0, dim=1, gamma=3.0)
    ranked = RankedChoices([0, 0], [[1, 2, 3], [1, 2, 3]], [[1, 3], [3, 1]])
    assert emb.score(ranked) == 0.5  # 1 is the nearest: the first row right, the second not
    odd = OddOneOut([[0, 1, 2], [0, 1, 2], [0, 1, 3]], [2, 0, 3])
    assert emb.score(odd) == pytest.approx(2 / 3)
    assert emb.score(RankedChoices([0], [[1, 3]], [3])) == 0.0  # 3 at distance 2, 1 at 1
    assert emb.score(RankedChoices([1], [[0, 3]], [0])) == 1.0  # 0 at distance 1, 3 at 3
    level = ts.Embedding.from_fitted(np.array([[0.0], [1.0], [-1.0]]), gamma_=3.0, dim=1, gamma=3.0)
    assert level.score(RankedChoices([0], [[1, 2]], [1])) == 0.5  # a tie shares the credit


def test_probit_takes_pairs_only():
    rng, X = _people(n=10)
    pairs = _answer_ranked(rng, X, 60, 2, 1)
    emb = ts.Embedding("probit", dim=2, random_state=0).fit(pairs)
    assert emb.embedding_.shape == (10, 2)
    with pytest.raises(ValueError, match="model: Probit models pairs only"):
        ts.Embedding("probit", dim=2).fit(_answer_odd(rng, X, 20))


def test_bad_input():
    rng, X = _people(n=10)
    trials = _answer_ranked(rng, X, 20, 4, 2)
    with pytest.raises(ValueError, match="candidates: index .* out of range for 5 items|heads"):
        ts.Embedding(dim=2, gamma=3.0).fit(trials, n_items=5)
    with pytest.raises(ValueError, match="optimizer: trials are fitted by L-BFGS"):
        ts.Embedding(dim=2, gamma=3.0, optimizer="adam").fit(trials)
    with pytest.raises(ValueError, match="early_stopping"):
        ts.Embedding(dim=2, gamma=3.0, early_stopping=True).fit(trials)
    emb = ts.Embedding(dim=2, gamma=3.0, random_state=0).fit(trials)
    with pytest.raises(ValueError, match="items: index 12"):
        emb.score(OddOneOut([[0, 1, 12]], [12]))
    with pytest.raises(ValueError, match="picks: .* at most 4"):
        t = _answer_ranked(rng, X, 5, 8, 5)
        ts.Embedding(dim=2, gamma=3.0).fit(RankedChoices(t.heads, t.candidates, t.picks, False))
    with pytest.raises(ValueError, match="triplets: no trials"):
        ts.Embedding(dim=2, gamma=3.0).fit([trials[:0]])


def test_cross_validation_and_embedding_cv_on_trials():
    rng, X = _people(n=20, seed=2)
    trials = [_answer_odd(rng, X, 200), _answer_ranked(rng, X, 60, 6, 2)]
    res = cross_validate(ts.Embedding(dim=2, gamma=4.0), trials, cv=3, random_state=0)
    assert 0.5 < res["accuracy"] <= 1.0 and np.isfinite(res["nll"])
    cv = ts.EmbeddingCV(dims=[1, 2], gammas=[4.0], cv=3, random_state=0).fit(trials)
    assert cv.best_params_["dim"] in (1, 2) and cv.embedding_.shape[0] == 20
    assert 0.0 <= cv.score(trials) <= 1.0


# ------------------------------------------------------------------ several starts (n_init)


def _final_loss(data, n_init, seed, **kw):
    emb = ts.Embedding(dim=2, gamma=3.0, n_init=n_init, random_state=seed, **kw).fit(data)
    return float(emb.loss_curve_[-1])


@pytest.mark.parametrize("kind", ["triplets", "ranked"])
def test_n_init_keeps_the_start_of_least_loss(kind):
    """The first start is the single start's: with gamma fixed and every row trained on,
    the kept fit's training loss is at most the single start's, on every seed; on a small
    set with poor local optima, some seed's is lower (the other starts are used)."""
    rng, X = _people(n=30, seed=5)
    trials = _answer_ranked(rng, X, 60, 8, 2, gamma=3.0)
    data = trials.to_triplets() if kind == "triplets" else trials
    one = np.array([_final_loss(data, 1, s) for s in range(6)])
    five = np.array([_final_loss(data, 5, s) for s in range(6)])
    assert (five <= one + 1e-12).all(), (one, five)
    assert (five < one - 1e-6).any(), (one, five)


@pytest.mark.filterwarnings("ignore::tripletsearch.embedding.GammaAtEdgeWarning")
def test_gamma_auto_on_trials_is_chosen_on_their_implied_triplets(monkeypatch):
    """gamma="auto" on trials: the triplet fit of ``to_triplets()`` (its starts and path on
    the implied triplets it does not hold out) chooses gamma, and the one fit by the
    trials' likelihood runs on all trials at it, from the path's fit nearest it."""
    from tripletsearch.embedding import _trials

    rng, X = _people(n=20, seed=6)
    trials = _answer_ranked(rng, X, 200, 4, 2)
    implied = trials.to_triplets()
    rows, fits = [], []
    real_rows, real_trials = ts.Embedding._run_train, _trials.train_trials

    def spy_rows(self, oracle, X0, T, *args, **kw):
        out = real_rows(self, oracle, X0, T, *args, **kw)
        rows.append((len(T), float(oracle.parameter(2)), out.embedding))
        return out

    def spy_trials(oracle, init, data, *args, **kw):
        fits.append((float(oracle.parameter(2)), np.array(init), len(data)))
        return real_trials(oracle, init, data, *args, **kw)

    monkeypatch.setattr(ts.Embedding, "_run_train", spy_rows)
    monkeypatch.setattr(_trials, "train_trials", spy_trials)
    emb = ts.Embedding(dim=2, n_init=3, random_state=0, gammas=[2.0, 4.0, 8.0]).fit(trials)
    held = int(round(0.1 * len(implied)))
    assert len(rows) >= 4 and all(r[0] == len(implied) - held for r in rows)
    assert len(fits) == 1 and fits[0][0] == emb.gamma_ and fits[0][2] == len(trials)
    path = rows[3:]  # after the three starts
    nearest = min(path, key=lambda r: abs(np.log(r[1] / emb.gamma_)))
    np.testing.assert_array_equal(fits[0][1], nearest[2])
    assert list(emb.gamma_path_["gamma"]) == sorted(r[1] for r in path)


def test_n_init_is_the_same_for_any_thread_count():
    rng, X = _people(n=25, seed=7)
    trials = _answer_ranked(rng, X, 80, 6, 2)
    a = ts.Embedding(dim=2, n_init=3, random_state=1, n_jobs=1).fit(trials)
    b = ts.Embedding(dim=2, n_init=3, random_state=1, n_jobs=2).fit(trials)
    assert np.array_equal(a.embedding_, b.embedding_) and a.gamma_ == b.gamma_


def test_n_init_bad_input():
    rng, X = _people(n=10, seed=8)
    trials = _answer_ranked(rng, X, 20, 4, 2)
    with pytest.raises(ValueError, match="n_init"):
        ts.Embedding(dim=2, n_init=0).fit(trials)
    with pytest.raises(TypeError, match="n_init"):
        ts.Embedding(dim=2, n_init=2.5).fit(trials)
    with pytest.raises(ValueError, match="n_init: a given init array is one start"):
        ts.Embedding(dim=2, n_init=2, init=np.zeros((10, 2))).fit(trials.to_triplets())


def test_a_mixed_list_warns_once_of_its_uninformative_triplet_rows():
    rng, X = _people(n=20, seed=9)
    trials = _answer_ranked(rng, X, 60, 4, 2)
    T = np.array([[0, 1, 2], [3, 3, 4], [5, 6, 7]])  # the second names an item twice
    with pytest.warns(UserWarning, match="ignoring 1 of 3 rows") as record:
        ts.Embedding(dim=2, random_state=0, gammas=[2.0, 4.0, 8.0]).fit([trials, T])
    assert sum("ignoring" in str(w.message) for w in record) == 1


def test_the_bad_rows_warning_points_at_the_callers_line():
    rng, X = _people(n=20, seed=10)
    T = np.vstack([_truth_triplets(rng, X, 200), [[3, 3, 4]]])
    for data in (T, [_answer_ranked(rng, X, 40, 4, 2), T]):  # triplets; a mixed list
        with pytest.warns(UserWarning, match="ignoring 1 of") as record:
            ts.Embedding(dim=2, random_state=0, gammas=[2.0, 4.0, 8.0]).fit(data)
        assert [w.filename for w in record if "ignoring" in str(w.message)] == [__file__]
