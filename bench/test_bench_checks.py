"""The checks on people: how often they flag an honest person and catch a script, through
the HTTP API (``collect_checks.py``; issue 40, item 4, and issue 49, item 4).

Per catalogue (``CHECKS_CATALOGUES``, default the demo's colours: 60 of them, every
sixteenth; also "points": 40 points in d = 2), per kind of honest people (gamma 3 with 5 %
lapses; gamma 1.5 with 10 %) and per seed (``CHECKS_SEEDS``, default 2): a collect of 60
screens per person that 30 honest people answered first, then 20 honest people and 4 of
each script of a farm (random picks at a person's pace; always the first; random with the
recognisable checks and the gold rows answered right and a third of the rest skipped;
answers from a fixed fake geometry; 100 ms clicks). Targets: honest gamma 3 / 5 % flagged
at most 5 %; each script flagged at least 90 %. The gamma 1.5 / 10 % rates are measured,
not targets. The table also gives, per number m of counted answers, how many the agreement
rule alone would flag on their first m answers; and the reply time by kind of screen.

    python -m pytest bench/test_bench_checks.py -s
"""

from __future__ import annotations

import json
import os

from collect_checks import HONEST, SCRIPTS, reply_times, simulate, table


def test_check_rates(benchmark):
    seeds = int(os.environ.get("CHECKS_SEEDS", "2"))
    catalogues = tuple(os.environ.get("CHECKS_CATALOGUES", "colours").split(","))
    kwargs = {"seeds": seeds, "n_honest": 20, "n_scripts": 4, "catalogues": catalogues}
    res = benchmark.pedantic(simulate, kwargs=kwargs, rounds=1, iterations=1)
    rows = table(res["people"])
    benchmark.extra_info["table"] = rows
    benchmark.extra_info["reply_times"] = reply_times(res["people"])
    for row in rows:
        print(json.dumps(row))
    print(json.dumps(benchmark.extra_info["reply_times"]))
    both = {r["people"]: r for r in rows if r["catalogue"] == "both"}
    first = next(iter(HONEST))
    assert both[first]["rate"] <= 0.05, both[first]
    for script in SCRIPTS:
        assert both[script]["rate"] >= 0.9, both[script]
