"""Continuous search: ask + tell time, the simulator native vs its NumPy twin, accuracy and
robustness (recorded in extra_info).

Targets (target uniform in [-1, 1]^d, gamma-CKL users gamma = 3, median over >= 50 runs):
"posterior": d=2 <= 0.05 at m=40, <= 1e-3 at m=200; d=5 <= 0.5 and <= 0.1.
"global":    d=2 <= 0.01 at m=40, <= 1e-6 at m=200; d=5 <= 0.3 and <= 0.01.
ask + tell under 1 ms for d <= 5.

    python -m pytest bench/test_bench_continuous.py --benchmark-group-by=group
"""

import numpy as np
import pytest
from conftest import answer_continuous

import tripletsearch as ts
from tripletsearch import _core
from tripletsearch._reference import continuous as ref

QUERIES = 60


@pytest.mark.parametrize("method", ["global", "posterior"])
@pytest.mark.parametrize("d", [2, 5])
def test_ask_tell(benchmark, d, method):
    """A whole session of 60 queries through the public API; per-query time in extra_info."""
    benchmark.group = f"{QUERIES} ask+tell d={d}"

    def setup():
        return (ts.ContinuousSearch(d, 3.0, method=method, random_state=0, n_jobs=2),), {}

    def run(s):
        answer_continuous(s, np.full(d, 0.3), QUERIES)

    benchmark.pedantic(run, setup=setup, rounds=5, iterations=1)
    benchmark.extra_info["per_query_us"] = round(benchmark.stats.stats.min / QUERIES * 1e6, 1)


@pytest.mark.parametrize("backend", ["native", "numpy"])
def test_simulator_throughput(benchmark, backend):
    """Queries per second of the simulator, native vs the NumPy twin (d = 2, global, 256
    particles, 2 runs x 40 queries)."""
    benchmark.group = "simulator d=2 global 256 particles 2 runs x 40 queries"
    if backend == "native":
        config = _core.ContinuousConfig(dim=2, n_particles=256)
        options = _core.ContinuousSimOptions(n_runs=2, max_queries=40)
        benchmark(_core.simulate_continuous, config, options, 1, 1)
    else:
        kwargs = dict(dim=2, method="global", particles=256)
        benchmark.pedantic(
            ref.simulate, args=(2, 40, 3.0, 0.0, 1), kwargs=kwargs, rounds=1, iterations=1
        )
    benchmark.extra_info["queries_per_s"] = round(80 / benchmark.stats.stats.min)


CASES = {
    "eps=0": dict(),
    "eps=0.1 modelled": dict(lapse=0.1, oracle_lapse=0.1),
    "eps=0.1 unmodelled": dict(oracle_lapse=0.1),
    "user gamma halved": dict(oracle=ts.GammaCKL(1.5)),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("method", ["global", "posterior"])
@pytest.mark.parametrize("d", [2, 5])
def test_accuracy(benchmark, d, method, case):
    """50 runs x 200 queries; median errors at m = 40 and 200 in extra_info."""
    benchmark.group = f"accuracy d={d}"
    sim = benchmark.pedantic(
        ts.simulate_continuous,
        args=(d, 3.0),
        kwargs=dict(n_runs=50, max_queries=200, method=method, random_state=123, **CASES[case]),
        rounds=1,
        iterations=1,
    )
    e = sim.errors
    benchmark.extra_info.update(
        median_m40=float(np.median(e[:, 40])),
        median_m200=float(np.median(e[:, 200])),
        lost_fraction=float(np.mean(e[:, 200] > 0.1)),
    )
