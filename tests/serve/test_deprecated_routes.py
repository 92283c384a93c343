"""The deprecated routes, answering as before for the one release the CHANGELOG promised:
a study's ``/api/study/...``, a collect's ``/api/collect/...`` and a participant's session
through ``/api/sessions/...``, each reply marked (``Deprecation: true`` and a ``warnings``
entry naming the route that replaces it); a part ended through them ends as through the
participants' routes (the code shown is recorded). Every other test takes part through the
participants' surface (``/api/participants/...``: ``serve.helpers.take_part``); this file is
the only one that uses these routes, and goes with them."""

from __future__ import annotations

import json
import re

import pytest

from serve.helpers import collect_toml, in_process, study_toml, write_design
from tripletsearch.serve import create_app
from tripletsearch.serve.collect import load_collect
from tripletsearch.serve.commands.export_folder import experiment_roster
from tripletsearch.serve.store import Store
from tripletsearch.serve.study import load_study

CODES = {"finished": "FIN-1", "withdrawn": "WD-2"}
TABLES = "".join(f'\n[completion.{o}]\ncode = "{c}"\n' for o, c in CODES.items())

STUDY = dict(targets=2, max_queries=40, completion_code="S-1")  # over the shared keys

COLLECT = dict(  # this collect file's keys over the shared ones
    catalogue="colours",
    n_choices=3,
    max_queries=6,
    attention=[3],
    debrief="Thanks!",
    completion_code="DONE-1",
    redirect="https://example.org/back",
)


@pytest.fixture
def study(tmp_path, study_file):
    s = load_study(study_file(tmp_path, **STUDY))
    url = f"sqlite:///{tmp_path / 's.sqlite'}"
    with in_process(create_app(s.catalogue, url, study=s)) as c:
        yield s, c, Store(url)


@pytest.fixture
def collect(tmp_path, collect_file):
    collect_file(tmp_path, **COLLECT)
    cfg = load_collect(tmp_path / "collect.toml")
    url = f"sqlite:///{tmp_path / 'c.sqlite'}"
    with in_process(create_app(cfg.catalogue, url, collect=cfg)) as c:
        yield cfg, c, Store(url)


def deprecated(r, status=200):
    assert r.status_code == status, r.text
    assert r.headers["deprecation"] == "true"
    (warning,) = r.json()["warnings"]
    assert "deprecated" in warning and "/api/" in warning
    return {k: v for k, v in r.json().items() if k != "warnings"}


def test_the_old_study_routes_answer_as_before_and_say_they_are_deprecated(study):
    s, c, store = study
    assert deprecated(c.get("/api/study")) == {
        "title": "Find the colour",
        "consent": s.consent,
        "n_choices": 4,
        "k": 4,
        "n_slots": 2,
        "show_names": True,
    }
    p = deprecated(c.post("/api/study/participants", json={"consent": True}), 201)
    h = {"Authorization": "Bearer " + p["token"]}
    n = deprecated(c.post(f"/api/study/participants/{p['id']}/next", json={}, headers=h))
    assert set(n) == {"done", "slot", "n_slots", "target", "n_queries", "queries", "session"}
    sid, screen = n["session"]["id"], n["session"]["screen"]
    assert screen == store.screen(sid, 0)[0]
    a = deprecated(
        c.post(f"/api/sessions/{sid}/answer", json={"screen": 0, "choice": 0}, headers=h)
    )
    assert set(a) == {"screen", "done", "n_queries", "queries"} and a["n_queries"] == 1
    u = deprecated(c.post(f"/api/sessions/{sid}/undo", json={"screen": 1}, headers=h))
    assert u["n_queries"] == 0
    g = deprecated(c.get(f"/api/sessions/{sid}", headers=h))
    assert g["mode"] == "find" and len(g["history"]) == 2
    w = c.post(f"/api/study/participants/{p['id']}/withdraw", json={}, headers=h)
    assert deprecated(w) == {"withdrawn": True}


def test_the_old_collect_routes_answer_as_before_and_say_they_are_deprecated(collect):
    cfg, c, store = collect
    assert deprecated(c.get("/api/collect")) == {
        "mode": "collect",
        "title": "Alike?",
        "instructions": cfg.instructions,
        "consent": cfg.consent,
        "n_choices": 3,
        "k": 3,
        "max_queries": 6,
        "show_names": True,
    }
    p = deprecated(c.post("/api/collect/participants", json={"consent": True}), 201)
    h, base = {"Authorization": "Bearer " + p["token"]}, f"/api/collect/participants/{p['id']}"
    q = deprecated(c.post(f"{base}/next", json={}, headers=h))["query"]
    assert set(q) == {"screen", "head", "candidates"} and q["screen"] == 0
    body = {"screen": 0, "skip": True, "response_ms": 900}
    a = deprecated(c.post(f"{base}/answer", json=body, headers=h))
    assert a["query"]["screen"] == 1
    assert deprecated(c.post(f"{base}/withdraw", json={}, headers=h)) == {"withdrawn": True}


