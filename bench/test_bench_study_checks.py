"""A study's checks on people: how often they flag an honest person and catch a script
(``study_checks.py``; issue 49, item 4).

Per kind of honest people (gamma 3 with 5 % lapses; gamma 1.5 with 10 %) and per seed
(``STUDY_CHECKS_SEEDS``, default 2): a study of 6 targets and 2 methods on the demo's
colours, 40 honest people and 5 of each script, through the HTTP API at a human pace by a
simulated server clock. Targets: honest gamma 3 / 5 % flagged at most 5 %; each script
flagged at least 90 %. The gamma 1.5 / 10 % rate is measured, not a target (it is the
agreement rule's reference person: about its 5 % level). Also: the median reply time of
the answers whose reply is an attention screen beside the others'.

    python -m pytest bench/test_bench_study_checks.py -s
"""

from __future__ import annotations

import json
import os

from study_checks import HONEST, SCRIPTS, reply_times, simulate, table


def test_study_check_rates(benchmark):
    seeds = int(os.environ.get("STUDY_CHECKS_SEEDS", "2"))
    kwargs = {"seeds": seeds, "n_honest": 40, "n_scripts": 5}
    res = benchmark.pedantic(simulate, kwargs=kwargs, rounds=1, iterations=1)
    rows = table(res["people"])
    times = reply_times(res["timing"])
    benchmark.extra_info["table"] = rows
    benchmark.extra_info["reply_times"] = times
    for row in rows:
        print(json.dumps(row))
    print(json.dumps(times))
    by = {r["people"]: r for r in rows}
    assert by[next(iter(HONEST))]["rate"] <= 0.05, by
    for script in SCRIPTS:
        assert by[script]["rate"] >= 0.9, by[script]
