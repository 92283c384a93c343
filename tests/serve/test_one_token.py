"""A participant's token is kept on the participant only: their sessions keep no copy
(``ts_sessions.token_hash`` ``""``) and open with the participant's token alone, on the
participants' routes and on the deprecated session routes alike (the same replies and
codes as before: 200 with it, 401 "missing or wrong token for this session" without).
Replacing the participant's token (a resume, or the row alone) is the one revocation
point. (A free search keeps its own token: tests/serve/store/test_upgrade_v7_tokens.py,
tests/serve/web/test_sessions.py.)"""

from __future__ import annotations

import sqlite3

from serve.helpers import in_process
from tripletsearch.serve import create_app
from tripletsearch.serve.export.cells import cell
from tripletsearch.serve.service.tokens import new_id, token_hash
from tripletsearch.serve.study import load_study

LINK = {"PROLIFIC_PID": "5f1a2b3c4d5e6f7a8b9c0d1e", "STUDY_ID": "S1", "SESSION_ID": "V1"}


def bearer(token: str) -> dict:
    return {"Authorization": "Bearer " + token}


def test_a_participants_sessions_open_with_their_token_alone(tmp_path, study_file):
    path = study_file(tmp_path, targets=2)
    path.write_text('platform = "prolific"\n' + path.read_text())
    cfg, db = load_study(path), tmp_path / "p.sqlite"
    with in_process(create_app(cfg.catalogue, f"sqlite:///{db}", study=cfg)) as c:
        first = c.post("/api/participants", json={"consent": True, "platform": LINK}).json()
        part = f"/api/participants/{first['id']}"
        assert c.post(part + "/next", json={}, headers=bearer(first["token"])).status_code == 200
        with sqlite3.connect(db) as con:
            (sid,) = con.execute("SELECT id FROM ts_sessions").fetchone()
        session = f"/api/sessions/{sid}"
        assert c.get(session, headers=bearer(first["token"])).status_code == 200
        with sqlite3.connect(db) as con:
            kept = dict(con.execute("SELECT id, token_hash FROM ts_sessions").fetchall())
        assert kept == {sid: ""}

        # a resume (the same link in another browser): the old token opens nothing
        again = c.post("/api/participants", json={"consent": True, "platform": LINK}).json()
        assert again["id"] == first["id"] and again["token"] != first["token"]
        r = c.get(session, headers=bearer(first["token"]))
        assert r.status_code == 401
        assert r.json()["error"] == "missing or wrong token for this session"
        assert c.get(session, headers=bearer(again["token"])).status_code == 200
        answer = {"screen": 0, "choice": 0}
        r = c.post(session + "/answer", json=answer, headers=bearer(first["token"]))
        assert r.status_code == 401
        r = c.post(session + "/answer", json=answer, headers=bearer(again["token"]))
        assert r.status_code == 200

        # the participant's row is the one place: replaced there, every route refuses
        with sqlite3.connect(db) as con:
            con.execute(
                "UPDATE ts_participants SET token_hash = ? WHERE id = ?",
                (token_hash("elsewhere"), first["id"]),
            )
        for token in (again["token"], ""):
            assert c.get(session, headers=bearer(token)).status_code == 401
            assert c.post(part + "/next", json={}, headers=bearer(token)).status_code == 401
        assert c.get(session, headers=bearer("elsewhere")).status_code == 200
        assert c.post(part + "/next", json={}, headers=bearer("elsewhere")).status_code == 200


def test_session_ids_never_begin_as_a_spreadsheet_formula():
    # a URL-safe id begins with "-" or "_" one time in 32: in 3,000 ids, about 94 would
    # (none by chance: probability (31/32)^3000 < 1e-41)
    ids = [new_id() for _ in range(3000)]
    assert all(i[0].isalnum() for i in ids)
    assert all(cell(i) == i for i in ids)  # the export writes each as it is
    assert len(set(ids)) == len(ids) and {len(i) for i in ids} == {22}
