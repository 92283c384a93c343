"""The simulated collect participants (tripletsearch.people.CollectPerson): a person picks
by gamma-CKL, the scripts as the checks must catch them."""

from __future__ import annotations

import numpy as np
import pytest

from tripletsearch.people import CollectPerson


def query(number, head, cands):
    return {"screen": number, "head": {"id": head}, "candidates": [{"id": c} for c in cands]}


def test_a_person_picks_the_nearer_more_often_and_the_head_when_shown():
    X = np.array([[0.0, 0.0], [1.0, 0.0], [4.0, 0.0]])
    person = CollectPerson("person", X, gamma=3.0, lapse=0.0, rng=np.random.default_rng(0))
    picks = [person.answer(query(i, 0, [1, 2]))["choice"] for i in range(400)]
    # P(1) = 1 / (1 + (1/4)^3) = 0.985 by gamma-CKL
    assert abs(picks.count(0) / 400 - 1 / (1 + 0.25**3)) < 0.03
    assert person.answer(query(0, 1, [2, 1]))["choice"] == 1  # the head itself
    assert 0.3 < person.seconds_ < 15 and person.answer(query(1, 0, [1, 2]))["response_ms"] > 0


def test_a_person_without_gamma_picks_the_nearest_and_answers_in_fixed_time():
    X = np.array([[0.0], [3.0], [1.0], [-1.0], [5.0]])
    person = CollectPerson("person", X, gamma=None, lapse=0.0, seconds=0.9, spread=0.0)
    screen = {"number": 4, "head": {"id": 0}, "candidates": [{"id": c} for c in (1, 2, 4)]}
    assert person.answer(screen) == {"screen": 4, "choice": 1, "response_ms": 900}
    assert person.pick(query(5, 0, [3, 2])) == 0  # equally near: the first
    assert person.pick(query(6, 1, [4, 0, 1])) == 2  # the head itself
    lapsing = CollectPerson("person", X, gamma=None, lapse=1.0, rng=np.random.default_rng(3))
    picks = [lapsing.pick(query(i, 0, [4, 2])) for i in range(400)]
    assert abs(picks.count(0) / 400 - 0.5) < 0.08  # every answer a lapse: uniform


def test_the_scripts():
    rng = np.random.default_rng(1)
    reader = CollectPerson("reader", rng=rng)
    assert reader.answer(query(0, 5, [7, 5]))["choice"] == 1  # an attention check
    first = reader.answer(query(1, 3, [4, 6]))["choice"]
    again = reader.answer(query(9, 3, [6, 4]))["choice"]  # the same query reordered
    assert [4, 6][first] == [6, 4][again]
    random = CollectPerson("random", rng=rng)
    picks = [random.answer(query(i, 0, [1, 2]))["choice"] for i in range(400)]
    assert abs(picks.count(0) / 400 - 0.5) < 0.08  # 3.2 standard deviations
    fast = CollectPerson("fast", rng=rng)
    assert fast.answer(query(0, 0, [1, 2]))["response_ms"] == 100 and fast.seconds_ == 0.1


@pytest.mark.parametrize(
    "kwargs, name",
    [({"kind": "bot"}, "kind"), ({"kind": "person"}, "X"),
     ({"kind": "random", "lapse": 2.0}, "lapse"), ({"kind": "random", "spread": -1}, "spread")],
)  # fmt: skip
def test_bad_input_names_the_argument(kwargs, name):
    with pytest.raises(ValueError, match=name):
        CollectPerson(**kwargs)


def test_a_person_ranks_a_grid_and_names_the_odd_one_out():
    """Ranked screens ("picks": r): r distinct positions, in order of nearness for a person
    without gamma; odd-one-out (no head): the item apart from the closest pair, and with
    gamma 3 each item odd with probability proportional to (the other two's distance)^-3."""
    X = np.array([[0.0], [3.0], [1.0], [-2.0], [5.0], [0.5]])
    near = CollectPerson("person", X, gamma=None, lapse=0.0, spread=0.0)
    grid = {**query(0, 0, [1, 2, 3, 4, 5]), "picks": 3}
    got = near.answer(grid)
    assert got["picks"] == [4, 1, 2] and got["choice"] == 4  # items 5, 2, 3: 0.5, 1, 2 away
    assert "picks" not in near.answer(query(1, 0, [1, 2]))  # one pick: choice alone
    odd = {"screen": 2, "head": None, "candidates": [{"id": c} for c in (0, 2, 4)]}
    assert near.answer(odd) == {"screen": 2, "choice": 2, "response_ms": 2000}  # 4 is apart
    person = CollectPerson("person", X, gamma=3.0, lapse=0.0, rng=np.random.default_rng(4))
    counts = np.bincount([person.pick(odd) for _ in range(3000)], minlength=3)
    d = np.array([4.0, 5.0, 1.0])  # per item, the distance between the other two
    p = d**-3 / np.sum(d**-3)
    assert np.all(np.abs(counts / 3000 - p) < 4 * np.sqrt(p * (1 - p) / 3000))
    for kind in ("random", "fast"):  # scripts: r distinct positions
        got = CollectPerson(kind, rng=np.random.default_rng(5)).picks(grid)
        assert len(got) == 3 == len(set(got)) and all(0 <= g < 5 for g in got)
    assert CollectPerson("first").picks(grid) == [0, 1, 2]
    reader = CollectPerson("reader", rng=np.random.default_rng(6))
    assert reader.picks({**query(3, 3, [1, 3, 4]), "picks": 2})[0] == 1  # the head first
    twice = {"screen": 4, "head": None, "candidates": [{"id": c} for c in (2, 4, 2)]}
    assert reader.pick(twice) == 1  # two copies of one item: the other is odd
