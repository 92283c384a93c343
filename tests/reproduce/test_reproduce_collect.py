"""``reproduce collect`` and the bench's comparison: their numbers are the simulations'."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import tripletsearch as ts
from tripletsearch.collect import answers_to_match
from tripletsearch.reproduce import collect_comparison, reproduce_collect

TINY = {
    "runs": 2, "budget": 400, "test_size": 300, "reference": 300,
    "replay_runs": 1, "replay_budget": 300, "fits": 1,
    "next_grid": [200, 400], "salmon_grid": [200, 400],
}  # fmt: skip


def test_comparison_smoke_reads_the_curves():
    X = np.random.default_rng(0).uniform(-1, 1, size=(30, 2))
    out = collect_comparison(
        {"tiny": X}, rates=(None, 100.0), n_runs=2, budget=300, test_size=300,
        n_answers=[100, 200, 300], reference=200, random_state=1, n_jobs=1,
    )  # fmt: skip
    res = out["results"]
    # random once (its queries never depend on the rate), the adaptive methods per rate
    assert sorted((r is None, m) for (_, r, m) in res) == [
        (False, "active"), (False, "arr"), (True, "active"), (True, "arr"), (True, "random")
    ]  # fmt: skip
    direct = ts.simulate_collection(
        X, oracle=ts.GammaCKL(3.0), oracle_lapse=0.05, method="active", budget=300, n_runs=2,
        test_size=300, rate=100.0, n_answers=[100, 200, 300], random_state=1, n_jobs=1,
    )  # fmt: skip
    np.testing.assert_array_equal(res[("tiny", 100.0, "active")].accuracy, direct.accuracy)
    sync, fast = out["checks"]
    assert (sync["rate"], fast["rate"]) == (None, 100.0)
    assert sync["target_answers"] == 100 and fast["target_answers"] == pytest.approx(200 * 2 / 3)
    random = res[("tiny", None, "random")]
    assert sync["random_accuracy"] == random.accuracy_at(200)
    expected = answers_to_match(res[("tiny", None, "active")], random, 200)
    assert sync["active_answers"] == expected or (
        np.isnan(sync["active_answers"]) and np.isnan(expected)
    )
    assert "tiny, 100 answers/s" in out["table"] and "random at 200" in out["table"]


def test_reproduce_collect_writes_its_numbers(tmp_path):
    out = reproduce_collect(tmp_path, settings=TINY, n_jobs=1, verbose=False)
    rows = (tmp_path / "collect.csv").read_text().splitlines()
    assert rows[0].startswith("data,method,runs,n_answers,accuracy,accuracy_se")
    groups = {r.split(",")[0] for r in rows[1:]}
    assert groups == {"colours", "NEXT replay", "NEXT as collected", "salmon as collected"}
    sim = out["simulated"]["active"]
    assert sim.n_runs == 2 and sim.n_answers.tolist() == [400]
    line = next(r for r in rows if r.startswith("colours,active,2,400,"))
    assert float(line.split(",")[4]) == pytest.approx(sim.mean()[0], rel=1e-5)
    assert set(out["collected"]) == {"RandomSampling", "CrowdKernel", "STE", "UncertaintySampling"}
    assert set(out["salmon"]) == {"Random", "Uncertainty"}
    assert {r["sampler"] for r in out["timing"]} >= {"UncertaintySampling", "Uncertainty"}
    pytest.importorskip("matplotlib")
    assert (tmp_path / "collect.png").stat().st_size > 10_000


def test_the_command_line_knows_reproduce_collect():
    done = subprocess.run(
        [sys.executable, "-m", "tripletsearch", "reproduce", "--help"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0 and "collect" in done.stdout
