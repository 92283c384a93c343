"""The study report is honest: each search found, not found or unfinished; the rates (with
their intervals) and the CDF over the finished ones; the unfinished counted apart in every
table; the plot drawn, or the report says why not."""

from __future__ import annotations

import json
import math
from collections import Counter

import numpy as np
import pytest

from serve.helpers import answer_all, enrol, finding, in_process, study_toml
from tripletsearch.outcomes import proportion_interval as wilson
from tripletsearch.serve import create_app
from tripletsearch.serve.store import Store
from tripletsearch.serve.study import load_study
from tripletsearch.serve.study.report import format_report, study_report, write_report

STUDY = study_toml(title="Honest", targets=2, seed=9, max_queries=4)


def run_study(tmp_path, text, parts, seed):
    """A study of file ``text`` whose participants do ``parts`` in enrolment order: "all"
    (every search to its end), "one" (one screen, then stop there), "withdraw" (one
    screen, then stop taking part) or "none" (enrolled, no search). The study and its
    store."""
    (tmp_path / "study.toml").write_text(text)
    study = load_study(tmp_path / "study.toml")
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    rng = np.random.default_rng(seed)
    with in_process(create_app(study.catalogue, db, study=study)) as c:
        for part in parts:
            pr, h = enrol(c)
            if part == "none":  # consented, then left before any search
                continue
            most = None if part == "all" else 1
            answer_all(c, pr["id"], h, body=finding(study.catalogue, None, rng), most=most)
            if part == "withdraw":
                c.post(f"/api/participants/{pr['id']}/withdraw", json={}, headers=h)
    return study, Store(db)


@pytest.fixture
def database(tmp_path):
    """Two participants did both searches (4 screens at most: some not found), a third
    answered one screen of the first and stopped there (unfinished)."""
    return run_study(tmp_path, STUDY, ["all", "all", "one"], 3)


def test_unfinished_searches_are_counted_apart(database, tmp_path):
    study, store = database
    rep = study_report(store, study.catalogue, fast_server_ms=0)  # (answered instantly)
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
    out = write_report(store, tmp_path / "r", study.catalogue, study.fingerprint, fast_server_ms=0)
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

    # no seam: a missing optional dependency is a failing import
    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    rep = write_report(store, tmp_path / "r", study.catalogue, fast_server_ms=0)
    assert rep["plot"] is None and "matplotlib is not installed" in rep["plot_note"]
    assert "matplotlib is not installed" in (tmp_path / "r" / "report.txt").read_text()
    assert not (tmp_path / "r" / "cdf.png").exists()


def test_the_report_shows_methods_by_position_the_withdrawn_and_their_holes(tmp_path):
    """A block of the plan (2 targets x 2 methods: 4 participants) done, a fifth who
    withdrew: the report counts each method in each position as the searches were (2 each,
    counted independently from the sessions), 5 enrolled, 1 withdrew at enrolment number 4,
    one complete block, and says so in its text."""
    study, store = run_study(tmp_path, STUDY, ["all"] * 4 + ["withdraw"], 4)
    rep = study_report(store, study.catalogue, study.fingerprint, fast_server_ms=0)
    sessions = [s for s in store.iter_sessions() if s.participant is not None]
    realised = Counter(
        (s.slot, s.params["method"])
        for s in sessions
        if s.participant in {r.id for r in store.iter_participants() if r.withdrawn is None}
    )
    assert realised == {(j, m): 2 for j in (0, 1) for m in study.methods}
    assert {(r["position"], r["method"]): r["searches"] for r in rep["positions"]} == realised
    for r in rep["positions"]:
        lo, hi = r["interval"]
        assert r["found"] == 0 or lo <= r["mean_queries"] <= hi
    d = rep["design"]
    assert (d["enrolled"], d["withdrawn"], d["holes"], d["plans"]) == (5, 1, [4], [3])
    assert (d["block"], d["complete_blocks"], d["between_subjects"]) == (4, 1, False)
    text = format_report(rep)
    assert "5 participants enrolled, 1 withdrew" in text and "enrolment numbers 4" in text
    assert "design: plan 3, balanced over blocks of 4 participants; 1 complete" in text
    assert "by position" in text


def test_a_study_of_one_target_is_reported_between_subjects(tmp_path):
    study, store = run_study(tmp_path, STUDY.replace("targets = 2", "targets = 1"), ["all"] * 4, 5)
    assert [study.plan(p)[0][1] for p in range(4)] == ["gamma-ckl", "gauss"] * 2
    rep = study_report(store, study.catalogue, study.fingerprint, fast_server_ms=0)
    assert rep["design"]["between_subjects"] and rep["paired"]["between_subjects"]
    found = {
        m: [s["n_queries"] for s in rep["searches"] if s["found"] and s["method"] == m]
        for m in study.methods
    }
    if all(len(v) >= 2 for v in found.values()):
        a, b = (np.array(found[m], float) for m in study.methods)
        se = math.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b))
        assert rep["paired"]["mean_difference"] == pytest.approx(a.mean() - b.mean())
        assert rep["paired"]["se_difference"] == pytest.approx(se)
    text = format_report(rep)
    assert "between-subjects" in text and "paired by target" not in text


def test_a_report_into_a_folder_holding_other_csvs_describes_only_its_own(database, tmp_path):
    """``tripletsearch report --out DIR`` where DIR holds the owner's own CSVs: written, its
    datapackage naming only the report's CSVs, the others left as they were."""
    from tripletsearch.cli import main

    study, store = database
    out = tmp_path / "mine"
    (out / "more").mkdir(parents=True)
    (out / "my_analysis.csv").write_text("a,b\n1,2\n")
    (out / "more" / "notes.csv").write_text("x\n1\n")
    db = f"sqlite:///{tmp_path / 's.sqlite'}"  # run_study's
    assert main(["report", "--database", db, "--out", str(out), "--fast-server-ms", "0"]) == 0
    pkg = json.loads((out / "datapackage.json").read_text())
    assert [r["path"] for r in pkg["resources"]] == ["methods.csv", "searches.csv"]
    assert (out / "my_analysis.csv").read_text() == "a,b\n1,2\n"
    desc = json.loads((out / "dataset_description.json").read_text())
    assert "a" not in {v["name"] for v in desc["variableMeasured"]}


def test_the_report_says_what_became_of_every_participant_enrolled(tmp_path):
    """Enrolled = withdrew + searched + never began a search, each said; those who
    searched but stopped before the end said among the searchers."""
    parts = ["all", "one", "none", "withdraw", "all", "none"]
    study, store = run_study(tmp_path, STUDY, parts, 6)
    rep = study_report(store, study.catalogue, study.fingerprint)
    d = rep["design"]
    assert (d["enrolled"], d["withdrawn"], d["searched"]) == (6, 1, 3)
    assert (d["not_finished"], d["not_started"]) == (1, 2)
    assert d["withdrawn"] + d["searched"] + d["not_started"] == d["enrolled"]
    text = format_report(rep)
    assert "6 participants enrolled, 1 withdrew" in text
    assert "3 searched (1 of them did not finish), 2 never began a search:" in text
