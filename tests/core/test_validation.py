"""Bad input: a TypeError/ValueError naming the argument, never a crash or garbage."""

import numpy as np
import pytest
from conftest import MODELS

import tripletsearch as ts
from tripletsearch import _reference as ref

X = np.random.default_rng(0).normal(size=(5, 2))
T = np.array([[0, 1, 2], [3, 4, 0]])
BACKENDS = [pytest.param(ts, id="native"), pytest.param(ref, id="reference")]
METHODS = ["prob", "log_prob", "log_likelihood", "grad"]


def call(backend, method, X_, T_, **kw):
    return getattr(backend.GammaCKL(2.0), method)(X_, T_, **kw)


@pytest.mark.twin
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("method", METHODS)
def test_index_out_of_range(backend, method):
    with pytest.raises(ValueError, match=r"triplets: index 5 at position \(1, 1\) is out of range"):
        call(backend, method, X, [[0, 1, 2], [3, 5, 0]])


@pytest.mark.twin
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("method", METHODS)
def test_negative_index(backend, method):
    with pytest.raises(ValueError, match=r"triplets: index -1 at position \(0, 2\)"):
        call(backend, method, X, [[0, 1, -1]])


@pytest.mark.twin
@pytest.mark.parametrize("method", METHODS)
def test_huge_index_does_not_wrap(method):
    with pytest.raises(ValueError, match="triplets: index"):
        call(ts, method, X, np.array([[0, 1, 2**62]]))
    with pytest.raises(ValueError, match="triplets: index too large"):
        call(ts, method, X, np.array([[0, 1, 2**64 - 1]], dtype=np.uint64))


@pytest.mark.twin
@pytest.mark.parametrize("method", METHODS)
def test_float_triplets_rejected(method):
    with pytest.raises(TypeError, match="triplets: expected an integer array, got dtype float64"):
        call(ts, method, X, T.astype(float))


@pytest.mark.twin
@pytest.mark.parametrize("method", METHODS)
def test_bool_triplets_rejected(method):
    with pytest.raises(TypeError, match="triplets: expected an integer array, got dtype bool"):
        call(ts, method, X, T > 1)


def test_other_integer_dtypes_accepted():
    base = ts.GammaCKL(2.0).prob(X, T)
    for dt in (np.int8, np.int32, np.uint16, np.uint64):
        np.testing.assert_array_equal(ts.GammaCKL(2.0).prob(X, T.astype(dt)), base)
    np.testing.assert_array_equal(ts.GammaCKL(2.0).prob(X, T.tolist()), base)
    np.testing.assert_array_equal(ts.GammaCKL(2.0).prob(X, np.asfortranarray(T)), base)


@pytest.mark.parametrize("bad", [np.zeros((4, 2), int), np.zeros(3, int), np.zeros((2, 3, 1), int)])
def test_triplets_wrong_shape(bad):
    with pytest.raises(ValueError, match="triplets: expected"):
        ts.GammaCKL(2.0).prob(X, bad)


@pytest.mark.parametrize(
    "bad", [np.zeros(5), np.zeros((5, 2, 1)), np.zeros((0, 2)), np.zeros((5, 0))]
)
def test_X_wrong_shape(bad):
    with pytest.raises(ValueError, match="X: "):
        ts.GammaCKL(2.0).prob(bad, T[:0])


@pytest.mark.twin
@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("method", METHODS)
def test_nonfinite_X(value, method):
    Xb = X.copy()
    Xb[3, 1] = value
    with pytest.raises(ValueError, match="X: contains NaN or inf"):
        call(ts, method, Xb, T)


@pytest.mark.parametrize(
    "bad",
    [
        np.array([["a", "b"]]),
        np.ones((2, 2), dtype=complex),
        np.ones((2, 2), dtype=bool),
        [[1, None]],
    ],
)
def test_X_wrong_dtype(bad):
    with pytest.raises(TypeError, match="X: "):
        ts.GammaCKL(2.0).prob(bad, T[:0])


@pytest.mark.parametrize("gamma", [0.0, -1.0, np.nan, np.inf])
def test_gamma_must_be_positive(gamma):
    with pytest.raises(ValueError, match="gamma: must be"):
        ts.GammaCKL(gamma)


@pytest.mark.parametrize("gamma", ["3", None, True, [3.0]])
def test_gamma_type(gamma):
    with pytest.raises(TypeError, match="gamma: expected a real number"):
        ts.GammaCKL(gamma)


