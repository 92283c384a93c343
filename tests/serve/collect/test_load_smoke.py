"""A short smoke of the collect load (bench/collect_load.py; the bench runs 200 people for
five minutes): the real server with its refitter, 60 participants answering triplet
queries, the whole server killed with SIGKILL mid-run and restarted on the same database.
Every acknowledged answer is in the database once, and the refitter, taken over at once
after the kill, stores embedding versions while people answer. The run waits on what it
asserts (``settle``: answers and a refit after the restart), not on the machine's pace: a
fixed 16 s acknowledged 1,165 answers on a quiet machine and 494, with one refit, on a
loaded one."""

from __future__ import annotations

import pytest
from collect_load import run_collect_load  # bench/ (pytest's pythonpath)

pytestmark = [pytest.mark.once, pytest.mark.long]


def test_collect_under_load_across_a_kill_and_restart():
    res = run_collect_load(
        people=60, seconds=6.0, think=0.5, arrivals=2.0, items=200, kill_at=3.0, settle=100
    )
    print(res)
    assert res["errors"] == 0 and res["answers_after_restart"] >= 100
    assert res["lost"] == res["doubled"] == 0
    assert res["db_answers"] >= res["answers"]  # (an answer sent as it was killed may count)
    assert len(res["restart_s"]) == 1 and res["retries"] > 0  # the kill was felt
    assert res["embedding_versions"] >= 2  # refits ran, before and after the restart
