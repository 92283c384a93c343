"""The owner's preview (``/preview``, ``POST /api/preview/participants``): the admin token
enrols a preview participant who walks through the participant's pages of the running study
or collect (consent, screens, end with its code) with the participants' own routes, and
nothing of it counts: participant counts, the listing, the dashboard, the exports (whole and
per experiment), the report, the refitter's rows, the arm balance and the plan numbering are
what they are without it (compared before and after it, and with a run that had none); a
collect's preview takes no query from the samplers' buffers."""

from __future__ import annotations

import json

import pytest

from serve.helpers import ADMIN, answer_all, finding, in_process
from tripletsearch.serve import create_app, demo_catalogue
from tripletsearch.serve.collect import load_collect
from tripletsearch.serve.collect.dashboard import collect_dashboard
from tripletsearch.serve.collect.quality import counted_sessions, sampler_answers
from tripletsearch.serve.collect.screens import BUFFER_KINDS
from tripletsearch.serve.collect.training import export_data
from tripletsearch.serve.commands.export_folder import write_export
from tripletsearch.serve.config import ServeConfig
from tripletsearch.serve.experiment import describe, listing
from tripletsearch.serve.store import Store
from tripletsearch.serve.study import load_study
from tripletsearch.serve.study.report import study_report

ADMIN_H = {"Authorization": f"Bearer {ADMIN}"}
STUDY = dict(targets=2, max_queries=30, completion_code="STUDY-DONE")
COLLECT = dict(
    catalogue="colours",
    samplers=["active", "random"],
    n_choices=2,
    max_queries=8,
    burn_in=2,
    test_share=0.0,
    attention=[3],
    debrief="Thanks!",
    completion_code="COLLECT-DONE",
    redirect="https://example.org/back?cc=COLLECT-DONE",
)


def _study_app(tmp_path, study_file, name):
    s = load_study(study_file(tmp_path, **STUDY))
    url = f"sqlite:///{tmp_path / name}"
    return s, url, create_app(s.catalogue, url, study=s, config=ServeConfig(admin_token=ADMIN))


def _collect_app(tmp_path, collect_file, name):
    collect_file(tmp_path, **COLLECT)
    cfg = load_collect(tmp_path / "collect.toml")
    url = f"sqlite:///{tmp_path / name}"
    # (fast_server_ms=0: a test answers faster than people; the clock check would flag it)
    app = create_app(
        cfg.catalogue, url, collect=cfg, config=ServeConfig(admin_token=ADMIN, fast_server_ms=0)
    )
    return cfg, url, app


def post(c, path, body=None, headers=None, status=200):
    r = c.post(path, json={} if body is None else body, headers=headers)
    assert r.status_code == status, r.text
    return r.json()


def enrol(c, preview=False):
    if preview:
        p = post(c, "/api/preview/participants", headers=ADMIN_H, status=201)
        assert p["preview"] is True and p["id"].startswith("PREVIEW-")
    else:
        p = post(c, "/api/participants", {"consent": True}, status=201)
        assert p["id"].startswith("P-")
    return p["id"], {"Authorization": "Bearer " + p["token"]}


def walk(c, pid, h, catalogue, *, stop_after=None):
    """A participant through every screen to the end (the study's people find their
    targets; the collect's pick the first candidate); their last reply. ``stop_after``:
    withdraw after that many answers instead (:func:`answer_all`)."""
    find = finding(catalogue)

    def body(reply: dict) -> dict:
        if reply["mode"] == "find":
            return find(reply)
        screen = reply["screen"]
        ids = [x["id"] for x in screen["candidates"]]  # the head itself: an attention check
        pick = ids.index(screen["head"]["id"]) if screen["head"]["id"] in ids else 0
        return {"screen": screen["number"], "choice": pick, "response_ms": 2000}

    return answer_all(c, pid, h, body=body, most=stop_after, withdraw=True)


def _without_time(data):
    return {k: v for k, v in data.items() if k != "exported_at"}


def study_snapshot(store, study, tmp_path, tag):
    """What the owner reads of a study: counts, listing, exports, the report, the plans."""
    key, cat = study.fingerprint, study.catalogue
    out = tmp_path / f"export-{tag}"
    write_export(store, out, cat)
    return {
        "participants": store.participant_count(key),
        "listing": describe(listing(store)),
        "export": _without_time(export_data(store, cat)),
        "export_one": _without_time(export_data(store, cat, key)),
        "files": {p.name: p.read_text() for p in sorted(out.iterdir()) if p.suffix == ".csv"},
        # as JSON: a report's NaN (no spread of one search) equals itself there
        "report": json.dumps(study_report(store, cat, key), sort_keys=True),
        "report_all": json.dumps(study_report(store, cat, None), sort_keys=True),
        "rows": [(r.id, r.number, r.plan, r.study) for r in store.iter_participants()],
    }