def test_a_free_search_is_not_deprecated(tmp_path):
    from tripletsearch.serve import demo_catalogue

    with in_process(create_app(demo_catalogue(), f"sqlite:///{tmp_path / 'f.sqlite'}")) as c:
        s = c.post("/api/sessions", json={"mode": "find"}).json()
        h = {"Authorization": "Bearer " + s["token"]}
        r = c.post(f"/api/sessions/{s['id']}/answer", json={"screen": 0, "choice": 0}, headers=h)
        assert r.status_code == 200 and "deprecation" not in r.headers
        assert "warnings" not in r.json()
        assert "deprecation" not in c.get(f"/api/sessions/{s['id']}", headers=h).headers


def test_the_deprecated_routes_end_with_the_code_recorded(tmp_path):
    """Issue 49, item 9: an honest participant answering through the deprecated routes (a
    study's searches through ``/api/sessions/{id}/answer``, a collect's through
    ``/api/collect/participants/{id}/answer``) is shown the finished code, recorded: their
    platform's submission matches (``tripletsearch codes --check``'s rule). Before, the
    code was shown but not recorded ("MISMATCH ... recorded none")."""
    from tripletsearch.serve.participation.codes import check_codes, describe_check

    study = load_study(
        write_design(tmp_path, "s.toml", study_toml(targets=2, max_queries=2) + TABLES)
    )
    text = collect_toml(catalogue="colours", max_queries=1, burn_in=0)
    collect = load_collect(write_design(tmp_path, "collect.toml", text + TABLES))
    shown = {}
    for cfg in (study, collect):
        url = f"sqlite:///{tmp_path / cfg.kind}.sqlite"
        with in_process(create_app(cfg.catalogue, url, **{cfg.kind: cfg})) as c:
            body = {"consent": True, "platform_id": f"pp-{cfg.kind}"}
            p = c.post("/api/participants", json=body).json()
            h = {"Authorization": "Bearer " + p["token"]}
            base = f"/api/{cfg.kind}/participants/{p['id']}"
            reply = c.post(f"{base}/next", json={}, headers=h)
            while not reply.json()["done"] if cfg.kind == "study" else "query" in reply.json():
                assert reply.status_code == 200 and reply.headers["Deprecation"] == "true"
                if cfg.kind == "study":  # a search's screens through the session's route
                    s = reply.json()["session"]
                    screen = s["screen"]
                    while screen is not None:
                        answer = {"screen": screen["number"], "choice": 0, "found": False}
                        r = c.post(f"/api/sessions/{s['id']}/answer", json=answer, headers=h)
                        assert r.status_code == 200 and r.headers["Deprecation"] == "true"
                        screen = r.json()["screen"]
                    last = reply.json()["slot"] == reply.json()["n_slots"] - 1
                    row = Store(url).participant(p["id"])  # the last search ends the part
                    assert (row.finished is not None, row.code) == (
                        (True, CODES["finished"]) if last else (False, None)
                    )
                    reply = c.post(f"{base}/next", json={}, headers=h)
                else:
                    q = reply.json()["query"]
                    answer = {"screen": q["screen"], "choice": 0, "response_ms": 900}
                    reply = c.post(f"{base}/answer", json=answer, headers=h)
            end = {k: v for k, v in reply.json().items() if k != "warnings"}
            assert end["done"] and end["completion_code"] == CODES["finished"], end
            again = c.post(f"{base}/next", json={}, headers=h).json()
            assert {k: v for k, v in again.items() if k != "warnings"} == end  # shown again
        row = Store(url).participant(p["id"])
        assert (row.finished is not None, row.code) == (True, CODES["finished"])
        roster = experiment_roster(Store(url))
        shown[cfg.kind] = (roster, [(f"pp-{cfg.kind}", end["completion_code"])])
    for roster, submitted in shown.values():
        found = check_codes(roster, submitted)
        assert found["matched"] == [submitted[0][0]] and not found["mismatched"], found
        assert not any(line.startswith("MISMATCH") for line in describe_check(found))


