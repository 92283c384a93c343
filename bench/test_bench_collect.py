"""Collecting triplets: the issue's comparison of random, arr and active queries.

Two simulated truths (the 949 xkcd colours in CIELAB; 300 points uniform in [-1, 1]^5),
people answering by gamma-CKL (gamma 3) with 5 % lapses; 10 runs per method, 5,000 test
answers per run, budgets 500 to 10,000; refits synchronous and on a virtual clock at 10
and 100 answers per second. Printed as a table with the targets read off the curves:

* the answers "active" needs to reach the accuracy "random" reaches with 5,000: at most
  2,500 (synchronous refits), at most 2/3 of 5,000 at 10 and 100 answers per second;
* "active" at least as accurate as "arr" within one standard error at every budget from
  twice arr's random burn-in (n answers) on.

Tens of minutes on 2 cores (``COLLECT_RUNS`` / ``COLLECT_BUDGET`` in the environment make
it smaller). The timings of ask + tell live with the sampler's benches.

    python -m pytest bench/test_bench_collect.py -s
"""

from __future__ import annotations

import os
import time

import pytest

from tripletsearch.reproduce import collect_comparison, collect_truths

RUNS = int(os.environ.get("COLLECT_RUNS", "10"))
BUDGET = int(os.environ.get("COLLECT_BUDGET", "10000"))
RATES = (None, 10.0, 100.0)


@pytest.fixture(scope="module")
def comparison():
    t0 = time.perf_counter()
    out = collect_comparison(
        collect_truths(0),
        rates=RATES,
        n_runs=RUNS,
        budget=BUDGET,
        test_size=5000,
        reference=min(5000, BUDGET // 2),
        random_state=0,
        n_jobs=1,
        verbose=True,
    )
    print(out["table"])
    print(f"\n({time.perf_counter() - t0:.0f} s)")
    return out


@pytest.mark.parametrize("truth", ["colours", "300 points, d = 5"])
@pytest.mark.parametrize("rate", RATES, ids=["sync", "10/s", "100/s"])
def test_active_needs_at_most_half_of_randoms_answers(comparison, truth, rate):
    check = next(c for c in comparison["checks"] if c["truth"] == truth and c["rate"] == rate)
    assert check["active_target"], check


@pytest.mark.parametrize("truth", ["colours", "300 points, d = 5"])
@pytest.mark.parametrize("rate", RATES, ids=["sync", "10/s", "100/s"])
def test_active_at_least_as_accurate_as_arr(comparison, truth, rate):
    check = next(c for c in comparison["checks"] if c["truth"] == truth and c["rate"] == rate)
    assert check["active_vs_arr"], check
