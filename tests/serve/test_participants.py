"""The participants' surface (``/api/experiment``, ``/api/participants/...``): one set of
routes and one reply shape for a study and a collect file (in process, SQLite). (The old
routes, answering as before and marked deprecated: ``test_deprecated_routes.py``.)"""

from __future__ import annotations

import numpy as np
import pytest

from serve.helpers import in_process, parts_of
from tripletsearch.people import FindPerson
from tripletsearch.serve import create_app
from tripletsearch.serve.collect import load_collect
from tripletsearch.serve.schema import MAX_RESPONSE_MS
from tripletsearch.serve.store import Store
from tripletsearch.serve.study import load_study

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

# the keys of every reply that shows a screen, whatever the experiment's kind
SCREEN_KEYS = {"done", "mode", "slot", "n_slots", "target", "n_queries", "screen"}


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


def enrol(c, **extra):
    r = c.post("/api/participants", json={"consent": True, **extra})
    assert r.status_code == 201, r.text
    assert r.headers.get("deprecation") is None and "warnings" not in r.json()
    p = r.json()
    return p["id"], {"Authorization": "Bearer " + p["token"]}


def post(c, pid, what, h, body=None, status=200):
    r = c.post(f"/api/participants/{pid}/{what}", json={} if body is None else body, headers=h)
    assert r.status_code == status, r.text
    assert r.headers.get("deprecation") is None and "warnings" not in r.json()
    return r.json()


def stored_screen(store, pid, slot):
    """The participant's session of ``slot`` and its current screen as the store holds it."""
    (s,) = [s for s in store.participant_sessions(pid) if s.slot == slot]
    return s, store.screen(s.id, s.screen)[0]


def test_a_study_through_the_participants_routes(study):
    s, c, store = study
    info = c.get("/api/experiment").json()
    assert info == {
        "kind": "study",
        "title": "Find the colour",
        "consent": s.consent,
        "n_choices": 4,
        "show_names": True,
        "n_slots": 2,
        "undo": True,
        "max_response_ms": None,
    }
    assert c.post("/api/participants", json={}).status_code == 400  # no consent, no id
    pid, h = enrol(c, platform_id="PROLIFIC-7")
    assert store.participant(pid).platform_id == "PROLIFIC-7"
    first = post(c, pid, "next", h)
    assert set(first) == SCREEN_KEYS | {"history"}
    session, screen = stored_screen(store, pid, 0)
    target = s.plan(0)[0][0]
    assert first == {
        "done": False,
        "mode": "find",
        "slot": 0,
        "n_slots": 2,
        "target": s.catalogue.item(target),
        "n_queries": 0,
        "screen": screen,
        "history": [],
    }
    assert "method" not in str(first)  # nothing tells the conditions apart
    post(c, pid, "debrief", h, status=409)  # not over yet
    # an answer, the same again (a retry), an undo, a resume
    person = FindPerson(s.catalogue, target, None, np.random.default_rng(0))
    body = {**person.answer(first["screen"]), "found": False, "choice": 0, "slot": 0}
    one = post(c, pid, "answer", h, body)
    assert set(one) == SCREEN_KEYS and one["n_queries"] == 1 and one["screen"]["number"] == 1
    assert post(c, pid, "answer", h, body) == one
    assert post(c, pid, "answer", h, {**body, "choice": 1}, status=409)["error"]
    assert one["screen"] == stored_screen(store, pid, 0)[1]  # as stored: no key renamed
    assert post(c, pid, "answer", h, {**body, "response_ms": 5}, status=400)["error"].startswith(
        "response_ms"
    )
    back = post(c, pid, "undo", h, {"screen": 1})
    assert back["n_queries"] == 0 and back["screen"]["number"] == 2
    again = post(c, pid, "next", h)  # a reload: the same screen, with the history
    assert again["screen"] == back["screen"] and again["n_queries"] == 0
    assert [x["kind"] for x in again["history"]] == ["answer", "undo"]
    # both searches to their ends: the end of one is followed by the next one's first screen
    reply, slots = again, []
    while not reply["done"]:
        slots.append(reply["slot"])
        if reply["screen"]["number"] == 0:  # a new search: its target
            person = FindPerson(s.catalogue, reply["target"]["id"], None, np.random.default_rng(1))
        reply = post(c, pid, "answer", h, person.answer(reply["screen"]))
    assert sorted(set(slots)) == [0, 1] and slots == sorted(slots)
    n = store.participant_sessions(pid)
    assert len(n) == 2 and all(x.done and x.result["target"] == x.target for x in n)
    end = {
        "done": True,
        "outcome": "finished",
        "n_slots": 2,
        "completion_code": "S-1",
        "debrief": f"Thank you: all 2 searches are done. Your participant id is {pid}.",
    }
    assert reply == end
    assert post(c, pid, "next", h) == end == post(c, pid, "debrief", h)
    assert c.get(f"/api/participants/{pid}/debrief", headers=h).json() == end
    # after the end nothing to withdraw from: a 409 carrying the finished end screen
    refused = post(c, pid, "withdraw", h, status=409)
    assert "finished every part" in refused.pop("error") and refused == end
    assert post(c, pid, "next", h) == end
    post(c, pid, "next", {"Authorization": "Bearer nope"}, status=401)


