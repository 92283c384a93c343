"""Embedding: trainer vs its NumPy twin, statistical recovery, sklearn protocol, bad input."""

import math
import pickle
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import tripletsearch as ts
from tripletsearch import _core
from tripletsearch._reference.rng import Rng, epoch_permutation
from tripletsearch._testing import ReferenceEmbedding
from tripletsearch.embedding import native_train, valid_rows


def synthetic(n=40, d=2, m=3000, gamma=4.0, seed=0):
    rng = np.random.default_rng(seed + 1000)
    X = rng.normal(size=(n, d))
    Q = rng.integers(0, n, size=(m, 3))
    Q = Q[valid_rows(Q)]
    return X, ts.GammaCKL(gamma).sample(X, Q, random_state=seed)


# ------------------------------------------------------------------ twins


@pytest.mark.twin
def test_rng_twin_matches_native_stream():
    for seed, stream in ((0, 0), (123, 5), (2**64 - 1, 7)):
        r = Rng(seed, stream)
        assert [r.next_u64() for _ in range(20)] == [
            int(v) for v in _core.rng_u64(seed, stream, 20)
        ]


@pytest.mark.twin
def test_epoch_permutation_twin_matches_native():
    for seed, epoch, m in ((7, 3, 10), (99, 1, 1000), (1, 50, 2)):
        assert epoch_permutation(seed, epoch, m) == list(_core.epoch_permutation(seed, epoch, m))


TRAJECTORIES = [
    dict(optimizer="adam", max_epochs=25),
    dict(optimizer="adam", batch_size=64, max_epochs=8),
    dict(optimizer="sgd", batch_size=100, max_epochs=8, l2=0.1),
    dict(optimizer="sgd", max_epochs=20, lr=0.5),
    dict(optimizer="lbfgs", max_epochs=15),
    dict(optimizer="lbfgs", max_epochs=15, l2=0.05),
    # the joint gradient in log gamma (no held-out rows)
    dict(optimizer="adam", learn_gamma=True, validation_fraction=0.0, max_epochs=20),
    dict(optimizer="lbfgs", learn_gamma=True, validation_fraction=0.0, max_epochs=12),
    # early stopping on held-out rows
    dict(optimizer="adam", early_stopping=True, max_epochs=60, lr=0.2),
    dict(optimizer="lbfgs", early_stopping=True, max_epochs=40),
]


@pytest.mark.twin
@pytest.mark.parametrize(
    "kw", TRAJECTORIES, ids=lambda kw: "-".join(f"{k}={v}" for k, v in kw.items())
)
@pytest.mark.parametrize("model", ["gamma-ckl", "t-ste", "probit"])
def test_native_trainer_follows_reference_trajectory(model, kw):
    if kw.get("learn_gamma") and model != "gamma-ckl":
        pytest.skip("gamma is a gamma-CKL parameter")
    X, T = synthetic(n=25, d=3, m=700)
    args = dict(model=model, dim=3, gamma=4.0, sigma=0.5, random_state=3, **kw)
    a = ts.Embedding(**args).fit(T)
    b = ReferenceEmbedding(**args).fit(T)
    assert a.n_epochs_ == b.n_epochs_ and a.status_ == b.status_
    np.testing.assert_allclose(a.loss_curve_, b.loss_curve_, rtol=1e-9)
    np.testing.assert_allclose(a.embedding_, b.embedding_, rtol=1e-7, atol=1e-9)
    assert math.isclose(a.gamma_, b.gamma_, rel_tol=1e-9) or model != "gamma-ckl"


@pytest.mark.twin
def test_pairwise_gradient_path_trajectory_matches_reference():
    X, T = synthetic(n=12, d=2, m=3000)  # n^2 <= m / 4: the dense pairwise kernel
    a = ts.Embedding(dim=2, gamma=4.0, max_epochs=10, random_state=1).fit(T)
    b = ReferenceEmbedding(dim=2, gamma=4.0, max_epochs=10, random_state=1).fit(T)
    np.testing.assert_allclose(a.loss_curve_, b.loss_curve_, rtol=1e-9)


