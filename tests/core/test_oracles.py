"""Oracle kernels: native == NumPy reference, closed forms, gradients, invariances."""

import math

import numpy as np
import pytest
from conftest import MODELS, random_problem
from scipy import special, stats

import tripletsearch as ts
from tripletsearch import _reference as ref


def assert_array_close(a, b, rtol=1e-10):
    """Elementwise rtol, with an absolute floor at rtol * max|b| (cancellation in sums)."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape
    assert np.array_equal(np.isfinite(a), np.isfinite(b))
    fin = np.isfinite(b)
    np.testing.assert_array_equal(a[~fin], b[~fin])
    scale = np.max(np.abs(b[fin])) if fin.any() else 0.0
    np.testing.assert_allclose(a[fin], b[fin], rtol=rtol, atol=rtol * scale)


# ------------------------------------------------------------------ native vs reference

CASES = [  # (n, d, m): d = 1 and d = 100, sparse (row path) and dense (pairwise path)
    (30, 1, 500),
    (40, 2, 2000),
    (25, 5, 8000),  # dense: n^2 <= m / 4
    (60, 100, 300),
    (12, 100, 1000),  # dense, d = 100
]


@pytest.mark.twin
@pytest.mark.parametrize("n,d,m", CASES)
@pytest.mark.parametrize("cls,rcls,kw", MODELS)
def test_native_matches_reference(cls, rcls, kw, n, d, m):
    X, T = random_problem(n, d, m, seed=n * 1000 + d)
    nat, rf = cls(**kw), rcls(**kw)
    assert_array_close(nat.prob(X, T), rf.prob(X, T))
    assert_array_close(nat.log_prob(X, T), rf.log_prob(X, T))
    assert_array_close(nat.grad(X, T), rf.grad(X, T))
    ll_n, ll_r = nat.log_likelihood(X, T), rf.log_likelihood(X, T)
    assert ll_n == ll_r or math.isclose(ll_n, ll_r, rel_tol=1e-10)


@pytest.mark.twin
@pytest.mark.parametrize("gamma", [0.5, 2.0, 2.5, 25.0, 100.0])
@pytest.mark.parametrize("n,d,m", CASES)
def test_gammackl_native_matches_reference_over_gamma(gamma, n, d, m):
    X, T = random_problem(n, d, m, seed=int(gamma * 10) + d)
    nat, rf = ts.GammaCKL(gamma), ref.GammaCKL(gamma)
    assert_array_close(nat.prob(X, T), rf.prob(X, T))
    assert_array_close(nat.log_prob(X, T), rf.log_prob(X, T))
    assert_array_close(nat.grad(X, T), rf.grad(X, T))
    assert math.isclose(nat.log_likelihood(X, T), rf.log_likelihood(X, T), rel_tol=1e-10)


@pytest.mark.twin
@pytest.mark.parametrize("gamma", [2.0, 7.0, 100.0])
def test_gammackl_grad_across_scales_matches_reference(gamma):
    """Integer gamma takes a log-free fast path whose range switch depends on the scale."""
    for scale in (1e-150, 1e-8, 1.0, 1e8, 1e140):
        for n, m in ((20, 3000), (50, 400)):  # pairwise and row paths
            X, T = random_problem(n, 3, m, seed=7, scale=scale)
            assert_array_close(ts.GammaCKL(gamma).grad(X, T), ref.GammaCKL(gamma).grad(X, T))


# ------------------------------------------------------------------ closed forms


def _direct_prob(cls, kw, X, T):
    """Textbook formulas, evaluated naively (fine at moderate scales)."""
    t, i, j = T.T
    Di = ((X[i] - X[t]) ** 2).sum(1)
    Dj = ((X[j] - X[t]) ** 2).sum(1)
    if cls is ts.GammaCKL:
        g = kw["gamma"]
        return Dj ** (g / 2) / (Di ** (g / 2) + Dj ** (g / 2))
    if cls is ts.CKL:
        mu = kw["mu"]
        return (mu + Dj) / (2 * mu + Di + Dj)
    if cls is ts.TSTE:
        a = kw.get("alpha") or max(X.shape[1] - 1, 1)
        Ki = (1 + Di / a) ** (-(a + 1) / 2)
        Kj = (1 + Dj / a) ** (-(a + 1) / 2)
        return Ki / (Ki + Kj)
    if cls is ts.STE:
        return np.exp(-Di) / (np.exp(-Di) + np.exp(-Dj))
    if cls is ts.Probit:
        # signed distance of x_t from the bisecting hyperplane of x_i, x_j, over sigma
        u = (X[j] - X[i]) / np.linalg.norm(X[j] - X[i], axis=1)[:, None]
        mid = 0.5 * (X[i] + X[j])
        return special.ndtr(((mid - X[t]) * u).sum(1) / kw["sigma"])
    raise AssertionError(cls)


@pytest.mark.parametrize("cls,rcls,kw", MODELS)
def test_prob_matches_textbook_formula(cls, rcls, kw):
    X, T = random_problem(50, 4, 2000, seed=3, degenerate=False)
    T = T[(T[:, 0] != T[:, 1]) & (T[:, 0] != T[:, 2]) & (T[:, 1] != T[:, 2])]
    np.testing.assert_allclose(cls(**kw).prob(X, T), _direct_prob(cls, kw, X, T), rtol=1e-12)


def test_ckl_is_gammackl_with_gamma_2():
    X, T = random_problem(30, 3, 500, seed=4)
    np.testing.assert_allclose(ts.CKL(0.0).log_prob(X, T), ts.GammaCKL(2.0).log_prob(X, T))


@pytest.mark.parametrize("cls,rcls,kw", MODELS)
def test_swapping_i_and_j_complements_probability(cls, rcls, kw):
    X, T = random_problem(40, 3, 1000, seed=5, degenerate=False)
    T = T[(T[:, 0] != T[:, 1]) & (T[:, 0] != T[:, 2])]
    o = cls(**kw)
    np.testing.assert_allclose(o.prob(X, T) + o.prob(X, T[:, [0, 2, 1]]), 1.0, rtol=1e-13)


def test_reference_log_ndtr_matches_scipy():
    z = np.concatenate([np.linspace(-60, 10, 2001), [-1e3, -40.0, -37.0, -36.99, 0.0, 37.0]])
    log_cdf, cdf, mills = ref.oracles.normal_tail(z)
    np.testing.assert_allclose(log_cdf, special.log_ndtr(z), rtol=1e-13)
    np.testing.assert_allclose(cdf, special.ndtr(z), rtol=1e-13, atol=1e-300)
    expect = np.exp(stats.norm.logpdf(z) - special.log_ndtr(z))
    np.testing.assert_allclose(mills, expect, rtol=1e-9)


def test_probit_log_prob_deep_tail_matches_scipy():
    # x_t far on j's side of the bisector: z = -(offset) / sigma, down to -1e4
    X = np.array([[0.0, 0.0], [-1.0, 0.0], [1.0, 0.0], [3.0, 0.0], [40.0, 0.0], [1e3, 0]])
    T = np.array([[k, 1, 2] for k in range(3, 6)])
    sigma = 0.1
    z = -X[3:, 0] / sigma
    np.testing.assert_allclose(ts.Probit(sigma).log_prob(X, T), special.log_ndtr(z), rtol=1e-12)


# ------------------------------------------------------------------ gradients


def _finite_difference(oracle, X, T, h=1e-6):
    G = np.zeros_like(X)
    for k in range(X.shape[0]):
        for a in range(X.shape[1]):
            step = h * max(1.0, abs(X[k, a]))
            Xp, Xm = X.copy(), X.copy()
            Xp[k, a] += step
            Xm[k, a] -= step
            G[k, a] = (oracle.log_likelihood(Xp, T) - oracle.log_likelihood(Xm, T)) / (2 * step)
    return G


@pytest.mark.parametrize(
    "cls,rcls,kw", MODELS + [pytest.param(ts.GammaCKL, None, {"gamma": 25.0}, id="g25")]
)
@pytest.mark.parametrize("n,m", [(8, 60), (6, 300)])  # row path and pairwise path
def test_grad_matches_central_differences(cls, rcls, kw, n, m):
    X, T = random_problem(n, 3, m, seed=n + m)
    T = T[T[:, 0] != T[:, 2]]  # t == j rows have log p = -inf (zero gradient by convention)
    o = cls(**kw)
    G = o.grad(X, T)
    fd = _finite_difference(o, X, T)
    np.testing.assert_allclose(G, fd, rtol=2e-5, atol=2e-5 * np.abs(fd).max())


def test_grad_is_translation_invariant():
    # sum over items of the gradient vanishes: p depends on differences only
    for cls, _, kw in [p.values for p in MODELS]:
        X, T = random_problem(30, 4, 3000, seed=9)
        G = cls(**kw).grad(X, T)
        assert np.abs(G.sum(0)).max() <= 1e-9 * np.abs(G).max()


# ------------------------------------------------------------------ scale, extremes


@pytest.mark.parametrize(
    "cls,kw",
    [(ts.GammaCKL, {"gamma": 100.0}), (ts.GammaCKL, {"gamma": 2.5}), (ts.CKL, {"mu": 0.0})],
)
def test_scale_free_models_are_invariant_to_scaling(cls, kw):
    X, T = random_problem(40, 5, 4000, seed=11)
    o = cls(**kw)
    lp = o.log_prob(X, T)
    G = o.grad(X, T)
    for c in (1e-8, 1e-3, 1e3, 1e8):
        np.testing.assert_allclose(o.log_prob(c * X, T), lp, rtol=1e-9, atol=1e-12)
        # log p(cX) = log p(X): the gradient scales as 1/c
        np.testing.assert_allclose(c * o.grad(c * X, T), G, rtol=1e-8, atol=1e-9 * np.abs(G).max())


def test_gamma_100_stays_finite_and_correct_at_extreme_scales():
    # three collinear points: D_i = 1, D_j = 4 (times scale^2); p = 1 / (1 + (1/4)^50)
    o = ts.GammaCKL(100.0)
    for scale in (1e-8, 1.0, 1e8):
        X = scale * np.array([[0.0], [1.0], [2.0]])
        lp_closer = o.log_prob(X, [[0, 1, 2]])[0]
        lp_farther = o.log_prob(X, [[0, 2, 1]])[0]
        assert math.isclose(lp_farther, 100 * math.log(0.5), rel_tol=1e-12)  # = -69.31
        assert math.isclose(lp_closer, -(0.25**50), rel_tol=1e-9)
        assert np.all(np.isfinite(o.grad(X, [[0, 1, 2], [0, 2, 1]])))


def test_degenerate_rows_follow_the_documented_rules():
    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0], [1.0, 0.0]])  # item 3 coincides with 1
    T = np.array([[0, 0, 1], [0, 1, 0], [0, 1, 1], [1, 3, 2], [1, 2, 3], [0, 0, 0]])
    for cls, _, kw in [p.values for p in MODELS]:
        o = cls(**kw)
        p = o.prob(X, T)
        assert p[0] == 1.0 and p[5] == 1.0  # t == i
        assert p[1] == 0.0  # t == j != i
        assert p[2] == 0.5  # i == j
        lp = o.log_prob(X, T)
        assert lp[0] == 0.0 and lp[1] == -np.inf
        assert np.all(np.isfinite(lp[[2, 3, 4]]))  # coincident points: finite
        G = o.grad(X, T)
        assert np.all(np.isfinite(G))
        assert np.all(o.grad(X, T[[0, 1, 2, 5]]) == 0.0)
    # scale-free models: a coincident closer item wins with (numerically) certainty
    assert ts.GammaCKL(2.0).prob(X, T[[3]])[0] == 1.0


def test_empty_triplets():
    X = np.ones((3, 2))
    for cls, _, kw in [p.values for p in MODELS]:
        o = cls(**kw)
        for empty in ([], np.empty((0, 3), dtype=np.int64)):
            assert o.prob(X, empty).shape == (0,)
            assert o.log_prob(X, empty).shape == (0,)
            assert o.log_likelihood(X, empty) == 0.0
            np.testing.assert_array_equal(o.grad(X, empty), np.zeros((3, 2)))
            assert o.sample(X, empty).shape == (0, 3)


# ------------------------------------------------------------------ threads


@pytest.mark.parametrize("cls,rcls,kw", MODELS)
@pytest.mark.parametrize("n,m", [(300, 20000), (20, 20000)])  # row path, pairwise path
def test_results_bitwise_identical_for_any_thread_count(cls, rcls, kw, n, m):
    X, T = random_problem(n, 7, m, seed=13)
    o = cls(**kw)
    G1, L1, P1 = o.grad(X, T, n_jobs=1), o.log_likelihood(X, T, n_jobs=1), o.prob(X, T, n_jobs=1)
    for jobs in (2, 3):
        assert np.array_equal(o.grad(X, T, n_jobs=jobs), G1)
        assert o.log_likelihood(X, T, n_jobs=jobs) == L1
        assert np.array_equal(o.prob(X, T, n_jobs=jobs), P1)


# ------------------------------------------------------------------ sampling


@pytest.mark.parametrize("cls,rcls,kw", MODELS)
def test_sample_frequencies_match_prob(cls, rcls, kw):
    """Binomial test per query: a wrong sampler (or prob) fails it."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(6, 2))
    queries = np.array([[0, 1, 2], [3, 4, 5], [5, 0, 3], [1, 2, 4]])
    reps = 4000
    Q = np.repeat(queries, reps, axis=0)
    o = cls(**kw)
    ans = o.sample(X, Q, random_state=7)
    assert np.array_equal(ans[:, 0], Q[:, 0])
    assert np.array_equal(np.sort(ans[:, 1:], 1), np.sort(Q[:, 1:], 1))
    kept = (ans[:, 1] == Q[:, 1]).reshape(len(queries), reps).sum(1)
    p = o.prob(X, queries)
    for k in range(len(queries)):
        assert stats.binomtest(int(kept[k]), reps, p[k]).pvalue > 1e-4


