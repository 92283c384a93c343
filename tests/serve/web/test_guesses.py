"""Best guesses in the find mode's API (issue 43): each screen comes with its strip, a guess
ends the search with "this is it" (a study's on its target only), any other answer passes
the strip over and is stored with it, so a searcher rebuilt from the database (the live one
dropped, a restart) replays the pass-over and asks the same screens; bad requests refused;
a study file's ``guesses`` for every method alike, refused with the random method, part of
the design, and said by the report."""

from __future__ import annotations

import json

import numpy as np
import pytest

from serve.helpers import (
    answer_all,
    auth,
    enrol,
    finding,
    in_process,
    make_catalogue,
    parts_of,
    start,
    study_toml,
)
from tripletsearch.people import FindPerson
from tripletsearch.serve import create_app, demo_catalogue
from tripletsearch.serve.cli import MAX_GUESSES as CLI_MAX
from tripletsearch.serve.collect.training import export_data
from tripletsearch.serve.config import ServeConfig
from tripletsearch.serve.modes.find import MAX_GUESSES
from tripletsearch.serve.store import Store
from tripletsearch.serve.study import load_study
from tripletsearch.serve.study.report import format_report, study_report

CAT = demo_catalogue()
STUDY = study_toml(title="Strip", targets=2, seed=4, max_queries=60, guesses=3)


def with_strip(person, screen):
    """``person``'s answer (a FindPerson of gamma None: the nearest item shown), or their
    target clicked in the strip when it is there."""
    ids = [g["id"] for g in screen.get("guesses", [])]
    if person.target in ids:
        k = len(screen["items"])
        return {"screen": screen["number"], "choice": k + ids.index(person.target), "found": True}
    return person.answer(screen)


def post(c, s, body):
    return c.post(f"/api/sessions/{s['id']}/answer", json=body, headers=auth(s["token"]))


def test_each_screen_has_its_strip_and_a_guess_is_found(tmp_path):
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    strip_found = 0
    with in_process(create_app(CAT, db, config=ServeConfig(random_state=0))) as c:
        for target in np.random.default_rng(1).choice(CAT.n_items, 6, replace=False):
            s = start(c, mode="find", n_choices=4, guesses=5)
            person, screen, n = FindPerson(CAT, target, None, None), s["screen"], 0
            while screen is not None:
                g = [it["id"] for it in screen["guesses"]]
                shown = [it["id"] for it in screen["items"]]
                # the strip: its own items, none of the screen's, drawn as the catalogue says
                assert len(g) == 5 and len(set(g)) == 5 and not set(g) & set(shown)
                assert screen["guesses"] == [CAT.item(i) for i in g]
                body = with_strip(person, screen)
                strip_found += body["found"] and body["choice"] >= 4
                r = post(c, s, body)
                assert r.status_code == 200, r.text
                screen, n = r.json()["screen"], n + 1
            got = c.get(f"/api/sessions/{s['id']}", headers=auth(s["token"])).json()
            assert got["result"]["target"] == int(target) and got["n_queries"] == n
            # the history shows each screen with its strip
            assert all(len(h["shown"]["guesses"]) == 5 for h in got["history"])
        free = start(c, mode="find")  # none asked: the server's default, none
        assert "guesses" not in free["screen"]
    assert strip_found >= 1  # a target turned up in a strip before the screen
    # stored: each screen's strip with its query, and the params say how many
    store = Store(db)
    rows = list(store.iter_sessions())
    assert {r.params.get("guesses") for r in rows} == {5, None}
    hist = store.history(rows[0].id)
    assert all(h["query"]["offered"] == [g["id"] for g in h["payload"]["guesses"]] for h in hist)
    # the export's answers: the strip beside the screen, a guess's position after it
    answers = [a for a in export_data(store)["answers"] if a["session"] == rows[0].id]
    assert all(set(a["shown"]) == {"shown", "offered"} for a in answers)


def replay(mode, row, history, strips=True):
    """A searcher rebuilt from the stored screens (their strips dropped unless ``strips``)."""
    s = mode.searcher(row.n_choices, row.params, int(row.seed))
    for h in history:
        q = h["query"] if strips else {"shown": h["query"]["shown"]}
        mode.apply(s, q, h["choice"])
    return s


