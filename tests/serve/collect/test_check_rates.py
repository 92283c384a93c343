"""The checks' two error rates on a simulated collect (bench/collect_checks.py, smaller): 40
items in d = 2, 60 screens per person, honest people (gamma 3, 5 % lapses) beside three
scripts (random picks; random picks with the checks it recognises answered right; answers
at 100 ms). The bench measures at least 5 % honest flagged at most and 90 % of scripts
caught at least; here the counts are small, so the bounds carry a binomial margin."""

from __future__ import annotations

import math

import pytest
from collect_checks import SCRIPTS, run_collect  # bench/ (pytest's pythonpath)

pytestmark = [pytest.mark.long]


def tail_above(k: int, n: int, p: float) -> float:
    """P(X > k) for X ~ Binomial(n, p)."""
    return sum(math.comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(k + 1, n + 1))


def test_honest_people_pass_and_scripts_are_caught(tmp_path):
    people = run_collect("points", {"gamma": 3.0, "lapse": 0.05}, 20, 3, 1, tmp_path)
    honest = [p for p in people if p["kind"] == "person"]
    scripts = [p for p in people if p["kind"] in SCRIPTS]
    assert len(honest) == 20 and len(scripts) == 9
    assert all(p["answers"] == 60 for p in people)
    # at a true 5 %, more than 3 of 20 honest flagged has probability under 0.02; at a
    # true 90 %, fewer than 7 of 9 scripts caught has probability under 0.06
    assert tail_above(3, 20, 0.05) < 0.02 and 1 - tail_above(6, 9, 0.9) < 0.06
    assert sum(p["flagged"] for p in honest) <= 3, [p["rules"] for p in honest]
    assert sum(p["flagged"] for p in scripts) >= 7, [(p["kind"], p["rules"]) for p in scripts]
    # the 100 ms script is caught by the server's clock whatever else
    assert all("server_time" in p["rules"] for p in people if p["kind"] == "fast")
    # a script that reads the screen passes the checks it recognises: the agreement rule
    # (or gold) is what catches it
    for p in people:
        if p["kind"] == "reader" and p["flagged"]:
            assert set(p["rules"]) & {"agreement", "gold"}
