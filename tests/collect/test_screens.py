"""Screens past the triplet: TripletSampler(trial="rank" / "odd-one-out"), the simulated
people who answer them, and simulate_collection over them."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from tripletsearch import GammaCKL, OddOneOut, RankedChoices, TripletSampler
from tripletsearch._reference import collect as ref
from tripletsearch._reference import oracles as ref_oracles
from tripletsearch.collect import _active_screens as _screens_mod
from tripletsearch.collect import simulate_collection
from tripletsearch.collect._screens import odd_one_out_answer, ranked_answer

SPEC = GammaCKL(3.0).spec(2)


def answer(X, screen_kind, q, rng, lapse=0.05):
    if len(q) == 3 and screen_kind == "odd-one-out":
        return odd_one_out_answer(SPEC, X, q, lapse, rng.random(2))
    return ranked_answer(SPEC, X, q, screen_kind, lapse, rng.random((screen_kind, 2)))


# ---------------------------------------------------------------------- what is asked
@pytest.mark.parametrize("n, k", [(4, 3), (5, 2), (9, 8), (30, 8), (30, 16)])
def test_random_rank_screens_over_sizes(n, k):
    s = TripletSampler(n, 2, method="random", trial="rank", n_choices=k, random_state=n + k)
    Q = s.ask(300)
    assert Q.shape == (300, k + 1) and Q.dtype == np.int64
    assert all(len(set(row)) == k + 1 for row in Q.tolist())
    assert Q.min() >= 0 and Q.max() < n
    # every item a head about equally often (a binomial bound, 5 sigma)
    counts = np.bincount(Q[:, 0], minlength=n)
    sd = math.sqrt(300 * (1 / n) * (1 - 1 / n))
    assert np.abs(counts - 300 / n).max() < 5 * sd


@pytest.mark.parametrize("n", [3, 4, 10])
def test_random_odd_one_out_screens(n):
    s = TripletSampler(n, 2, method="random", trial="odd-one-out", random_state=n)
    Q = s.ask(200)
    assert Q.shape == (200, 3) and all(len(set(r)) == 3 for r in Q.tolist())
    # each item in each position about equally often
    for col in range(3):
        counts = np.bincount(Q[:, col], minlength=n)
        assert np.abs(counts - 200 / n).max() < 5 * math.sqrt(200 / n)


@pytest.mark.parametrize("trial, kw", [("rank", {"n_choices": 5, "picks": 2}), ("odd-one-out", {})])
def test_active_screens_are_valid_and_resume(trial, kw):
    X = np.random.default_rng(0).normal(size=(40, 2))
    rng = np.random.default_rng(1)
    s = TripletSampler(40, 2, trial=trial, random_state=3, **kw)
    kind = kw.get("picks", "odd-one-out")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(120):
            q = s.ask(1)[0]
            assert len(set(q.tolist())) == len(q)
            s.tell(answer(X, kind, q, rng)[None])
        assert s.embedding_ is not None and s.n_answers_ == 120
        twin = TripletSampler.from_dict(s.to_dict())
        np.testing.assert_array_equal(twin.ask(3), s.ask(3))


def test_active_rank_screen_is_the_most_informative_of_its_draws():
    # replayed with the NumPy twin: the head's own particles and answers, the random
    # screens drawn, the information of each; the screen asked is the most informative
    X = np.random.default_rng(2).normal(size=(40, 2))
    rng = np.random.default_rng(3)
    s = TripletSampler(40, 2, trial="rank", n_choices=4, picks=2, random_state=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(70):
            q = s.ask(1)[0]
            s.tell(answer(X, 2, q, rng)[None])
        m = s._method
        m.prepare(s)
        model = ref_oracles.GammaCKL(float(s.embedding_.gamma_))
        E = s.embedding_.embedding_
        for h in (0, 7, 39):
            chosen = _screens_mod.ask_rank(m, s, np.random.default_rng(h), h)
            replay = np.random.default_rng(h)
            S = _screens_mod.local_support(m, replay, h)
            F = ref.log_odds(model, E, S, np.arange(40))
            answers = m.head_answers(s, h)
            lw = ref.choice_log_weights(0.0, F, answers, 2, np.zeros(len(S)))
            others = np.delete(np.arange(40), h)
            sets = np.stack(
                [replay.choice(others, size=4, replace=False) for _ in range(_screens_mod.BEST_OF)]
            )
            info = ref.choice_information(0.0, F, lw, sets, 2)
            assert chosen == sets[int(np.argmax(info))].tolist()
            assert info.max() > np.median(info)


def test_told_trials_and_rows_alike():
    s = TripletSampler(10, 2, method="random", trial="rank", n_choices=3, picks=1, refit=None)
    s.tell(RankedChoices([0, 1], [[2, 3, 4], [5, 6, 7]], [[3], [7]]))
    s.tell(np.array([[2, 5, 0, 1]]))
    np.testing.assert_array_equal(s.answers_, [[0, 3, 2, 4], [1, 7, 5, 6], [2, 5, 0, 1]])
    o = TripletSampler(10, 2, method="random", trial="odd-one-out", refit=None)
    o.tell(OddOneOut([[0, 1, 2]], [0]))
    np.testing.assert_array_equal(o.answers_, [[1, 2, 0]])


def test_bad_input_names_the_argument():
    cases = {
        "trial: expected one of": dict(trial="grid"),
        "n_choices: a triplet screen has 2": dict(n_choices=3),
        "picks: a odd-one-out screen has 1": dict(trial="odd-one-out", picks=2),
        "picks: between 1 and n_choices - 1 = 3": dict(trial="rank", n_choices=4, picks=4),
        "n_choices: between 2 and 9": dict(trial="rank", n_choices=10),
        "method: 'arr' asks triplets only": dict(trial="rank", method="arr"),
    }
    for match, kw in cases.items():
        with pytest.raises(ValueError, match=match):
            TripletSampler(10, 2, **kw)
    s = TripletSampler(10, 2, method="random", trial="rank", n_choices=3, refit=None)
    with pytest.raises(ValueError, match="k: a rank sampler asks its own screens"):
        s.ask(1, k=3)
    with pytest.raises(ValueError, match="rows: expected 4 columns"):
        s.tell(np.array([[0, 1, 2]]))
    with pytest.raises(ValueError, match="rows: row 0 .* names an item twice"):
        s.tell(np.array([[0, 1, 0, 2]]))
    with pytest.raises(ValueError, match="rows: expected ordered 3-candidate trials"):
        s.tell(RankedChoices([0], [[1, 2, 3, 4]], [[1]]))
    with pytest.raises(TypeError, match="rows: a rank sampler is told rank answers"):
        s.tell(OddOneOut([[0, 1, 2]], [0]))
    assert s.n_answers_ == 0
    with pytest.raises(ValueError, match="fit_as: expected one of"):
        simulate_collection(
            np.zeros((5, 2)), oracle=GammaCKL(3.0), method="random", budget=5, n_runs=1,
            test_size=5, trial="rank", n_choices=3, fit_as="grid",
        )  # fmt: skip


# ---------------------------------------------------------------------- simulated people
def test_ranked_answers_are_successive_choices():
    # the frequencies of (first, second) picks against Plackett-Luce from the oracle's own
    # choice_prob, lapse 0.1 per pick
    X = np.random.default_rng(5).normal(size=(6, 2))
    q = np.array([0, 1, 2, 3, 4])
    p1 = GammaCKL(3.0).choice_prob(X, [0], [q[1:]])[0]
    lapse, m = 0.1, 4000
    rng = np.random.default_rng(6)
    got = np.zeros((4, 4))
    for _ in range(m):
        a = ranked_answer(SPEC, X, q, 2, lapse, rng.random((2, 2)))
        got[a[1] - 1, a[2] - 1] += 1
    expected = np.zeros((4, 4))
    for i in range(4):
        rest = [j for j in range(4) if j != i]
        p2 = GammaCKL(3.0).choice_prob(X, [0], [q[1:][rest]])[0]
        for t, j in enumerate(rest):
            first = lapse / 4 + (1 - lapse) * p1[i]
            expected[i, j] = first * (lapse / 3 + (1 - lapse) * p2[t])
    assert abs(expected.sum() - 1) < 1e-12
    sd = np.sqrt(expected * (1 - expected) / m)
    assert (np.abs(got / m - expected) < 5 * sd + 1e-12).all()


def test_odd_one_out_answers():
    # P(odd = a) proportional to d(b, c)^-gamma, by hand
    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]])
    d = lambda i, j: np.linalg.norm(X[i] - X[j])  # noqa: E731
    w = np.array([d(1, 2), d(0, 2), d(0, 1)]) ** -3.0
    expected = w / w.sum()
    rng = np.random.default_rng(7)
    m = 4000
    odd = [
        odd_one_out_answer(SPEC, X, np.array([0, 1, 2]), 0.0, rng.random(2))[2] for _ in range(m)
    ]
    got = np.bincount(odd, minlength=3) / m
    assert (np.abs(got - expected) < 5 * np.sqrt(expected * (1 - expected) / m)).all()
    a = odd_one_out_answer(SPEC, X, np.array([2, 0, 1]), 0.0, np.array([0.5, 0.999]))
    assert sorted(a.tolist()) == [0, 1, 2]


def test_simulate_collection_counts_screens():
    X = np.random.default_rng(8).normal(size=(15, 2))
    kw = dict(oracle=GammaCKL(3.0), oracle_lapse=0.05, budget=40, n_runs=2, test_size=100)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = simulate_collection(X, method="random", trial="rank", n_choices=4, picks=2,
                                n_answers=[20, 40], random_state=1, **kw)  # fmt: skip
        b = simulate_collection(X, method="random", trial="rank", n_choices=4, picks=2,
                                n_answers=[20, 40], random_state=1, **kw)  # fmt: skip
        c = simulate_collection(X, method="random", trial="odd-one-out", n_answers=[20, 40],
                                random_state=1, fit_as="triplets", **kw)  # fmt: skip
    np.testing.assert_array_equal(a.accuracy, b.accuracy)
    assert a.accuracy.shape == (2, 2) and np.isnan(a.seconds).all()
    assert ((c.accuracy > 0.3) & (c.accuracy <= 1)).all()


@pytest.mark.parametrize(
    "kind, step",
    [({}, 50), ({"trial": "rank", "n_choices": 8, "picks": 2}, 9),
     ({"trial": "rank", "n_choices": 16, "picks": 4}, 4), ({"trial": "odd-one-out"}, 32)],
)  # fmt: skip
def test_a_refit_is_due_after_as_many_screens_as_tell_50_triplets_bits(kind, step):
    """50 triplets, or 8-rank-2 screens of log2 56 = 5.8 bits (9), 16-rank-4 of 15.4 (4),
    odd-one-out trials of log2 3 = 1.6 (32): then again after 10 % more."""
    s = TripletSampler(40, 2, method="random", refit=None, random_state=3, **kind)
    asked = s.ask(step)  # a random screen's rows are answers in their layout
    s.tell(asked[: step - 1])
    assert not s.refit_due_
    s.tell(asked[step - 1 :])
    assert s.refit_due_
