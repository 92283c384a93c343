"""Trials as data: RankedChoices and OddOneOut (validation, triplets implied, indexing)."""

import gzip

import numpy as np
import pytest

import tripletsearch as ts
from tripletsearch.datasets import load_odd_one_out
from tripletsearch.trials import OddOneOut, RankedChoices, is_trials


def _implied_by_definition(head, cands, picks, ordered):
    """Triplets by the definition: a pick beats every candidate not picked before it."""
    out = []
    for p_index, p in enumerate(picks):
        later = picks[p_index + 1 :] if ordered else []
        for c in cands:
            if c not in picks or c in later:
                out.append((head, p, c))
    return sorted(out)


@pytest.mark.parametrize("k,r", [(2, 1), (3, 1), (8, 2), (5, 4), (16, 4)])
@pytest.mark.parametrize("ordered", [True, False])
def test_ranked_to_triplets_matches_definition(k, r, ordered):
    rng = np.random.default_rng(k * 10 + r)
    m, n = 7, 40
    H, C, P = [], [], []
    for _ in range(m):
        items = rng.choice(n, size=k + 1, replace=False)
        H.append(items[0])
        C.append(items[1:])
        P.append(rng.choice(items[1:], size=r, replace=False))
    trials = RankedChoices(H, C, P, ordered=ordered)
    T = trials.to_triplets()
    per = r * (k - r) + (r * (r - 1) // 2 if ordered else 0)
    assert T.shape == (m * per, 3)
    for q in range(m):
        got = sorted(map(tuple, T[q * per : (q + 1) * per].tolist()))
        want = _implied_by_definition(H[q], list(C[q]), list(P[q]), ordered)
        assert got == [tuple(int(v) for v in w) for w in want]


def test_wilber_grid_counts():
    """16 candidates, 4 unordered picks: 48 triplets; 8-rank-2: 13."""
    C = np.arange(1, 17)[None]
    assert len(RankedChoices([0], C, [[1, 2, 3, 4]], ordered=False).to_triplets()) == 48
    assert len(RankedChoices([0], C[:, :8], [[5, 2]]).to_triplets()) == 13


def test_triplet_is_a_two_choice():
    trials = RankedChoices([4, 0], [[1, 2], [3, 1]], [2, 1])
    np.testing.assert_array_equal(trials.to_triplets(), [[4, 2, 1], [0, 1, 3]])
    assert (trials.n_choices, trials.n_picks) == (2, 1)


def test_rows_layout():
    trials = RankedChoices([0], [[5, 6, 7, 8]], [[7, 5]])
    np.testing.assert_array_equal(trials.rows(), [[0, 7, 5, 6, 8]])


def test_odd_one_out_triplets_and_rows():
    trials = OddOneOut([[3, 1, 2], [4, 5, 6]], [3, 6])
    np.testing.assert_array_equal(trials.rows(), [[1, 2, 3], [4, 5, 6]])
    np.testing.assert_array_equal(
        trials.to_triplets(), [[1, 2, 3], [2, 1, 3], [4, 5, 6], [5, 4, 6]]
    )
    again = OddOneOut.from_rows(trials.rows())
    np.testing.assert_array_equal(again.rows(), trials.rows())


@pytest.mark.parametrize(
    "args,exc,match",
    [
        (([0], [[1, 1, 2]], [1]), ValueError, "candidates: row 0 repeats"),
        (([1], [[1, 2, 3]], [2]), ValueError, "candidates: row 0 holds its head"),
        (([0], [[1, 2, 3]], [[1, 1]]), ValueError, "picks: row 0 picks an item twice"),
        (([0], [[1, 2, 3]], [4]), ValueError, "picks: row 0 picks 4, not among"),
        (([0], [[1, 2, 3]], [[1, 2, 3]]), ValueError, "picks: between 1 and k - 1"),
        (([0], [[1]], [1]), ValueError, "candidates: at least 2"),
        (([], np.empty((0, 3), int), np.empty((0, 1), int)), ValueError, "heads: empty"),
        (([0, 1], [[1, 2, 3]], [1]), ValueError, "candidates, picks: expected 2 rows"),
        (([0], [[1, 2, 3], [4, 5]], [1]), ValueError, "candidates: ragged"),
        (([0.0], [[1, 2, 3]], [1]), TypeError, "heads: expected integer"),
        (([0], [[1.5, 2, 3]], [1]), TypeError, "candidates: expected integer"),
        (([0], [[np.nan, 2, 3]], [2]), TypeError, "candidates: expected integer"),
        (([0], [[1, 2, 3]], [1.0]), TypeError, "picks: expected integer"),
        (([-1], [[1, 2, 3]], [1]), ValueError, "heads: negative"),
        (([0], [1, 2, 3], [1]), ValueError, "candidates: expected a 2-d"),
    ],
)
def test_ranked_bad_input(args, exc, match):
    with pytest.raises(exc, match=match):
        RankedChoices(*args)


def test_ranked_bad_ordered():
    with pytest.raises(TypeError, match="ordered"):
        RankedChoices([0], [[1, 2]], [1], ordered="yes")


@pytest.mark.parametrize(
    "args,exc,match",
    [
        (([[0, 1, 1]], [0]), ValueError, "items: row 0 repeats"),
        (([[0, 1, 2]], [3]), ValueError, "odd: row 0 names 3, not among"),
        (([[0, 1]], [0]), ValueError, "items: expected 3 items"),
        (([[0, 1, 2]], [0, 1]), ValueError, "odd: expected 1 entries"),
        ((np.empty((0, 3), int), []), ValueError, "items: empty"),
        (([[0, 1, 2.0]], [0]), TypeError, "items: expected integer"),
        (([[0, 1, 2], [3, 4]], [0, 3]), ValueError, "items: ragged"),
    ],
)
def test_odd_bad_input(args, exc, match):
    with pytest.raises(exc, match=match):
        OddOneOut(*args)


def test_out_of_range_is_checked_against_n_items():
    trials = RankedChoices([0], [[1, 9]], [9])
    trials.check_n_items(10)
    with pytest.raises(ValueError, match="candidates: index 9 .* out of range for 5"):
        trials.check_n_items(5)
    with pytest.raises(ValueError, match="items: index 7"):
        OddOneOut([[0, 1, 7]], [7]).check_n_items(7)


@pytest.mark.parametrize("make", ["ranked", "odd"])
def test_indexing_and_slicing(make):
    rng = np.random.default_rng(0)
    Z = np.array([rng.choice(20, 4, replace=False) for _ in range(10)])
    if make == "ranked":
        trials = RankedChoices(Z[:, 0], Z[:, 1:], Z[:, 1:3])
    else:
        trials = OddOneOut(Z[:, :3], Z[:, 1])
    assert len(trials) == 10
    parts = [trials[:3], trials[3:], trials[np.arange(10) % 2 == 0], trials[[9, 0]], trials[-1]]
    assert [len(p) for p in parts] == [3, 7, 5, 2, 1]
    wanted = [np.arange(3), np.arange(3, 10), np.arange(0, 10, 2), [9, 0], [9]]
    for part, rows in zip(parts, wanted):
        np.testing.assert_array_equal(part.rows(), trials.rows()[rows])
        assert type(part) is type(trials)
    with pytest.raises(IndexError):
        trials[10]


def test_exported_and_recognised():
    assert ts.RankedChoices is RankedChoices and ts.OddOneOut is OddOneOut
    odd = OddOneOut([[0, 1, 2]], [0])
    assert is_trials(odd) and is_trials([odd, np.array([[0, 1, 2]])])
    assert not is_trials([[0, 1, 2]]) and not is_trials(np.array([[0, 1, 2]]))


def test_load_odd_one_out(tmp_path):
    rows = np.array([[0, 1, 2], [5, 3, 4], [1, 2, 0]])
    path = tmp_path / "trainset.txt"
    np.savetxt(path, rows, fmt="%d")  # THINGS' layout: the odd one last
    trials = load_odd_one_out(path)
    np.testing.assert_array_equal(trials.odd, rows[:, 2])
    np.testing.assert_array_equal(trials.rows(), rows)
    gz = tmp_path / "t.csv.gz"
    with gzip.open(gz, "wt") as f:
        f.write("a,b,odd\n" + "\n".join(",".join(str(v + 1) for v in r) for r in rows) + "\n")
    np.testing.assert_array_equal(load_odd_one_out(gz, one_based=True).rows(), rows)
    np.savetxt(path, rows.astype(float))  # as np.savetxt writes floats ("1.000000e+00")
    np.testing.assert_array_equal(load_odd_one_out(path).rows(), rows)
    np.savetxt(path, rows + 0.5)
    with pytest.raises(ValueError, match="line 1 of trainset.txt is not three integer ids"):
        load_odd_one_out(path)
    with pytest.raises(ValueError, match="items: index 5"):
        np.savetxt(path, rows, fmt="%d")
        load_odd_one_out(path, n_items=5)
    (tmp_path / "bad.txt").write_text("0 1 2\n0 1\n")
    with pytest.raises(ValueError, match="line 2 of bad.txt"):
        load_odd_one_out(tmp_path / "bad.txt")
    (tmp_path / "rep.txt").write_text("0 1 1\n")
    with pytest.raises(ValueError, match="items: row 0 repeats"):
        load_odd_one_out(tmp_path / "rep.txt")
    with pytest.raises(ValueError, match="path: no such file"):
        load_odd_one_out(tmp_path / "none.txt")
