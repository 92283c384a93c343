"""A participant whose part ended (finished, withdrew), back from their platform link on a
new device (their platform id with the same visit's value), is resumed without consent
again: ``POST /api/participants/resume`` replies with a new token and their end (the code
and redirect recorded). Anyone else gets 404 and nothing is recorded or changed: an id
nobody holds, another visit's value (no refusal counted), a part not over (their token
still opens it), a server without a platform."""

from __future__ import annotations

import pytest

from serve.helpers import collect_toml, enrol, in_process, take_part, write_design
from tripletsearch.serve import create_app
from tripletsearch.serve.collect import load_collect
from tripletsearch.serve.store import Store
from tripletsearch.serve.store.participants import outcome

FIN = "https://app.prolific.com/submissions/complete?cc=FIN-1"
TABLES = (
    f'\n[completion.finished]\ncode = "FIN-1"\nredirect = "{FIN}"\n'
    '[completion.withdrawn]\ncode = "WD-2"\n'
)
HEAD = 'platform = "prolific"\n'
IDS = ["5f1a2b3c4d5e6f7a8b9c0d1e", "5f1a2b3c4d5e6f7a8b9c0d1f", "5f1a2b3c4d5e6f7a8b9c0d20"]


def link(n: int, visit: str = "V1") -> dict:
    return {"PROLIFIC_PID": IDS[n], "STUDY_ID": "S1", "SESSION_ID": visit}


@pytest.fixture
def server(tmp_path):
    text = collect_toml(catalogue="colours", n_choices=2, max_queries=6)
    cfg = load_collect(write_design(tmp_path, "collect.toml", HEAD + text + TABLES))
    url = f"sqlite:///{tmp_path / 'c.sqlite'}"
    with in_process(create_app(cfg.catalogue, url, collect=cfg)) as c:
        yield c, Store(url)


def test_an_ended_part_is_resumed_on_a_new_device_with_its_end(server):
    c, store = server
    p, h, end = take_part(c, platform=link(0))
    g, hg = enrol(c, platform=link(1))
    done, gone = p["id"], g["id"]
    assert end["outcome"] == "finished" and end["completion_code"] == "FIN-1"
    withdrawn = c.post(f"/api/participants/{gone}/withdraw", json={}, headers=hg).json()

    r = c.post("/api/participants/resume", json={"platform": link(0)})
    assert r.status_code == 200, r.text
    back = r.json()
    assert (back["id"], back["resumed"], back["end"]) == (done, True, end)
    assert back["end"]["redirect"] == FIN
    h2 = {"Authorization": "Bearer " + back["token"]}  # the new device's token opens it
    assert c.get(f"/api/participants/{done}/debrief", headers=h2).json() == end
    assert c.get(f"/api/participants/{done}/debrief", headers=h).status_code == 401
    back = c.post("/api/participants/resume", json={"platform": link(1)}).json()
    assert back["id"] == gone and back["end"] == {
        k: v for k, v in withdrawn.items() if k != "withdrawn"
    }
    assert back["end"]["completion_code"] == "WD-2"
    kept = {r.id: (outcome(r), r.code, r.refused) for r in store.iter_participants()}
    assert kept == {done: ("finished", "FIN-1", 0), gone: ("withdrawn", "WD-2", 0)}


def test_anyone_else_gets_404_and_nothing_changes(server):
    c, store = server
    take_part(c, platform=link(0))
    g, hg = enrol(c, platform=link(1))
    going = g["id"]
    assert c.post(f"/api/participants/{going}/next", json={}, headers=hg).status_code == 200
    before = {r.id: tuple(r) for r in store.iter_participants()}
    for platform in (
        link(0, visit="ANOTHER"),  # the same id from another visit: not theirs
        link(1),  # a part not over: consent (the enrolment resumes them)
        link(2),  # nobody holds this id
        {"STUDY_ID": "S1", "SESSION_ID": "V1"},  # no id
    ):
        r = c.post("/api/participants/resume", json={"platform": platform})
        assert r.status_code == 404, (platform, r.text)
        assert "consent" in r.json()["error"] and "token" not in r.json()
    assert {r.id: tuple(r) for r in store.iter_participants()} == before  # nothing counted
    assert c.post(f"/api/participants/{going}/next", json={}, headers=hg).status_code == 200
    assert c.post("/api/participants/resume", json={}).status_code == 400  # names platform
    assert "platform" in c.post("/api/participants/resume", json={}).json()["error"]


def test_a_server_without_a_platform_resumes_nobody(tmp_path):
    text = collect_toml(catalogue="colours", n_choices=2, max_queries=6)
    cfg = load_collect(write_design(tmp_path, "collect.toml", text))
    url = f"sqlite:///{tmp_path / 'c.sqlite'}"
    with in_process(create_app(cfg.catalogue, url, collect=cfg)) as c:
        take_part(c, platform={})
        r = c.post("/api/participants/resume", json={"platform": {"PROLIFIC_PID": IDS[0]}})
        assert r.status_code == 404
