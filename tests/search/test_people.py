"""The simulated people (tripletsearch.people): against the oracles they answer by."""

from __future__ import annotations

import numpy as np
import pytest

import tripletsearch as ts
from tripletsearch.people import FindPerson, MixPerson, TripletPeople

X = np.random.default_rng(0).normal(size=(60, 3))


def queries(n, m, seed):
    Q = np.random.default_rng(seed).integers(0, n, size=(4 * m, 3))
    keep = (Q[:, 0] != Q[:, 1]) & (Q[:, 0] != Q[:, 2]) & (Q[:, 1] != Q[:, 2])
    return Q[keep][:m]


def test_triplet_people_without_lapses_answer_as_the_oracle_samples():
    Q = queries(60, 200, 1)
    people = TripletPeople(X, ts.GammaCKL(3.0), random_state=np.random.default_rng(7))
    expected = ts.GammaCKL(3.0).sample(X, Q, random_state=np.random.default_rng(7))
    np.testing.assert_array_equal(people.answer(Q), expected)
    # one query at a time (the loops' path) draws the same stream
    people = TripletPeople(X, ts.GammaCKL(3.0), random_state=np.random.default_rng(7))
    one_by_one = np.concatenate([people.answer(q[None]) for q in Q])
    np.testing.assert_array_equal(one_by_one, expected)


def test_triplet_people_lapse_at_the_stated_rate():
    Q = np.tile([[0, 1, 2]], (20_000, 1))
    Y = np.array([[0.0], [0.1], [5.0]])  # item 1 is closer to 0 with probability ~1
    people = TripletPeople(Y, ts.GammaCKL(6.0), lapse=0.3, random_state=3)
    wrong = np.mean(people.answer(Q)[:, 1] == 2)
    expected = 0.3 * 0.5  # lapses are fair coins
    assert abs(wrong - expected) < 4 * np.sqrt(expected * (1 - expected) / len(Q))
    np.testing.assert_array_equal(people.truly_closer(np.array([[0, 1, 2], [0, 2, 1]])), [1, 0])


def test_triplet_people_run_a_sampler():
    people = TripletPeople.random(30, 2, seed=4)
    s = ts.TripletSampler(30, 2, method="random", refit=None, random_state=0)
    asked = people.run(s, 5, n=3)
    assert asked.shape == (15, 3) and s.n_answers_ == 15
    # every answer is its query, in one order or the other
    told = s.answers_
    np.testing.assert_array_equal(np.sort(told[:, 1:], axis=1), np.sort(asked[:, 1:], axis=1))


@pytest.mark.parametrize("lapse", [-0.1, 1.5])
def test_triplet_people_bad_lapse(lapse):
    with pytest.raises(ValueError, match="lapse"):
        TripletPeople(X, ts.GammaCKL(3.0), lapse=lapse)


def test_triplet_people_bad_truth():
    Y = X.copy()
    Y[3, 1] = np.nan
    with pytest.raises(ValueError, match="X"):
        TripletPeople(Y, ts.GammaCKL(3.0))


def test_a_noiseless_find_person_picks_the_nearest_and_finds_the_target():
    rng = np.random.default_rng(2)
    person = FindPerson(X, 5, None, rng)
    for seed in range(20):
        ids = [int(i) for i in np.random.default_rng(seed).choice(np.delete(np.arange(60), 5), 4)]
        got = person.answer({"number": seed, "items": [{"id": i} for i in ids]})
        nearest = int(np.argmin(((X[ids] - X[5]) ** 2).sum(axis=1)))
        assert got == {"screen": seed, "choice": nearest, "found": False}
    shown = {"number": 9, "items": [{"id": 1}, {"id": 5}, {"id": 8}]}
    assert person.answer(shown) == {"screen": 9, "choice": 1, "found": True}


@pytest.mark.once  # a statistical run: once, not under the sanitizers (shorter tests reach it)
def test_a_find_person_picks_by_the_choice_model():
    person = FindPerson(X, 0, 2.0, np.random.default_rng(5))
    ids = [3, 17, 42]
    screen = {"number": 0, "items": [{"id": i} for i in ids]}
    picks = np.bincount([person.answer(screen)["choice"] for _ in range(6000)], minlength=3)
    p = ts.GammaCKL(2.0).choice_prob(X, [0], [ids])[0]
    expected = 6000 * p / p.sum()
    chi2 = float(((picks - expected) ** 2 / expected).sum())
    assert chi2 < 13.8  # P(chi2_2 > 13.8) < 0.001


def test_a_mix_person_accepts_after_its_answers():
    person = MixPerson([0.2, 0.5, 0.7], 3.0, np.random.default_rng(1), accept_after=3)
    screen = {"number": 3, "points": [[50.0, 0.0, 0.0], [60.0, 10.0, 0.0]]}
    assert person.answer(screen) == {"screen": 3, "choice": None, "found": True}
    screen["number"] = 2
    assert person.answer(screen)["choice"] in (0, 1)


def test_triplet_peoples_spec_is_their_oracles_for_their_dimension():
    people = TripletPeople(np.zeros((4, 3)) + np.arange(4)[:, None], ts.TSTE(), 0.0, 0)
    assert people.spec == ts.TSTE().spec(3)  # alpha: d - 1 = 2
    assert people.spec != ts.TSTE().spec(2)
    assert people.spec is people.spec  # made once
