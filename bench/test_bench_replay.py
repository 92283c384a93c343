"""Active against random on people's recorded answers (the issue's replay, ``replay.py``).

NEXT's 30 alien eggs (2015), pooled with the studies of the same eggs named in
``REPLAY_SETS`` (data folders, ``:``-separated); seeds 0-9 (``REPLAY_SEEDS``); each
sampler asks 10 queries at a time, answered from the recorded answers; gamma-CKL fitted
(dim 2) to the first 400, 800 and 1,600 answers, scored on the recorded random test
answers. Target: active's mean at least random's minus half a point at each budget.

    python -m pytest bench/test_bench_replay.py -s
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest
from replay import BUDGETS, recorded_folder, replay

from tripletsearch.collect import next_eggs

SEEDS = range(int(os.environ.get("REPLAY_SEEDS", "10")))
METHODS = ("random", "active")


def _sets():
    extra = [p for p in os.environ.get("REPLAY_SETS", "").split(":") if p]
    return [next_eggs(), *(recorded_folder(p) for p in extra)]


def _run(job):
    method, seed = job
    return method, seed, replay(_sets(), method, seed)


@pytest.fixture(scope="module")
def replays():
    t0 = time.perf_counter()
    jobs = [(m, s) for m in METHODS for s in SEEDS]
    with ProcessPoolExecutor(os.cpu_count() or 1) as ex:  # one thread a run: no oversubscribing
        done = list(ex.map(_run, jobs))
    out = {m: np.array([[r["accuracy"][b] for b in BUDGETS] for mm, _, r in done if mm == m])
           for m in METHODS}  # fmt: skip
    names = ", ".join(s.name for s in _sets())
    print(f"\n{names}: held-out accuracy (%), mean +- s.e. over {len(SEEDS)} seeds")
    print(" answers " + "".join(f"{m:>16s}" for m in METHODS))
    for j, b in enumerate(BUDGETS):
        se = {m: out[m][:, j].std(ddof=1) / np.sqrt(len(SEEDS)) for m in METHODS}
        cells = [f"{100 * out[m][:, j].mean():8.2f} +- {100 * se[m]:4.2f}" for m in METHODS]
        print(f"{b:8d} " + "".join(f"{c:>16s}" for c in cells))
    for m in METHODS:
        got = [r for mm, _, r in done if mm == m]
        print(f"{m}: asked {np.mean([r['asked'] for r in got]):.0f}, never recorded "
              f"{np.mean([r['dropped'] for r in got]):.0f}, answers reused "
              f"{np.mean([r['reused'] for r in got]):.0f} (means a run)")  # fmt: skip
    print(f"({time.perf_counter() - t0:.0f} s)")
    return out


@pytest.mark.parametrize("budget", BUDGETS)
def test_active_is_not_behind_random_on_recorded_answers(replays, budget):
    j = BUDGETS.index(budget)
    active, random = replays["active"][:, j].mean(), replays["random"][:, j].mean()
    assert active >= random - 0.005, (budget, active, random)