def test_a_pass_over_is_stored_and_replayed_as_it_was(tmp_path):
    """Two servers seeded alike, answered alike: one keeps its live searchers, the other
    drops them before every answer (rebuilt from the database); the screens and strips are
    the same. The rebuilt searcher takes the strips' evidence (without it, another one)."""
    apps = [
        create_app(CAT, f"sqlite:///{tmp_path / f'{i}.sqlite'}", config=ServeConfig(random_state=3))
        for i in (0, 1)
    ]
    target = 123
    with in_process(apps[0]) as live, in_process(apps[1]) as rebuilt:
        s = [start(c, mode="find", n_choices=3, guesses=4) for c in (live, rebuilt)]
        assert s[0]["screen"] == s[1]["screen"]
        person, screen = FindPerson(CAT, target, None, None), s[0]["screen"]
        for _ in range(6):
            parts_of(rebuilt.app).service.live.drop(s[1]["id"])
            body = person.answer(screen)
            body["found"] = False  # on: whatever is shown
            r = [post(c, x, body).json() for c, x in ((live, s[0]), (rebuilt, s[1]))]
            assert r[0] == r[1]
            screen = r[0]["screen"]
        mode = parts_of(apps[1]).service.modes["find"]
    store = Store(f"sqlite:///{tmp_path / '1.sqlite'}")
    row = store.session(s[1]["id"])
    history = store.effective(row.id)
    current = store.screen(row.id, row.screen)[1]
    again = replay(mode, row, history)
    assert [h["offered"] for h in again.history] == [h["query"]["offered"] for h in history]
    assert again.ask().tolist() == current["shown"] and again.offered.tolist() == current["offered"]
    blind = replay(mode, row, history, strips=False)
    assert not np.allclose(blind.posterior, again.posterior)


def test_bad_requests_are_refused(tmp_path):
    small = make_catalogue(tmp_path / "small", 10)
    with in_process(create_app(CAT, f"sqlite:///{tmp_path / 's.sqlite'}")) as c:
        for body, says in [
            ({"guesses": -1}, "guesses: expected an integer >= 0"),
            ({"guesses": MAX_GUESSES + 1}, f"guesses: expected an integer from 0 to {MAX_GUESSES}"),
            ({"guesses": True}, "guesses: expected an integer"),
            ({"guesses": "3"}, "guesses: expected an integer"),
            ({"mode": "mix", "guesses": 2}, "guesses: the mix mode offers no guesses"),
        ]:
            r = c.post("/api/sessions", json=body)
            assert r.status_code == 400 and r.json()["error"].startswith(says), (body, r.text)
        assert c.post("/api/sessions", json={"mode": "mix", "guesses": 0}).status_code == 201
        s = start(c, mode="find", n_choices=4, guesses=2)
        for body, says in [
            ({"choice": 6, "found": True}, "choice: expected an index in 0..3 (the screen), 4..5"),
            ({"choice": -1, "found": False}, "choice: expected an index in 0..3"),
            ({"choice": 4, "found": False}, "choice: 4 is a guess"),
            ({"choice": 5}, "choice: 5 is a guess"),
        ]:
            r = post(c, s, {"screen": 0, **body})
            assert r.status_code == 400 and r.json()["error"].startswith(says), (body, r.text)
        none = start(c, mode="find", n_choices=4)  # no strip: the screen's positions only
        r = post(c, none, {"screen": 0, "choice": 4, "found": True})
        assert r.status_code == 400 and "0..3 or null" in r.json()["error"]
        # the screen (and then its strip) answer as before the refusals
        assert post(c, s, {"screen": 0, "choice": 5, "found": True}).json()["done"]
    with in_process(create_app(small, f"sqlite:///{tmp_path / 't.sqlite'}")) as c:
        r = c.post("/api/sessions", json={"n_choices": 4, "guesses": 7})
        assert r.status_code == 400 and "the catalogue has 10" in r.json()["error"]
    with pytest.raises(ValueError, match="guesses: expected an integer from 0 to 8"):
        create_app(CAT, f"sqlite:///{tmp_path / 'u.sqlite'}", config=ServeConfig(guesses=9))
    assert CLI_MAX == MAX_GUESSES


def test_the_servers_default_for_free_searches_and_an_undo(tmp_path):
    with in_process(
        create_app(CAT, f"sqlite:///{tmp_path / 's.sqlite'}", config=ServeConfig(guesses=2))
    ) as c:
        s = start(c, mode="find")
        assert len(s["screen"]["guesses"]) == 2
        # an undo shows the screen again with its strip; answered again, the same next one
        first = post(c, s, {"screen": 0, "choice": 1}).json()["screen"]
        r = c.post(f"/api/sessions/{s['id']}/undo", json={"screen": 1}, headers=auth(s["token"]))
        again = r.json()["screen"]
        assert again["guesses"] == s["screen"]["guesses"] and again["number"] == 2
        assert (
            post(c, s, {"screen": 2, "choice": 1}).json()["screen"]["guesses"] == first["guesses"]
        )
        assert "guesses" not in start(c, mode="find", guesses=0)["screen"]
        assert len(start(c, mode="find", guesses=6)["screen"]["guesses"]) == 6


