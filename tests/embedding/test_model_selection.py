"""k-fold splits and grid search."""

import numpy as np
import pytest

import tripletsearch as ts
from tripletsearch import model_selection as ms
from tripletsearch.reproduce import spearman


def test_kfold_partitions_the_rows():
    folds = ms.kfold(103, 10, random_state=0)
    tests = np.concatenate([te for _, te in folds])
    assert sorted(tests) == list(range(103))
    for tr, te in folds:
        assert len(np.intersect1d(tr, te)) == 0 and len(tr) + len(te) == 103
        assert len(te) in (10, 11)
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(folds, ms.kfold(103, 10, random_state=0)))


def test_kfold_bad_input():
    with pytest.raises(ValueError, match="cv: must be >= 2"):
        ms.kfold(10, 1)
    with pytest.raises(ValueError, match="cv: 10 folds need at least 10 rows"):
        ms.kfold(5, 10)


def test_parameter_grid():
    g = ms.ParameterGrid({"a": [1, 2], "b": ["x"]})
    assert g == [{"a": 1, "b": "x"}, {"a": 2, "b": "x"}]
    assert len(ms.ParameterGrid([{"a": [1]}, {"b": [1, 2, 3]}])) == 4
    with pytest.raises(TypeError, match="param_grid"):
        ms.ParameterGrid([1, 2])


def test_grid_search_finds_the_true_model():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    Q = rng.integers(0, 30, size=(3000, 3))
    Q = Q[ts.embedding.valid_rows(Q)]
    T = ts.GammaCKL(6.0).sample(X, Q, random_state=1)
    res = ms.grid_search_cv(
        ts.Embedding(random_state=0),
        {"dim": [1, 2], "gamma": [6.0]},
        T,
        cv=4,
        random_state=0,
        n_jobs=2,
    )
    assert len(res.rows) == 2
    best = res.best()
    assert best["dim"] == 2 and best["accuracy"] > 0.8
    assert res.best("nll")["dim"] == 2
    assert res.rows[0]["accuracy_se"] > 0
    assert "accuracy" in str(res)
    per = res.best(group_by=("dim",))
    assert [r["dim"] for r in per] == [1, 2]
    # the same folds and seeds: deterministic
    again = ms.grid_search_cv(
        ts.Embedding(random_state=0),
        {"dim": [1, 2], "gamma": [6.0]},
        T,
        cv=4,
        random_state=0,
        n_jobs=1,
    )
    assert [r["accuracy"] for r in again.rows] == [r["accuracy"] for r in res.rows]
    cv = ms.cross_validate(ts.Embedding(dim=2, gamma=6.0, random_state=0), T, cv=4, random_state=0)
    assert cv["accuracy"] == best["accuracy"]
    with pytest.raises(ValueError, match="by: expected"):
        res.best("speed")


def test_grid_result_csv(tmp_path):
    res = ms.GridResult(
        [
            {
                "model": "ckl",
                "accuracy": 0.8,
                "accuracy_se": 0.01,
                "nll": 0.4,
                "nll_se": 0.02,
                "fit_time": 0.1,
                "epochs": 10,
            }
        ],
        ["model"],
    )
    res.to_csv(tmp_path / "r.csv")
    assert (tmp_path / "r.csv").read_text().splitlines()[1].startswith("ckl,0.8,0.01")


def test_spearman():
    a = np.array([3.0, 1.0, 2.0, 5.0])
    assert spearman(a, a) == pytest.approx(1.0)
    assert spearman(a, -a) == pytest.approx(-1.0)
    from scipy import stats

    b = np.array([1.0, 1.0, 2.0, 0.0])
    assert spearman(a, b) == pytest.approx(stats.spearmanr(a, b).statistic)


# ------------------------------------------------------------------ EmbeddingCV