@pytest.mark.parametrize("sigma", [0.0, -0.1, np.nan])
def test_sigma_must_be_positive(sigma):
    with pytest.raises(ValueError, match="sigma: must be"):
        ts.Probit(sigma)


@pytest.mark.parametrize("mu", [-1e-9, -1.0, np.inf])
def test_mu_must_be_nonnegative(mu):
    with pytest.raises(ValueError, match="mu: must be"):
        ts.CKL(mu)


@pytest.mark.parametrize("alpha", [0.0, -2.0, np.nan])
def test_alpha_must_be_positive(alpha):
    with pytest.raises(ValueError, match="alpha: must be"):
        ts.TSTE(alpha)


@pytest.mark.twin
@pytest.mark.parametrize("method", METHODS)
def test_n_jobs_zero(method):
    with pytest.raises(ValueError, match="n_jobs: must be nonzero"):
        call(ts, method, X, T, n_jobs=0)


@pytest.mark.parametrize("n_jobs", [1.5, "2", True])
def test_n_jobs_type(n_jobs):
    with pytest.raises(TypeError, match="n_jobs: expected None or an integer"):
        ts.GammaCKL(2.0).grad(X, T, n_jobs=n_jobs)


def test_n_jobs_negative_means_all_but():
    np.testing.assert_array_equal(
        ts.GammaCKL(2.0).grad(X, T, n_jobs=-1), ts.GammaCKL(2.0).grad(X, T, n_jobs=1)
    )


@pytest.mark.parametrize("cls,rcls,kw", MODELS)
def test_empty_triplets_every_model(cls, rcls, kw):
    o = cls(**kw)
    assert o.log_likelihood(X, []) == 0.0
    assert o.prob(X, np.zeros((0, 3), dtype=float)).shape == (0,)  # empty: dtype irrelevant


def test_empty_with_wrong_columns():
    with pytest.raises(ValueError, match="triplets: expected 3 columns"):
        ts.GammaCKL(2.0).prob(X, np.zeros((0, 2), dtype=int))


def test_sample_bad_queries_and_random_state():
    o = ts.GammaCKL(2.0)
    with pytest.raises(ValueError, match="queries: index 9"):
        o.sample(X, [[0, 1, 9]])
    with pytest.raises(TypeError, match="queries: expected an integer array"):
        o.sample(X, [[0.0, 1.0, 2.0]])
    with pytest.raises(TypeError, match="random_state: "):
        o.sample(X, T, random_state="seed")
    with pytest.raises(ValueError, match="random_state: seed must be >= 0"):
        o.sample(X, T, random_state=-3)


@pytest.mark.twin
@pytest.mark.parametrize("backend", BACKENDS)
def test_choice_prob_index_out_of_range(backend):
    o = backend.GammaCKL(2.0)
    with pytest.raises(ValueError, match=r"heads: index 7 at position \(1\)"):
        o.choice_prob(X, [0, 7], [[1, 2], [2, 3]])
    with pytest.raises(ValueError, match=r"candidates: index -2 at position \(1, 0\)"):
        o.choice_prob(X, [0, 1], [[1, 2], [-2, 3]])


def test_choice_prob_bad_input():
    o = ts.GammaCKL(2.0)
    with pytest.raises(ValueError, match="candidates: expected one row per head"):
        o.choice_prob(X, [0, 1], [[1, 2]])
    with pytest.raises(TypeError, match="heads: expected an integer array"):
        o.choice_prob(X, [0.5], [[1, 2]])
    with pytest.raises(ValueError, match="candidates: expected a 2-d array"):
        o.choice_prob(X, [0], [1, 2])
    assert o.choice_prob(X, [], np.zeros((0, 4), int)).shape == (0, 4)


def test_direct_core_call_with_bad_shape_raises():
    from tripletsearch import _core

    spec = _core.OracleSpec(_core.ModelKind.GammaCKL, 2.0)
    with pytest.raises(ValueError, match="triplets: expected 3 columns"):
        _core.oracle_prob(spec, X, np.zeros((2, 2), dtype=np.int64), 1)
    with pytest.raises(ValueError, match="n_jobs"):
        _core.oracle_grad(spec, X, T, 0)
    with pytest.raises(ValueError, match="triplets: index 5"):
        _core.oracle_grad(spec, X, np.array([[0, 1, 5]]), 1)
    with pytest.raises(ValueError, match="gamma: must be > 0"):
        _core.OracleSpec(_core.ModelKind.GammaCKL, -1.0)
    with pytest.raises(TypeError):
        _core.oracle_prob(0, X, T, 1)  # the spec is a typed object, not an integer code