def run_study(tmp_path, text, people=2):
    (tmp_path / "study.toml").write_text(text)
    study = load_study(tmp_path / "study.toml")
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    refused = 0
    with in_process(create_app(study.catalogue, db, study=study)) as c:
        for _ in range(people):
            pr, h = enrol(c)

            def strip(person, screen, pid=pr["id"], h=h):
                nonlocal refused
                assert len(screen.get("guesses", [])) == study.guesses
                others = [
                    j for j, g in enumerate(screen.get("guesses", [])) if g["id"] != person.target
                ]
                if others:  # "this is it" on a guess that is not the target: refused
                    k = len(screen["items"])
                    body = {"screen": screen["number"], "choice": k + others[0], "found": True}
                    r = c.post(f"/api/participants/{pid}/answer", json=body, headers=h)
                    assert r.status_code == 400 and "among the guesses is not the target" in r.text
                    refused += 1
                return with_strip(person, screen)

            answer_all(c, pr["id"], h, body=finding(study.catalogue, answer=strip))
    return study, Store(db), refused


def test_a_study_offers_its_guesses_to_every_method_and_the_report_says_so(tmp_path):
    study, store, refused = run_study(tmp_path, STUDY)
    assert refused > 0
    rows = [r for r in store.iter_sessions() if r.participant is not None]
    assert {r.params["method"] for r in rows} == {"gamma-ckl", "gauss"}
    assert {r.params["guesses"] for r in rows} == {3}
    # (people simulated in process answer at once: no server-clock check here)
    rep = study_report(store, study.catalogue, fast_server_ms=0)
    assert rep["guesses"] == [3] and {s["guesses"] for s in rep["searches"]} == {3}
    assert all(s["found"] for s in rep["searches"])
    assert "protocol: with a strip of 3 guesses" in format_report(rep)
    assert "guesses" in study.identity().design


def test_the_papers_protocol_by_default(tmp_path):
    study, store, _ = run_study(tmp_path, STUDY.replace("guesses = 3", ""), people=1)
    rows = [r for r in store.iter_sessions() if r.participant is not None]
    assert all("guesses" not in r.params for r in rows)  # stored as before the strip
    assert "guesses" not in study.identity().design
    assert "protocol: the paper's (no guesses)" in format_report(
        study_report(store, fast_server_ms=0)
    )
    # a report over two studies of different protocols says so
    rep = study_report(store, fast_server_ms=0)
    assert "protocols mixed" in format_report({**rep, "guesses": [0, 3]})


@pytest.mark.parametrize(
    "edit, says",
    [
        (("guesses = 3", "guesses = 9"), "guesses: expected an integer from 0 to 8, got 9"),
        (("guesses = 3", "guesses = -1"), "guesses: expected an integer from 0 to 8"),
        (("guesses = 3", "guesses = true"), "guesses: expected an integer from 0 to 8"),
        (("guesses = 3", 'guesses = "3"'), "guesses: expected an integer from 0 to 8"),
        (('"gauss"]', '"random"]'), "guesses: the random method offers no guesses"),
    ],
)
def test_bad_study_files_are_refused(tmp_path, edit, says):
    (tmp_path / "study.toml").write_text(STUDY.replace(*edit))
    with pytest.raises(ValueError, match=says):
        load_study(tmp_path / "study.toml")
    # random without guesses is the paper's study
    (tmp_path / "ok.toml").write_text(
        STUDY.replace('"gauss"]', '"random"]').replace("guesses = 3", "")
    )
    assert load_study(tmp_path / "ok.toml").guesses == 0


def test_guesses_are_part_of_the_design(tmp_path):
    from tripletsearch.serve.experiment import ExperimentChanged

    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    (tmp_path / "study.toml").write_text(STUDY)
    study = load_study(tmp_path / "study.toml")
    with in_process(create_app(study.catalogue, db, study=study)) as c:
        assert c.post("/api/participants", json={"consent": True}).status_code == 201
    for other in ("guesses = 0", "guesses = 4"):
        (tmp_path / "study.toml").write_text(STUDY.replace("guesses = 3", other))
        edited = load_study(tmp_path / "study.toml")
        with pytest.raises(ExperimentChanged, match="this file changes guesses"):
            create_app(edited.catalogue, db, study=edited)
    assert json.dumps(Store(db).experiments()[0].design["guesses"]) == "3"