def collect_snapshot(store, cfg, tmp_path, tag):
    """What the owner reads of a collect: its dashboard, exports, refitter rows, buffers."""
    key, cat = cfg.fingerprint, cfg.catalogue
    out = tmp_path / f"export-{tag}"
    write_export(store, out, cat, fast_server_ms=0)
    counted = counted_sessions(store, key, fast_server_ms=0)
    board = collect_dashboard(store, cfg, fast_server_ms=0)
    return {
        "participants": store.participant_count(key),
        "listing": describe(listing(store)),
        "export": _without_time(export_data(store, cat, fast_server_ms=0)),
        "export_one": _without_time(export_data(store, cat, key, fast_server_ms=0)),
        "files": {p.name: p.read_text() for p in sorted(out.iterdir()) if p.suffix == ".csv"},
        "dashboard": board,
        "rows": {s: sampler_answers(counted, s)[0].tolist() for s in cfg.samplers},
        "used": {s: sampler_answers(counted, s)[1] for s in cfg.samplers},
        "all_rows": [
            (s.id, len(h)) for s, h in counted_sessions(store, None, fast_server_ms=0)
        ],  # every collect of the database
        "free": {s: store.free_queries(key, s) for s in cfg.samplers},
        "arms": [(r.number, r.arm) for r in store.iter_participants()],
    }


