"""The native scoring of the triplet sampler (collect/information.hpp): its NumPy twin, closed
forms of the information, the consistency of the two kernels, threads, ISAs, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tripletsearch import _core
from tripletsearch._reference import collect as ref
from tripletsearch._reference import oracles as ref_oracles

K = _core.ModelKind
# (native spec, twin model) of every model with a log-odds form
SPECS = [
    pytest.param(_core.OracleSpec(K.GammaCKL, 3.0), ref_oracles.GammaCKL(3.0), id="gammackl-3"),
    pytest.param(_core.OracleSpec(K.GammaCKL, 3.7), ref_oracles.GammaCKL(3.7), id="gammackl-3.7"),
    pytest.param(_core.OracleSpec(K.CKL, 0.05), ref_oracles.CKL(0.05), id="ckl-0.05"),
    pytest.param(_core.OracleSpec(K.TSTE, 1.0), ref_oracles.TSTE(1.0), id="tste-1"),
    pytest.param(_core.OracleSpec(K.STE, 0.0), ref_oracles.STE(), id="ste"),
]
ISAS = ["avx2", "portable"]


def info_tolerance(isa, lapse):
    """I is a difference of entropies of order log 2: its rounding is absolute. The AVX2
    lanes of lapse 0 run in float (sums in double): about 1e-7 of log 2."""
    if isa == "avx2" and lapse == 0.0:
        return {"rtol": 0.0, "atol": 2e-7}
    return {"rtol": 1e-10, "atol": 1e-13}


@pytest.fixture(params=ISAS)
def isa(request):
    before = _core.simd_isa()
    if not _core.set_simd_isa(request.param):
        pytest.skip(f"{request.param} kernels unavailable")
    yield request.param
    _core.set_simd_isa(before)


def problem(seed, n=40, d=3, M=64, r=6, C=50):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    S = rng.normal(size=(M, d))
    answers = np.stack([rng.choice(n, 2, replace=False) for _ in range(r)]).astype(np.int64)
    pairs = np.stack([rng.choice(n, 2, replace=False) for _ in range(C)]).astype(np.int64)
    return X, S, answers, pairs


# ---------------------------------------------------------------------- the twin
@pytest.mark.twin
@pytest.mark.parametrize("spec, model", SPECS)
@pytest.mark.parametrize("lapse", [0.0, 0.05])
def test_log_weights_twin(spec, model, lapse, isa):
    X, S, answers, _ = problem(1)
    prior = np.random.default_rng(2).normal(size=len(S))
    native = _core.collect_log_weights(spec, lapse, X, S, answers, prior, 1)
    twin = ref.log_weights(model, lapse, X, S, answers, prior)
    np.testing.assert_allclose(native, twin, rtol=1e-10, atol=1e-12)


@pytest.mark.twin
@pytest.mark.parametrize("spec, model", SPECS)
@pytest.mark.parametrize("lapse", [0.0, 0.05])
def test_table_log_weights_twin_and_geometry(spec, model, lapse, isa):
    # M = 131: blocks of 64, the AVX2 lanes and a scalar tail; the same sums as the
    # geometry's kernel (the log-odds of each answer from the table's terms)
    X, _, answers, _ = problem(11, M=131, r=9)
    S = np.random.default_rng(12).normal(size=(131, X.shape[1]))
    prior = np.random.default_rng(13).normal(size=len(S))
    prior[5] = -np.inf
    F = _core.collect_log_odds(spec, X, S, np.arange(len(X)), 1)
    native = _core.collect_table_log_weights(lapse, F, answers, prior, 1)
    twin = ref.table_log_weights(lapse, F, answers, prior)
    np.testing.assert_allclose(native, twin, rtol=1e-12, atol=1e-13)
    geometry = _core.collect_log_weights(spec, lapse, X, S, answers, prior, 1)
    np.testing.assert_allclose(native, geometry, rtol=1e-11, atol=1e-12)
    assert native[5] == -np.inf and np.isfinite(np.delete(native, 5)).all()


def test_table_log_weights_closed_form_and_extremes(isa):
    # log sigmoid(z) at z = 0, +-2, +-40 and +-800 (exp(-|z|) below double's range)
    z = np.array([0.0, 2.0, -2.0, 40.0, -40.0, 800.0, -800.0])
    F = np.stack([np.zeros_like(z), z])  # answer (0 closer, 1 farther): log-odds F[1] - F[0]
    got = _core.collect_table_log_weights(0.0, F, np.array([[0, 1]]), np.zeros(len(z)), 1)
    expected = [-math.log1p(math.exp(-v)) if v >= 0 else v - math.log1p(math.exp(v)) for v in z]
    np.testing.assert_allclose(got, expected, rtol=1e-15, atol=1e-16)
    got = _core.collect_table_log_weights(0.2, F, np.array([[1, 0]]), np.zeros(len(z)), 1)
    q = [0.1 + 0.8 * (1.0 - 1.0 / (1.0 + math.exp(-v))) for v in np.clip(z, -700, 700)]
    np.testing.assert_allclose(got, np.log(q), rtol=1e-14)


def test_table_log_weights_bad_input():
    X, S, answers, _ = problem(14)
    F = _core.collect_log_odds(SPEC, X, S, np.arange(40), 1)
    z = np.zeros(len(S))
    calls = {
        "answers: index 40": (0.0, F, np.array([[0, 40]]), z),
        "answers: row 0 names item 2 twice": (0.0, F, np.array([[2, 2]]), z),
        "answers: expected 2 columns": (0.0, F, np.array([[0, 1, 2]]), z),
        "lapse": (1.0, F, answers, z),
        "log_prior: expected one value per support point": (0.0, F, answers, z[:3]),
        "log_prior: contains NaN": (0.0, F, answers, z + np.nan),
        "log_odds: contains NaN": (0.0, np.where(F > 1, np.nan, F), answers, z),
    }
    for match, args in calls.items():
        with pytest.raises(ValueError, match=match):
            _core.collect_table_log_weights(*args, 1)
        if "columns" not in match and "per support point" not in match:
            with pytest.raises(ValueError, match=match.split(" (")[0]):
                ref.table_log_weights(*args)


@pytest.mark.twin
@pytest.mark.parametrize("spec, model", SPECS)
def test_log_odds_twin(spec, model, isa):
    X, S, _, _ = problem(3)
    items = np.array([0, 5, 5, 39, 17], dtype=np.int64)
    native = _core.collect_log_odds(spec, X, S, items, 1)
    twin = ref.log_odds(model, X, S, items)
    assert native.shape == (5, len(S))
    np.testing.assert_allclose(native, twin, rtol=1e-10, atol=1e-12)


@pytest.mark.twin
@pytest.mark.parametrize("spec, model", SPECS)
@pytest.mark.parametrize("lapse", [0.0, 0.05, 0.3])
def test_pair_information_twin(spec, model, lapse, isa):
    # M = 67: the AVX2 lanes and their scalar tail; log weights with -inf and a wide spread
    X, S, answers, pairs = problem(4, M=67)
    lw = ref.log_weights(model, lapse, X, S, answers, np.zeros(len(S)))
    lw[3] = -np.inf
    F = ref.log_odds(model, X, S, np.arange(len(X)))
    native = _core.collect_pair_information(lapse, F, lw, pairs, 1)
    twin = ref.pair_information(lapse, F, lw, pairs)
    assert native.shape == (len(pairs),) and (twin >= 0).all() and twin.max() > 0.01
    np.testing.assert_allclose(native, twin, **info_tolerance(isa, lapse))


@pytest.mark.twin
def test_information_twin_coincident_points(isa):
    # support points on items (the "arr" support is the embedding itself): D = 0 floored
    X, _, answers, pairs = problem(5, n=12, d=2, C=30)
    X[7] = X[3]
    spec, model = _core.OracleSpec(K.GammaCKL, 3.0), ref_oracles.GammaCKL(3.0)
    lw = _core.collect_log_weights(spec, 0.0, X, X, answers, np.zeros(len(X)), 1)
    np.testing.assert_allclose(
        lw, ref.log_weights(model, 0.0, X, X, answers, np.zeros(len(X))), rtol=1e-10
    )
    F = _core.collect_log_odds(spec, X, X, np.arange(len(X)), 1)
    assert np.isfinite(F).all()
    np.testing.assert_allclose(
        _core.collect_pair_information(0.0, F, lw, pairs, 1),
        ref.pair_information(0.0, ref.log_odds(model, X, X, np.arange(len(X))), lw, pairs),
        **info_tolerance(isa, 0.0),
    )


# ---------------------------------------------------------------------- closed forms
def h2(q):
    return -q * math.log(q) - (1 - q) * math.log(1 - q)


@pytest.mark.parametrize("lapse", [0.0, 0.1])
def test_information_of_two_points_closed_form(lapse):
    # STE in 1-d: items a at 0, b at 1; the head at 0 or 1. At 0: z = D_b - D_a = 1, at 1:
    # z = -1, so q = sigmoid(+-1); weights 1/4, 3/4
    X = np.array([[0.0], [1.0]])
    S = np.array([[0.0], [1.0]])
    spec = _core.OracleSpec(K.STE, 0.0)
    F = _core.collect_log_odds(spec, X, S, np.array([0, 1]), 1)
    np.testing.assert_allclose(F, [[0.0, 1.0], [1.0, 0.0]], atol=1e-15)
    lw = np.log([0.25, 0.75])
    sig = 1 / (1 + math.exp(-1))
    q = [lapse / 2 + (1 - lapse) * sig, lapse / 2 + (1 - lapse) * (1 - sig)]
    P = 0.25 * q[0] + 0.75 * q[1]
    expected = h2(P) - 0.25 * h2(q[0]) - 0.75 * h2(q[1])
    got = _core.collect_pair_information(lapse, F, lw, np.array([[0, 1], [1, 0]]), 1)
    np.testing.assert_allclose(got, [expected, expected], rtol=1e-13)


def test_gamma_ckl_log_weight_and_information_closed_form():
    # gamma = 2, 1-d: the head at 1, items at 0 and 3: D = 1 and 4, P(0 closer) = 4 / 5
    X = np.array([[0.0], [3.0], [10.0]])
    spec = _core.OracleSpec(K.GammaCKL, 2.0)
    one = np.array([[1.0]])
    lw = _core.collect_log_weights(spec, 0.0, X, one, np.array([[0, 1]]), np.zeros(1), 1)
    np.testing.assert_allclose(lw, [math.log(0.8)], rtol=1e-14)
    lw = _core.collect_log_weights(spec, 0.1, X, one, np.array([[1, 0]]), np.array([2.0]), 1)
    np.testing.assert_allclose(lw, [2.0 + math.log(0.05 + 0.9 * 0.2)], rtol=1e-14)
    # one support point: the answer tells nothing about the head's position
    F = _core.collect_log_odds(spec, X, one, np.arange(3), 1)
    np.testing.assert_allclose(F[:, 0], [0.0, math.log(4.0), math.log(81.0)], atol=1e-15)
    info = _core.collect_pair_information(0.05, F, np.zeros(1), np.array([[0, 1], [1, 2]]), 1)
    np.testing.assert_array_equal(info, [0.0, 0.0])


def test_information_is_the_expected_entropy_reduction():
    # I = H(head) - E_answer H(head | answer), the posteriors by the log-weight kernel
    X, S, answers, pairs = problem(6, M=80)
    spec, lapse = _core.OracleSpec(K.GammaCKL, 2.5), 0.05
    lw = _core.collect_log_weights(spec, lapse, X, S, answers, np.zeros(len(S)), 1)
    F = _core.collect_log_odds(spec, X, S, np.arange(len(X)), 1)
    info = _core.collect_pair_information(lapse, F, lw, pairs, 1)

    def entropy(log_w):
        w = np.exp(log_w - log_w.max())
        w /= w.sum()
        return -np.sum(w * np.log(w)), w

    h0, w = entropy(lw)
    for (a, b), got in zip(pairs[:10], info[:10]):
        after_a = _core.collect_log_weights(spec, lapse, X, S, np.array([[a, b]]), lw, 1)
        after_b = _core.collect_log_weights(spec, lapse, X, S, np.array([[b, a]]), lw, 1)
        # P(a closer) = sum w q = the normalizer of the "a" posterior
        p_a = np.sum(w * np.exp(after_a - lw))
        expected = h0 - p_a * entropy(after_a)[0] - (1 - p_a) * entropy(after_b)[0]
        assert got == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_a_pair_far_from_every_point_carries_no_information():
    # both candidates far beyond the support on the same side: every point answers alike
    X = np.array([[100.0, 0.0], [200.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
    S = np.random.default_rng(0).normal(size=(50, 2))
    F = _core.collect_log_odds(_core.OracleSpec(K.GammaCKL, 4.0), X, S, np.arange(4), 1)
    info = _core.collect_pair_information(0.0, F, np.zeros(50), np.array([[0, 1], [2, 3]]), 1)
    assert info[0] < 1e-3 < 0.1 < info[1] <= math.log(2)


# ---------------------------------------------------------------------- threads
def test_bitwise_identical_for_any_thread_count():
    X, S, answers, pairs = problem(7, n=300, d=4, M=256, r=40, C=900)
    spec = _core.OracleSpec(K.GammaCKL, 3.3)
    items = np.arange(300)
    lw1 = _core.collect_log_weights(spec, 0.05, X, S, answers, np.zeros(256), 1)
    F1 = _core.collect_log_odds(spec, X, S, items, 1)
    I1 = _core.collect_pair_information(0.05, F1, lw1, pairs, 1)
    for threads in (2, 3):
        np.testing.assert_array_equal(
            _core.collect_log_weights(spec, 0.05, X, S, answers, np.zeros(256), threads), lw1
        )
        np.testing.assert_array_equal(_core.collect_log_odds(spec, X, S, items, threads), F1)
        np.testing.assert_array_equal(
            _core.collect_pair_information(0.05, F1, lw1, pairs, threads), I1
        )
    for lapse in (0.0, 0.05):  # 4 blocks of 64 points, 40 answers: the parallel path
        t1 = _core.collect_table_log_weights(lapse, F1, answers, np.zeros(256), 1)
        for threads in (2, 3):
            np.testing.assert_array_equal(
                _core.collect_table_log_weights(lapse, F1, answers, np.zeros(256), threads), t1
            )


def test_isas_agree():
    X, S, answers, pairs = problem(8, M=83)
    spec = _core.OracleSpec(K.TSTE, 1.0)
    before = _core.simd_isa()
    out = {}
    for isa in ISAS:
        if not _core.set_simd_isa(isa):
            pytest.skip("AVX2 kernels unavailable")
        F = _core.collect_log_odds(spec, X, S, np.arange(len(X)), 1)
        out[isa] = F, _core.collect_pair_information(0.02, F, np.zeros(len(S)), pairs, 1)
    _core.set_simd_isa(before)
    np.testing.assert_allclose(out["avx2"][0], out["portable"][0], rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(out["avx2"][1], out["portable"][1], rtol=1e-10, atol=1e-13)


# ---------------------------------------------------------------------- bad input
SPEC = _core.OracleSpec(K.GammaCKL, 3.0)


def test_log_weights_bad_input():
    X, S, answers, _ = problem(9)
    z = np.zeros(len(S))
    calls = {
        "answers: index 40": (SPEC, 0.0, X, S, np.array([[0, 40]]), z),
        "answers: row 0 names item 2 twice": (SPEC, 0.0, X, S, np.array([[2, 2]]), z),
        "answers: expected 2 columns": (SPEC, 0.0, X, S, np.array([[0, 1, 2]]), z),
        "lapse": (SPEC, 1.0, X, S, answers, z),
        "spec: Probit": (_core.OracleSpec(K.Probit, 0.3), 0.0, X, S, answers, z),
        "support: expected 3 columns": (SPEC, 0.0, X, S[:, :2], answers, z),
        "log_prior: expected one value per support point": (SPEC, 0.0, X, S, answers, z[:3]),
        "log_prior: contains NaN": (SPEC, 0.0, X, S, answers, z + np.nan),
        "X: contains NaN": (SPEC, 0.0, np.where(X > 1, np.nan, X), S, answers, z),
        "support: contains NaN": (SPEC, 0.0, X, np.where(S > 1, np.inf, S), answers, z),
    }
    for match, args in calls.items():
        with pytest.raises(ValueError, match=match):
            _core.collect_log_weights(*args, 1)


def test_log_odds_and_information_bad_input():
    X, S, _, pairs = problem(10)
    with pytest.raises(ValueError, match="items: index -1"):
        _core.collect_log_odds(SPEC, X, S, np.array([0, -1]), 1)
    with pytest.raises(ValueError, match="spec: Probit"):
        _core.collect_log_odds(_core.OracleSpec(K.Probit, 1.0), X, S, np.array([0]), 1)
    F = _core.collect_log_odds(SPEC, X, S, np.arange(40), 1)
    z = np.zeros(len(S))
    calls = {
        "pairs: index 40": (0.0, F, z, np.array([[0, 40]])),
        "pairs: row 1 names item 4 twice": (0.0, F, z, np.array([[0, 1], [4, 4]])),
        "log_weights: every support point is impossible": (0.0, F, z - np.inf, pairs),
        "log_weights: contains NaN": (0.0, F, z + np.nan, pairs),
        "log_weights: expected one value per support point": (0.0, F, z[:-1], pairs),
        "lapse": (-0.1, F, z, pairs),
        "log_odds: contains NaN": (0.0, np.where(F > 1, np.nan, F), z, pairs),
    }
    for match, args in calls.items():
        with pytest.raises(ValueError, match=match):
            _core.collect_pair_information(*args, 1)
    # the twin refuses the same
    with pytest.raises(ValueError, match="pairs: row 0 names item 4 twice"):
        ref.pair_information(0.0, F, z, np.array([[4, 4]]))
    with pytest.raises(ValueError, match="log_weights: every support point"):
        ref.pair_information(0.0, F, z - np.inf, pairs)


@pytest.mark.twin
def test_float_lanes_at_the_extremes(isa):
    # log-odds gaps far beyond float's exp range (|z| up to 1e3: exp(-|z|) held at 1.6e-38)
    # and weights below float's smallest normal (flushed to 0): the twin's I, to 2e-7
    rng = np.random.default_rng(21)
    M = 203  # 25 groups of 8 and a tail of 3
    F = rng.normal(scale=300.0, size=(6, M))
    F[1] = F[0] + rng.choice([-1e-9, 0.0, 1e-9], size=M)  # a pair all but tied
    lw = rng.uniform(-300.0, 0.0, size=M)  # e^-300 / total: far below FLT_MIN
    lw[::7] = 0.0
    pairs = np.array([[0, 1], [1, 0], [2, 3], [4, 5], [0, 5], [3, 2]], dtype=np.int64)
    native = _core.collect_pair_information(0.0, F, lw, pairs, 1)
    twin = ref.pair_information(0.0, F, lw, pairs)
    np.testing.assert_allclose(native, twin, **info_tolerance(isa, 0.0))
    assert native[0] == native[1] and (native >= 0).all()