def test_the_old_collect_answer_route_keeps_its_skip_spelling(collect):
    """``POST /api/collect/participants/{id}/answer``: a pick or ``"skip": true``, never
    both nor neither, no "found"; each refusal a 400 naming the field (the participants'
    route spells a skip ``"choice": null``: test_collect.py)."""
    _cfg, c, _store = collect
    p = deprecated(c.post("/api/collect/participants", json={"consent": True}), 201)
    h, base = {"Authorization": "Bearer " + p["token"]}, f"/api/collect/participants/{p['id']}"
    assert deprecated(c.post(f"{base}/next", json={}, headers=h))["query"]["screen"] == 0
    for body, match in (
        ({"screen": 0}, "give the position picked, or skip"),
        ({"screen": 0, "choice": 1, "skip": True}, "not both"),
        ({"screen": 0, "choice": 1, "found": True}, "unknown field"),
    ):
        r = c.post(f"{base}/answer", json=body, headers=h)
        assert r.status_code == 400 and re.search(match, r.json()["error"]), (body, r.text)
    assert c.post("/api/collect/participants", json={"consent": False}).status_code == 400


def test_the_old_routes_on_a_server_without_their_experiment_are_404(server):
    """The demo's free search server runs neither a study nor a collect."""
    client, _, _ = server
    assert client.get("/api/study").json() == {"error": "this server runs no study"}
    assert client.get("/api/collect").status_code == 404
    for path in ("/api/study/participants", "/api/study/participants/P-1/next"):
        assert client.post(path, json={"consent": False}).status_code == 404, path
    for path in ("/api/collect/participants", "/api/collect/participants/P-1/next"):
        assert client.post(path, json={"consent": True}).status_code == 404, path


PROLIFIC = {"PROLIFIC_PID": "5f1a2b3c4d5e6f7a8b9c0d1e", "STUDY_ID": "S1", "SESSION_ID": "X9"}


@pytest.fixture(params=["study", "collect"])
def prolific(request, tmp_path, study_file, collect_file):
    """A study or collect on Prolific (the id required), in process: (client, store)."""
    write = study_file if request.param == "study" else collect_file
    keys = dict(targets=2, max_queries=40) if request.param == "study" else dict(max_queries=6)
    path = write(tmp_path, **keys)
    path.write_text('platform = "prolific"\nrequire_platform_id = true\n' + path.read_text())
    cfg = (load_study if request.param == "study" else load_collect)(path)
    url = f"sqlite:///{tmp_path / 'p.sqlite'}"
    with in_process(create_app(cfg.catalogue, url, **{cfg.kind: cfg})) as c:
        yield c, Store(url)


def test_the_deprecated_enrolment_routes_require_the_id_too(prolific):
    """``POST /api/study/participants`` and ``/api/collect/participants`` enrol as the new
    route does: a file requiring a platform id refuses them without one."""
    c, store = prolific
    kind = c.get("/api/experiment").json()["kind"]
    r = c.post(f"/api/{kind}/participants", json={"consent": True})
    assert r.status_code == 400 and "PROLIFIC_PID" in r.json()["error"], r.text
    assert not list(store.iter_participants())
    if kind == "collect":  # its old platform_id: read as the link's id, one participant
        hexid = PROLIFIC["PROLIFIC_PID"]
        body = {"consent": True, "platform_id": hexid}
        first = c.post("/api/collect/participants", json=body).json()
        again = c.post("/api/collect/participants", json=body)  # no visit's value
        assert again.status_code == 409 and again.json()["refused"]
        row = store.participant(first["id"])
        assert row.platform_key == hexid and row.visit == ""
        assert json.loads(row.platform_params) == {"PROLIFIC_PID": hexid}


def test_a_resumed_participants_old_token_is_refused_on_the_session_routes(prolific):
    """The same link resumes its participant with a new token: their session, read through
    ``GET /api/sessions/{id}``, refuses the old one and answers the new."""
    c, store = prolific
    first = c.post("/api/participants", json={"consent": True, "platform": PROLIFIC}).json()
    url = f"/api/participants/{first['id']}/next"
    assert c.post(url, json={}, headers=bearer(first)).status_code == 200
    again = c.post("/api/participants", json={"consent": True, "platform": PROLIFIC}).json()
    assert again["resumed"] and again["id"] == first["id"]
    (sid,) = [s.id for s in store.participant_sessions(first["id"])]
    assert c.get(f"/api/sessions/{sid}", headers=bearer(first)).status_code == 401
    assert deprecated(c.get(f"/api/sessions/{sid}", headers=bearer(again)))["id"] == sid


def bearer(reply):
    return {"Authorization": "Bearer " + reply["token"]}