@pytest.mark.twin
def test_sample_is_reproducible_and_respects_the_index_rule():
    X, T = random_problem(20, 3, 500, seed=1)
    o = ts.GammaCKL(3.0)
    a = o.sample(X, T, random_state=42)
    assert np.array_equal(a, o.sample(X, T, random_state=42))
    assert np.array_equal(a, ref.GammaCKL(3.0).sample(X, T, random_state=42))
    assert tuple(a[0]) == tuple(T[0])  # t == i: never swapped
    assert tuple(a[1]) == (T[1, 0], T[1, 2], T[1, 1])  # t == j: always swapped


# ------------------------------------------------------------------ k-alternative choice


@pytest.mark.twin
@pytest.mark.parametrize(
    "cls,kw",
    [
        (ts.GammaCKL, {"gamma": 3.0}),
        (ts.GammaCKL, {"gamma": 100.0}),
        (ts.CKL, {"mu": 0.1}),
        (ts.TSTE, {}),
        (ts.STE, {}),
    ],
)
def test_choice_prob(cls, kw):
    rng = np.random.default_rng(8)
    X = rng.normal(size=(50, 4))
    heads = rng.integers(0, 50, size=300)
    cands = rng.integers(0, 50, size=(300, 4))
    cands[0, 2] = heads[0]
    o = cls(**kw)
    rcls = getattr(ref, cls.__name__)
    P = o.choice_prob(X, heads, cands)
    assert P.shape == (300, 4)
    np.testing.assert_allclose(P.sum(1), 1.0, rtol=1e-12)
    assert_array_close(P, rcls(**kw).choice_prob(X, heads, cands))
    assert P[0, 2] == 1.0
    # two candidates: the pairwise model
    pair = o.choice_prob(X, heads, cands[:, :2])[:, 0]
    T = np.column_stack([heads, cands[:, :2]])
    keep = (T[:, 0] != T[:, 1]) & (T[:, 0] != T[:, 2])
    np.testing.assert_allclose(pair[keep], o.prob(X, T)[keep], rtol=1e-12)