# ------------------------------------------------------------------ the admin token
def test_the_preview_needs_the_admin_token(tmp_path, study_file):
    s, url, app = _study_app(tmp_path, study_file, "s.sqlite")
    with in_process(app) as c:
        for headers in (None, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic x"}):
            r = c.post("/api/preview/participants", json={}, headers=headers)
            assert r.status_code == 401 and r.json()["error"] == "missing or wrong admin token"
        # the page itself is the participants' page, marked a preview; it holds no token
        page = c.get("/preview")
        assert page.status_code == 200 and 'data-page="preview"' in page.text
        assert ADMIN not in page.text
        # a body that is not {} and a form post are refused (as every route's)
        r = c.post("/api/preview/participants", json={"consent": True}, headers=ADMIN_H)
        assert r.status_code == 400
        r = c.post("/api/preview/participants", data={"x": "1"}, headers=ADMIN_H)
        assert r.status_code == 415
        # a preview participant's token opens their pages only
        pid, h = enrol(c, preview=True)
        post(c, f"/api/participants/{pid}/next", headers=ADMIN_H, status=401)
        assert post(c, f"/api/participants/{pid}/next", headers=h)["done"] is False
    assert Store(url).participant_count(s.fingerprint) == 0


def test_a_server_without_an_admin_token_or_an_experiment_has_no_preview(tmp_path, study_file):
    s = load_study(study_file(tmp_path, **STUDY))
    url = f"sqlite:///{tmp_path / 'n.sqlite'}"
    with in_process(create_app(s.catalogue, url, study=s)) as c:
        r = c.post("/api/preview/participants", json={}, headers=ADMIN_H)
        assert r.status_code == 404 and "admin" in r.json()["error"]
    url = f"sqlite:///{tmp_path / 'free.sqlite'}"
    with in_process(create_app(demo_catalogue(), url, config=ServeConfig(admin_token=ADMIN))) as c:
        assert c.get("/preview").status_code == 404
        r = c.post("/api/preview/participants", json={}, headers=ADMIN_H)
        assert r.status_code == 404 and r.json()["error"] == "this server runs no experiment"


# ------------------------------------------------------------------ a study
def test_a_study_preview_walks_every_page_and_counts_nowhere(tmp_path, study_file):
    s, url, app = _study_app(tmp_path, study_file, "with.sqlite")
    _, twin_url, twin_app = _study_app(tmp_path / "twin", study_file, "without.sqlite")
    store, twin = Store(url), Store(twin_url)
    with in_process(app) as c, in_process(twin_app) as t:
        for client in (c, t):  # two real participants, the same in both runs
            for _ in range(2):
                walk(client, *enrol(client), s.catalogue)
        before = study_snapshot(store, s, tmp_path, "before")
        # the preview: consent (the page's), every screen, the end with its code
        pid, h = enrol(c, preview=True)
        info = c.get("/api/experiment").json()
        assert info["kind"] == "study" and info["consent"] == s.consent
        first = post(c, f"/api/participants/{pid}/next", headers=h)
        assert first["target"] == s.catalogue.item(s.plan(0)[0][0])  # as participant 0's
        end = walk(c, pid, h, s.catalogue)
        assert end["done"] and end["outcome"] == "finished"
        assert end["completion_code"] == "STUDY-DONE" and pid in end["debrief"]
        assert post(c, f"/api/participants/{pid}/debrief", headers=h) == end
        # a second preview, withdrawn midway
        withdrawn = walk(c, *enrol(c, preview=True), s.catalogue, stop_after=2)
        assert withdrawn["withdrawn"] is True
        after = study_snapshot(store, s, tmp_path, "after")
        assert after == before
        assert store.participant_count(s.fingerprint) == 2
        assert len(json.loads(after["report"])["searches"]) == 4  # the real ones' only
        # the next real participant is number 2, given participant 2's plan, in both runs
        nxt, twin_next = enrol(c), enrol(t)
        first, twin_first = (post(x, f"/api/participants/{p}/next", headers=hh) for x, (p, hh) in
                             ((c, nxt), (t, twin_next)))  # fmt: skip
        assert store.participant(nxt[0]).number == twin.participant(twin_next[0]).number == 2
        assert first["target"] == twin_first["target"] == s.catalogue.item(s.plan(2)[0][0])
        methods = [x.params["method"] for x in store.participant_sessions(nxt[0])]
        assert methods == [x.params["method"] for x in twin.participant_sessions(twin_next[0])]
    # what the preview did is in the database, under the preview's key only
    row = store.participant(pid)
    assert row.study == "preview:" + s.fingerprint and row.code == "STUDY-DONE"
    sessions = store.participant_sessions(pid)
    assert len(sessions) == 2 and {x.experiment for x in sessions} == {row.study}


# ------------------------------------------------------------------ a collect
def test_a_collect_preview_walks_every_page_and_takes_nothing(tmp_path, collect_file):
    cfg, url, app = _collect_app(tmp_path, collect_file, "with.sqlite")
    _, twin_url, twin_app = _collect_app(tmp_path / "twin", collect_file, "without.sqlite")
    store, twin = Store(url), Store(twin_url)
    key = cfg.fingerprint
    n = cfg.catalogue.n_items
    queries = [[h, (h + 1) % n, (h + 2) % n] for h in range(n)]
    for s in (store, twin):  # the refitter's buffers, the same in both runs
        s.setup()
        for sampler in cfg.samplers:
            s.add_queries(key, sampler, 1, queries)
    with in_process(app) as c, in_process(twin_app) as t:
        for client in (c, t):
            for _ in range(3):
                walk(client, *enrol(client), cfg.catalogue)
        before = collect_snapshot(store, cfg, tmp_path, "before")
        assert sum(before["free"].values()) < 2 * n  # the real ones took queries
        assert any(before["rows"].values())
        pid, h = enrol(c, preview=True)
        end = walk(c, pid, h, cfg.catalogue)
        assert end["done"] and end["outcome"] == "finished" and end["debrief"] == "Thanks!"
        assert end["completion_code"] == "COLLECT-DONE"
        assert end["redirect"] == "https://example.org/back?cc=COLLECT-DONE"
        walk(c, *enrol(c, preview=True), cfg.catalogue, stop_after=3)
        after = collect_snapshot(store, cfg, tmp_path, "after")
        assert after == before
        # the preview's screens: checks and fallbacks, never a buffered (adaptive) query
        (session,) = store.participant_sessions(pid)
        kinds = [h["query"]["kind"] for h in store.history(session.id)]
        assert len(kinds) == cfg.max_queries and not set(kinds) & set(BUFFER_KINDS)
        assert session.params["preview"] is True
        # the next real participant: number 3 and the arm they get without the previews
        nxt, twin_next = enrol(c), enrol(t)
        assert store.participant(nxt[0]).number == twin.participant(twin_next[0]).number == 3
        assert store.participant(nxt[0]).arm == twin.participant(twin_next[0]).arm
        assert [a for _, a in after["arms"]] == [a for _, a in collect_snapshot(
            twin, cfg, tmp_path, "twin")["arms"]][:3]  # fmt: skip


def test_the_dashboard_route_and_the_listing_leave_the_preview_out(tmp_path, collect_file):
    cfg, url, app = _collect_app(tmp_path, collect_file, "c.sqlite")
    store = Store(url)
    with in_process(app) as c:
        walk(c, *enrol(c), cfg.catalogue)
        board = c.get("/api/admin/collect", headers=ADMIN_H).json()
        walk(c, *enrol(c, preview=True), cfg.catalogue)
        assert c.get("/api/admin/collect", headers=ADMIN_H).json() == board
        assert len(board["participants"]) == 1
        whole = c.get("/api/admin/export", headers=ADMIN_H).json()
    assert [e["key"] for e in listing(store)] == [cfg.fingerprint]
    assert all(not str(s["participant"]).startswith("PREVIEW-") for s in whole["sessions"])
    assert len(whole["sessions"]) == 1
    assert store.groups().keys() == {cfg.fingerprint}


@pytest.mark.parametrize("kind", ["study", "collect"])
def test_the_preview_page_is_served_for_either_kind(tmp_path, kind, study_file, collect_file):
    make = _study_app if kind == "study" else _collect_app
    _, _, app = make(tmp_path, study_file if kind == "study" else collect_file, "p.sqlite")
    with in_process(app) as c:
        r = c.get("/preview")
        assert r.status_code == 200 and 'data-page="preview"' in r.text
        assert "script-src 'self'" in r.headers["content-security-policy"]
        assert c.get("/static/preview.js").status_code == 200