def test_a_collects_undo_is_refused_before_anything_starts(collect):
    """An undo of a collect is refused (409) without starting the participant's part; a
    wrong token is refused as such (401) first."""
    _, c, store = collect
    pid, h = enrol(c)
    post(c, pid, "undo", {"Authorization": "Bearer nope"}, {"screen": 0}, status=401)
    post(c, pid, "undo", h, {"screen": 0}, status=409)
    assert store.participant_sessions(pid) == []


def test_a_collect_through_the_participants_routes(collect):
    cfg, c, store = collect
    info = c.get("/api/experiment").json()
    assert info == {
        "kind": "collect",
        "title": "Alike?",
        "instructions": cfg.instructions,
        "consent": cfg.consent,
        "n_choices": 3,
        "max_queries": 6,
        "show_names": True,
        "n_slots": 1,
        "undo": False,
        "max_response_ms": MAX_RESPONSE_MS,
    }
    pid, h = enrol(c)
    first = post(c, pid, "next", h)
    assert set(first) == SCREEN_KEYS | {"history"}
    session, screen = stored_screen(store, pid, 0)
    assert first == {
        "done": False,
        "mode": "collect",
        "slot": 0,
        "n_slots": 1,
        "target": None,
        "n_queries": 0,
        "screen": screen,
        "history": [],
    }
    assert set(screen) == {"number", "head", "candidates"} and screen["number"] == 0
    one = post(c, pid, "answer", h, {"screen": 0, "choice": 2, "response_ms": 1500})
    assert set(one) == SCREEN_KEYS and one["screen"] == stored_screen(store, pid, 0)[1]
    assert post(c, pid, "answer", h, {"screen": 0, "choice": 2, "response_ms": 1500}) == one
    post(c, pid, "undo", h, {"screen": 1}, status=409)  # a collect's answers stand
    post(c, pid, "answer", h, {"screen": 1, "choice": 0, "found": True}, status=400)
    no_pick = post(c, pid, "answer", h, {"screen": 1}, status=400)  # a skip says choice: null
    assert no_pick["error"].startswith("choice: required")
    post(
        c,
        pid,
        "answer",
        h,
        {"screen": 1, "choice": 0, "response_ms": MAX_RESPONSE_MS + 1},
        status=400,
    )
    assert post(c, pid, "next", h)["screen"] == one["screen"]  # a reload: the same query
    reply, n = one, 1
    while not reply["done"]:
        skip = n == 3
        body = {"screen": reply["screen"]["number"], "choice": None if skip else 0}
        reply = post(c, pid, "answer", h, {**body, "response_ms": 700})
        n += 1
    end = {
        "done": True,
        "outcome": "finished",
        "n_slots": 1,
        "debrief": "Thanks!",
        "completion_code": "DONE-1",
        "redirect": "https://example.org/back",
    }
    assert reply == end and n == cfg.max_queries
    assert post(c, pid, "answer", h, {**body, "response_ms": 700}) == end  # a retry
    assert post(c, pid, "next", h) == end == post(c, pid, "debrief", h)
    rows = store.history(session.id)
    assert [r["number"] for r in rows] == list(range(6))
    assert [r["response_ms"] for r in rows] == [1500] + [700] * 5
    assert rows[3]["choice"] is None
    refused = post(c, pid, "withdraw", h, status=409)  # finished: nothing to withdraw from
    assert "finished every part" in refused.pop("error") and refused == end
    assert post(c, pid, "debrief", h) == end


def test_the_participants_routes_need_an_experiment(tmp_path):
    from tripletsearch.serve import demo_catalogue

    with in_process(create_app(demo_catalogue(), f"sqlite:///{tmp_path / 'f.sqlite'}")) as c:
        assert c.get("/api/experiment").status_code == 404
        assert c.post("/api/participants", json={"consent": True}).status_code == 404


def test_both_kinds_are_one_experiment_protocol(study, collect):
    """A study's and a collect's services are what the participants' routes ask for."""
    from tripletsearch.serve.participation.participants import Experiment

    for _, c, _ in (study, collect):
        found = parts_of(c.app).experiment
        assert isinstance(found, Experiment)
        assert found.experiment()["kind"] == found.kind