def test_gammackl_choice_prob_closed_form():
    X = np.array([[0.0], [1.0], [2.0], [4.0]])
    g = 3.0
    P = ts.GammaCKL(g).choice_prob(X, [0], [[1, 2, 3]])[0]
    w = np.array([1.0, 2.0, 4.0]) ** (-g)
    np.testing.assert_allclose(P, w / w.sum(), rtol=1e-14)
    big = 1e8 * X
    np.testing.assert_allclose(ts.GammaCKL(g).choice_prob(big, [0], [[1, 2, 3]])[0], P, rtol=1e-12)


def test_probit_has_no_choice_model():
    assert not hasattr(ts.Probit(0.1), "choice_prob")


def test_repr_and_equality():
    assert repr(ts.GammaCKL(3)) == "GammaCKL(gamma=3.0)"
    assert ts.TSTE() == ts.TSTE(None) and ts.TSTE(2.0) != ts.TSTE(3.0)
    assert len({ts.CKL(0.1), ts.CKL(0.1)}) == 1


# ------------------------------------------------------------------ the public specification


@pytest.mark.parametrize(
    "oracle, kind, params, scale_free",
    [  # params: the parameter in 1, 2 and 5 dimensions
        (ts.GammaCKL(2.5), "GammaCKL", (2.5, 2.5, 2.5), True),
        (ts.CKL(0.0), "CKL", (0.0, 0.0, 0.0), True),
        (ts.CKL(0.5), "CKL", (0.5, 0.5, 0.5), False),
        (ts.TSTE(), "TSTE", (1.0, 1.0, 4.0), False),  # alpha None: max(d - 1, 1)
        (ts.TSTE(3.0), "TSTE", (3.0, 3.0, 3.0), False),
        (ts.STE(), "STE", (0.0, 0.0, 0.0), False),
        (ts.Probit(0.2), "Probit", (0.2, 0.2, 0.2), False),
    ],
)
def test_an_oracles_specification_is_public_and_read_only(oracle, kind, params, scale_free):
    assert oracle.kind == kind
    assert tuple(oracle.parameter(d) for d in (1, 2, 5)) == params
    assert oracle.scale_free is scale_free
    for d, p in zip((1, 2, 5), params):
        assert oracle.spec(d) == ts._core.OracleSpec(getattr(ts._core.ModelKind, kind), p)
    with pytest.raises(AttributeError):
        oracle.kind = "CKL"
    with pytest.raises(AttributeError):
        oracle.scale_free = True
