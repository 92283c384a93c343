"""The modes' interface: a third mode plugs in by registering one class, and the service,
its views, the catalogue's metadata, undo, a rebuild from the database and the export all
serve it without a change; the registry and the two modes' own rules."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from serve.helpers import in_process, parts_of
from tripletsearch.colour import hex_to_srgb, srgb_to_lab
from tripletsearch.serve import create_app, demo_catalogue, load_catalogue
from tripletsearch.serve import modes as modes_mod
from tripletsearch.serve.config import ServeConfig
from tripletsearch.serve.errors import Invalid
from tripletsearch.serve.modes import (
    CollectMode,
    FindMode,
    MixMode,
    Mode,
    Screen,
    ScreenSizes,
    SessionInfo,
    Settings,
)
from tripletsearch.serve.schema import Answer, NewSession

CAT = demo_catalogue()


class PairsMode(Mode):
    """A toy mode: the catalogue two items at a time in a seeded order; "found" names one.

    Its per-session state is the list of items picked so far (screen k shows pair k of the
    order); what it shares between sessions is a count of the sessions it started.
    """

    name = "pairs"

    def __init__(self, catalogue, settings, store):
        super().__init__(catalogue, settings, store)
        self.started_count = 0
        self._lock = threading.Lock()

    @property
    def space(self):
        return "pairs:" + self.catalogue.fingerprint

    @property
    def screen_sizes(self):
        return ScreenSizes(2, 2, 2)

    def new_params(self, n_choices, guesses=None):
        self._no_guesses(guesses)
        if n_choices not in (None, 2):
            raise Invalid("n_choices: pairs only")
        return 2, {"order": "seeded"}

    def searcher(self, n_choices, params, seed):
        order = np.random.default_rng(seed).permutation(self.catalogue.n_items)
        return {"order": [int(i) for i in order], "picked": []}

    def started(self, searcher, params):
        with self._lock:
            self.started_count += 1
        return params

    def next_screen(self, searcher, number):
        k = len(searcher["picked"])
        ids = searcher["order"][2 * k : 2 * k + 2]
        if len(ids) < 2:
            return None
        return Screen(
            {"number": number, "items": [self.catalogue.item(i) for i in ids]}, {"shown": ids}
        )

    def check_answer(self, session, screen, answer):
        self._check_position(answer.choice, 2)
        if answer.choice is None:
            raise Invalid("choice: required")

    def apply(self, searcher, query, choice):
        searcher["picked"].append(query["shown"][choice])

    def found_result(self, screen, choice):
        item = screen.query["shown"][choice]
        return {"target": item, "item": self.catalogue.item(item)}

    def end_result(self, searcher, number):
        return {"target": None}

    @classmethod
    def shown_items(cls, query):
        return list(query["shown"])

    @classmethod
    def found_item(cls, result):
        return None if not result else result.get("target")


def auth(token):
    return {"Authorization": f"Bearer {token}"}


def test_a_third_mode_plugs_in_by_registering_its_class(tmp_path, monkeypatch):
    monkeypatch.setitem(modes_mod.MODES, "pairs", PairsMode)
    url = f"sqlite:///{tmp_path / 's.sqlite'}"
    app = create_app(CAT, url, config=ServeConfig(admin_token="admin"))
    with in_process(app) as c:
        meta = c.get("/api/catalogue?limit=0").json()
        assert meta["modes"] == ["find", "mix", "pairs"]
        assert meta["n_choices"]["pairs"] == {"min": 2, "max": 2, "default": 2}
        r = c.post("/api/sessions", json={"mode": "pairs", "n_choices": 3})
        assert r.status_code == 400 and r.json()["error"] == "n_choices: pairs only"
        s = c.post("/api/sessions", json={"mode": "pairs"}).json()
        url_s, h = f"/api/sessions/{s['id']}", auth(s["token"])
        order = (
            parts_of(app)
            .service.modes["pairs"]
            .searcher(2, {}, int(parts_of(app).store.session(s["id"]).seed))["order"]
        )
        assert [it["id"] for it in s["screen"]["items"]] == order[:2]
        r0 = c.post(url_s + "/answer", json={"screen": 0, "choice": 1}, headers=h).json()
        assert [it["id"] for it in r0["screen"]["items"]] == order[2:4]
        r = c.post(url_s + "/answer", json={"screen": 1, "choice": None}, headers=h)
        assert r.status_code == 400 and r.json()["error"] == "choice: required"
        c.post(url_s + "/answer", json={"screen": 1, "choice": 0}, headers=h)
        u = c.post(url_s + "/undo", json={"screen": 2}, headers=h).json()
        assert u["screen"]["items"] == r0["screen"]["items"] and u["n_queries"] == 1
    # another process (a fresh cache): the session is rebuilt from the database
    app2 = create_app(CAT, url, setup=False, config=ServeConfig(admin_token="admin"))
    with in_process(app2) as c:
        r = c.post(url_s + "/answer", json={"screen": 3, "choice": 1}, headers=h).json()
        assert [it["id"] for it in r["screen"]["items"]] == order[4:6]
        done = c.post(url_s + "/answer", json={"screen": 4, "choice": 0, "found": True}, headers=h)
        assert done.json()["done"] and done.json()["n_queries"] == 3
        got = c.get(url_s, headers=h).json()
        assert got["mode"] == "pairs" and got["result"]["item"] == CAT.item(order[4])
        data = c.get("/api/admin/export", headers=auth("admin")).json()
    assert parts_of(app).service.modes["pairs"].started_count == 1  # its shared state
    # the export reads the new mode's records: the target it found, one triplet per pick
    (session,) = data["sessions"]
    assert session["found"] and session["target"] == order[4]
    picks = [(order[1], order[0]), (order[3], order[2])]  # (picked, other) per answer
    assert data["triplets"] == [[order[4], a, b] for a, b in picks]


def test_the_service_serves_the_registry_it_is_given(tmp_path):
    """The generic service knows no mode of its own: it serves the modes it is handed."""
    from tripletsearch.serve.service import SearchService
    from tripletsearch.serve.store import Store

    store = Store(f"sqlite:///{tmp_path / 's.sqlite'}")
    store.setup()
    settings = ServeConfig(max_queries=3, random_state=0)
    pairs = PairsMode(CAT, Settings(), store)
    service = SearchService(CAT, store, {"pairs": pairs}, settings=settings)
    assert service.offered == ["pairs"]
    with pytest.raises(Invalid, match=r"mode: expected one of \['pairs'\], got 'find'"):
        service.create(NewSession(mode="find", n_choices=None))
    first = service.create(NewSession(mode=None, n_choices=None))  # the first of the registry's
    assert len(first["screen"]["items"]) == 2 and pairs.started_count == 1
    sid, token = first["id"], first["token"]
    for number in range(3):  # the settings' max_queries: three screens, then done
        reply = service.answer(sid, token, Answer(screen=number, choice=0, found=False))
    assert reply["done"] and reply["n_queries"] == 3
    store.dispose()


def test_the_registry_and_what_catalogues_offer(tmp_path):
    assert set(modes_mod.MODES) == {"find", "mix", "collect"}
    assert not CollectMode.offered_by(CAT)  # participants only, never a free session
    assert modes_mod.mode_class("find") is FindMode and modes_mod.mode_class("nope") is Mode
    root = tmp_path / "cat"
    root.mkdir()
    (root / "items.csv").write_text("name\na\nb\nc\n")
    np.save(root / "embedding.npy", np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]))
    plain = load_catalogue(root)
    assert FindMode.offered_by(plain) and not MixMode.offered_by(plain)
    assert MixMode.offered_by(CAT)
    # screen sizes: find at most the catalogue's items
    assert FindMode(plain, Settings()).screen_sizes == ScreenSizes(2, 3, 3)
    assert FindMode(CAT, Settings()).screen_sizes == ScreenSizes(2, 8, 4)
    with pytest.raises(ValueError, match="gamma: expected a number > 0 or 'auto'"):
        FindMode(CAT, Settings(gamma=0))


def test_the_modes_answer_rules():
    find, mix = FindMode(CAT, Settings()), MixMode(CAT, Settings())

    free, study = SessionInfo(3, {}, None), SessionInfo(3, {}, 7)
    screen = Screen({"number": 0, "items": []}, {"shown": [5, 7, 9]})
    find.check_answer(free, screen, Answer(0, None, False))  # a skip
    find.check_answer(free, screen, Answer(0, 0, True))  # free: any item may be it
    find.check_answer(study, screen, Answer(0, 1, True))  # the target
    for session, answer, match in [
        (free, Answer(0, 3, False), r"choice: expected an index in 0\.\.2"),
        (free, Answer(0, None, True), "found needs the item"),
        (study, Answer(0, 0, True), "item 1 on this screen is not the target"),
    ]:
        with pytest.raises(Invalid, match=match):
            find.check_answer(session, screen, answer)
    lab = srgb_to_lab(hex_to_srgb([CAT.hex[7]]))[0]  # a colour's end screen gives its CIELAB
    assert find.found_result(screen, 1) == {
        "target": 7,
        "name": CAT.names[7],
        "item": CAT.item(7),
        "lab": [round(float(v), 3) for v in lab],
    }
    black = {"hex": "#000000", "lab": [0.0, 0.0, 0.0]}
    two = Screen({"number": 0, "estimate": black}, {"rgb": [[0] * 3, [1] * 3]})
    mix.check_answer(free, two, Answer(0, None, True))  # accept the estimate
    with pytest.raises(Invalid, match="choice: required in mix mode"):
        mix.check_answer(free, two, Answer(0, None, False))
    with pytest.raises(Invalid, match=r"0\.\.1"):
        mix.check_answer(free, two, Answer(0, 2, False))
    # the nearest named colour, by brute force in CIELAB
    nearest = int(np.argmin((np.asarray(CAT.embedding) ** 2).sum(1)))
    assert mix.found_result(two, None) == {"estimate": black, "nearest": CAT.item(nearest)}
    assert CAT.names[nearest] == "black"
    # reading records without a service
    assert FindMode.shown_items({"shown": [3, 4]}) == [3, 4] and MixMode.shown_items({}) is None
    assert FindMode.found_item({"target": 4}) == 4 and FindMode.found_item(None) is None
    assert MixMode.shown_record({"hex": ["#000000", "#ffffff"]}, {}) == ["#000000", "#ffffff"]


def test_export_of_the_two_modes_against_a_hand_count(tmp_path):
    """The outcome rules through the export: a free find session that found its target, one
    left unfinished, a mix session (found means accepted); choices only on screens without
    the target."""
    app = create_app(CAT, f"sqlite:///{tmp_path / 's.sqlite'}", config=ServeConfig(admin_token="a"))
    with in_process(app) as c:
        found = c.post("/api/sessions", json={"n_choices": 3}).json()
        url, h = f"/api/sessions/{found['id']}/answer", auth(found["token"])
        second = c.post(url, json={"screen": 0, "choice": 2}, headers=h).json()["screen"]
        third = c.post(url, json={"screen": 1, "choice": None}, headers=h).json()["screen"]
        c.post(url, json={"screen": 2, "choice": 1, "found": True}, headers=h)
        open_ = c.post("/api/sessions", json={"n_choices": 3}).json()
        c.post(
            f"/api/sessions/{open_['id']}/answer",
            json={"screen": 0, "choice": 0},
            headers=auth(open_["token"]),
        )
        mix = c.post("/api/sessions", json={"mode": "mix"}).json()
        c.post(
            f"/api/sessions/{mix['id']}/answer",
            json={"screen": 0, "choice": None, "found": True},
            headers=auth(mix["token"]),
        )
        data = c.get("/api/admin/export", headers=auth("a")).json()
    target = third["items"][1]["id"]
    first = [it["id"] for it in found["screen"]["items"]]
    by_id = {s["session"]: s for s in data["sessions"]}
    assert by_id[found["id"]]["found"] and by_id[found["id"]]["target"] == target
    assert not by_id[open_["id"]]["found"] and by_id[open_["id"]]["target"] is None
    assert by_id[mix["id"]]["found"] and by_id[mix["id"]]["target"] is None
    assert second is not None
    # one comparison: screen 0's pick (the skip and the final "this is it" are none)
    assert [(ch["screen"], ch["item"]) for ch in data["choices"]] == [(0, first[2])]
    assert data["triplets"] == [[target, first[2], o] for o in first[:2]]
