"""The study checks' two error rates on a simulated study (bench/study_checks.py, smaller):
6 targets, 2 methods, the demo's colours, every participant through the HTTP API at a
human pace by a simulated server clock; honest people (gamma 3, 5 % lapses) beside one of
each script (random, always-first, "this is it" on the target with random picks, a fixed
fake geometry, 100 ms). The bench measures at most 5 % of honest people flagged and at
least 90 % of each script; here the counts are small, so the bounds carry a margin."""

from __future__ import annotations

import pytest
from study_checks import SCRIPTS, run_study  # bench/ (pytest's pythonpath)

pytestmark = [pytest.mark.long]


def test_honest_people_pass_and_scripts_are_caught(tmp_path):
    got = run_study({"gamma": 3.0, "lapse": 0.05}, 6, 1, 0, tmp_path, max_queries=30,
                    attention=(3,))  # fmt: skip
    people = got["people"]
    honest = [p for p in people if p["kind"] == "person"]
    scripts = [p for p in people if p["kind"] in SCRIPTS]
    assert len(honest) == 6 and len(scripts) == len(SCRIPTS)
    assert all(p["outcome"] == "finished" for p in people)  # (paid: the checks say who)
    # at a true 5 %, more than 1 of 6 honest flagged has probability 0.03
    assert sum(p["flagged"] for p in honest) <= 1, [p["rules"] for p in honest]
    assert all(p["flagged"] for p in scripts), [(p["kind"], p["rules"]) for p in scripts]
    for p in scripts:  # at a human pace, their picks give them away; at 100 ms, the clock
        assert ("server_time" in p["rules"]) == (p["kind"] == "fast")
        assert p["kind"] == "fast" or "agreement" in p["rules"]
    # the report compares the honest people's searches only, and says why the others not
    rep = got["report"]
    assert rep["flagged"]["participants"] == sum(p["flagged"] for p in people)
    kept = {s["participant"] for s in rep["searches"] if not s["flagged"]}
    assert kept == {p["id"] for p in people if not p["flagged"]}
