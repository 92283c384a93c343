"""One collect database with every kind of row the counting rules tell apart.

Participants answering by a hidden 1-D order (one skipping two screens, one stopped half-way,
still answering), one who never picks the head (fails both attention checks: flagged), one
who withdraws half-way; the file's test queries (held out) among their screens. Built in
process, so the people answer at once: the readers are given ``fast_server_ms=0``
(:data:`INSTANT`), as a server with that setting would be.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from serve.helpers import answer_all, enrol, in_process, write_collect
from tripletsearch.people import CollectPerson
from tripletsearch.serve import create_app
from tripletsearch.serve.collect import load_collect
from tripletsearch.serve.config import ServeConfig

COLLECT = dict(  # this collect file's keys over the shared ones
    samplers=["random"],
    test_share=0.25,
    n_choices=3,
    dim=2,
    max_queries=24,
    burn_in=4,
    attention=[2, 12],
    repeats=[8, 20],
)
INSTANT = {"fast_server_ms": 0}
ADMIN = {"Authorization": "Bearer owner"}


def nearest(q: dict) -> int:
    """The candidate nearest the head in the items' ids (the head itself when shown)."""
    return CollectPerson("person", np.arange(30.0)[:, None], gamma=None, lapse=0.0).pick(q)


def never_the_head(q: dict) -> int:
    """The first candidate that is not the head: fails every attention check."""
    return next(i for i, x in enumerate(q["candidates"]) if x["id"] != q["head"]["id"])


def answer(c: Any, pid: str, h: dict, pick: Any, screens: int, skip_at: tuple = ()) -> None:
    """Participant ``pid`` answers up to ``screens`` screens (``pick``; skips at ``skip_at``)."""

    def body(reply: dict) -> dict:
        q = reply["screen"]
        choice = None if q["number"] in skip_at else pick(q)
        return {"screen": q["number"], "choice": choice, "response_ms": 900}

    answer_all(c, pid, h, body=body, most=screens)


def collected_database(folder: Any) -> tuple[Any, str, dict[str, str]]:
    """(the collect, its SQLite URL, participant id by role) in ``folder``.

    Roles: ``honest0`` to ``honest2`` (all their screens), ``skipper`` (skips screens 5
    and 9), ``partway`` (10 screens, still answering), ``flagged`` (never the head),
    ``withdrawn`` (10 screens, then withdraws).
    """
    cfg = load_collect(write_collect(folder, **COLLECT))
    db = f"sqlite:///{folder / 's.sqlite'}"
    config = ServeConfig(admin_token="owner", **INSTANT)
    roles: dict[str, str] = {}
    with in_process(create_app(cfg.catalogue, db, collect=cfg, config=config)) as c:
        plan = [
            ("honest0", nearest, 99, ()),
            ("honest1", nearest, 99, ()),
            ("skipper", nearest, 99, (5, 9)),
            ("flagged", never_the_head, 99, ()),
            ("withdrawn", nearest, 10, ()),
            ("honest2", nearest, 99, ()),
            ("partway", nearest, 10, ()),
        ]
        for role, pick, screens, skips in plan:
            pr, h = enrol(c)
            roles[role] = pr["id"]
            answer(c, pr["id"], h, pick, screens, skips)
            if role == "withdrawn":
                url = f"/api/participants/{pr['id']}/withdraw"
                assert c.post(url, json={}, headers=h).json()["withdrawn"] is True
    return cfg, db, roles
