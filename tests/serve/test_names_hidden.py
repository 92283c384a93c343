"""An experiment that shows pictures only (``show_names = false``) sends no item's name to
the browser: not in a screen, a target or an answer's reply, not in ``/api/catalogue``
(whose name search it refuses); with names shown they are there (issue 49, item 9)."""

from __future__ import annotations

import json

import pytest

from serve.helpers import in_process
from tripletsearch.serve import create_app
from tripletsearch.serve.collect import load_collect
from tripletsearch.serve.study import load_study


def names_in(value) -> int:
    """How many item records of a reply carry a name."""
    if isinstance(value, list):
        return sum(names_in(v) for v in value)
    if not isinstance(value, dict):
        return 0
    here = "id" in value and "name" in value and ("hex" in value or "image" in value)
    return here + sum(names_in(v) for v in value.values())


@pytest.mark.parametrize("kind", ["study", "collect"])
@pytest.mark.parametrize("shown", [False, True])
def test_pictures_only_sends_no_name(kind, shown, tmp_path, study_file, collect_file):
    write = study_file if kind == "study" else collect_file
    keys = dict(targets=2, max_queries=6) if kind == "study" else dict(catalogue="colours")
    cfg = (load_study if kind == "study" else load_collect)(
        write(tmp_path, **keys, show_names=shown)
    )
    kw = {"study": cfg} if kind == "study" else {"collect": cfg}
    replies = []
    with in_process(create_app(cfg.catalogue, f"sqlite:///{tmp_path / 'p.sqlite'}", **kw)) as c:
        p = c.post("/api/participants", json={"consent": True}).json()
        h, url = {"Authorization": "Bearer " + p["token"]}, f"/api/participants/{p['id']}"
        reply = c.post(f"{url}/next", json={}, headers=h).json()
        replies.append(reply)
        for _ in range(4):
            body = {"screen": reply["screen"]["number"], "choice": 0, "slot": reply.get("slot")}
            reply = c.post(f"{url}/answer", json=body, headers=h).json()
            replies.append(reply)
            if reply.get("done"):
                break
        replies.append(c.get("/api/catalogue?limit=50").json())
        refused = c.get("/api/catalogue?limit=5&q=re")
    seen = names_in(replies)
    if shown:
        assert seen > 0 and refused.status_code == 200
    else:
        assert seen == 0, json.dumps(replies)[:500]
        assert refused.status_code == 400 and "q:" in refused.json()["error"]
