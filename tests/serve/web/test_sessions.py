"""The sessions' JSON API in process (Starlette's TestClient) over a real SQLite file: whole
searches by simulated people, bad and hostile requests, idempotent retries, sessions
isolated, renamed fields, undo, leaving a session."""

from __future__ import annotations

import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from serve.helpers import ADMIN, auth, in_process, parts_of, run_search, start
from tripletsearch.colour import srgb_to_lab
from tripletsearch.people import FindPerson, MixPerson
from tripletsearch.serve import create_app, demo_catalogue
from tripletsearch.serve import schema as schema_mod
from tripletsearch.serve.collect.training import export_data
from tripletsearch.serve.config import ServeConfig
from tripletsearch.serve.store import Store

CAT = demo_catalogue()


# ---------------------------------------------------------------------- whole searches


def test_the_old_field_k_still_works_with_a_deprecation(server):
    client, _, _ = server
    r = client.post("/api/sessions", json={"mode": "find", "k": 3})
    assert r.status_code == 201 and r.headers["deprecation"] == "true"
    assert r.json()["warnings"] == [
        "k: renamed n_choices in tripletsearch 0.2.0; the old name stops working in "
        "tripletsearch 0.3.0"
    ]
    assert len(r.json()["screen"]["items"]) == 3
    new = client.post("/api/sessions", json={"mode": "find", "n_choices": 3})
    assert "deprecation" not in new.headers and "warnings" not in new.json()
    got = client.get(f"/api/sessions/{r.json()['id']}", headers=auth(r.json()["token"])).json()
    # replies carry the old keys beside the new until 0.3.0
    assert got["n_choices"] == got["k"] == 3 and got["n_queries"] == got["queries"] == 0


def test_find_searches_by_simulated_people(server):
    client, _, _ = server
    rng = np.random.default_rng(0)
    queries = []
    for target in rng.choice(CAT.n_items, size=40, replace=False):
        s = start(client, mode="find", n_choices=4)
        assert s["screen"]["number"] == 0 and len(s["screen"]["items"]) == 4
        replies = run_search(client, s, FindPerson(CAT, int(target), 3.0, rng))
        assert replies[-1]["done"] and replies[-1]["screen"] is None
        assert [r["n_queries"] for r in replies] == list(range(1, len(replies) + 1))
        got = client.get(f"/api/sessions/{s['id']}", headers=auth(s["token"])).json()
        assert got["done"] and got["result"]["target"] == int(target)
        assert got["result"]["name"] == CAT.names[int(target)]
        # what the page draws: the item found, its record
        assert got["result"]["item"] == CAT.item(int(target))
        assert len(got["history"]) == len(replies) and got["history"][-1]["found"]
        queries.append(len(replies))
    # simulated gamma = 3 people take a median of about 7 screens of 4 (the native
    # simulator over all 949 targets: median 7); 40 searches: a loose bound
    assert 4 <= np.median(queries) <= 10


def test_mix_search_converges(tmp_path):
    # its own seeded server: the errors have a heavy tail (over 120 people about a quarter
    # end more than 8 units away), so the median of 12 must not depend on which tests ran
    app = create_app(CAT, f"sqlite:///{tmp_path / 's.sqlite'}", config=ServeConfig(random_state=1))
    rng = np.random.default_rng(1)
    with in_process(app) as client:
        errors = _mix_errors(client, rng)
    # the median over 200 people is about 3.7 CIELAB units (README); 12 here
    assert np.median(errors) < 8.0


def test_random_state_replays_free_sessions(tmp_path):
    def first_screens(random_state, name):
        app = create_app(
            CAT, f"sqlite:///{tmp_path / name}", config=ServeConfig(random_state=random_state)
        )
        with in_process(app) as client:
            return [start(client, mode="mix")["screen"]["points"] for _ in range(3)]

    assert first_screens(5, "a.sqlite") == first_screens(5, "b.sqlite")
    assert first_screens(5, "c.sqlite") != first_screens(6, "d.sqlite")
    assert first_screens(None, "e.sqlite") != first_screens(None, "f.sqlite")


