"""The sessions database across versions: a session continues under a library that
would ask other screens, schema versions refused or upgraded (databases as versions 1 and 2
wrote them, their sessions, study participants, exports and reports going on)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from pathlib import Path

import numpy as np
import pytest

import tripletsearch as ts
from serve.helpers import auth, in_process, run_search, start
from tripletsearch.cli import main
from tripletsearch.people import FindPerson, MixPerson
from tripletsearch.serve import create_app, demo_catalogue
from tripletsearch.serve import store as store_mod
from tripletsearch.serve.collect.training import export_data
from tripletsearch.serve.config import ServeConfig
from tripletsearch.serve.modes import FindMode
from tripletsearch.serve.store import Store, StoreError
from tripletsearch.serve.study import load_study
from tripletsearch.serve.study.report import study_report

CAT = demo_catalogue()
DATA = Path(__file__).parents[1] / "data"  # tests/serve/data


def test_a_session_continues_after_the_algorithm_changed(tmp_path, monkeypatch):
    """A session started by one version continues under another whose searcher would ask
    different screens: it is replayed from its screens as shown.

    Seeded (the server's draws and the person's): with a random opening, the target could
    be shown, and found, within the three screens answered before the change."""
    url = f"sqlite:///{tmp_path / 's.sqlite'}"
    rng = np.random.default_rng(2)
    person = FindPerson(CAT, 17, 3.0, rng)
    with in_process(create_app(CAT, url, config=ServeConfig(random_state=0))) as c:
        s = start(c, mode="find", n_choices=4)
        screen, before = s["screen"], []
        for _ in range(3):
            before.append([it["id"] for it in screen["items"]])
            r = c.post(
                f"/api/sessions/{s['id']}/answer",
                json=person.answer(screen),
                headers=auth(s["token"]),
            )
            assert r.status_code == 200 and not r.json()["done"], r.text
            screen = r.json()["screen"]
    assert all(person.target not in ids for ids in before)  # a search still going on

    # "the next version": a searcher that would ask other screens (another selection rule)
    def other_template(self, n_choices, params):
        return ts.DiscreteSearch(CAT.embedding, n_choices=n_choices, selection="weighted")

    # no seam: a mode builds its searchers' template itself (as a new version would)
    monkeypatch.setattr(FindMode, "_template", other_template)
    app2 = create_app(CAT, url, config=ServeConfig(random_state=0))
    with in_process(app2) as c:
        got = c.get(f"/api/sessions/{s['id']}", headers=auth(s["token"])).json()
        assert got["screen"] == screen and got["n_queries"] == 3  # the screen as shown, kept
        replies = run_search(c, {**s, "screen": screen}, person)
        assert replies[-1]["done"]
        shown = [
            h["shown"]["items"]
            for h in c.get(f"/api/sessions/{s['id']}", headers=auth(s["token"])).json()["history"]
        ]
    # the history begins with the screens the first version asked, as they were shown
    assert [[it["id"] for it in items] for items in shown[:3]] == before
    ids = [it["id"] for screen_items in shown for it in screen_items]
    assert len(ids) == len(set(ids))  # no item shown twice: the replayed posterior ruled them out


def test_schema_versions(tmp_path):
    url = f"sqlite:///{tmp_path / 's.sqlite'}"
    st = Store(url)
    assert st.setup() == 0 and st.setup() == store_mod.SCHEMA_VERSION  # created, then found
    st.check()
    # a database written by a newer library is refused, not damaged
    with sqlite3.connect(tmp_path / "s.sqlite") as c:
        c.execute("UPDATE ts_meta SET value = '10' WHERE key = 'schema_version'")
    with pytest.raises(StoreError, match="schema version 10 was written by a newer"):
        Store(url).setup()
    with pytest.raises(StoreError, match="schema version 10"):
        Store(url).check()


def test_a_version_1_database_is_upgraded_and_its_sessions_continue(tmp_path):
    """A database as version 1 wrote it (its schema dumped in tests/serve/data), holding a
    session with one answer: the service upgrades it once and the session goes on."""
    db = tmp_path / "v1.sqlite"
    ddl = (DATA / "schema_v1_sqlite.sql").read_text()
    first, second = [1, 2, 3, 4], [5, 6, 7, 8]
    token = "v1-token"
    with sqlite3.connect(db) as c:
        c.executescript(ddl)
        c.execute(
            "INSERT INTO ts_sessions VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                "s1",
                hashlib.sha256(token.encode()).hexdigest(),
                "find",
                4,
                "7",
                json.dumps({"gamma": 3.0, "method": "gamma-ckl", "selection": "infogain"}),
                CAT.fingerprint,
                "0.1.0",
                0.0,
                1.0,
                1,
                0,
                None,
            ),
        )
        for number, shown in ((0, first), (1, second)):
            payload = {"number": number, "items": [CAT.item(i) for i in shown]}
            c.execute(
                "INSERT INTO ts_screens VALUES (?,?,?,?,?)",
                ("s1", number, json.dumps(payload), json.dumps({"shown": shown}), 0.5),
            )
        reply = {"screen": {"number": 1}, "done": False, "queries": 1}
        c.execute(
            "INSERT INTO ts_answers VALUES (?,?,?,?,?,?)", ("s1", 0, 2, 0, json.dumps(reply), 1.0)
        )
    url = f"sqlite:///{db}"
    assert Store(url).setup() == 1  # upgraded from version 1
    assert Store(url).setup() == store_mod.SCHEMA_VERSION  # once
    with in_process(create_app(CAT, url, setup=False)) as c:
        h = auth(token)
        got = c.get("/api/sessions/s1", headers=h).json()
        assert got["n_queries"] == 1 and [it["id"] for it in got["screen"]["items"]] == second
        assert got["history"][0]["kind"] == "answer" and not got["history"][0]["undone"]
        r = c.post("/api/sessions/s1/answer", json={"screen": 1, "choice": 0}, headers=h)
        assert r.status_code == 200 and r.json()["n_queries"] == 2
        shown_next = [it["id"] for it in r.json()["screen"]["items"]]
        assert not set(shown_next) & set(first + second)  # the replay ruled them out
        u = c.post("/api/sessions/s1/undo", json={"screen": 2}, headers=h)
        assert u.status_code == 200 and u.json()["n_queries"] == 1
        assert [it["id"] for it in u.json()["screen"]["items"]] == second


def test_in_memory_sqlite_is_refused():
    with pytest.raises(StoreError, match="in-memory SQLite"):
        Store("sqlite://")


def v2_database(tmp_path):
    """The database of tests/serve/data as version 2 wrote it, and its sidecar."""
    db = tmp_path / "v2.sqlite"
    with sqlite3.connect(db) as c:
        c.executescript((DATA / "database_v2_sqlite.sql").read_text())
    return f"sqlite:///{db}", db, json.loads((DATA / "database_v2.json").read_text())


def columns(db, table):
    with sqlite3.connect(db) as c:
        return [r[1] for r in c.execute(f"PRAGMA table_info({table})")]


def test_a_version_2_database_is_upgraded_and_reads_the_same(tmp_path):
    """Version 3 renamed the sessions' columns: the upgrade keeps every row, and the export
    and the study report of the upgraded database are those version 2 gave (tests/serve/data
    holds both), under the renamed export columns."""
    url, db, v2 = v2_database(tmp_path)
    before = columns(db, "ts_sessions")
    assert {"k", "queries", "n_answers"} <= set(before)
    assert Store(url).setup() == 2 and Store(url).setup() == store_mod.SCHEMA_VERSION
    after = columns(db, "ts_sessions")
    renamed = {"k": "n_choices", "queries": "screen", "n_answers": "n_queries"}
    assert after == [renamed.get(c, c) for c in before] + ["experiment"]  # (version 6 added)
    data = export_data(Store(url), CAT)
    old = v2["as_exported_before"]
    # (the export of 0.3.0 counts the collected triplets apart, format 8 the trials:
    # none here)
    assert data["counts"] == {**old["counts"], "collect_triplets": 0, "collect_trials": 0}
    assert data["triplets"] == old["triplets"]
    assert [
        {
            "session": s["session"],
            "mode": s["mode"],
            "k": s["n_choices"],
            "found": s["found"],
            "queries": s["n_queries"],
            "target": s["target"],
            "undos": s["undos"],
        }
        for s in data["sessions"]
    ] == old["sessions"]
    rep = study_report(Store(url), CAT, fast_server_ms=0)  # (recorded in process, instantly)
    before = v2["as_reported_before"]["people"]  # the report has since added the fit's range
    assert {k: rep["people"][k] for k in before} == before
    assert rep["people"]["gamma_range"] == [0.05, 60.0] and rep["people"]["max_lapse"] == 0.5
    assert [
        {
            "session": s["session"],
            "method": s["method"],
            "found": s["found"],
            "queries": s["n_queries"],
            "done": s["done"],
        }
        for s in rep["searches"]
    ] == v2["as_reported_before"]["searches"]


def test_a_version_2_databases_sessions_and_participants_go_on(tmp_path):
    url, _, v2 = v2_database(tmp_path)
    tokens = v2["tokens"]
    rng = np.random.default_rng(7)
    with in_process(create_app(CAT, url)) as c:
        sid, token = tokens["open_find"]
        got = c.get(f"/api/sessions/{sid}", headers=auth(token)).json()
        # three answers, the last undone: two count; the reply carries the old key beside
        assert got["n_queries"] == got["queries"] == 2 and got["n_choices"] == got["k"] == 4
        assert [h["kind"] for h in got["history"]] == ["answer"] * 3 + ["undo"]
        first = got["history"][0]
        # a reply version 2 stored (old keys only) comes back with the new key too
        again = c.post(
            f"/api/sessions/{sid}/answer",
            json={"screen": 0, "choice": first["choice"], "found": first["found"]},
            headers=auth(token),
        )
        assert (
            again.status_code == 200 and again.json()["n_queries"] == again.json()["queries"] == 1
        )
        replies = run_search(
            c, {"id": sid, "token": token, "screen": got["screen"]}, FindPerson(CAT, 17, 3.0, rng)
        )
        assert replies[0]["n_queries"] == 3 and replies[-1]["done"]
        sid, token = tokens["open_mix"]
        got = c.get(f"/api/sessions/{sid}", headers=auth(token)).json()
        r = c.post(
            f"/api/sessions/{sid}/answer",
            json=MixPerson([0.2, 0.5, 0.7], 3.0, rng).answer(got["screen"]),
            headers=auth(token),
        )
        assert r.status_code == 200 and r.json()["n_queries"] == 3
    study_file = tmp_path / "study.toml"
    study_file.write_text(v2["study"])
    with pytest.warns(DeprecationWarning, match="'k' was renamed 'n_choices'"):
        study = load_study(study_file)
    study_file.write_text(v2["study"].replace("k = 3", "n_choices = 3"))
    assert load_study(study_file).fingerprint == study.fingerprint  # the study goes on
    pid, token = tokens["participant"]
    with in_process(create_app(CAT, url, study=study)) as c:
        base = f"/api/participants/{pid}"
        n = c.post(f"{base}/next", json={}, headers=auth(token)).json()
        assert n["slot"] == 1 and n["n_queries"] == 1
        (slot1,) = [s for s in Store(url).participant_sessions(pid) if s.slot == 1]
        assert slot1.id == tokens["participant_slot1"]
        body = FindPerson(CAT, n["target"]["id"], 3.0, rng).answer(n["screen"])
        r = c.post(f"{base}/answer", json={**body, "slot": 1}, headers=auth(token))
        assert r.status_code == 200 and r.json()["slot"] == 1 and r.json()["n_queries"] == 2


# ---------------------------------------------------------------------- retention
def test_prune_deletes_old_finished_and_abandoned_free_sessions(tmp_path, capsys):
    db = tmp_path / "s.sqlite"
    url = f"sqlite:///{db}"
    with in_process(create_app(CAT, url)) as c:
        made = {name: start(c) for name in ("done_old", "open_old", "idle_2d", "study_old", "new")}
        for name in ("done_old", "new"):  # finished: "this is it" on screen 0
            s = made[name]
            r = c.post(
                f"/api/sessions/{s['id']}/answer",
                json={"screen": 0, "choice": 0, "found": True},
                headers=auth(s["token"]),
            )
            assert r.json()["done"]
        for name in ("open_old", "idle_2d", "study_old"):  # one answer each
            s = made[name]
            c.post(
                f"/api/sessions/{s['id']}/answer",
                json={"screen": 0, "choice": 1},
                headers=auth(s["token"]),
            )
    now = time.time()
    ages = {"done_old": 10, "open_old": 10, "idle_2d": 2, "study_old": 30, "new": 0}
    with sqlite3.connect(db) as con:
        for name, days in ages.items():
            con.execute(
                "UPDATE ts_sessions SET updated = ? WHERE id = ?",
                (now - 86400 * days - 60, made[name]["id"]),
            )
        con.execute(
            "UPDATE ts_sessions SET participant = 'P-X', slot = 0 WHERE id = ?",
            (made["study_old"]["id"],),
        )

    def left():
        with sqlite3.connect(db) as con:
            ids = {r[0] for r in con.execute("SELECT id FROM ts_sessions")}
            screens = con.execute("SELECT COUNT(*) FROM ts_screens").fetchone()[0]
            answers = con.execute("SELECT COUNT(*) FROM ts_answers").fetchone()[0]
        return {n for n, s in made.items() if s["id"] in ids}, screens, answers

    before = left()
    args = ["prune", "--database", url, "--older-than", "1", "--abandoned-after", "72"]
    assert main([*args, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("would delete 2 sessions with 3 screens and 2 answers"), out
    assert left() == before
    assert main(args) == 0
    assert capsys.readouterr().out.startswith("deleted 2 sessions with 3 screens and 2 answers")
    # finished 10 days ago and abandoned 10 days ago: gone; idle 2 days (under 72 hours),
    # a study's and a new one: kept, with their screens and answers
    names, screens, answers = left()
    assert names == {"idle_2d", "study_old", "new"}
    assert (screens, answers) == (before[1] - 3, before[2] - 2)
    assert main([*args[:-2], "--abandoned-after", "24"]) == 0
    assert left()[0] == {"study_old", "new"}
    assert main(["prune", "--database", url, "--older-than", "-1"]) == 2
