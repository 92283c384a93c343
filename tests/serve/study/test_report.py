"""The study report is honest: each search found, not found or unfinished; the rates (with
their intervals) and the CDF over the finished ones; the unfinished counted apart in every
table; the plot drawn, or the report says why not."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from serve.helpers import in_process
from tripletsearch.outcomes import proportion_interval as wilson
from tripletsearch.people import FindPerson
from tripletsearch.serve import create_app
from tripletsearch.serve.store import Store
from tripletsearch.serve.study import load_study
from tripletsearch.serve.study.report import format_report, study_report, write_report

STUDY = """
title = "Honest"
catalogue = "colours"
methods = ["gamma-ckl", "gauss"]
targets = 2
n_choices = 4
seed = 9
max_queries = 4
"""


def search(c, pid, h, rng, answers=None):
    """The participant's current search: answered to its end (or ``answers`` screens)."""
    n = c.post(f"/api/study/participants/{pid}/next", json={}, headers=h).json()
    if n["done"]:
        return None
    sid, screen = n["session"]["id"], n["session"]["screen"]
    person = FindPerson(c.app.state.study.study.catalogue, n["target"]["id"], None, rng)
    done, k = False, 0
    while not done and (answers is None or k < answers):
        r = c.post(f"/api/sessions/{sid}/answer", json=person.answer(screen), headers=h).json()
        done, screen, k = r["done"], r["screen"], k + 1
    return sid


@pytest.fixture
def database(tmp_path):
    """Two participants: one did both searches (4 screens at most: some not found), the
    other answered one screen of the first and stopped there (unfinished)."""
    (tmp_path / "study.toml").write_text(STUDY)
    study = load_study(tmp_path / "study.toml")
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    rng = np.random.default_rng(3)
    with in_process(create_app(study.catalogue, db, study=study)) as c:
        for p in range(3):
            pr = c.post("/api/study/participants", json={"consent": True}).json()
            h = {"Authorization": "Bearer " + pr["token"]}
            if p < 2:
                while search(c, pr["id"], h, rng) is not None:
                    pass
            else:
                search(c, pr["id"], h, rng, answers=1)
    return study, Store(db)


def test_unfinished_searches_are_counted_apart(database, tmp_path):
    study, store = database
    rep = study_report(store, study.catalogue)
    outcomes = [s["outcome"] for s in rep["searches"]]
    assert outcomes.count("unfinished") == 1 and len(outcomes) == 5
    for row in rep["methods"]:
        mine = [s for s in rep["searches"] if s["method"] == row["method"]]
        found = sum(s["outcome"] == "found" for s in mine)
        not_found = sum(s["outcome"] == "not found" for s in mine)
        unfinished = sum(s["outcome"] == "unfinished" for s in mine)
        assert (row["found"], row["not_found"], row["unfinished"]) == (found, not_found, unfinished)
        assert row["finished"] == found + not_found and row["searches"] == len(mine)
        assert row["found_rate"] == pytest.approx(found / (found + not_found))
        lo, hi = row["found_rate_interval"]
        assert lo <= row["found_rate"] <= hi
    # a search is not found only when it ended without the target (its screens ran out)
    for s in rep["searches"]:
        row = store.session(s["session"])
        if s["outcome"] == "not found":
            assert row.done and row.n_queries == study.max_queries
        if s["outcome"] == "unfinished":
            assert not row.done
    text = format_report(rep)
    assert "unfinished" in text.splitlines()[1] and "1 unfinished, counted apart" in text
    out = write_report(store, tmp_path / "r", study.catalogue, study.fingerprint)
    assert "unfinished" in (tmp_path / "r" / "report.txt").read_text()
    saved = json.loads((tmp_path / "r" / "report.json").read_text())
    assert [m["unfinished"] for m in saved["methods"]] == [m["unfinished"] for m in rep["methods"]]
    assert out["plot"] and (tmp_path / "r" / "cdf.png").stat().st_size > 1000
    header = (tmp_path / "r" / "methods.csv").read_text().splitlines()[0].split(",")
    assert {"finished", "unfinished", "not_found", "found_rate"} <= set(header)


def test_the_wilson_interval():
    lo, hi = wilson(8, 10)  # a closed form's value (Wilson 1927, z = 1.96)
    assert (round(lo, 4), round(hi, 4)) == (0.4902, 0.9433)
    assert wilson(0, 5)[0] == 0.0 and wilson(5, 5)[1] == 1.0
    assert all(math.isnan(v) for v in wilson(0, 0))


def test_a_report_without_matplotlib_says_so(database, tmp_path, monkeypatch):
    import builtins

    study, store = database
    real = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError("no matplotlib here")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    rep = write_report(store, tmp_path / "r", study.catalogue)
    assert rep["plot"] is None and "matplotlib is not installed" in rep["plot_note"]
    assert "matplotlib is not installed" in (tmp_path / "r" / "report.txt").read_text()
    assert not (tmp_path / "r" / "cdf.png").exists()