@pytest.mark.parametrize(
    "kw", [dict(max_epochs=30), dict(optimizer="adam", batch_size=128, max_epochs=5)]
)
def test_fit_identical_for_any_thread_count(kw):
    X, T = synthetic(n=300, d=4, m=20000)
    fits = [
        ts.Embedding(dim=4, gamma=4.0, random_state=5, n_jobs=j, **kw).fit(T) for j in (1, 2, 3)
    ]
    for f in fits[1:]:
        assert np.array_equal(f.embedding_, fits[0].embedding_)
        assert np.array_equal(f.loss_curve_, fits[0].loss_curve_)


# ------------------------------------------------------------------ statistics


def test_recovers_near_bayes_accuracy_on_synthetic_data():
    X, T = synthetic(n=60, d=3, m=30000, gamma=6.0, seed=2)
    tr, te = T[:24000], T[24000:]
    bayes = float(np.mean(ts.GammaCKL(6.0).prob(X, te) > 0.5))
    emb = ts.Embedding(dim=3, gamma=6.0, random_state=0).fit(tr)
    assert emb.status_ == "converged"
    # held-out accuracy within 2 points of the Bayes rate (s.e. of either ~ 0.005)
    assert emb.score(te) > bayes - 0.02
    # and the fitted likelihood beats the truth's on the training rows (it is the MLE)
    assert emb.log_loss(tr) <= -ts.GammaCKL(6.0).log_likelihood(X, tr) / len(tr) + 1e-9


def test_learn_gamma_recovers_gamma():
    X, T = synthetic(n=50, d=2, m=40000, gamma=4.0, seed=3)
    emb = ts.Embedding(dim=2, gamma=1.0, learn_gamma=True, random_state=0).fit(T)
    assert 3.0 < emb.gamma_ < 5.3
    assert emb.oracle_.gamma == emb.gamma_


def test_alien_eggs_1d_embedding_recovers_ground_truth():
    data = ts.datasets.load_alien_eggs(300)
    emb = ts.Embedding(dim=1, gamma=3.0, random_state=0).fit(data.triplets)
    rho = stats.spearmanr(emb.embedding_[:, 0], data.truth).statistic
    assert abs(rho) > 0.9


# ------------------------------------------------------------------ protocol


def test_score_and_log_loss_match_the_oracle():
    X, T = synthetic()
    emb = ts.Embedding(dim=2, random_state=0, max_epochs=50).fit(T[:2000])
    te = np.vstack([T[2000:], [[0, 0, 1], [1, 2, 1]]])  # plus two invalid rows, ignored
    p = ts.GammaCKL(emb.gamma_).prob(emb.embedding_, T[2000:])
    assert emb.score(te) == np.mean(p > 0.5)
    assert math.isclose(emb.log_loss(te), -np.mean(np.log(p)), rel_tol=1e-10)
    np.testing.assert_array_equal(emb.predict_proba(T[2000:]), p)


def test_sklearn_cross_val_score_and_clone():
    from sklearn.base import clone
    from sklearn.model_selection import cross_val_score

    X, T = synthetic(n=30, m=2000)
    est = ts.Embedding("gamma-ckl", dim=2, gamma=4.0, random_state=0, n_items=30)
    scores = cross_val_score(est, T, cv=5)
    assert scores.shape == (5,) and np.all(scores > 0.6)
    c = clone(est)
    assert c.get_params() == est.get_params() and c is not est
    c.set_params(dim=3, model="t-ste")
    assert c.dim == 3
    with pytest.raises(ValueError, match="bogus: not a parameter"):
        c.set_params(bogus=1)
    assert "dim=3" in repr(c)


def test_unseen_items_get_an_embedding():
    X, T = synthetic(n=20)
    emb = ts.Embedding(dim=2, random_state=0, max_epochs=20).fit(T, n_items=25)
    assert emb.embedding_.shape == (25, 2) and np.isfinite(emb.embedding_).all()
    init = np.random.default_rng(0).normal(size=(25, 2))
    emb = ts.Embedding(dim=2, init=init, max_epochs=20).fit(T, n_items=25)
    np.testing.assert_array_equal(emb.embedding_[20:], init[20:])


def test_invalid_rows_are_dropped_with_a_warning():
    X, T = synthetic(n=20)
    T2 = np.vstack([T, [[1, 1, 2], [3, 4, 3], [5, 6, 6]]])
    with pytest.warns(UserWarning, match="ignoring 3 of"):
        a = ts.Embedding(random_state=0, max_epochs=5).fit(T2)
    b = ts.Embedding(random_state=0, max_epochs=5).fit(T)
    np.testing.assert_array_equal(a.embedding_, b.embedding_)


