"""The response-time model (fitted to NEXT's egg answers) and the refit cost model."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from tripletsearch import datasets
from tripletsearch.collect._timing import (
    MEASURED_REFIT_COST,
    NEXT_RESPONSE_TIMES,
    RefitCostModel,
    ResponseTimeModel,
    distance_ratio,
    fit_next_response_times,
    measure_refit_times,
    response_times_by_sampler,
)

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data" / "alien_eggs_n30_next2015"


def test_distance_ratio_closed_forms():
    X = np.array([[0.0], [1.0], [3.0], [-1.0]])
    r = distance_ratio(X, [[0, 1, 2], [0, 2, 1], [0, 1, 3], [1, 0, 2]])
    np.testing.assert_allclose(r, [0.75, 0.75, 0.5, 2.0 / 3.0])
    # 2-D, Euclidean (not squared) distances: 3-4-5
    Y = np.array([[0.0, 0.0], [3.0, 4.0], [0.0, 15.0]])
    assert distance_ratio(Y, [[0, 1, 2]])[0] == pytest.approx(15.0 / 20.0)
    # both items at the head: 1/2 (no division by zero)
    Z = np.zeros((3, 2))
    assert distance_ratio(Z, [[0, 1, 2]])[0] == 0.5


def test_distance_ratio_bad_input():
    X = np.zeros((3, 1))
    with pytest.raises(ValueError, match="queries: item indices must lie in"):
        distance_ratio(X, [[0, 1, 3]])
    with pytest.raises(ValueError, match="queries"):
        distance_ratio(X, [[0, 1]])
    with pytest.raises(ValueError, match="X"):
        distance_ratio(np.full((3, 1), np.nan), [[0, 1, 2]])


def test_fit_recovers_a_known_line_and_smearing():
    rng = np.random.default_rng(0)
    r = rng.uniform(0.5, 1.0, 40_000)
    e = rng.laplace(0.0, 0.4, r.size)  # median 0, heavy-ish tails
    t = np.exp(1.2 - 1.5 * r + e)
    m = ResponseTimeModel.fit(r, t)
    assert m.intercept == pytest.approx(1.2, abs=0.02)
    assert m.slope == pytest.approx(-1.5, abs=0.03)
    # E[exp(e)] of a Laplace(0, b) is 1 / (1 - b^2)
    assert m.smearing == pytest.approx(1.0 / (1.0 - 0.4**2), rel=0.02)
    np.testing.assert_allclose(m.median([0.5, 1.0]), np.exp([1.2 - 0.75, 1.2 - 1.5]), rtol=0.03)
    np.testing.assert_allclose(m.mean(0.7), m.smearing * m.median(0.7))


def test_fit_is_robust_to_recording_errors():
    rng = np.random.default_rng(1)
    r = rng.uniform(0.5, 1.0, 5000)
    t = np.exp(1.0 - 1.0 * r + rng.normal(0, 0.3, r.size))
    clean = ResponseTimeModel.fit(r, t)
    t[:50] = -3.0  # negative times are left out
    t[50:100] = 5000.0  # people away barely move a median regression
    dirty = ResponseTimeModel.fit(r, t)
    assert dirty.n_answers == 4950
    assert dirty.slope == pytest.approx(clean.slope, abs=0.05)
    assert dirty.intercept == pytest.approx(clean.intercept, abs=0.05)


def test_fit_bad_input():
    with pytest.raises(ValueError, match="seconds: expected 3 times"):
        ResponseTimeModel.fit([0.5, 0.6, 0.7], [1.0, 2.0])
    with pytest.raises(ValueError, match="seconds: need at least 3 answers"):
        ResponseTimeModel.fit([0.5, 0.6, 0.7], [1.0, -2.0, 0.0])


def test_stored_next_model_is_the_fit_of_the_bundled_answers():
    fit = fit_next_response_times()
    assert fit.n_answers == NEXT_RESPONSE_TIMES.n_answers == 20085
    assert fit.intercept == pytest.approx(NEXT_RESPONSE_TIMES.intercept, abs=1e-5)
    assert fit.slope == pytest.approx(NEXT_RESPONSE_TIMES.slope, abs=1e-5)
    assert fit.smearing == pytest.approx(NEXT_RESPONSE_TIMES.smearing, abs=1e-5)


def test_stored_next_model_refits_from_shared_data():
    if not SHARED.is_dir():
        pytest.skip("../shared is not available")
    with open(SHARED / "items.csv", newline="") as f:
        param = np.array([float(r["param"]) for r in csv.DictReader(f)])
    with open(SHARED / "triplets.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    T = np.array([[int(r[k]) for k in ("head", "closer", "farther")] for r in rows])
    t = np.array([float(r["response_time_s"]) for r in rows])
    m = ResponseTimeModel.fit(distance_ratio(param[:, None], T), t)
    assert m.intercept == pytest.approx(NEXT_RESPONSE_TIMES.intercept, abs=1e-5)
    assert m.slope == pytest.approx(NEXT_RESPONSE_TIMES.slope, abs=1e-5)
    assert m.smearing == pytest.approx(NEXT_RESPONSE_TIMES.smearing, abs=1e-5)


def test_next_model_fits_the_binned_medians():
    """The check of the fit, per bin of the distance ratio (867 to 3,913 answers each).

    The observed median time is within 10 % of the model's median there, but in the last
    bin (r > 0.95: one item nearly the head), where people take 14 % longer than the line.
    """
    eggs = datasets.load_alien_eggs(30)
    r = distance_ratio(eggs.truth[:, None], eggs.triplets)
    t = eggs.response_time_s
    edges = np.linspace(0.5, 1.0, 11)
    which = np.clip(np.digitize(r, edges) - 1, 0, 9)
    for b in range(10):
        mine = (which == b) & (t > 0)
        observed = np.median(t[mine])
        model = NEXT_RESPONSE_TIMES.median(np.median(r[mine]))
        assert model == pytest.approx(observed, rel=0.1 if b < 9 else 0.15)
    # harder queries (r near 1/2) take longer: about 2.2 s against 1.2-1.4 s near r = 1
    assert NEXT_RESPONSE_TIMES.slope < -1.0


def test_by_sampler_the_adaptive_answers_are_harder_and_slower():
    rows = {r["sampler"]: r for r in response_times_by_sampler(datasets.load_alien_eggs(30))}
    assert set(rows) == {"RandomSampling", "CrowdKernel", "STE", "UncertaintySampling", "Test"}
    assert sum(r["answers"] for r in rows.values()) == 20086
    rnd, unc = rows["RandomSampling"], rows["UncertaintySampling"]
    assert rnd["agreement"] == pytest.approx(0.836, abs=1e-3)
    assert unc["agreement"] == pytest.approx(0.665, abs=1e-3)
    assert unc["median_seconds"] == pytest.approx(2.007, abs=1e-3)
    assert rnd["median_seconds"] == pytest.approx(1.692, abs=1e-3)
    # the model, from the queries' distance ratios alone, predicts the samplers' medians
    for r in rows.values():
        assert r["model_median_seconds"] == pytest.approx(r["median_seconds"], rel=0.1)
    # salmon's 300 eggs: its uncertainty sampler asked queries about as easy as random ones
    # (median distance ratio 0.688 vs 0.694), as accurately answered and as fast
    salmon = {r["sampler"]: r for r in response_times_by_sampler(datasets.load_alien_eggs(300))}
    unc, rnd = salmon["Uncertainty"], salmon["Random"]
    assert unc["median_ratio"] == pytest.approx(rnd["median_ratio"], abs=0.01)
    assert unc["agreement"] == pytest.approx(rnd["agreement"], abs=0.01)
    assert unc["median_seconds"] == pytest.approx(rnd["median_seconds"], rel=0.02)
    with pytest.raises(ValueError, match="dataset: needs each answer's sampler"):
        response_times_by_sampler(datasets.load_music())


def test_seconds_prices_queries_by_their_ratio():
    m = ResponseTimeModel(1.0, -2.0, 1.5)
    X = np.array([[0.0], [1.0], [3.0], [-1.0]])
    np.testing.assert_allclose(
        m.seconds(X, [[0, 1, 2], [0, 1, 3]]), 1.5 * np.exp(1.0 - 2.0 * np.array([0.75, 0.5]))
    )


# ---------------------------------------------------------------------- refit cost


def test_refit_cost_fit_recovers_a_known_power_law():
    rows = [(m, n, d) for m in (1000, 5000, 20000) for n in (100, 1000) for d in (2, 5)]
    truth = RefitCostModel(1e-3, 0.3, 0.4, 0.1)
    t = [truth(*r) for r in rows]
    fit = RefitCostModel.fit(*zip(*rows), t)
    assert fit.scale == pytest.approx(1e-3, rel=1e-9)
    assert (fit.answers_exp, fit.items_exp, fit.dim_exp) == pytest.approx((0.3, 0.4, 0.1))
    assert fit.rms_log_error == pytest.approx(0.0, abs=1e-9)
    assert truth(10_000, 1000, 3) == pytest.approx(1e-3 * 10_000**0.3 * 1000**0.4 * 3**0.1)
    # a size that never varies gets exponent 0; noise shows in the rms of the logs
    rows = [(m, 50, 2) for m in (100, 1000, 10_000, 100_000)]
    noisy = [2e-4 * r[0] ** 0.5 * f for r, f in zip(rows, (1.2, 1 / 1.2, 1.2, 1 / 1.2))]
    fit = RefitCostModel.fit(*zip(*rows), noisy)
    assert fit.items_exp == 0.0 and fit.dim_exp == 0.0
    assert fit.rms_log_error == pytest.approx(np.log(1.2), rel=0.2)


def test_refit_cost_bad_input():
    with pytest.raises(ValueError, match="seconds: need at least 4 measurements"):
        RefitCostModel.fit([1, 2, 3], [1, 2, 3], [1, 1, 1], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="seconds: measured times must be finite and > 0"):
        RefitCostModel.fit([1, 2, 3, 4], [1, 2, 3, 4], [1, 1, 1, 1], [0.1, 0.0, 0.2, 0.3])
    with pytest.raises(ValueError, match="n_answers: sizes must be >= 1"):
        RefitCostModel.fit([0, 2, 3, 4], [1, 2, 3, 4], [1, 1, 1, 1], [0.1, 0.1, 0.2, 0.3])


def test_measured_refit_cost_is_stated():
    assert "measure_refit_times" in MEASURED_REFIT_COST.source
    # the target for a refit on 10,000 answers over 1,000 items is 0.5 s
    assert 0.01 < MEASURED_REFIT_COST(10_000, 1000, 3) < 0.5
    assert MEASURED_REFIT_COST(20_000, 1000, 3) > MEASURED_REFIT_COST(10_000, 1000, 3)
    assert MEASURED_REFIT_COST(10_000, 1000, 3) > MEASURED_REFIT_COST(10_000, 100, 3)


def test_measure_refit_times_times_the_samplers_refit():
    rows = measure_refit_times([(30, 2, 200), (60, 2, 400)], problems=2, repeats=1, n_jobs=1)
    assert [(r["n_items"], r["dim"], r["n_answers"]) for r in rows] == [(30, 2, 200), (60, 2, 400)]
    assert all(0.0 < r["seconds"] < 30.0 for r in rows)
    with pytest.raises(ValueError, match="problems: must be >= 1"):
        measure_refit_times([(30, 2, 200)], problems=0)