def _cv_data(seed=0, n=30, d=2, m=4000, gamma=5.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    Q = rng.integers(0, n, size=(m, 3))
    Q = Q[(Q[:, 0] != Q[:, 1]) & (Q[:, 0] != Q[:, 2]) & (Q[:, 1] != Q[:, 2])]
    return X, ts.GammaCKL(gamma).sample(X, Q, random_state=rng)


def test_embedding_cv_refits_the_best_row_of_its_table():
    X, T = _cv_data()
    cv = ts.EmbeddingCV(dims=[1, 2, 3], gammas=[2.0, 5.0, 12.0], cv=3, random_state=0)
    cv.fit(T)
    rows = cv.cv_results_.rows
    assert len(rows) == 9 and cv.cv_results_.param_names == ["dim", "gamma", "l2"]
    # the best row by held-out NLL, found here from the table itself
    best = min(rows, key=lambda r: r["nll"])
    assert cv.best_params_ == {"dim": best["dim"], "gamma": best["gamma"], "l2": 0.0}
    # the data are 2-D with gamma 5: a 1-D embedding or gamma 2 explains them worse
    assert cv.best_params_["dim"] >= 2 and cv.best_params_["gamma"] >= 5.0
    # the refit estimator answers for the CV object
    assert cv.embedding_.shape == (30, cv.best_params_["dim"])
    assert cv.gamma_ == cv.best_params_["gamma"]
    assert cv.score(T) == cv.best_estimator_.score(T)
    # the same table as grid_search_cv with the same seed
    again = ms.grid_search_cv(
        ts.Embedding(),
        {"dim": [1, 2, 3], "gamma": [2.0, 5.0, 12.0], "l2": [0.0]},
        T,
        cv=3,
        random_state=np.random.default_rng(0),
    )
    assert [r["nll"] for r in again.rows] == [r["nll"] for r in rows]
    by_acc = ts.EmbeddingCV(dims=[1, 2], gammas=[5.0], cv=3, scoring="accuracy", random_state=0)
    by_acc.fit(T)
    assert (
        by_acc.best_params_["dim"]
        == max(by_acc.cv_results_.rows, key=lambda r: r["accuracy"])["dim"]
    )


def test_embedding_cv_auto_gamma_and_other_models():
    X, T = _cv_data(seed=1)
    cv = ts.EmbeddingCV(dims=[2], gammas="auto", cv=3, random_state=0).fit(T)
    row = cv.cv_results_.rows[0]
    assert row["gamma"] == "auto" and 2.5 < row["gamma_chosen"] < 10.0
    assert "gamma fit" in str(cv.cv_results_)
    ste = ts.EmbeddingCV("t-ste", dims=[1, 2], l2s=[0.0, 0.1], cv=3, random_state=0).fit(T)
    assert ste.cv_results_.param_names == ["dim", "l2"]
    assert np.isnan(ste.cv_results_.rows[0]["gamma_chosen"])


@pytest.mark.once  # a plot (matplotlib, not native code): once, not again under the sanitizers
def test_embedding_cv_plot():
    import matplotlib

    matplotlib.use("Agg")
    X, T = _cv_data(seed=2)
    cv = ts.EmbeddingCV(dims=[1, 2], gammas=[2.0, 5.0], cv=3, random_state=0).fit(T)
    ax = cv.plot()
    labels = sorted(t.get_text() for t in ax.get_legend().get_texts())
    assert labels == ["chosen", "dim = 1, l2 = 0", "dim = 2, l2 = 0"]
    assert ax.get_xlabel() == "gamma"
    assert cv.plot(metric="nll").get_ylabel() == "held-out NLL"
    with pytest.raises(ValueError, match="metric"):
        cv.plot(metric="speed")


@pytest.mark.parametrize(
    "kw, exc, match",
    [
        (dict(model="t-ste", gammas=[3.0]), ValueError, "gammas"),
        (dict(gammas="best"), ValueError, "gammas"),
        (dict(gammas=[0.0]), ValueError, "gammas"),
        (dict(dims=[]), ValueError, "dims"),
        (dict(dims=[0]), ValueError, "dims"),
        (dict(dims=3), TypeError, "dims"),
        (dict(l2s=[-1.0]), ValueError, "l2s"),
        (dict(scoring="speed"), ValueError, "scoring"),
        (dict(params={"dim": 3}), ValueError, "params"),
        (dict(params={"tol": -1.0}), ValueError, "tol"),
        (dict(model="nope"), ValueError, "model"),
    ],
)
def test_embedding_cv_bad_input(kw, exc, match):
    X, T = _cv_data(m=300)
    with pytest.raises(exc, match=match):
        ts.EmbeddingCV(cv=2, **kw).fit(T)


def test_embedding_cv_not_fitted():
    cv = ts.EmbeddingCV()
    with pytest.raises(AttributeError, match="not fitted"):
        _ = cv.embedding_
    with pytest.raises(RuntimeError, match="not fitted"):
        cv.plot()


def test_embedding_cv_params_clone_and_numeric_grid_without_held_out_rows():
    pytest.importorskip("sklearn")
    from sklearn.base import clone

    X, T = _cv_data(seed=4, m=1500)
    # a grid of numbers needs no held-out rows: validation_fraction=0 is fine
    cv = ts.EmbeddingCV(dims=[2], gammas=[3.0], cv=2, params={"validation_fraction": 0.0})
    cv.set_params(random_state=0).fit(T)
    assert cv.get_params()["dims"] == [2] and "dim" not in cv.get_params()
    again = clone(cv)  # its own parameters, not the refit estimator's
    assert again.get_params()["gammas"] == [3.0] and not hasattr(again, "cv_results_")
    with pytest.raises(AttributeError, match="no attribute"):
        _ = cv.fit_transform


def test_embedding_cv_failed_refit_keeps_the_previous_state():
    X, T = _cv_data(seed=5, m=1500)
    cv = ts.EmbeddingCV(dims=[2], gammas=[3.0], cv=2, random_state=0).fit(T)
    before = (cv.cv_results_, cv.best_params_, cv.best_estimator_)
    with pytest.raises(ValueError):
        cv.set_params(dims=[2, 3]).fit(T, n_items=3)  # n_items too small for the rows
    assert (cv.cv_results_, cv.best_params_, cv.best_estimator_) == before