def test_verbose_shows_a_progress_bar(capsys):
    pytest.importorskip("tqdm")
    X, T = synthetic(n=20)
    ts.Embedding(random_state=0, max_epochs=3, tol=0.0, verbose=True).fit(T)
    assert "3/3" in capsys.readouterr().err  # the bar reached the last epoch


def test_verbose_without_tqdm_logs_each_epoch(capsys, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm now fails
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    X, T = synthetic(n=20)
    ts.Embedding(random_state=0, max_epochs=3, tol=0.0, verbose=True).fit(T)
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("epoch")]
    assert len(lines) == 3 and "loss" in lines[-1]


def test_callback_exception_propagates_and_stops():
    X, T = synthetic(n=20)
    seen = []

    def cb(epoch, loss, gamma):
        seen.append(epoch)
        if epoch == 2:
            raise KeyboardInterrupt
        return True

    options = dict(
        optimizer="adam",
        lr=0.05,
        batch_size=0,
        max_epochs=100,
        tol=0.0,
        n_iter_no_change=10,
        l2=0.0,
        learn_gamma=False,
    )
    with pytest.raises(KeyboardInterrupt):
        native_train(ts.GammaCKL(3.0), 0.1 * X, T, options, 1, 1, cb)
    assert seen == [1, 2]
    out = native_train(ts.GammaCKL(3.0), 0.1 * X, T, options, 1, 1, lambda *a: a[0] < 4)
    assert out[3] == 4 and out[4] == "stopped"  # stopped by the callback at epoch 4


def test_divergence_is_reported_not_returned():
    X, T = synthetic(n=20)
    emb = ts.Embedding("ste", dim=2, optimizer="sgd", lr=1e6, random_state=0)
    with pytest.raises(ts.DivergenceError, match="diverged"):
        emb.fit(T)
    assert not hasattr(emb, "embedding_")


# ------------------------------------------------------------------ bad input

T_OK = synthetic(n=10, m=200)[1]


@pytest.mark.parametrize(
    "kwargs,fit_kw,exc,match",
    [
        (dict(dim=0), {}, ValueError, "dim: must be >= 1"),
        (dict(dim=2.5), {}, TypeError, "dim: expected an integer"),
        (dict(lr=-0.1, optimizer="adam"), {}, ValueError, "lr: must be > 0"),
        (dict(batch_size=0, optimizer="adam"), {}, ValueError, "batch_size: must be >= 1"),
        (dict(batch_size=32), {}, ValueError, "batch_size: L-BFGS is full batch"),
        (dict(max_epochs=0), {}, ValueError, "max_epochs: must be >= 1"),
        (dict(tol=-1.0), {}, ValueError, "tol: must be >= 0"),
        (dict(l2=-0.5), {}, ValueError, "l2: must be >= 0"),
        (dict(gamma=0.0), {}, ValueError, "gamma: must be > 0"),
        (dict(model="probit", sigma=-1.0), {}, ValueError, "sigma: must be > 0"),
        (dict(model="ckl", mu=-1.0), {}, ValueError, "mu: must be >= 0"),
        (dict(model="t-ste", alpha=0.0), {}, ValueError, "alpha: must be > 0"),
        (dict(model="tsne"), {}, ValueError, "model: expected one of"),
        (dict(optimizer="newton"), {}, ValueError, "optimizer: expected one of"),
        (dict(model="t-ste", learn_gamma=True), {}, ValueError, "learn_gamma: only the gamma-ckl"),
        (dict(init=np.full((10, 2), np.nan)), {}, ValueError, "init: contains NaN"),
        (dict(init=np.zeros((9, 2))), {}, ValueError, r"init: expected shape \(10, 2\)"),
        (dict(), dict(n_items=5), ValueError, "n_items: 5 is smaller than the largest index"),
        (dict(n_items=3), {}, ValueError, "n_items: 3 is smaller"),
    ],
)
def test_bad_parameters(kwargs, fit_kw, exc, match):
    with pytest.raises(exc, match=match):
        ts.Embedding(**kwargs).fit(T_OK, **fit_kw)


