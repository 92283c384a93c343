"""The dashboards' release of a participant, ``POST /api/admin/participants/{id}/release``:
the owner's token only (as the admin export: 404 without one on the server, 401 without
or with a wrong one; a JSON body, so a form on another site cannot send it), the same
effect as ``tripletsearch participants release --participant`` (kept, marked released,
the id free), once (409 again), 404 for a participant of no such experiment."""

from __future__ import annotations

import pytest

from serve.helpers import collect_toml, in_process, write_design
from tripletsearch.serve import create_app
from tripletsearch.serve.collect import load_collect
from tripletsearch.serve.config import ServeConfig
from tripletsearch.serve.participation.release import release
from tripletsearch.serve.store import Store

LINK = {"PROLIFIC_PID": "5f1a2b3c4d5e6f7a8b9c0d1e", "STUDY_ID": "S1", "SESSION_ID": "V1"}
OWNER = {"Authorization": "Bearer owner-token"}


def app_of(tmp_path, **kw):
    text = 'platform = "prolific"\n' + collect_toml(catalogue="colours", max_queries=6)
    cfg = load_collect(write_design(tmp_path, "collect.toml", text))
    url = f"sqlite:///{tmp_path / 'c.sqlite'}"
    return create_app(cfg.catalogue, url, collect=cfg, **kw), url


@pytest.mark.parametrize("route", [True, False], ids=["dashboard", "command"])
def test_the_dashboards_release_is_the_commands(tmp_path, route):
    app, url = app_of(tmp_path, config=ServeConfig(admin_token="owner-token"))
    with in_process(app) as c:
        p = c.post("/api/participants", json={"consent": True, "platform": LINK}).json()
        h = {"Authorization": "Bearer " + p["token"]}
        assert c.post(f"/api/participants/{p['id']}/next", json={}, headers=h).status_code == 200
        before = Store(url).participant(p["id"])
        if route:
            r = c.post(f"/api/admin/participants/{p['id']}/release", json={}, headers=OWNER)
            assert r.status_code == 200 and r.json() == {"released": True, "id": p["id"]}
        else:
            release(Store(url), before.study, None, p["id"])
        after = Store(url).participant(p["id"])
        changed = {k for k in before._fields if getattr(before, k) != getattr(after, k)}
        assert changed == {"released", "platform_key"} and after.platform_key is None
        r = c.post(f"/api/participants/{p['id']}/next", json={}, headers=h)
        assert r.status_code == 409 and r.json()["released"] is True
        again = c.post("/api/participants", json={"consent": True, "platform": LINK}).json()
        assert again["id"] != p["id"] and "resumed" not in again
        r = c.post(f"/api/admin/participants/{p['id']}/release", json={}, headers=OWNER)
        assert r.status_code == 409 and "released already" in r.json()["error"]


def test_only_the_owner_releases(tmp_path):
    app, url = app_of(tmp_path, config=ServeConfig(admin_token="owner-token"))
    with in_process(app) as c:
        p = c.post("/api/participants", json={"consent": True, "platform": LINK}).json()
        path = f"/api/admin/participants/{p['id']}/release"
        for headers in (
            {},
            {"Authorization": "Bearer wrong"},
            {"Authorization": "Bearer " + p["token"]},
        ):
            assert c.post(path, json={}, headers=headers).status_code == 401
        form = {**OWNER, "Content-Type": "application/x-www-form-urlencoded"}
        assert c.post(path, content="a=1", headers=form).status_code == 415
        assert c.post(path, json={"x": 1}, headers=OWNER).status_code == 400
        assert (
            c.post("/api/admin/participants/P-NOBODY/release", json={}, headers=OWNER).status_code
            == 404
        )
        assert Store(url).participant(p["id"]).released is None
    app, _ = app_of(tmp_path / "off")
    with in_process(app) as c:
        assert c.post(path, json={}, headers=OWNER).status_code == 404