def _mix_errors(client, rng):
    errors = []
    for _ in range(12):
        target = rng.uniform(size=3)
        s = start(client, mode="mix")
        sc = s["screen"]
        assert len(sc["points"]) == 2 and len(sc["hex"]) == 2 and "estimate" in sc
        replies = run_search(client, s, MixPerson(target, 3.0, rng, accept_after=40))
        assert len(replies) == 41
        for r in replies[:-1]:  # every swatch is displayable: its hex is its colour
            rgb = swatch_srgb(r["screen"]["points"])
            assert ((rgb > -1e-3) & (rgb < 1 + 1e-3)).all()  # in the gamut
            # the hex is the colour rounded to 8 bits per channel (the points come rounded
            # to 3 decimals of CIELAB: a few thousandths of a step more)
            hexes = np.array(
                [[int(h[k : k + 2], 16) for k in (1, 3, 5)] for h in r["screen"]["hex"]]
            )
            assert np.abs(255 * rgb - hexes).max() <= 0.5 + 0.02
        got = client.get(f"/api/sessions/{s['id']}", headers=auth(s["token"])).json()
        est = np.array(got["result"]["estimate"]["lab"])
        errors.append(np.linalg.norm(est - srgb_to_lab(target)))
    return errors


def swatch_srgb(points):
    """The sRGB of a mix screen's CIELAB points (the bound for an 8-bit hex is per channel:
    in CIELAB one step of rounding is up to about 0.6 units in the dark blues)."""
    from tripletsearch.colour import lab_to_srgb

    return np.asarray(lab_to_srgb(np.asarray(points, dtype=float)))


# ---------------------------------------------------------------------- protocol


def test_idempotent_retries_and_conflicts(server):
    client, _, _ = server
    s = start(client, mode="find", n_choices=3)
    url, h = f"/api/sessions/{s['id']}/answer", auth(s["token"])
    first = client.post(url, json={"screen": 0, "choice": 2}, headers=h)
    assert first.status_code == 200
    for _ in range(3):  # a double click, a retry: the same reply, recorded once
        again = client.post(url, json={"screen": 0, "choice": 2, "found": False}, headers=h)
        assert again.status_code == 200 and again.json() == first.json()
    other = client.post(url, json={"screen": 0, "choice": 0}, headers=h)
    assert other.status_code == 409 and "first answer stands" in other.json()["error"]
    got = client.get(f"/api/sessions/{s['id']}", headers=h).json()
    assert got["n_queries"] == 1 and len(got["history"]) == 1
    assert got["history"][0]["choice"] == 2
    assert got["screen"] == first.json()["screen"]


def test_two_sessions_are_isolated(server):
    client, _, _ = server
    a, b = start(client, mode="find"), start(client, mode="find")
    assert a["id"] != b["id"] and a["token"] != b["token"]
    # b's token does not open a
    r = client.get(f"/api/sessions/{a['id']}", headers=auth(b["token"]))
    assert r.status_code == 401
    r = client.post(
        f"/api/sessions/{a['id']}/answer", json={"screen": 0, "choice": 0}, headers=auth(b["token"])
    )
    assert r.status_code == 401
    client.post(
        f"/api/sessions/{a['id']}/answer", json={"screen": 0, "choice": 1}, headers=auth(a["token"])
    )
    gb = client.get(f"/api/sessions/{b['id']}", headers=auth(b["token"])).json()
    assert gb["n_queries"] == 0 and gb["history"] == []


