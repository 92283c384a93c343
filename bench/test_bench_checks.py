"""The checks on people: how often they flag an honest person and catch a script
(``collect_checks.py``; issue 40, item 4).

Per catalogue (60 of the demo's colours, every sixteenth; 40 points in d = 2), per kind of
honest people (gamma 3 with 5 % lapses; gamma 1.5 with 10 %) and per seed
(``CHECKS_SEEDS``, default 3): a collect of 24 honest people and 4 of each script, 60
screens each. Targets: honest gamma 3 / 5 % flagged at most 5 %; each script flagged at
least 90 %. The gamma 1.5 / 10 % rates are measured, not targets. The table also gives,
per number m of counted answers, how many the agreement rule alone would flag on their
first m answers (the answers it needs before it can judge).

    python -m pytest bench/test_bench_checks.py -s
"""

from __future__ import annotations

import json
import os

from collect_checks import HONEST, SCRIPTS, simulate, table


def test_check_rates(benchmark):
    seeds = int(os.environ.get("CHECKS_SEEDS", "3"))
    res = benchmark.pedantic(simulate, kwargs={"seeds": seeds}, rounds=1, iterations=1)
    rows = table(res["people"])
    benchmark.extra_info["table"] = rows
    for row in rows:
        print(json.dumps(row))
    both = {r["people"]: r for r in rows if r["catalogue"] == "both"}
    first = next(iter(HONEST))
    assert both[first]["rate"] <= 0.05, both[first]
    for script in SCRIPTS:
        assert both[script]["rate"] >= 0.9, both[script]
