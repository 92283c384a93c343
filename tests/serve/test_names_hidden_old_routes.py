"""The deprecated routes send no item's name either when the experiment shows pictures only
(``show_names = false``): a study's ``/api/study/participants/{id}/next`` (its target and
first screen) and its search through ``/api/sessions/{id}`` (answer, undo, read: screens
and history), a collect's ``/api/collect/participants/{id}/next`` and ``.../answer``; the
page's alt text then has no name to show. With names shown they are there."""

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


def replied(r) -> dict:
    assert r.status_code in (200, 201), r.text
    assert r.headers["deprecation"] == "true"
    return r.json()


def study_replies(c) -> list[dict]:
    p = replied(c.post("/api/study/participants", json={"consent": True}))
    h = {"Authorization": "Bearer " + p["token"]}
    n = replied(c.post(f"/api/study/participants/{p['id']}/next", json={}, headers=h))
    url = f"/api/sessions/{n['session']['id']}"
    a = replied(c.post(url + "/answer", json={"screen": 0, "choice": 0}, headers=h))
    u = replied(c.post(url + "/undo", json={"screen": 1}, headers=h))
    return [n, a, u, replied(c.get(url, headers=h))]


def collect_replies(c) -> list[dict]:
    p = replied(c.post("/api/collect/participants", json={"consent": True}))
    h, base = {"Authorization": "Bearer " + p["token"]}, f"/api/collect/participants/{p['id']}"
    replies = [replied(c.post(base + "/next", json={}, headers=h))]
    for _ in range(3):
        body = {"screen": replies[-1]["query"]["screen"], "choice": 0}
        replies.append(replied(c.post(base + "/answer", json=body, headers=h)))
    return replies


@pytest.mark.parametrize("kind", ["study", "collect"])
@pytest.mark.parametrize("shown", [False, True])
def test_the_old_routes_send_no_name_with_pictures_only(
    kind, shown, tmp_path, study_file, collect_file
):
    write = study_file if kind == "study" else collect_file
    keys = dict(targets=2, max_queries=6) if kind == "study" else dict(catalogue="colours")
    cfg = (load_study if kind == "study" else load_collect)(
        write(tmp_path, **keys, show_names=shown)
    )
    kw = {"study": cfg} if kind == "study" else {"collect": cfg}
    with in_process(create_app(cfg.catalogue, f"sqlite:///{tmp_path / 'p.sqlite'}", **kw)) as c:
        replies = (study_replies if kind == "study" else collect_replies)(c)
    seen = names_in(replies)
    if shown:
        assert seen > 0
    else:
        assert seen == 0, json.dumps(replies)[:500]