def test_bad_triplets():
    emb = ts.Embedding()
    with pytest.raises(ValueError, match="triplets: empty"):
        emb.fit(np.zeros((0, 3), dtype=int))
    with pytest.raises(ValueError, match="triplets: no valid rows"):
        emb.fit([[0, 0, 1], [2, 1, 2], [3, 4, 4]])
    with pytest.raises(ValueError, match="triplets: negative index -1"):
        emb.fit([[0, 1, -1]])
    with pytest.raises(TypeError, match="triplets: expected an integer array"):
        emb.fit(np.ones((4, 3)))
    with pytest.raises(RuntimeError, match="not fitted"):
        emb.score(T_OK)
    fitted = ts.Embedding(max_epochs=3).fit(T_OK)
    with pytest.raises(ValueError, match="triplets: index 10"):
        fitted.predict_proba([[0, 1, 10]])


# ------------------------------------------------------------------ save / load


def test_save_load_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    Q = rng.integers(0, 30, size=(2000, 3))
    Q = Q[(Q[:, 0] != Q[:, 1]) & (Q[:, 0] != Q[:, 2]) & (Q[:, 1] != Q[:, 2])]
    T = ts.GammaCKL(3.0).sample(X, Q, random_state=1)
    emb = ts.Embedding("gamma-ckl", 2, learn_gamma=True, random_state=rng, max_epochs=50)
    emb.fit(T)
    path = tmp_path / "emb.npz"
    emb.save(path)
    back = ts.Embedding.load(path)
    np.testing.assert_array_equal(back.embedding_, emb.embedding_)
    np.testing.assert_array_equal(back.predict_proba(T[:50]), emb.predict_proba(T[:50]))
    assert back.gamma_ == emb.gamma_ and back.learn_gamma and back.random_state is None
    assert back.n_items_ == 30 and back.status_ == emb.status_
    np.testing.assert_array_equal(back.loss_curve_, emb.loss_curve_)