def test_finished_session_refuses_answers(server):
    client, _, _ = server
    s = start(client, mode="find")
    url, h = f"/api/sessions/{s['id']}/answer", auth(s["token"])
    done = client.post(url, json={"screen": 0, "choice": 1, "found": True}, headers=h)
    assert done.status_code == 200
    assert done.json() == {"screen": None, "done": True, "n_queries": 1, "queries": 1}
    again = client.post(url, json={"screen": 0, "choice": 1, "found": True}, headers=h)
    assert again.json() == done.json()
    later = client.post(url, json={"screen": 1, "choice": 0}, headers=h)
    assert later.status_code == 409 and "finished" in later.json()["error"]


@pytest.mark.parametrize(
    "body,status,match",
    [
        ({"screen": 0, "choice": 4}, 400, "choice: expected an index in 0..3"),
        ({"screen": 0, "choice": -1}, 400, "choice: expected an index in 0..3"),
        ({"screen": 0, "choice": "1"}, 400, "choice: expected an index or null"),
        ({"screen": 0, "choice": True}, 400, "choice: expected an index or null"),
        ({"screen": 0, "choice": 1.0}, 400, "choice: expected an index or null"),
        ({"screen": 5, "choice": 0}, 400, "screen: 5 has not been shown"),
        ({"screen": -1, "choice": 0}, 400, "screen: expected a screen number"),
        ({"screen": "0", "choice": 0}, 400, "screen: expected a screen number"),
        ({"choice": 0}, 400, "screen: required"),
        ({"screen": 0}, 400, "choice: required"),
        ({"screen": 0, "choice": 0, "found": "yes"}, 400, "found: expected true or false"),
        ({"screen": 0, "choice": None, "found": True}, 400, "found needs the item"),
        ({"screen": 0, "choice": 0, "admin": True}, 400, "unknown field"),
        ([0, 1], 400, "body: expected a JSON object"),
    ],
)
def test_bad_answers_leave_the_session_unharmed(server, body, status, match):
    client, _, _ = server
    s = start(client, mode="find", n_choices=4)
    h = auth(s["token"])
    r = client.post(f"/api/sessions/{s['id']}/answer", json=body, headers=h)
    assert r.status_code == status and match in r.json()["error"], r.text
    got = client.get(f"/api/sessions/{s['id']}", headers=h).json()
    assert got["n_queries"] == 0 and got["screen"] == s["screen"]
    ok = client.post(f"/api/sessions/{s['id']}/answer", json={"screen": 0, "choice": 0}, headers=h)
    assert ok.status_code == 200


def test_bad_requests(server):
    client, _, _ = server
    for body, match in [
        ({"mode": "guess"}, "mode: expected one of"),
        ({"mode": 3}, "mode: expected a mode's name"),
        ({"mode": "find", "n_choices": 1}, "n_choices: expected 2 to 8"),
        ({"mode": "find", "n_choices": 9}, "n_choices: expected 2 to 8"),
        ({"mode": "find", "n_choices": "4"}, "n_choices: expected an integer"),
        ({"mode": "find", "n_choices": True}, "n_choices: expected an integer"),
        ({"mode": "mix", "n_choices": 4}, "n_choices: the mix mode shows 2"),
        ({"mode": "find", "n_choices": 4, "k": 4}, "k: renamed n_choices; give n_choices"),
        ({"mode": "find", "seed": 1}, "unknown field"),
        ("find", "body: expected a JSON object"),
    ]:
        r = client.post("/api/sessions", json=body)
        assert r.status_code == 400 and match in r.json()["error"], (body, r.text)
    r = client.post(
        "/api/sessions", content=b"{not json", headers={"Content-Type": "application/json"}
    )
    assert r.status_code == 400 and r.json()["error"] == "body: not valid JSON"
    s = start(client, mode="mix")
    r = client.post(
        f"/api/sessions/{s['id']}/answer",
        json={"screen": 0, "choice": None},
        headers=auth(s["token"]),
    )
    assert r.status_code == 400 and "required in mix mode" in r.json()["error"]
    r = client.post(
        f"/api/sessions/{s['id']}/answer", json={"screen": 0, "choice": 2}, headers=auth(s["token"])
    )
    assert r.status_code == 400 and "0..1" in r.json()["error"]


