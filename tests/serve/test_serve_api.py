"""The search service's JSON API against a real uvicorn server and a real SQLite file:
whole searches by simulated people, bad and hostile requests, idempotent retries,
sessions isolated, the export closing the loop, schema versions."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import httpx
import numpy as np
import pytest
from serving import thread_server

import tripletsearch as ts
from tripletsearch.serve import create_app, demo_catalogue, load_catalogue
from tripletsearch.serve import store as store_mod
from tripletsearch.serve.colour import srgb_to_lab
from tripletsearch.serve.people import FindPerson, MixPerson
from tripletsearch.serve.service import SearchService
from tripletsearch.serve.store import Store, StoreError

CAT = demo_catalogue()
ADMIN = "admin-secret"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    db = tmp_path_factory.mktemp("db") / "sessions.sqlite"
    app = create_app(CAT, f"sqlite:///{db}", admin_token=ADMIN)
    with thread_server(app) as base, httpx.Client(base_url=base, timeout=30) as client:
        yield client, app, db


def auth(token):
    return {"Authorization": f"Bearer {token}"}


def start(client, **body):
    r = client.post("/api/sessions", json=body)
    assert r.status_code == 201, r.text
    return r.json()


def run_search(client, session, person, limit=400):
    """Answer screens until done; the replies."""
    screen, replies = session["screen"], []
    for _ in range(limit):
        r = client.post(
            f"/api/sessions/{session['id']}/answer",
            json=person.answer(screen),
            headers=auth(session["token"]),
        )
        assert r.status_code == 200, r.text
        replies.append(r.json())
        if r.json()["done"]:
            return replies
        screen = r.json()["screen"]
    raise AssertionError("the search did not end")


# ---------------------------------------------------------------------- whole searches


def test_health_and_catalogue(server):
    client, _, _ = server
    assert client.get("/api/health").json()["status"] == "ok"
    cat = client.get("/api/catalogue").json()
    assert cat["n_items"] == 949 and len(cat["items"]) == 949
    assert cat["modes"] == ["find", "mix"]
    assert cat["items"][0] == {"id": 0, "name": CAT.names[0], "hex": CAT.hex[0]}
    page = client.get("/")
    assert page.status_code == 200 and 'src="/static/app.js"' in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]
    js = client.get("/static/app.js")
    assert js.status_code == 200 and "/api/sessions" in js.text
    assert js.headers["content-type"].startswith("text/javascript")
    assert client.get("/static/app.css").headers["content-type"].startswith("text/css")
    for path in ("/static/../store.py", "/static/index.html", "/static/nope.js", "/study"):
        assert client.get(path).status_code == 404, path


def test_find_searches_by_simulated_people(server):
    client, _, _ = server
    rng = np.random.default_rng(0)
    queries = []
    for target in rng.choice(CAT.n_items, size=40, replace=False):
        s = start(client, mode="find", k=4)
        assert s["screen"]["number"] == 0 and len(s["screen"]["items"]) == 4
        replies = run_search(client, s, FindPerson(CAT, int(target), 3.0, rng))
        assert replies[-1]["done"] and replies[-1]["screen"] is None
        assert [r["queries"] for r in replies] == list(range(1, len(replies) + 1))
        got = client.get(f"/api/sessions/{s['id']}", headers=auth(s["token"])).json()
        assert got["done"] and got["result"]["target"] == int(target)
        assert got["result"]["name"] == CAT.names[int(target)]
        assert len(got["history"]) == len(replies) and got["history"][-1]["found"]
        queries.append(len(replies))
    # simulated gamma = 3 people take a median of about 7 screens of 4 (the native
    # simulator over all 949 targets: median 7); 40 searches: a loose bound
    assert 4 <= np.median(queries) <= 10


def test_mix_search_converges(server):
    client, _, _ = server
    rng = np.random.default_rng(1)
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
    # the median over 200 people is about 3.7 CIELAB units (README); 12 here
    assert np.median(errors) < 8.0


def swatch_srgb(points):
    """The sRGB of a mix screen's CIELAB points (the bound for an 8-bit hex is per channel:
    in CIELAB one step of rounding is up to about 0.6 units in the dark blues)."""
    from tripletsearch.serve.colour import lab_to_srgb

    return np.asarray(lab_to_srgb(np.asarray(points, dtype=float)))


# ---------------------------------------------------------------------- protocol


def test_idempotent_retries_and_conflicts(server):
    client, _, _ = server
    s = start(client, mode="find", k=3)
    url, h = f"/api/sessions/{s['id']}/answer", auth(s["token"])
    first = client.post(url, json={"screen": 0, "choice": 2}, headers=h)
    assert first.status_code == 200
    for _ in range(3):  # a double click, a retry: the same reply, recorded once
        again = client.post(url, json={"screen": 0, "choice": 2, "found": False}, headers=h)
        assert again.status_code == 200 and again.json() == first.json()
    other = client.post(url, json={"screen": 0, "choice": 0}, headers=h)
    assert other.status_code == 409 and "first answer stands" in other.json()["error"]
    got = client.get(f"/api/sessions/{s['id']}", headers=h).json()
    assert got["queries"] == 1 and len(got["history"]) == 1
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
    assert gb["queries"] == 0 and gb["history"] == []


def test_finished_session_refuses_answers(server):
    client, _, _ = server
    s = start(client, mode="find")
    url, h = f"/api/sessions/{s['id']}/answer", auth(s["token"])
    done = client.post(url, json={"screen": 0, "choice": 1, "found": True}, headers=h)
    assert done.status_code == 200 and done.json() == {"screen": None, "done": True, "queries": 1}
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
        ({"screen": 0, "choice": 0, "found": "yes"}, 400, "found: expected true or false"),
        ({"screen": 0, "choice": None, "found": True}, 400, "found needs the item"),
        ({"screen": 0, "choice": 0, "admin": True}, 400, "unknown field"),
        ([0, 1], 400, "body: expected a JSON object"),
    ],
)
def test_bad_answers_leave_the_session_unharmed(server, body, status, match):
    client, _, _ = server
    s = start(client, mode="find", k=4)
    h = auth(s["token"])
    r = client.post(f"/api/sessions/{s['id']}/answer", json=body, headers=h)
    assert r.status_code == status and match in r.json()["error"], r.text
    got = client.get(f"/api/sessions/{s['id']}", headers=h).json()
    assert got["queries"] == 0 and got["screen"] == s["screen"]
    ok = client.post(f"/api/sessions/{s['id']}/answer", json={"screen": 0, "choice": 0}, headers=h)
    assert ok.status_code == 200


def test_bad_requests(server):
    client, _, _ = server
    for body, match in [
        ({"mode": "guess"}, "mode: expected one of"),
        ({"mode": "find", "k": 1}, "k: expected 2 to 8"),
        ({"mode": "find", "k": 9}, "k: expected 2 to 8"),
        ({"mode": "find", "k": "4"}, "k: expected an integer"),
        ({"mode": "mix", "k": 4}, "k: the mix mode shows 2"),
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


def test_size_limits_and_errors_without_traces(server):
    client, app, _ = server
    big = {"mode": "find", "pad": "x" * 20_000}
    r = client.post("/api/sessions", json=big)
    assert r.status_code == 413 and "over 16384 bytes" in r.json()["error"]

    def chunks():  # no Content-Length: counted while streaming
        for _ in range(40):
            yield b" " * 1024

    r = client.post("/api/sessions", content=chunks())
    assert r.status_code == 413
    assert client.get("/api/nothing").json() == {"error": "not found"}
    assert client.put("/api/sessions").status_code == 405
    service = app.state.service
    original = service.catalogue_items

    def boom():
        raise RuntimeError("secret internal detail /etc/passwd")

    service.catalogue_items = boom
    try:
        r = client.get("/api/catalogue")
    finally:
        service.catalogue_items = original
    assert r.status_code == 500 and r.json() == {"error": "internal server error"}
    assert "Traceback" not in r.text and "secret" not in r.text


def test_session_ids_and_tokens_are_unguessable(server):
    client, _, db = server
    ids = {start(client)["id"] for _ in range(20)}
    assert len(ids) == 20 and all(len(i) >= 22 for i in ids)  # 128 random bits
    with sqlite3.connect(db) as c:  # the database holds token hashes only
        tokens = [r[0] for r in c.execute("SELECT token_hash FROM ts_sessions")]
    assert all(len(t) == 64 for t in tokens)


# ---------------------------------------------------------------------- export


def test_admin_export_and_cli_export_close_the_loop(server, tmp_path):
    client, app, db = server
    rng = np.random.default_rng(5)
    targets = rng.choice(CAT.n_items, size=6, replace=False)
    for t in targets:
        run_search(client, start(client, mode="find", k=4), FindPerson(CAT, int(t), 3.0, rng))
    assert client.get("/api/admin/export").status_code == 401
    assert client.get("/api/admin/export", headers=auth("wrong")).status_code == 401
    data = client.get("/api/admin/export", headers=auth(ADMIN)).json()
    assert data["format"] == "tripletsearch.export" and data["version"] == 2
    T = np.array(data["triplets"])
    by_session = {s["session"]: s for s in data["sessions"]}
    for c in data["choices"]:  # one triplet per other shown item, head = the target
        assert by_session[c["session"]]["target"] == c["target"]
        assert c["chosen"] in c["shown"] and c["target"] not in c["shown"]
    assert len(T) == sum(len(c["shown"]) - 1 for c in data["choices"])
    assert set(T[:, 0]) <= {int(t) for t in by_session_targets(data)}
    # the answers as recorded: every chosen item is closer to the target, for a gamma = 3
    # user, more often than not (a statistical check of the row order)
    d_close = np.linalg.norm(CAT.embedding[T[:, 1]] - CAT.embedding[T[:, 0]], axis=1)
    d_far = np.linalg.norm(CAT.embedding[T[:, 2]] - CAT.embedding[T[:, 0]], axis=1)
    assert np.mean(d_close < d_far) > 0.7
    # the CLI writes the same, ready for Embedding.fit
    out = tmp_path / "export"
    from tripletsearch.cli import main

    assert (
        main(["export", "--database", f"sqlite:///{db}", "--out", str(out), "--demo", "colours"])
        == 0
    )
    rows = np.loadtxt(out / "triplets.csv", delimiter=",", skiprows=1, dtype=int, ndmin=2)
    np.testing.assert_array_equal(rows, T)
    sessions = (out / "sessions.csv").read_text().splitlines()
    assert sessions[0].startswith("session,mode,k,") and len(sessions) == 1 + len(data["sessions"])
    meta = json.loads((out / "export.json").read_text())
    assert meta["counts"]["triplets"] == len(T)
    emb = ts.Embedding("gamma-ckl", 3, random_state=0, max_epochs=20, n_items=CAT.n_items)
    emb.fit(rows)
    assert emb.embedding_.shape == (CAT.n_items, 3)


def by_session_targets(data):
    return [s["target"] for s in data["sessions"] if s["target"] is not None]


def test_admin_export_is_off_without_a_token(tmp_path):
    app = create_app(CAT, f"sqlite:///{tmp_path / 's.sqlite'}")
    with thread_server(app) as base:
        r = httpx.get(base + "/api/admin/export", headers=auth("anything"))
    assert r.status_code == 404 and "off" in r.json()["error"]


# ---------------------------------------------------------------------- versions


def test_a_session_continues_after_the_algorithm_changed(tmp_path, monkeypatch):
    """A session started by one version continues under another whose searcher would ask
    different screens: it is replayed from its screens as shown."""
    url = f"sqlite:///{tmp_path / 's.sqlite'}"
    rng = np.random.default_rng(2)
    person = FindPerson(CAT, 17, 3.0, rng)
    with thread_server(create_app(CAT, url)) as base, httpx.Client(base_url=base) as c:
        s = start(c, mode="find", k=4)
        screen = s["screen"]
        for _ in range(3):
            r = c.post(
                f"/api/sessions/{s['id']}/answer",
                json=person.answer(screen),
                headers=auth(s["token"]),
            )
            screen = r.json()["screen"]

    # "the next version": a searcher that would ask other screens (another selection rule)
    def other_template(self, k, params):
        return ts.DiscreteSearch(CAT.embedding, n_choices=k, selection="weighted")

    monkeypatch.setattr(SearchService, "_template", other_template)
    app2 = create_app(CAT, url)
    with thread_server(app2) as base, httpx.Client(base_url=base) as c:
        got = c.get(f"/api/sessions/{s['id']}", headers=auth(s["token"])).json()
        assert got["screen"] == screen and got["queries"] == 3
        replies = run_search(c, {**s, "screen": screen}, person)
        assert replies[-1]["done"]
        shown = [
            h["shown"]["items"]
            for h in c.get(f"/api/sessions/{s['id']}", headers=auth(s["token"])).json()["history"]
        ]
    ids = [it["id"] for screen_items in shown for it in screen_items]
    assert len(ids) == len(set(ids))  # no item shown twice: the replayed posterior ruled them out


def test_schema_versions(tmp_path):
    url = f"sqlite:///{tmp_path / 's.sqlite'}"
    st = Store(url)
    assert st.setup() == 0 and st.setup() == store_mod.SCHEMA_VERSION  # created, then found
    st.check()
    # a database written by a newer library is refused, not damaged
    with sqlite3.connect(tmp_path / "s.sqlite") as c:
        c.execute("UPDATE ts_meta SET value = '9' WHERE key = 'schema_version'")
    with pytest.raises(StoreError, match="schema version 9 was written by a newer"):
        Store(url).setup()
    with pytest.raises(StoreError, match="schema version 9"):
        Store(url).check()


def test_a_version_1_database_is_upgraded_and_its_sessions_continue(tmp_path):
    """A database as version 1 wrote it (its schema dumped in tests/serve/data), holding a
    session with one answer: the service upgrades it once and the session goes on."""
    db = tmp_path / "v1.sqlite"
    ddl = (Path(__file__).parent / "data" / "schema_v1_sqlite.sql").read_text()
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
    with thread_server(create_app(CAT, url, setup=False)) as base, httpx.Client(base_url=base) as c:
        h = auth(token)
        got = c.get("/api/sessions/s1", headers=h).json()
        assert got["queries"] == 1 and [it["id"] for it in got["screen"]["items"]] == second
        assert got["history"][0]["kind"] == "answer" and not got["history"][0]["undone"]
        r = c.post("/api/sessions/s1/answer", json={"screen": 1, "choice": 0}, headers=h)
        assert r.status_code == 200 and r.json()["queries"] == 2
        shown_next = [it["id"] for it in r.json()["screen"]["items"]]
        assert not set(shown_next) & set(first + second)  # the replay ruled them out
        u = c.post("/api/sessions/s1/undo", json={"screen": 2}, headers=h)
        assert u.status_code == 200 and u.json()["queries"] == 1
        assert [it["id"] for it in u.json()["screen"]["items"]] == second


def test_in_memory_sqlite_is_refused():
    with pytest.raises(StoreError, match="in-memory SQLite"):
        Store("sqlite://")


# ---------------------------------------------------------------------- images


def test_images_are_served_from_the_catalogue_folder_only(tmp_path):
    root = tmp_path / "cat"
    (root / "img").mkdir(parents=True)
    (root / "img" / "a.png").write_bytes(b"\x89PNG a")
    (root / "img" / "b.png").write_bytes(b"\x89PNG b")
    (tmp_path / "secret.txt").write_text("secret")
    (root / "items.csv").write_text("name,image\nalpha,img/a.png\nbeta,img/b.png\n")
    np.save(root / "embedding.npy", np.array([[0.0, 0.0], [1.0, 0.0]]))
    cat = load_catalogue(root)
    app = create_app(cat, f"sqlite:///{tmp_path / 's.sqlite'}")
    with thread_server(app) as base, httpx.Client(base_url=base) as c:
        assert c.get("/api/catalogue").json()["items"][1]["image"] == "/images/1"
        assert c.get("/images/1").content == b"\x89PNG b"
        assert c.get("/api/catalogue").json()["modes"] == ["find"]
        for path in (
            "/images/2",
            "/images/-1",
            "/images/../secret.txt",
            "/images/%2e%2e%2fsecret.txt",
            "/images/x",
        ):
            r = c.get(path)
            assert r.status_code == 404 and "secret" not in r.text, path
        r = c.post("/api/sessions", json={"mode": "mix"})
        assert r.status_code == 400 and "mode: expected one of ['find']" in r.json()["error"]
    assert Path(root / "items.csv").exists()


# ---------------------------------------------------------------------- undo


def test_undo_takes_back_the_last_answer(server):
    client, app, _ = server
    s = start(client, mode="find", k=4)
    url, h = f"/api/sessions/{s['id']}", auth(s["token"])
    assert client.post(url + "/undo", json={"screen": 0}, headers=h).status_code == 400
    r0 = client.post(url + "/answer", json={"screen": 0, "choice": 1}, headers=h).json()
    r1 = client.post(url + "/answer", json={"screen": 1, "choice": 3}, headers=h).json()
    u = client.post(url + "/undo", json={"screen": 2}, headers=h)
    assert u.status_code == 200
    body = u.json()
    assert body["queries"] == 1 and not body["done"]
    # screen 3 shows screen 1 again
    assert body["screen"]["number"] == 3 and body["screen"]["items"] == r0["screen"]["items"]
    assert client.post(url + "/undo", json={"screen": 2}, headers=h).json() == body  # a retry
    assert (
        client.post(url + "/answer", json={"screen": 2, "choice": 0}, headers=h).status_code == 409
    )
    # answered differently now: the posterior is the one without the undone answer, so the
    # next screen is what a session with only that answer shows
    r3 = client.post(url + "/answer", json={"screen": 3, "choice": 0}, headers=h).json()
    assert r3["queries"] == 2
    got = client.get(url, headers=h).json()
    assert [(e["screen"], e["kind"], e["undone"]) for e in got["history"]] == [
        (0, "answer", False),
        (1, "answer", True),
        (2, "undo", False),
        (3, "answer", False),
    ]
    assert r1["screen"] is not None  # the undone answer's reply is still stored
    service = app.state.service
    row = service.store.session(s["id"])
    live = service._new_searcher("find", 4, int(row.seed), row.params)
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
    both find their colour, and the session's stored parameters say "auto"."""
    from tripletsearch.serve.people import FindPerson
    from tripletsearch.serve.store import Store

    cat = demo_catalogue("colours")
    db = f"sqlite:///{tmp_path / 'auto.sqlite'}"
    rng = np.random.default_rng(4)
    with thread_server(create_app(cat, db, gamma="auto")) as base, httpx.Client(base_url=base) as c:
        for gamma, target in ((1.5, 17), (8.0, 400)):
            r = c.post("/api/sessions", json={"mode": "find", "k": 4}).json()
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
        create_app(cat, f"sqlite:///{tmp_path / 'x.sqlite'}", gamma="fast")
