"""A study's checks on its participants (issue 49, found item 4): a script that clicks the
first candidate finished a study and entered its report, unflagged. Now a participant is
flagged by the server's clock, by how their picks agree with their searches' targets and by
attention screens, through the HTTP API, over sizes; the flagged are reported apart and
carry their flags in the participants' table."""

from __future__ import annotations

import types

import numpy as np
import pytest

from serve import helpers
from serve.helpers import in_process, make_catalogue, toml_text
from tripletsearch.people import StudyPerson
from tripletsearch.serve import create_app
from tripletsearch.serve.commands.export_folder import experiment_roster
from tripletsearch.serve.config import ServeConfig
from tripletsearch.serve.store import Store
from tripletsearch.serve.store import sessions as sessions_mod
from tripletsearch.serve.study import load_study
from tripletsearch.serve.study.report import format_report, study_report

OWNER = {"Authorization": "Bearer owner"}


def make_study(tmp_path, **keys):
    """A study on 200 points in d = 2 (``items``), with ``keys``."""
    if not (tmp_path / "items").exists():
        make_catalogue(tmp_path / "items", 200, dim=2)
    base = {"catalogue": "items", "methods": ["gamma-ckl", "gauss"], "seed": 1}
    (tmp_path / "study.toml").write_text(toml_text({**base, **keys}))
    return load_study(tmp_path / "study.toml")


@pytest.fixture
def clock(monkeypatch):
    """The server's clock, simulated: ``clock.now`` moves as the test's people take time."""
    c = types.SimpleNamespace(now=1e9)
    # no seam: the store stamps answers with the wall clock (time.time), not an injected one
    monkeypatch.setattr(sessions_mod, "time", types.SimpleNamespace(time=lambda: c.now))
    return c


def take_part(c, study, kind, clock, seconds=2.0, seed=0, **person):
    """One participant of ``kind`` (:class:`StudyPerson`) through the API: their id, every
    reply (with the screen each answered) and their end."""
    rng, people = np.random.default_rng(seed), {}

    def body(reply: dict) -> dict:
        slot = reply["slot"]
        if slot not in people:
            people[slot] = StudyPerson(kind, study.catalogue.embedding, reply["target"]["id"],
                                       rng=rng, seconds=seconds, **person)  # fmt: skip
        sent = people[slot].answer(reply["screen"])
        del sent["response_ms"]
        clock.now += people[slot].seconds_
        return {**sent, "slot": slot}

    seen: list = []
    pr, _h, end = helpers.take_part(c, body=body, seen=seen)
    return pr["id"], seen, end


SIZES = [  # (targets, n_choices, max_queries)
    (1, 2, 30),
    (2, 4, 20),
    (3, 8, 12),
]


@pytest.mark.parametrize(("targets", "n_choices", "max_queries"), SIZES)
def test_a_script_is_flagged_and_left_out_of_the_comparison(
    tmp_path, clock, targets, n_choices, max_queries
):
    """Always-first and random scripts at a human pace (2 s a screen by the server's
    clock) and at 50 ms finish and get the finished end, but are flagged and their searches
    reported apart; honest people (gamma 3, 5 % lapses) are not."""
    study = make_study(tmp_path, targets=targets, n_choices=n_choices, max_queries=max_queries)
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    kinds = {}
    with in_process(
        create_app(study.catalogue, db, study=study, config=ServeConfig(admin_token="owner"))
    ) as c:
        for i, (kind, seconds) in enumerate(
            [("person", 2.0), ("first", 2.0), ("random", 2.0), ("first", 0.05), ("person", 3.0)]
        ):
            pid, _, end = take_part(c, study, kind, clock, seconds, seed=i)
            assert end["outcome"] == "finished"  # (a code never depends on the checks)
            kinds[pid] = (kind, seconds)
        table = c.get("/api/admin/study", headers=OWNER).json()["participants"]
    flagged = {p["participant"]: set(p["flagged_by"].split()) for p in table if p["flagged"]}
    assert {p for p in kinds if kinds[p][0] != "person"} == set(flagged), table
    for pid, rules in flagged.items():
        # at a human pace, their picks give them away; at 50 ms, the server's clock
        assert ("server_time" in rules) == (kinds[pid][1] < 0.25)
        assert "agreement" in rules or "server_time" in rules
    store = Store(db)
    rep = study_report(store, None, study.fingerprint)
    honest = {p for p in kinds if kinds[p][0] == "person"}
    assert sum(r["searches"] for r in rep["methods"]) == targets * len(honest)
    assert {s["participant"] for s in rep["searches"] if not s["flagged"]} == honest
    assert rep["flagged"]["participants"] == 3 and rep["flagged"]["searches"] == 3 * targets
    assert rep["flagged"]["by_rule"]["agreement"] >= 2
    text = format_report(rep)
    assert "flagged by the study's checks: 3 participants" in text
    assert "picks of the candidate nearest the target" in text
    # the export's participants' table carries the flags (and codes --check reads it)
    rows = {r["participant"]: r for r in experiment_roster(store, study.fingerprint)}
    assert {p for p, r in rows.items() if r["flagged"]} == set(flagged)
    assert all(rows[p]["why"] and rows[p]["flagged_by"] for p in flagged)
    store.dispose()


