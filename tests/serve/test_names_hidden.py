"""An experiment that shows pictures only (``show_names = false``) sends no item's name to
the browser: not in a screen, a target or an answer's reply, not in ``/api/catalogue``
(whose name search it refuses); with names shown they are there (issue 49, item 9)."""

from __future__ import annotations

import json

import pytest

from serve.helpers import in_process, take_part
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


def first_with_slot(reply: dict) -> dict:
    """An answer's body: the first candidate, with the reply's slot (None in a collect)."""
    return {"screen": reply["screen"]["number"], "choice": 0, "slot": reply.get("slot")}


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
        seen: list = []
        end = take_part(c, body=first_with_slot, seen=seen, most=4)[2]
        replies += [reply for reply, _, _ in seen] + [end]
        replies.append(c.get("/api/catalogue?limit=50").json())
        refused = c.get("/api/catalogue?limit=5&q=re")
    seen = names_in(replies)
    if shown:
        assert seen > 0 and refused.status_code == 200
    else:
        assert seen == 0, json.dumps(replies)[:500]
        assert refused.status_code == 400 and "q:" in refused.json()["error"]