def test_from_fitted_is_the_fitted_estimator():
    """``Embedding.from_fitted`` of a fit's coordinates and gamma predicts, scores and
    transforms as the fitted estimator; coordinates that do not fit are refused."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(25, 2))
    Q = rng.integers(0, 25, size=(1500, 3))
    Q = Q[(Q[:, 0] != Q[:, 1]) & (Q[:, 0] != Q[:, 2]) & (Q[:, 1] != Q[:, 2])]
    T = ts.GammaCKL(3.0).sample(X, Q, random_state=1)
    emb = ts.Embedding("gamma-ckl", 2, learn_gamma=True, random_state=0, max_epochs=40).fit(T)
    params = {k: v for k, v in emb.get_params().items() if k != "random_state"}
    back = ts.Embedding.from_fitted(emb.embedding_, gamma_=emb.gamma_, **params)
    np.testing.assert_array_equal(back.predict_proba(T[:80]), emb.predict_proba(T[:80]))
    assert back.score(T) == emb.score(T) and back.gamma_ == emb.gamma_
    assert back.n_items_ == 25 and back.gamma_path_ is None and back.loss_curve_.size == 0
    with pytest.raises(ValueError, match="dim=2"):
        ts.Embedding.from_fitted(np.zeros((25, 3)), **params)
    with pytest.raises(ValueError, match="does not fit"):
        ts.Embedding.from_fitted(np.full((25, 2), np.nan), **params)


def test_load_rejects_other_files(tmp_path):
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="junk.npz: not an Embedding"):
        ts.Embedding.load(junk)
    other = tmp_path / "other.npz"
    np.savez(other, embedding=np.zeros((3, 2)))
    with pytest.raises(ValueError, match="other.npz: not an Embedding"):
        ts.Embedding.load(other)
    with pytest.raises(FileNotFoundError):
        ts.Embedding.load(tmp_path / "missing.npz")
    with pytest.raises(RuntimeError, match="not fitted"):
        ts.Embedding().save(tmp_path / "x.npz")
    emb = ts.Embedding("t-ste", 2, random_state=0, max_epochs=5).fit([[0, 1, 2], [1, 2, 0]])
    emb.save(tmp_path / "ok.npz")
    import json

    with np.load(tmp_path / "ok.npz") as f:
        meta = json.loads(str(f["meta"]))
        parts = {k: f[k] for k in f.files}
    meta["version"] = 99
    np.savez(tmp_path / "v99.npz", **{**parts, "meta": np.array(json.dumps(meta))})
    with pytest.raises(ValueError, match="unsupported Embedding file version 99"):
        ts.Embedding.load(tmp_path / "v99.npz")


def test_pickles_and_files_of_0_2_0_load():
    """Written before the estimator became a package (``tripletsearch.embedding`` was one
    module): they load fitted and predict as they did; new pickles name the public path."""
    data = Path(__file__).parent / "data"
    with open(data / "embedding_0.2.0.pkl", "rb") as fh:
        saved = pickle.load(fh)
    emb = saved["estimator"]
    assert type(emb) is ts.Embedding and emb.gammas == [2.0, 4.0, 8.0]
    assert emb.lapse == 0.0 and emb.get_params()["lapse"] == 0.0  # (added since)
    # (rtol: the file was written on a machine whose kernels may round differently)
    np.testing.assert_allclose(emb.predict_proba(saved["triplets"]), saved["proba"], rtol=1e-9)
    back = ts.Embedding.load(data / "embedding_0.2.0.npz")
    np.testing.assert_array_equal(back.embedding_, saved["embedding"])
    assert back.gamma_ == emb.gamma_ and back.max_epochs == 30  # (a list is stored as None)
    again = pickle.dumps(emb)
    assert b"tripletsearch.embedding" in again and b"_estimator" not in again


# ------------------------------------------------------------------ one accuracy rule

# integer coordinates, so the squared distances of a tie are exactly equal
TIE_X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [2.0, 0.0], [-1.0, 0.0]])
TIE_ROWS = np.array([[0, 1, 2], [0, 1, 3], [0, 2, 3], [0, 3, 4], [1, 0, 3]])


def test_a_tie_counts_a_half_in_every_accuracy_of_the_library():
    """Squared distances from the head: (1, 1) tie, (1, 4) right, (1, 4) right, (4, 1)
    wrong, (1, 1) tie: accuracy (2 + 2 / 2) / 5 = 0.6, chance level 1/2."""
    from tripletsearch.outcomes import triplet_accuracy

    assert triplet_accuracy(TIE_X, TIE_ROWS) == pytest.approx(0.6, abs=0)
    assert math.isnan(triplet_accuracy(TIE_X, np.zeros((0, 3), np.int64)))
    for model in ("gamma-ckl", "t-ste", "ckl", "probit"):
        emb = ts.Embedding(dim=2, model=model, max_epochs=2, random_state=0).fit(TIE_ROWS)
        emb.embedding_ = TIE_X.copy()  # the fitted model's embedding, with its ties
        assert emb.score(TIE_ROWS) == 0.6, model


def test_the_gamma_path_counts_a_tie_a_half_as_the_score_does():
    """The path's held-out accuracy of a fit with exact ties: the closed form, as
    ``Embedding.score`` and the outcomes give it on the same embedding and rows."""
    from tripletsearch.embedding._path import walk_gamma_path
    from tripletsearch.embedding._train import fit_options
    from tripletsearch.outcomes import triplet_accuracy

    def fits_to_the_ties(oracle, start, rows, options, seed):  # a trainer's signature
        return TIE_X.copy()

    est = ts.Embedding(dim=2, max_epochs=2, random_state=0)
    options = {**fit_options(est._validate_params()), "learn_gamma": False}
    with pytest.warns(ts.embedding.GammaAtEdgeWarning):  # a path of two: an end is best
        path = walk_gamma_path(
            TIE_X,
            TIE_ROWS,
            TIE_ROWS,
            np.array([2.0, 4.0]),
            0,
            train=fits_to_the_ties,
            options=options,
            seed=1,
            refine=False,
        )
    assert list(path.val_accuracy) == [0.6, 0.6]
    fitted = est.fit(TIE_ROWS)
    fitted.embedding_ = TIE_X.copy()
    assert fitted.score(TIE_ROWS) == triplet_accuracy(TIE_X, TIE_ROWS) == 0.6


def test_an_empty_file_read_is_refused_as_empty(tmp_path):
    """An export without triplets read by np.loadtxt(ndmin=2) is shape (0, 1): said empty."""
    path = tmp_path / "triplets.csv"
    path.write_text("head,closer,farther\n")
    with pytest.warns(UserWarning):  # (NumPy's: the file holds no data)
        T = np.loadtxt(path, delimiter=",", skiprows=1, dtype=int, ndmin=2)
    with pytest.raises(ValueError, match="triplets: empty"):
        ts.Embedding("gamma-ckl", dim=2, n_items=5).fit(T)
    with pytest.raises(ValueError, match="triplets: empty"):
        ts.Embedding("gamma-ckl", dim=2, n_items=5).fit(np.zeros((0, 3), dtype=int))
