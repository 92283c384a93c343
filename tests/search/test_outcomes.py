"""The outcome rules of recorded searches (tripletsearch.outcomes): against rows worked out
by hand, and the choice-model fit leaving out exactly the screens they call no comparison."""

from __future__ import annotations

import numpy as np
import pytest

import tripletsearch as ts
from tripletsearch.outcomes import found_target, is_comparison, triplet_agreement


def test_found_target_by_hand():
    said = [True, True, True, False, False, True]
    item = [5, 5, -1, -1, 5, 7]
    target = [5, 6, 4, 5, -1, -1]
    # named the target; named another item; said found without an item although a target
    # was set; never said found (twice); a free search that said found
    np.testing.assert_array_equal(
        found_target(said, item, target), [True, False, False, False, False, True]
    )
    assert found_target([], [], []).shape == (0,)
    # a free search without an item (the service's mix mode: the estimate accepted)
    assert found_target([True], [-1], [-1]).tolist() == [True]


def test_is_comparison_by_hand():
    heads = [3, 3, 0, 9]
    shown = [[1, 2], [2, 3], [1, 2], [9, 8]]
    np.testing.assert_array_equal(is_comparison(heads, shown), [True, False, True, False])
    assert is_comparison(np.zeros(0, int), np.zeros((0, 4), int)).shape == (0,)


@pytest.mark.parametrize(
    "args,error,match",
    [
        (([1, 0], [1, 2], [1, 2]), TypeError, "said_found: expected a 1-d bool array"),
        (([[True]], [[1]], [[1]]), TypeError, "said_found: expected a 1-d bool array"),
        (([True], [1.0], [1]), TypeError, "found_item: expected a 1-d integer array"),
        (([True], [1], [True]), TypeError, "target: expected a 1-d integer array"),
        (([True, False], [1], [1]), ValueError, "lengths differ"),
        (([True], [-2], [1]), ValueError, "found_item: expected item ids >= 0 or -1"),
        (([True], [1], [-3]), ValueError, "target: expected item ids >= 0 or -1"),
    ],
)
def test_found_target_bad_input(args, error, match):
    with pytest.raises(error, match=match):
        found_target(*args)


@pytest.mark.parametrize(
    "args,error,match",
    [
        (([1.5], [[1, 2]]), TypeError, "heads: expected a 1-d integer array"),
        (([1], [1, 2]), TypeError, "shown: expected a 2-d integer array"),
        (([1, 2], [[1, 2]]), ValueError, "heads, shown: lengths differ"),
        (([-1], [[1, 2]]), ValueError, "heads: item ids must be >= 0"),
        (([1], [[1, -2]]), ValueError, "shown: item ids must be >= 0"),
    ],
)
def test_is_comparison_bad_input(args, error, match):
    with pytest.raises(error, match=match):
        is_comparison(*args)


def test_the_choice_model_fit_uses_the_comparisons_only():
    """A fit on records where some screens show the target equals the fit on the screens
    that do not: those are left out, and counted out of n_choices."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    heads = rng.integers(0, 30, 200)
    shown = np.stack([rng.permutation(30)[:3] for _ in heads])
    shown[:40, 0] = heads[:40]  # the target on these screens
    picked = shown[np.arange(200), rng.integers(0, 3, 200)]
    keep = is_comparison(heads, shown)
    assert not keep[:40].any() and keep.sum() > 100
    full = ts.fit_choice_model(X, heads, shown, picked)
    kept = ts.fit_choice_model(X, heads[keep], shown[keep], picked[keep])
    assert full == kept and full.n_answers == int(keep.sum())


def test_triplet_agreement_by_hand():
    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0], [-1.0, 0.0]])
    rows = [[0, 1, 2], [0, 2, 1], [0, 1, 3], [1, 0, 2]]  # right, wrong, tie, right
    np.testing.assert_array_equal(triplet_agreement(X, rows), [1.0, 0.0, 0.5, 1.0])
    # one coordinate per item: the same as a column
    x = np.array([0.0, 1.0, -3.0, -1.0])
    np.testing.assert_array_equal(triplet_agreement(x, rows), triplet_agreement(x[:, None], rows))
    assert triplet_agreement(X, np.zeros((0, 3), dtype=np.int64)).shape == (0,)


@pytest.mark.parametrize(
    "X, rows, error, match",
    [
        (np.zeros((3, 2)), [[0, 1, 3]], ValueError, "triplets: item ids must lie in 0..2"),
        (np.zeros((3, 2)), [[0, 1]], ValueError, "triplets: expected rows of 3"),
        (np.zeros((3, 2)), [[0.5, 1, 2]], TypeError, "triplets"),
        (np.zeros((3, 2, 1)), [[0, 1, 2]], ValueError, "X: expected a 1-d or 2-d"),
    ],
)
def test_triplet_agreement_bad_input(X, rows, error, match):
    with pytest.raises(error, match=match):
        triplet_agreement(X, rows)