def test_unknown_sessions_and_tokens(server):
    client, _, _ = server
    s = start(client)
    assert client.get("/api/sessions/nope", headers=auth(s["token"])).status_code == 404
    assert client.get("/api/sessions/" + "x" * 500, headers=auth(s["token"])).status_code == 404
    r = client.get(f"/api/sessions/{s['id']}")
    assert r.status_code == 401 and r.json() == {"error": "missing or wrong token for this session"}
    for header in ("Bearer", "Basic " + s["token"], "Bearer " + s["token"][:-1], s["token"]):
        r = client.get(f"/api/sessions/{s['id']}", headers={"Authorization": header})
        assert r.status_code == 401
    r = client.post(f"/api/sessions/{s['id']}/answer", json={"screen": 0, "choice": 0})
    assert r.status_code == 401


def test_racing_undos_of_one_screen_get_one_reply(tmp_path):
    # both undos pass their checks before either takes the session's lock: the second
    # finds the only answer taken back (it raised IndexError: a 500) and replays the first
    app = create_app(
        CAT, f"sqlite:///{tmp_path / 'race.sqlite'}", config=ServeConfig(random_state=5)
    )
    service = parts_of(app).service
    checked = service._current
    both = threading.Barrier(2, timeout=10)

    def current(*args):
        reply = checked(*args)
        if args[2] == "undo":
            both.wait()
        return reply

    service._current = current
    with in_process(app) as client:
        s = start(client)
        r = client.post(
            f"/api/sessions/{s['id']}/answer",
            json={"screen": 0, "choice": 0},
            headers=auth(s["token"]),
        )
        assert r.status_code == 200
        with ThreadPoolExecutor(2) as pool:
            replies = list(
                pool.map(
                    lambda _: client.post(
                        f"/api/sessions/{s['id']}/undo",
                        json={"screen": 1},
                        headers=auth(s["token"]),
                    ),
                    range(2),
                )
            )
    assert [r.status_code for r in replies] == [200, 200], [r.text for r in replies]
    assert replies[0].json() == replies[1].json() and replies[0].json()["n_queries"] == 0


