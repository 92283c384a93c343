"""The checks' two error rates on a simulated collect through the HTTP API
(bench/collect_checks.py, smaller): 60 screens per person on 60 of the demo's colours,
after 15 honest people (enough for the agreement rule's embedding: seeds 2 and 3 flag no
honest person and catch every script); then honest people (gamma 3, 5 % lapses) beside
one of each script of a farm (issue 49): random picks at a person's pace, always the first
candidate, random picks with every recognisable check and the gold rows answered right and
a third of the rest skipped, answers from a fixed fake geometry, answers at 100 ms. The
bench measures at most 5 % of honest people flagged and at least 90 % of each script
caught; here the counts are small, so the bounds carry a margin."""

from __future__ import annotations

import pytest
from collect_checks import SCRIPTS, run_collect  # bench/ (pytest's pythonpath)

pytestmark = [pytest.mark.long]


def test_honest_people_pass_and_every_script_is_caught(tmp_path):
    people = run_collect(
        "colours", {"gamma": 3.0, "lapse": 0.05}, 6, 1, 2, tmp_path,
        warmup=15, by_answers=False, refit_every=10,
    )  # fmt: skip
    honest = [p for p in people if p["kind"] == "person"]
    scripts = [p for p in people if p["kind"] in SCRIPTS]
    assert len(honest) == 6 and sorted(p["kind"] for p in scripts) == sorted(SCRIPTS)
    assert all(p["answers"] == 60 for p in people)
    assert sum(p["flagged"] for p in honest) <= 1, [p["rules"] for p in honest]
    assert all(p["flagged"] for p in scripts), [(p["kind"], p["rules"]) for p in scripts]
    # the 100 ms script is caught by the server's clock whatever else
    assert all("server_time" in p["rules"] for p in people if p["kind"] == "fast")
    # the script that reads the screen, knows the gold rows and skips: the agreement rule
    (reader,) = [p for p in people if p["kind"] == "reader"]
    assert "agreement" in reader["rules"] and reader["agreement"]["answers"] >= 40
