"""Replaying recorded answers through a sampler; what recorded samplers' answers gave."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import tripletsearch as ts
from tripletsearch.collect._replay import (
    AnswerPool,
    RecordedAnswers,
    as_collected,
    next_eggs,
    replay_collection,
    salmon_eggs,
)


def test_pool_answers_each_query_with_its_own_answers_once():
    rows = np.array([[0, 1, 2], [0, 2, 1], [0, 2, 1], [1, 0, 2], [2, 0, 1]])
    pool = AnswerPool(rows, np.ones(5), np.random.default_rng(0))
    got = [pool.take(np.array([0, 2, 1])) for _ in range(4)]
    assert sorted(got[:3]) == [0, 1, 2] and got[3] is None  # the pair in either order
    assert pool.take(np.array([1, 2, 0])) == 3
    assert pool.take(np.array([1, 2, 0])) is None
    assert pool.take(np.array([0, 3, 4])) is None  # never asked
    assert pool.take_any(head=2) == 4 and pool.take_any() is None


def test_pool_fallback_prefers_the_heads_answers():
    rows = np.array([[0, 1, 2], [1, 0, 2], [1, 2, 0], [2, 0, 1]])
    pool = AnswerPool(rows, np.ones(4), np.random.default_rng(0))
    assert sorted([pool.take_any(head=1), pool.take_any(head=1)]) == [1, 2]
    assert pool.take_any(head=1) in (0, 3)  # none of head 1 left: another head's


def test_pool_order_is_the_runs_seed():
    rows = np.array([[0, 1, 2]] * 6)
    first = [AnswerPool(rows, np.ones(6), np.random.default_rng(s)).take(rows[0]) for s in (1, 1)]
    assert first[0] == first[1]
    draws = {
        AnswerPool(rows, np.ones(6), np.random.default_rng(s)).take(rows[0]) for s in range(20)
    }
    assert len(draws) > 1


def test_eggs_as_recorded():
    eggs = next_eggs()
    assert eggs.n_items == 30 and eggs.train.shape == (16072, 3) and eggs.test.shape == (4014, 3)
    assert set(eggs.train_sampler.tolist()) == {
        "RandomSampling",
        "CrowdKernel",
        "STE",
        "UncertaintySampling",
    }
    assert 0.0 <= eggs.train_seconds.min() and eggs.train_seconds.max() <= 60.0
    salmon = salmon_eggs()
    assert salmon.train.shape == (15054, 3) and salmon.test.shape == (2557, 3)
    assert salmon.truth.shape == (300, 1)


def _complete_record(n=7, seed=0):
    """Every query of n items on a line answered once by a noiseless person, a test set of
    all of them again: a replay can answer any query once.

    Items at 2^i: no head is equally far from two others (no ties).
    """
    truth = 2.0 ** np.arange(n, dtype=float)[:, None]
    Q = np.array(
        [
            (h, a, b)
            for h in range(n)
            for a, b in itertools.combinations(range(n), 2)
            if h not in (a, b)
        ]
    )
    T = ts.GammaCKL(1e6).sample(truth, Q, random_state=seed)
    return RecordedAnswers("line", n, T, np.array(["rec"] * len(T)), np.full(len(T), 2.0), T, truth)


def test_replay_uses_recorded_answers_once_and_counts_reasks():
    rec = _complete_record()
    m = len(rec.train)  # 7 * 15 = 105 queries
    res = replay_collection(
        rec, method="random", budget=m, n_runs=2, n_answers=[20, m], random_state=0, n_jobs=1
    )
    # every recorded answer used once: the seconds add up, the answers agree with the truth
    np.testing.assert_allclose(res.seconds[:, -1], 2.0 * m)
    np.testing.assert_allclose(res.agreement, 1.0)
    # random asks each query once before repeating: no re-asks, no fallbacks
    np.testing.assert_array_equal(res.info["reasks"], [0, 0])
    np.testing.assert_array_equal(res.info["fallbacks"], [0, 0])
    assert res.accuracy[:, -1].min() > 0.9  # a line from every noiseless answer
    again = replay_collection(
        rec, method="random", budget=m, n_runs=2, n_answers=[20, m], random_state=0, n_jobs=1
    )
    np.testing.assert_array_equal(res.accuracy, again.accuracy)


def test_replay_falls_back_after_max_reasks():
    rec = _complete_record()
    half = RecordedAnswers(  # the queries of heads 0..3 only
        "half", rec.n_items, rec.train[rec.train[:, 0] < 4], rec.train_sampler[:60],
        rec.train_seconds[:60], rec.test, rec.truth,
    )  # fmt: skip
    res = replay_collection(half, method="random", budget=60, n_runs=1, max_reasks=0, n_jobs=1)
    assert res.info["fallbacks"][0] == res.info["reasks"][0] > 0
    res = replay_collection(half, method="random", budget=60, n_runs=1, max_reasks=1000, n_jobs=1)
    assert res.info["fallbacks"][0] == 0 and res.info["reasks"][0] > 0
    # the default: a fallback after 10 re-asks in a row
    res = replay_collection(half, method="active", budget=60, n_runs=1, n_jobs=1)
    assert res.accuracy.shape == (1, 1)


def test_replay_bad_input():
    rec = _complete_record()
    with pytest.raises(TypeError, match="recorded: expected RecordedAnswers"):
        replay_collection(rec.train, method="random", budget=10, n_runs=1)
    with pytest.raises(ValueError, match="budget: at most the 105 recorded answers"):
        replay_collection(rec, method="random", budget=106, n_runs=1)
    with pytest.raises(ValueError, match="budget: must be >= 1"):
        replay_collection(rec, method="random", budget=0, n_runs=1)
    with pytest.raises(ValueError, match="n_runs: must be >= 1"):
        replay_collection(rec, method="random", budget=10, n_runs=0)
    with pytest.raises(ValueError, match="max_reasks: must be >= 0"):
        replay_collection(rec, method="random", budget=10, n_runs=1, max_reasks=-1)
    with pytest.raises(ValueError, match="n_answers: must end at the budget 10"):
        replay_collection(rec, method="random", budget=10, n_runs=1, n_answers=[5, 9])
    with pytest.raises(ValueError, match="method"):
        replay_collection(rec, method="nope", budget=10, n_runs=1)
    with pytest.raises(TypeError, match="fitter: expected an Embedding"):
        replay_collection(rec, method="random", budget=10, n_runs=1, fitter="gamma-ckl")


def test_as_collected_fits_the_recorded_prefixes():
    rec = next_eggs()
    fitter = ts.Embedding("gamma-ckl", dim=2, gamma=3.0)
    res = as_collected(rec, "RandomSampling", n_answers=[300, 3000], fitter=fitter, random_state=1)
    mine = rec.train[rec.train_sampler == "RandomSampling"]
    # an independent reading: the same fit's own score (p > 1/2 means closer for gamma-CKL)
    from tripletsearch._validation import derived_seed, seed_from

    seed = derived_seed(seed_from(np.random.default_rng(1)), 0)
    emb = ts.Embedding("gamma-ckl", dim=2, gamma=3.0, n_items=30, random_state=seed)
    assert res.accuracy[0, 1] == pytest.approx(emb.fit(mine[:3000]).score(rec.test))
    assert res.accuracy[0, 1] > 0.8  # the egg fits: 79-85 %
    np.testing.assert_allclose(
        res.seconds[0],
        np.cumsum(rec.train_seconds[rec.train_sampler == "RandomSampling"])[[299, 2999]],
    )
    with pytest.raises(ValueError, match="sampler: expected one of"):
        as_collected(rec, "Random", n_answers=[10])
    with pytest.raises(ValueError, match="n_answers: 'STE' has 3982 answers, asked 5000"):
        as_collected(rec, "STE", n_answers=[100, 5000])
