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
