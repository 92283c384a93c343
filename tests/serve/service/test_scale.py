"""A catalogue of a million items: no reply and no page load grows with the catalogue
(compared with the same requests on a thousand items). Marked once: it loads 1e6 x 10."""

from __future__ import annotations

import numpy as np
import pytest

from serve.helpers import auth, in_process
from tripletsearch.serve import create_app, load_catalogue
from tripletsearch.serve.config import ServeConfig

pytestmark = pytest.mark.once


def make_catalogue(root, n, dim=10, seed=0):
    root.mkdir()
    rng = np.random.default_rng(seed)
    np.save(root / "embedding.npy", rng.normal(size=(n, dim)).astype(np.float32))
    names = "\n".join(f"item {i:07d}" for i in range(n))
    (root / "items.csv").write_text("name\n" + names + "\n")
    return load_catalogue(root)


def replies(cat, db):
    """The bytes of each reply a page load and a first answer get."""
    out = {}
    with in_process(create_app(cat, db, config=ServeConfig(random_state=0))) as c:
        for path in ("/", "/static/main.js", "/api/catalogue?limit=0", "/api/catalogue"):
            r = c.get(path)
            assert r.status_code == 200, (path, r.text[:200])
            out[path] = len(r.content)
        r = c.post("/api/sessions", json={"n_choices": 4})
        assert r.status_code == 201
        s = r.json()
        out["POST /api/sessions"] = len(r.content)
        r = c.post(
            f"/api/sessions/{s['id']}/answer",
            json={"screen": 0, "choice": 1},
            headers=auth(s["token"]),
        )
        assert r.status_code == 200
        out["POST answer"] = len(r.content)
        out["GET session"] = len(
            c.get(f"/api/sessions/{s['id']}", headers=auth(s["token"])).content
        )
    return out


def test_no_reply_grows_with_the_catalogue(tmp_path):
    small = replies(make_catalogue(tmp_path / "small", 1_000), f"sqlite:///{tmp_path / 'a.db'}")
    big = replies(make_catalogue(tmp_path / "big", 1_000_000), f"sqlite:///{tmp_path / 'b.db'}")
    for what, n in small.items():
        # the same but for a few digits (n_items, ids, names of 7 digits either way)
        assert big[what] <= n + 64, (what, n, big[what])
    assert big["/api/catalogue"] < 120_000  # one page of 100 items, not the catalogue
