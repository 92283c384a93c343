"""The smoke run of ``bench/trials_accuracy.py`` (issue 51's accuracy of screens past the
triplet): every condition runs at a tiny size and the report reads its comparisons."""

from __future__ import annotations

import numpy as np
from trials_accuracy import conditions, report, run, screens_to_reach


def test_conditions_count_their_screens():
    c = conditions()
    assert c["triplets"]["n_answers"][-1] == 3000 and c["rank-active"]["n_choices"] == 8
    assert (
        c["rank-random-cut"]["fit_as"] == "triplets" and c["odd-random"]["trial"] == "odd-one-out"
    )
    assert conditions(0.01)["triplets"]["n_answers"] == [5, 10, 15, 20, 30]


def test_screens_to_reach_interpolates():
    assert screens_to_reach([100, 200, 300], np.array([0.5, 0.7, 0.8]), 0.75) == 250.0
    assert screens_to_reach([100, 200], np.array([0.8, 0.9]), 0.75) == 100.0
    assert np.isnan(screens_to_reach([100, 200], np.array([0.5, 0.6]), 0.75))


def test_smoke_run_reports_every_comparison():
    only = ["triplets", "rank-random", "rank-random-cut", "odd-random", "rank-active"]
    only += ["rank-random-lapse"]
    res = run(12, 2, 2, scale=0.02, test_size=200, only=only)
    assert set(res) == set(only)
    for r in res.values():
        acc = np.asarray(r["accuracy"])
        assert acc.shape == (2, len(r["budgets"])) and ((acc >= 0) & (acc <= 1)).all()
    text = report(res)
    needles = (
        "mark: random triplets at 60",
        "screens to reach the mark, rank-active",
        "rank-active - rank-random (paired by seed, 2 seeds)",
        "rank-random - rank-random-cut",
        "rank-random-lapse - rank-random-cut",
        "odd-random per trial vs triplets",
    )
    for needle in needles:
        assert needle in text


def test_comparisons_pair_the_same_seeds():
    """Merged runs may hold other seeds per condition: a difference pairs seed with seed."""
    res = {
        "rank-random": {"budgets": [10], "accuracy": [[0.5], [0.6], [0.7]], "seconds": 1.0},
        "rank-random-cut": {"budgets": [10], "accuracy": [[0.65], [0.45]], "seconds": 1.0},
    }
    res["rank-random"]["seeds"], res["rank-random-cut"]["seeds"] = [0, 1, 2], [2, 0]
    text = report(res)  # seeds 0 and 2: 0.5 - 0.45 and 0.7 - 0.65
    assert "rank-random - rank-random-cut (paired by seed, 2 seeds): 10: +0.0500" in text
