"""The collect's reply time by the kind of screen it brings (issue 49, found item 1: check
screens answered in about 7 ms, adaptive ones in 10 ms, a side channel telling a script
which screen is a check). Target: the median of each kind within 20 % of the adaptive
screens'.

A collect of 60 screens on the demo's colours (``collect_checks.py``) after 30 honest people
(the refitter's round every 5), then ``TIMING_PEOPLE`` (default 20) more honest people
through the HTTP API; the wall time of each of their answers' replies is grouped by the
kind of the screen it brought.

    python -m pytest bench/test_bench_collect_timing.py -s
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from collect_checks import reply_times, run_collect

KINDS = ("attention", "gold", "repeat", "test", "burn-in")


def measure(people: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        got = run_collect(
            "colours", {"gamma": 3.0, "lapse": 0.05}, people, 0, 0, Path(tmp),
            by_answers=False, refit_every=5,
        )  # fmt: skip
    return reply_times(got)


def test_check_screens_reply_in_the_adaptive_screens_time(benchmark):
    people = int(os.environ.get("TIMING_PEOPLE", "20"))
    times = benchmark.pedantic(measure, args=(people,), rounds=1, iterations=1)
    benchmark.extra_info["times"] = times
    print(json.dumps(times))
    for kind in KINDS:
        if kind in times:
            assert 0.8 <= times[kind]["over_adaptive"] <= 1.2, (kind, times)
