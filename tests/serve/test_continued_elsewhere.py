"""A request with a participant's replaced token (the same link opened in another window
resumed them) is refused with ``continued_elsewhere`` in the 401 reply, which the page
turns into plain words (tests/serve/browser/test_platform_page.py); one without a token is
refused without it."""

from __future__ import annotations

import pytest

from serve.helpers import in_process
from tripletsearch.serve import create_app
from tripletsearch.serve.collect import load_collect
from tripletsearch.serve.study import load_study

LINK = {"PROLIFIC_PID": "5f1a2b3c4d5e6f7a8b9c0d1e", "STUDY_ID": "S1", "SESSION_ID": "V1"}


@pytest.mark.parametrize("kind", ["study", "collect"])
def test_a_replaced_token_is_said_as_a_part_that_continued_elsewhere(
    kind, tmp_path, study_file, collect_file
):
    write = study_file if kind == "study" else collect_file
    path = write(tmp_path, **(dict(targets=2) if kind == "study" else {}))
    path.write_text('platform = "prolific"\n' + path.read_text())
    cfg = (load_study if kind == "study" else load_collect)(path)
    kw = {"study": cfg} if kind == "study" else {"collect": cfg}
    with in_process(create_app(cfg.catalogue, f"sqlite:///{tmp_path / 'p.sqlite'}", **kw)) as c:
        first = c.post("/api/participants", json={"consent": True, "platform": LINK}).json()
        url = f"/api/participants/{first['id']}/next"
        old = {"Authorization": "Bearer " + first["token"]}
        assert c.post(url, json={}, headers=old).status_code == 200
        again = c.post("/api/participants", json={"consent": True, "platform": LINK}).json()
        assert again["id"] == first["id"]
        r = c.post(url, json={}, headers=old)
        assert r.status_code == 401 and r.json()["continued_elsewhere"] is True
        r = c.post(url, json={})
        assert r.status_code == 401 and "continued_elsewhere" not in r.json()
        new = {"Authorization": "Bearer " + again["token"]}
        assert c.post(url, json={}, headers=new).status_code == 200