@pytest.mark.parametrize(
    ("max_queries", "attention", "n_choices"), [(6, [1], 2), (12, [2, 5, 12], 4), (9, [9], 8)]
)
def test_attention_screens_show_the_target_and_count_in_no_query(
    tmp_path, clock, max_queries, attention, n_choices
):
    """Screen a of each search (a in ``attention``) shows the target among the
    candidates, in the form of any other screen; "this is it" there neither ends the search
    nor counts in its queries. A script that never says it fails them; a person passes."""
    study = make_study(tmp_path, targets=2, n_choices=n_choices, max_queries=max_queries,
                       attention=attention)  # fmt: skip
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    with in_process(
        create_app(study.catalogue, db, study=study, config=ServeConfig(admin_token="owner"))
    ) as c:
        first, seen, _ = take_part(c, study, "first", clock)
        person, _, _ = take_part(c, study, "person", clock, seed=1)
        table = {p["participant"]: p for p in c.get("/api/admin/study", headers=OWNER).json()[
            "participants"]}  # fmt: skip
    # the script's searches run every screen: max_queries counted, the attention ones apart
    per_search = {}
    for reply, body, got in seen:
        per_search.setdefault(reply["slot"], []).append((reply, body, got))
    for slot, answered in per_search.items():
        assert len(answered) == max_queries + len(attention)
        target = answered[0][0]["target"]["id"]
        for number, (reply, _, got) in enumerate(answered):
            screen = reply["screen"]
            assert screen["number"] == number
            assert set(screen) == {"number", "items"} and len(screen["items"]) == n_choices
            ids = [it["id"] for it in screen["items"]]
            going = not got["done"] and got["slot"] == slot  # (else: the next search's)
            if number + 1 in attention:
                assert target in ids
                assert going and got["n_queries"] == reply["n_queries"]  # (in no query)
            elif going:
                assert got["n_queries"] == reply["n_queries"] + 1
        assert answered[-1][2]["done"] or answered[-1][2]["slot"] != slot
    store = Store(db)
    kinds = [h["kind"] for hist in store.all_answers().values() for h in hist]
    assert "check" in kinds
    for s in store.iter_sessions():
        hist = store.all_answers()[s.id]
        assert s.n_queries == sum(h["kind"] == "answer" for h in hist)
    store.dispose()
    assert "attention" in table[first]["flagged_by"].split()
    assert "attention screens: 0 of" in table[first]["why"]
    assert "attention" not in table[person]["flagged_by"].split()


def test_found_on_an_attention_screen_continues_and_a_restart_replays(tmp_path, clock):
    """The person's "this is it" on an attention screen gives the next screen of the same
    search; the server restarted afterwards rebuilds the search from the counted answers
    only and goes on; an undo takes back the last counted answer, not the check."""
    study = make_study(tmp_path, targets=1, n_choices=4, max_queries=30, attention=[2])
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    app = create_app(study.catalogue, db, study=study, config=ServeConfig(admin_token="owner"))
    with in_process(app) as c:
        pr = c.post("/api/participants", json={"consent": True}).json()
        h, base = {"Authorization": "Bearer " + pr["token"]}, f"/api/participants/{pr['id']}"
        n = c.post(f"{base}/next", json={}, headers=h).json()
        target = n["target"]["id"]
        first = [it["id"] for it in n["screen"]["items"] if it["id"] != target][0]
        pos = [it["id"] for it in n["screen"]["items"]].index(first)
        r = c.post(f"{base}/answer", json={"screen": 0, "choice": pos, "slot": 0}, headers=h)
        check = r.json()["screen"]
        at = [it["id"] for it in check["items"]].index(target)
        r = c.post(f"{base}/answer", json={"screen": 1, "choice": at, "found": True, "slot": 0},
                   headers=h).json()  # fmt: skip
        assert not r["done"] and r["n_queries"] == 1 and r["screen"]["number"] == 2
        again = c.post(f"{base}/answer", json={"screen": 1, "choice": at, "found": True,
                                               "slot": 0}, headers=h)  # fmt: skip
        assert again.status_code == 200 and again.json() == r  # a retry: the same reply
    with in_process(
        create_app(study.catalogue, db, study=study, config=ServeConfig(admin_token="owner"))
    ) as c:
        u = c.post(f"{base}/undo", json={"screen": 2}, headers=h)
        assert u.status_code == 200, u.text
        assert u.json()["n_queries"] == 0
        assert [it["id"] for it in u.json()["screen"]["items"]] == [
            it["id"] for it in n["screen"]["items"]
        ]  # the first screen again, not the attention screen
        r = c.post(f"{base}/answer", json={"screen": 3, "choice": pos, "slot": 0}, headers=h)
        assert r.status_code == 200 and r.json()["n_queries"] == 1


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ('"3"', "attention: a list of distinct screen numbers"),
        ("[1.5]", "attention: a list of distinct screen numbers"),
        ("[true]", "attention: a list of distinct screen numbers"),
        ("[0]", "[0] out of range"),
        ("[2, 2]", "[2] given twice"),
        ("[21]", "[21] out of range"),
    ],
)
def test_a_wrong_attention_key_is_refused_naming_it(tmp_path, value, said):
    make_study(tmp_path, targets=2, max_queries=20)
    text = (tmp_path / "study.toml").read_text() + f"attention = {value}\n"
    (tmp_path / "study.toml").write_text(text)
    with pytest.raises(ValueError, match=r"study\.toml.*" + _escape(said)):
        load_study(tmp_path / "study.toml")


def _escape(s):
    import re

    return re.escape(s)