def test_bodies_must_say_json_and_not_nest_too_deep(server):
    # a form on another site posts text/plain, urlencoded or multipart (or nothing) from
    # its visitors' browsers without a preflight: refused before anything happens
    client, _, _ = server
    body = b'{"mode": "find"}'
    kinds = [None, "text/plain", "application/x-www-form-urlencoded", "multipart/form-data"]
    for kind in kinds:
        headers = {} if kind is None else {"Content-Type": kind}
        r = client.post("/api/sessions", content=body, headers=headers)
        assert r.status_code == 415, (kind, r.text)
        expected = f"content-type: expected application/json, got {kind or 'none'}"
        assert r.json()["error"] == expected
    assert client.post("/api/sessions").status_code == 415  # no body, no type: a form's
    r = client.post(
        "/api/sessions", content=body, headers={"Content-Type": "Application/JSON; charset=utf-8"}
    )
    assert r.status_code == 201, r.text
    deep = b"[" * 8000 + b"]" * 8000  # within the 16 KiB limit, deeper than the parser
    r = client.post("/api/sessions", content=deep, headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and r.json()["error"] == "body: JSON nested too deeply"


def test_size_limits_and_errors_without_traces(server):
    client, app, _ = server
    big = {"mode": "find", "pad": "x" * 20_000}
    r = client.post("/api/sessions", json=big)
    assert r.status_code == 413 and "over 16384 bytes" in r.json()["error"]

    def chunks():  # no Content-Length: counted while streaming
        for _ in range(40):
            yield b" " * 1024

    r = client.post("/api/sessions", content=chunks(), headers={"Content-Type": "application/json"})
    assert r.status_code == 413
    assert client.get("/api/nothing").json() == {"error": "not found"}
    assert client.put("/api/sessions").status_code == 405
    original = schema_mod.catalogue_page

    def boom(params):
        raise RuntimeError("secret internal detail /etc/passwd")

    schema_mod.catalogue_page = boom
    try:
        r = client.get("/api/catalogue")
    finally:
        schema_mod.catalogue_page = original
    assert r.status_code == 500 and r.json() == {"error": "internal server error"}
    assert "Traceback" not in r.text and "secret" not in r.text


def test_session_ids_and_tokens_are_unguessable(server):
    client, _, db = server
    ids = {start(client)["id"] for _ in range(20)}
    assert len(ids) == 20 and all(len(i) >= 22 for i in ids)  # 128 random bits
    with sqlite3.connect(db) as c:  # the database holds token hashes only
        tokens = [r[0] for r in c.execute("SELECT token_hash FROM ts_sessions")]
    assert all(len(t) == 64 for t in tokens)


# ---------------------------------------------------------------------- undo


def test_undo_takes_back_the_last_answer(server):
    client, app, _ = server
    s = start(client, mode="find", n_choices=4)
    url, h = f"/api/sessions/{s['id']}", auth(s["token"])
    assert client.post(url + "/undo", json={"screen": 0}, headers=h).status_code == 400
    r0 = client.post(url + "/answer", json={"screen": 0, "choice": 1}, headers=h).json()
    r1 = client.post(url + "/answer", json={"screen": 1, "choice": 3}, headers=h).json()
    u = client.post(url + "/undo", json={"screen": 2}, headers=h)
    assert u.status_code == 200
    body = u.json()
    assert body["n_queries"] == 1 and not body["done"]
    # screen 3 shows screen 1 again
    assert body["screen"]["number"] == 3 and body["screen"]["items"] == r0["screen"]["items"]
    assert client.post(url + "/undo", json={"screen": 2}, headers=h).json() == body  # a retry
    assert (
        client.post(url + "/answer", json={"screen": 2, "choice": 0}, headers=h).status_code == 409
    )
    # answered differently now: the posterior is the one without the undone answer, so the
    # next screen is what a session with only that answer shows
    r3 = client.post(url + "/answer", json={"screen": 3, "choice": 0}, headers=h).json()
    assert r3["n_queries"] == 2
    got = client.get(url, headers=h).json()
    assert [(e["screen"], e["kind"], e["undone"]) for e in got["history"]] == [
        (0, "answer", False),
        (1, "answer", True),
        (2, "undo", False),
        (3, "answer", False),
    ]
    assert r1["screen"] is not None  # the undone answer's reply is still stored
    service = parts_of(app).service
    row = service.store.session(s["id"])
    live = service.modes["find"].searcher(4, row.params, int(row.seed))
    first = r0["screen"]["items"]
    live.observe([it["id"] for it in s["screen"]["items"]], s["screen"]["items"][1]["id"])
    live.observe([it["id"] for it in first], first[0]["id"])
    assert [int(i) for i in live.ask()] == [it["id"] for it in r3["screen"]["items"]]
    # a finished session cannot be undone
    done = client.post(url + "/answer", json={"screen": 4, "choice": 1, "found": True}, headers=h)
    assert done.json()["done"]
    r = client.post(url + "/undo", json={"screen": 5}, headers=h)
    assert r.status_code == 409
    # the export keeps the undone answer in answers.csv, not in the training data
    data = client.get("/api/admin/export", headers=auth(ADMIN)).json()
    mine = [a for a in data["answers"] if a["session"] == s["id"]]
    assert [(a["kind"], a["undone"]) for a in mine][:3] == [
        ("answer", False),
        ("answer", True),
        ("undo", False),
    ]
    assert {c["screen"] for c in data["choices"] if c["session"] == s["id"]} == {0, 3}


def test_undo_in_mix_mode_and_bad_undos(server):
    client, _, _ = server
    s = start(client, mode="mix")
    url, h = f"/api/sessions/{s['id']}", auth(s["token"])
    client.post(url + "/answer", json={"screen": 0, "choice": 0}, headers=h)
    u = client.post(url + "/undo", json={"screen": 1}, headers=h).json()
    assert u["screen"]["points"] == s["screen"]["points"] and u["screen"]["number"] == 2
    assert u["screen"]["estimate"] == s["screen"]["estimate"]
    for body, match in [
        ({}, "screen: required"),
        ({"screen": 9}, "screen: 9 has not been shown"),
        ({"screen": 2, "choice": 1}, "unknown field"),
    ]:
        r = client.post(url + "/undo", json=body, headers=h)
        assert r.status_code == 400 and match in r.json()["error"]
    assert client.post(url + "/undo", json={"screen": 2}).status_code == 401
    # an answer's retry after the undo: the stored reply, the undo stands
    r = client.post(url + "/answer", json={"screen": 1, "choice": 1}, headers=h)
    assert r.status_code == 409 and "undone already" in r.json()["error"]


def test_find_mode_infers_each_persons_gamma(tmp_path):
    """--gamma auto: each session infers its person's gamma; a sharp and a noisy person
    both find their colour, and the session's stored parameters say "auto". Seeded (the
    server's draws and the people's): a noisy person's 80 screens are a bound for this
    seed, not for every run."""
    from tripletsearch.people import FindPerson
    from tripletsearch.serve.store import Store

    cat = demo_catalogue("colours")
    db = f"sqlite:///{tmp_path / 'auto.sqlite'}"
    rng = np.random.default_rng(4)
    with in_process(create_app(cat, db, config=ServeConfig(gamma="auto", random_state=0))) as c:
        for gamma, target in ((1.5, 17), (8.0, 400)):
            r = c.post("/api/sessions", json={"mode": "find", "n_choices": 4}).json()
            h = {"Authorization": "Bearer " + r["token"]}
            person, screen = FindPerson(cat, target, gamma, rng), r["screen"]
            for _ in range(80):
                reply = c.post(
                    f"/api/sessions/{r['id']}/answer", json=person.answer(screen), headers=h
                ).json()
                if reply["done"]:
                    break
                screen = reply["screen"]
            assert reply["done"]
            got = c.get(f"/api/sessions/{r['id']}", headers=h).json()
            assert got["history"][-1]["found"] is True
    rows = list(Store(db).iter_sessions())
    assert [row.params["gamma"] for row in rows] == ["auto", "auto"]
    with pytest.raises(ValueError, match="gamma: expected a number > 0 or 'auto'"):
        create_app(cat, f"sqlite:///{tmp_path / 'x.sqlite'}", config=ServeConfig(gamma="fast"))


def test_leaving_a_session_records_it_abandoned_never_found(tmp_path):
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    with in_process(create_app(CAT, db)) as c:
        s = c.post("/api/sessions", json={"mode": "find"}).json()
        h = auth(s["token"])
        first = {"screen": 0, "choice": 1}
        assert c.post(f"/api/sessions/{s['id']}/answer", json=first, headers=h).status_code == 200
        assert c.post(f"/api/sessions/{s['id']}/leave", json={}).status_code == 401
        r = c.post(f"/api/sessions/{s['id']}/leave", json={}, headers=h)
        assert r.status_code == 200 and r.json() == {"done": True, "left": True}
        again = c.post(f"/api/sessions/{s['id']}/leave", json={}, headers=h)
        assert again.json() == {"done": True, "left": False}  # ended before
        late = c.post(f"/api/sessions/{s['id']}/answer", json={"screen": 1, "choice": 0}, headers=h)
        assert late.status_code == 409
        got = c.get(f"/api/sessions/{s['id']}", headers=h).json()
        assert got["done"] and got["result"] == {"target": None, "left": True, "reason": "left"}
        assert c.post("/api/sessions/nope/leave", json={}, headers=h).status_code == 404
    data = export_data(Store(db), CAT)
    (row,) = data["sessions"]
    assert row["found"] is False and row["n_queries"] == 1
