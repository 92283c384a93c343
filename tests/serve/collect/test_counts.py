"""The refitter, the owner's dashboard and the export count the same rows of one database:
the answers of participants neither withdrawn nor flagged, skips giving no triplet, the
held-out test queries' apart; recomputed here from the raw tables."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter

from serve.collect.collected import INSTANT, collected_database
from tripletsearch.serve.collect.dashboard import collect_dashboard
from tripletsearch.serve.collect.export import collect_triplets, participant_checks
from tripletsearch.serve.collect.refitter import refit_once
from tripletsearch.serve.collect.screens import BUFFER_KINDS
from tripletsearch.serve.store import Store

SAMPLED = ("burn-in", *BUFFER_KINDS, "fallback")  # what a sampler fits


def raw_counts(path: str, roles: dict[str, str]) -> dict:
    """From the tables: per session of the kept participants, the triplets (k - 1 per pick)
    of sampled and of test queries; the skips and the checks' screens of everyone."""
    kept = {roles[r] for r in ("honest0", "honest1", "honest2", "skipper", "partway")}
    out = {k: Counter() for k in ("sampled", "test", "skips", "attention", "attention_of")}
    with sqlite3.connect(path) as con:
        rows = con.execute(
            "SELECT s.participant, s.id, q.query, a.choice, a.kind, a.undone "
            "FROM ts_answers a JOIN ts_screens q ON q.session_id = a.session_id "
            "AND q.number = a.screen JOIN ts_sessions s ON s.id = a.session_id"
        ).fetchall()
    for pid, sid, query, choice, kind, undone in rows:
        q = json.loads(query)
        assert kind == "answer" and not undone  # (a collect has no undo)
        if choice is None:
            out["skips"][pid] += 1
        elif q["kind"] == "attention":
            out["attention"][pid] += int(choice == q["expected"])
            out["attention_of"][pid] += 1
        if pid not in kept or choice is None:
            continue
        if q["kind"] in SAMPLED:
            out["sampled"][sid] += len(q["candidates"]) - 1
        elif q["kind"] == "test":
            out["test"][sid] += len(q["candidates"]) - 1
    return out


def test_the_refitter_the_dashboard_and_the_export_count_the_same_rows(tmp_path):
    cfg, db, roles = collected_database(tmp_path)
    store = Store(db)
    raw = raw_counts(db.removeprefix("sqlite:///"), roles)
    # the database holds every kind of row the rules tell apart
    assert raw["skips"][roles["skipper"]] == 2
    flagged = roles["flagged"]
    assert raw["attention"][flagged] == 0 and raw["attention_of"][flagged] == 2
    assert sum(raw["test"].values()) > 0 and all(raw["sampled"][s] > 0 for s in raw["sampled"])
    sampled, tests = sum(raw["sampled"].values()), sum(raw["test"].values())

    refit_once(store, cfg, buffer=5, **INSTANT)
    (version,) = store.embedding_versions(cfg.fingerprint)
    board = collect_dashboard(store, cfg, **INSTANT)
    exported = collect_triplets(store, fingerprint=cfg.fingerprint, **INSTANT)

    # the triplets fitted, shown and exported: those recomputed from the tables
    assert version["n_rows"] == board["arms"]["random"]["answers"] == sampled
    assert sum(t["kind"] in SAMPLED for t in exported) == sampled
    assert version["n_test"] == sum(t["kind"] == "test" for t in exported) == tests
    assert board["samplers"]["random"][0]["n_test"] == tests
    per_session = Counter(t["session"] for t in exported if t["kind"] in SAMPLED)
    assert per_session == raw["sampled"]
    # the sessions they count: the same, the withdrawn and the flagged left out
    counted = {sid for sid in raw["sampled"]}
    assert set(version["used"]) == {t["session"] for t in exported} == counted
    sessions = {s.participant: s.id for s in store.iter_sessions(withdrawn=True)}
    assert sessions[roles["flagged"]] not in counted and sessions[roles["withdrawn"]] not in counted
    # who is left out, and why: the dashboard's and the export's lines agree
    people = {p["id"]: p for p in board["participants"]}
    listed = {r["participant"]: r for r in participant_checks(store, cfg, **INSTANT)}
    assert set(people) == set(listed) == set(roles.values())
    for pid, p in people.items():
        r = listed[pid]
        assert (p["flagged"], p["withdrawn"], p["sampler"]) == (
            r["flagged"],
            r["withdrawn"],
            r["sampler"],
        )
        # the dashboard's answers: every screen answered (skips and checks too); the
        # export's: those that count, k - 1 triplets each
        assert r["answers"] < p["answers"]
        kept = not p["flagged"] and not p["withdrawn"]
        assert kept == (sessions[pid] in counted), pid
        if kept:
            mine = sum(t["session"] == sessions[pid] for t in exported)
            assert r["answers"] * (cfg.k - 1) == mine, pid
    assert [f["rule"] for f in people[roles["flagged"]]["flags"]] == ["attention"]
    assert people[roles["withdrawn"]]["withdrawn"] and not people[roles["withdrawn"]]["flagged"]
    assert people[roles["skipper"]]["skips"] == 2
