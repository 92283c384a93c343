"""The replay of ``bench/replay.py`` (the issue's measure of active against random on
people's answers): answers matched by head and unordered pair, unused ones first, reused
only when exhausted, none for a query never recorded; data folders read and checked."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from replay import Answers, pooled, recorded_folder, replay

from tripletsearch.collect import next_eggs

ROWS = np.array([[0, 1, 2], [0, 2, 1], [0, 1, 2], [3, 1, 2]], dtype=np.int64)


def test_answers_are_used_once_before_any_is_reused():
    a = Answers(ROWS, np.random.default_rng(0))
    q = np.array([0, 2, 1])  # the same head and unordered pair as rows 0-2
    first = [tuple(a.answer(q)) for _ in range(3)]
    assert Counter(first) == Counter(map(tuple, ROWS[:3].tolist())) and a.reused == 0
    again = [tuple(a.answer(q)) for _ in range(300)]
    assert a.reused == 300 and set(again) == {(0, 1, 2), (0, 2, 1)}
    assert 150 < again.count((0, 1, 2)) < 250  # drawn among the three: two of them say 1
    assert a.answer(np.array([1, 0, 2])) is None  # never asked of head 1
    assert tuple(a.answer(np.array([3, 2, 1]))) == (3, 1, 2)


def test_recorded_folders_are_read_and_checked(tmp_path):
    lines = ["head,closer,farther,sampler", "0,1,2,Random", "3,4,5,Test", "6,7,8,Random"]
    (tmp_path / "triplets.csv").write_text("\n".join(lines) + "\n")
    rec = recorded_folder(tmp_path)
    np.testing.assert_array_equal(rec.train, [[0, 1, 2], [6, 7, 8]])
    np.testing.assert_array_equal(rec.test, [[3, 4, 5]])
    n, train, test = pooled([rec, rec])
    assert n == 30 and len(train) == 4 and len(test) == 2
    (tmp_path / "triplets.csv").write_text("head,closer,farther\n0,1,2\n")
    with pytest.raises(ValueError, match="sampler"):
        recorded_folder(tmp_path)
    (tmp_path / "triplets.csv").write_text("head,closer,farther,sampler\n0,1,2,Random\n")
    with pytest.raises(ValueError, match="Test rows"):
        recorded_folder(tmp_path)
    (tmp_path / "triplets.csv").write_text("head,closer,farther,sampler\n0,1,30,Test\n")
    with pytest.raises(ValueError, match="outside"):
        recorded_folder(tmp_path)
    with pytest.raises(ValueError, match="different items"):
        pooled([rec, next_eggs().__class__("x", 31, rec.train, rec.train, rec.train, rec.test)])


@pytest.mark.parametrize("method", ["random", "active"])
def test_a_short_replay_learns_the_eggs(method):
    got = replay([next_eggs()], method, seed=0, budgets=(100, 300))
    assert set(got["accuracy"]) == {100, 300}
    assert 0.6 < got["accuracy"][300] <= 1.0  # people agree with the eggs' order ~80 %
    assert got["asked"] >= 300 + got["dropped"] and got["asked"] % 10 == 0
