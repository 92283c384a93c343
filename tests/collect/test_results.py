"""How the comparisons read the curves: means, standard errors, answers needed (linear in
log answers), answers to match another method, at least as accurate within one s.e."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tripletsearch.collect._results import (
    CollectionResult,
    answers_to_match,
    at_least_as_accurate,
    crossing,
    format_table,
)


def result(method, budgets, accuracy, seconds=None, rate=None):
    acc = np.atleast_2d(np.asarray(accuracy, dtype=float))
    runs = [
        {"accuracy": row, "seconds": np.asarray(seconds if seconds is not None else budgets) * 2.0}
        for row in acc
    ]
    return CollectionResult.from_runs(method, budgets, runs, rate=rate, test_size=100)


def test_mean_and_standard_error():
    r = result("a", [100, 1000], [[0.6, 0.7], [0.8, 0.9], [0.7, 0.8]])
    np.testing.assert_allclose(r.mean(), [0.7, 0.8])
    np.testing.assert_allclose(r.stderr(), [0.1 / math.sqrt(3)] * 2)
    np.testing.assert_allclose(r.mean("seconds"), [200, 2000])
    assert np.isnan(r.mean("agreement")).all()  # not recorded: NaN
    assert r.n_runs == 3 and r.test_size == 100
    assert np.isnan(result("a", [1, 2], [[0.5, 0.6]]).stderr()).all()  # one run
    with pytest.raises(ValueError, match="name: expected one of"):
        r.mean("nope")


def test_answers_needed_interpolates_in_log_answers():
    r = result("a", [100, 1000, 10000], [0.6, 0.7, 0.8])
    assert r.answers_needed(0.75) == pytest.approx(10**3.5)
    assert r.answers_needed(0.65) == pytest.approx(10**2.5)
    assert r.answers_needed(0.7) == pytest.approx(1000)
    assert r.answers_needed(0.6) == 100  # reached at the first budget: at most that many
    assert r.answers_needed(0.5) == 100
    assert math.isnan(r.answers_needed(0.81))  # never reached
    assert r.accuracy_at(10**3.5) == pytest.approx(0.75)
    assert math.isnan(r.accuracy_at(50)) and math.isnan(r.accuracy_at(20000))
    # the first crossing of a curve that dips
    assert crossing(np.array([10, 100, 1000]), np.array([0.5, 0.9, 0.6]), 0.7) == pytest.approx(
        10**1.5
    )
    assert math.isnan(crossing(np.array([1, 2]), np.array([0.1, 0.2]), math.nan))


def test_seconds_needed_reads_the_seconds_axis():
    r = result("a", [100, 1000], [0.6, 0.8], seconds=[50, 5000])
    assert r.seconds_needed(0.7) == pytest.approx(math.sqrt(100 * 10000))


def test_answers_to_match():
    random = result("random", [500, 1000, 2000, 5000], [0.60, 0.65, 0.70, 0.75])
    active = result("active", [500, 1000, 2000, 5000], [0.65, 0.72, 0.76, 0.78])
    # random's accuracy at 5000 (0.75): active reaches it between 1000 (0.72) and 2000 (0.76)
    expected = math.exp(math.log(1000) + 0.75 * math.log(2))
    assert answers_to_match(active, random, 5000) == pytest.approx(expected)
    assert answers_to_match(random, random, 2000) == pytest.approx(2000)
    assert math.isnan(answers_to_match(random, active, 5000))


def test_at_least_as_accurate_within_one_standard_error():
    arr = result("arr", [100, 200, 400], [[0.70, 0.80, 0.80], [0.72, 0.82, 0.84]])
    # differences -0.01 (within se), -0.05 (beyond), +0.02
    act = result("active", [100, 200, 400], [[0.69, 0.75, 0.83], [0.71, 0.77, 0.85]])
    budgets, ok = at_least_as_accurate(act, arr)
    np.testing.assert_array_equal(budgets, [100, 200, 400])
    np.testing.assert_array_equal(ok, [True, False, True])
    budgets, ok = at_least_as_accurate(act, arr, start=300)
    np.testing.assert_array_equal(budgets, [400])
    assert ok.all()
    # only the budgets both measured
    other = result("x", [200, 300], [[0.0, 0.0], [0.0, 0.0]])
    np.testing.assert_array_equal(at_least_as_accurate(act, other)[0], [200])


@pytest.mark.once  # Matplotlib only: no native code for the sanitizers
def test_plot_draws_mean_and_band(tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    r = result("active", [100, 1000], [[0.6, 0.7], [0.7, 0.8]], rate=10.0)
    ax = r.plot()
    (line,) = ax.get_lines()
    np.testing.assert_allclose(line.get_xdata(), [100, 1000])
    np.testing.assert_allclose(line.get_ydata(), [65, 75])
    assert line.get_label() == "active, 10 answers/s" and ax.get_xscale() == "log"
    ax2 = r.plot(plt.subplots()[1], against="seconds", label="x")
    np.testing.assert_allclose(ax2.get_lines()[0].get_xdata(), [200, 2000])
    assert ax2.get_xlabel() == "people's seconds"
    with pytest.raises(ValueError, match="against: expected 'answers' or 'seconds'"):
        r.plot(against="time")
    plt.close("all")


def test_format_table_and_repr():
    a = result("random", [100, 200], [[0.5, 0.6], [0.7, 0.8]])
    b = result("active", [200, 300], [[0.9, 0.95], [0.9, 0.95]])
    text = format_table({"random": a, "active": b}).splitlines()
    assert text[0].split() == ["answers", "random", "active"]
    assert text[1].split() == ["100", "60.00", "+-", "10.00", "-"]
    assert text[3].split()[-3:] == ["95.00", "+-", "0.00"]
    assert "seconds" not in format_table({"a": a}, "seconds")  # the numbers, in seconds
    assert repr(a) == "CollectionResult(method='random', n_runs=2, n_answers=[100, 200])"
