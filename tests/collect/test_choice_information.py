"""The sampler's scoring past pairs (collect/choice_information.hpp): its NumPy twin, the pair
kernels it extends, the oracles' choice probabilities, closed forms, threads, bad input."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from tripletsearch import _core
from tripletsearch._reference import collect as ref
from tripletsearch._reference import oracles as ref_oracles
from tripletsearch.oracles import CKL, STE, TSTE, GammaCKL

K = _core.ModelKind
SPECS = [
    pytest.param(_core.OracleSpec(K.GammaCKL, 3.0), GammaCKL(3.0), id="gammackl-3"),
    pytest.param(_core.OracleSpec(K.CKL, 0.05), CKL(0.05), id="ckl-0.05"),
    pytest.param(_core.OracleSpec(K.TSTE, 1.0), TSTE(1.0), id="tste-1"),
    pytest.param(_core.OracleSpec(K.STE, 0.0), STE(), id="ste"),
]


def problem(seed, n=30, d=3, M=40):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    S = rng.normal(size=(M, d))
    F = _core.collect_log_odds(_core.OracleSpec(K.GammaCKL, 3.0), X, S, np.arange(n), 1)
    return rng, X, S, F


def rows(rng, n, count, k):
    return np.stack([rng.choice(n, k, replace=False) for _ in range(count)]).astype(np.int64)


# ---------------------------------------------------------------------- the twin
@pytest.mark.twin
@pytest.mark.parametrize("k, r", [(2, 1), (3, 1), (4, 2), (5, 4), (8, 2)])
@pytest.mark.parametrize("lapse", [0.0, 0.05])
def test_choice_kernels_twin(k, r, lapse):
    rng, X, S, F = problem(1)
    answers, sets = rows(rng, len(X), 7, k), rows(rng, len(X), 5, k)
    prior = rng.normal(size=len(S))
    prior[2] = -np.inf
    native = _core.collect_choice_log_weights(lapse, F, answers, r, prior, 1)
    twin = ref.choice_log_weights(lapse, F, answers, r, prior)
    np.testing.assert_allclose(native, twin, rtol=1e-12, atol=1e-12)
    assert native[2] == -np.inf
    info = _core.collect_choice_information(lapse, F, native, sets, r, 1)
    np.testing.assert_allclose(info, ref.choice_information(lapse, F, native, sets, r), atol=1e-12)
    assert (info > 0).all() and (info <= math.log(math.perm(k, r))).all()


@pytest.mark.parametrize("lapse", [0.0, 0.05, 0.3])
def test_pairs_are_the_pair_kernels(lapse):
    # k = 2, r = 1: the triplet sampler's pair kernels (a row (closer, farther))
    rng, X, S, F = problem(2)
    pairs = rows(rng, len(X), 40, 2)
    lw = _core.collect_table_log_weights(lapse, F, pairs[:9], np.zeros(len(S)), 1)
    np.testing.assert_allclose(
        _core.collect_choice_log_weights(lapse, F, pairs[:9], 1, np.zeros(len(S)), 1),
        lw,
        rtol=1e-12,
    )
    np.testing.assert_allclose(
        _core.collect_choice_information(lapse, F, lw, pairs, 1, 1),
        ref.pair_information(lapse, F, lw, pairs),
        atol=1e-12,
    )


@pytest.mark.parametrize("spec, oracle", SPECS)
def test_one_pick_is_the_oracles_choice(spec, oracle):
    # exp(choice_log_weights) of the answer "c picked among C" with the head at a support
    # point is the oracle's choice_prob with the head placed there, for every model
    rng = np.random.default_rng(3)
    X, S = rng.normal(size=(12, 2)), rng.normal(size=(5, 2))
    F = _core.collect_log_odds(spec, X, S, np.arange(12), 1)
    cand = np.array([4, 9, 0, 7, 2])
    XS = np.concatenate([X, S])
    heads = 12 + np.arange(5)
    expected = oracle.choice_prob(XS, heads, np.tile(cand, (5, 1)))  # (points, k)
    for c in range(len(cand)):
        answer = np.array([[cand[c], *np.delete(cand, c)]])
        lw = _core.collect_choice_log_weights(0.0, F, answer, 1, np.zeros(5), 1)
        np.testing.assert_allclose(np.exp(lw), expected[:, c], rtol=1e-10)


def test_ranked_answer_closed_form():
    # successive choices: weights 1, 2, 3 (F = -log w); "2 then 1" = 3/6 * 2/3; lapse 0.1
    # mixes each pick with 1/3, then 1/2
    F = -np.log(np.array([[1.0], [2.0], [3.0]]))
    got = _core.collect_choice_log_weights(0.1, F, np.array([[2, 1, 0]]), 2, np.zeros(1), 1)
    expected = math.log((0.1 / 3 + 0.9 * 0.5) * (0.1 / 2 + 0.9 * 2 / 3))
    np.testing.assert_allclose(got, [expected], rtol=1e-14)


def test_information_closed_form():
    # two equally likely points where a 3-way choice's probabilities are a and b (each a
    # permutation): I = H(mean) - mean of H, by hand
    pa, pb = np.array([0.7, 0.2, 0.1]), np.array([0.1, 0.2, 0.7])
    F = -np.log(np.stack([pa, pb], axis=1))  # rows: the options; columns: the points

    def H(p):
        return -float(np.sum(p * np.log(p)))

    got = _core.collect_choice_information(0.0, F, np.zeros(2), np.array([[0, 1, 2]]), 1, 1)
    np.testing.assert_allclose(got, [H((pa + pb) / 2) - (H(pa) + H(pb)) / 2], rtol=1e-13)

    # ranked to the end (r = k - 1): the 6 orders' probabilities by hand
    def orders(p):
        return np.array([p[a] * p[b] / (1 - p[a]) for a, b in itertools.permutations(range(3), 2)])

    qa, qb = orders(pa), orders(pb)
    got = _core.collect_choice_information(0.0, F, np.zeros(2), np.array([[0, 1, 2]]), 2, 1)
    np.testing.assert_allclose(got, [H((qa + qb) / 2) - (H(qa) + H(qb)) / 2], rtol=1e-13)
    # one support point: nothing to learn
    got = _core.collect_choice_information(0.05, F[:, :1], np.zeros(1), np.array([[0, 1, 2]]), 2, 1)
    np.testing.assert_array_equal(got, [0.0])


def test_more_picks_tell_more():
    # the chain rule: the answer's first r picks are a function of its first r + 1
    rng, X, S, F = problem(4)
    lw = np.zeros(len(S))
    sets = rows(rng, len(X), 20, 6)
    info = [_core.collect_choice_information(0.05, F, lw, sets, r, 1) for r in range(1, 6)]
    for a, b in zip(info, info[1:]):
        assert (b >= a - 1e-12).all()


def test_bitwise_identical_for_any_thread_count():
    rng, X, S, F = problem(5, n=60, M=256)
    answers, sets = rows(rng, 60, 30, 8), rows(rng, 60, 200, 8)
    lw1 = _core.collect_choice_log_weights(0.05, F, answers, 2, np.zeros(256), 1)
    I1 = _core.collect_choice_information(0.05, F, lw1, sets, 2, 1)
    for threads in (2, 3):
        lw = _core.collect_choice_log_weights(0.05, F, answers, 2, np.zeros(256), threads)
        np.testing.assert_array_equal(lw, lw1)
        np.testing.assert_array_equal(
            _core.collect_choice_information(0.05, F, lw1, sets, 2, threads), I1
        )


def test_bad_input():
    rng, X, S, F = problem(6)
    z = np.zeros(len(S))
    good = np.array([[0, 1, 2, 3]])
    info_calls = {
        "sets: row 0 names row 2 twice": (0.0, F, z, np.array([[0, 2, 2]]), 1),
        "sets: index 30": (0.0, F, z, np.array([[0, 30, 2]]), 1),
        "picks: between 1 and k - 1 = 3": (0.0, F, z, good, 4),
        "picks: between 1 and k - 1 = 3, got 0": (0.0, F, z, good, 0),
        "sets: between 2 and 64": (0.0, F, z, np.array([[0]]), 1),
        "picks: 5 ranked picks among 30": (0.0, F, z, np.arange(30)[None], 5),
        "lapse": (1.0, F, z, good, 1),
        "log_weights: every support point is impossible": (0.0, F, z - np.inf, good, 1),
        "log_odds: contains NaN": (0.0, np.where(F > 1, np.nan, F), z, good, 1),
    }
    for match, args in info_calls.items():
        with pytest.raises(ValueError, match=match):
            _core.collect_choice_information(*args, 1)
        with pytest.raises(ValueError, match=match.split(",")[0]):
            ref.choice_information(*args)
    weight_calls = {
        "answers: row 0 names row 1 twice": (0.0, F, np.array([[1, 1, 2]]), 1, z),
        "picks: between 1 and k - 1 = 2": (0.0, F, np.array([[1, 0, 2]]), 3, z),
        "log_prior: contains NaN": (0.0, F, good, 1, z + np.nan),
    }
    for match, args in weight_calls.items():
        with pytest.raises(ValueError, match=match):
            _core.collect_choice_log_weights(*args, 1)
        with pytest.raises(ValueError, match=match):
            ref.choice_log_weights(*args)
    with pytest.raises(ValueError, match="log_prior: expected one value per support point"):
        _core.collect_choice_log_weights(0.0, F, good, 1, z[:3], 1)


def test_twin_imports_nothing_new():
    # the twin stays an independent specification (numpy and the standard library)
    assert ref_oracles.__name__.startswith("tripletsearch._reference")
