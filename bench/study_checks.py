"""Simulated studies for a study's checks on people: how often they flag an honest person,
and how often they catch a script (DESIGN.md, "a check on people has two error rates").

A study of 6 targets and 2 methods (gamma-ckl, gauss) on the demo's colours (people
perceive the catalogue's CIELAB embedding), ``max_queries = 40`` and attention screens 3
and 9 of each search, is served in process (the app through Starlette's TestClient, a
SQLite file, a simulated clock for the server's time per screen, as ``collect_checks.py``
does) to honest people (gamma-CKL with lapses) and five scripts
(:class:`tripletsearch.people.StudyPerson`), all at a human pace (about 2 s a screen by the
simulated clock) but ``fast``: ``random`` picks at random; ``first`` always picks the
first item; ``reader`` picks at random but says "this is it" whenever the target is shown
(attention screens answered right); ``fake`` answers as a person of a fixed fake geometry;
``fast`` picks at random at 100 ms. Everything goes through the HTTP API
(``/api/participants``); at the end the owner's table (``GET /api/admin/study``) gives
each participant's flags, and the report (:func:`~tripletsearch.serve.study.report.study_report`)
its flagged part. The reply time of the answers whose reply is an attention screen is
measured beside the others' (the checks' screens must not be told apart by their timing).

``python bench/study_checks.py`` prints the table; ``bench/test_bench_study_checks.py``
runs it under pytest; ``tests/serve/study/test_check_rates.py`` asserts the bounds on a
smaller count.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
import time
import types
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from tripletsearch.people import StudyPerson
from tripletsearch.serve import create_app
from tripletsearch.serve.config import ServeConfig
from tripletsearch.serve.store import Store
from tripletsearch.serve.store import sessions as _sessions
from tripletsearch.serve.study import load_study
from tripletsearch.serve.study.report import study_report

SCRIPTS = ("random", "first", "reader", "fake", "fast")
HONEST = {
    "gamma 3, lapse 0.05": {"gamma": 3.0, "lapse": 0.05},
    "gamma 1.5, lapse 0.1": {"gamma": 1.5, "lapse": 0.1},
}
STUDY = """\
title = "Find the colour"
catalogue = "colours"
methods = ["gamma-ckl", "gauss"]
targets = {targets}
n_choices = 4
seed = {seed}
max_queries = {max_queries}
attention = {attention}
"""


class _Clock:
    """The simulated time the store reads (the server's time per screen)."""

    def __init__(self) -> None:
        self.now = 1e9

    def time(self) -> float:
        return self.now


@contextlib.contextmanager
def _simulated_time(clock: _Clock) -> Any:
    real = _sessions.time
    _sessions.time = types.SimpleNamespace(time=clock.time)  # type: ignore[assignment]
    try:
        yield
    finally:
        _sessions.time = real


def _take_part(c: Any, person_of: Any, clock: _Clock, attention: tuple, timing: dict) -> str:
    """One participant through the API, every search to its end; their id."""
    pr = c.post("/api/participants", json={"consent": True}).json()
    h, base = {"Authorization": "Bearer " + pr["token"]}, f"/api/participants/{pr['id']}"
    reply = c.post(f"{base}/next", json={}, headers=h).json()
    person, slot = None, None
    while not reply["done"]:
        if reply["slot"] != slot:
            slot, person = reply["slot"], person_of(int(reply["target"]["id"]))
        body = person.answer(reply["screen"])
        clock.now += person.seconds_
        t0 = time.perf_counter()
        body.pop("response_ms")  # (a study records none)
        got = c.post(f"{base}/answer", json={**body, "slot": slot}, headers=h)
        took = 1e3 * (time.perf_counter() - t0)
        assert got.status_code == 200, got.text
        reply = got.json()
        nxt = reply.get("screen")
        if not reply["done"] and nxt is not None and reply["slot"] == slot:
            kind = "attention" if nxt["number"] + 1 in attention else "other"
            timing.setdefault(kind, []).append(took)
    return str(pr["id"])


def run_study(
    honest: dict,
    n_honest: int,
    n_scripts: int,
    seed: int,
    root: Path,
    *,
    targets: int = 6,
    max_queries: int = 40,
    attention: tuple[int, ...] = (3, 9),
) -> dict[str, Any]:
    """One simulated study: per participant kind, flagged, rules; the report's flagged part.

    ``honest``: the honest people's ``gamma`` and ``lapse``; ``n_scripts`` of each script.
    """
    rng = np.random.default_rng([seed, 11])
    text = STUDY.format(
        targets=targets, seed=seed, max_queries=max_queries, attention=list(attention)
    )
    (root / "study.toml").write_text(text)
    study = load_study(root / "study.toml")
    X = study.catalogue.embedding
    db = f"sqlite:///{root / 's.sqlite'}"
    kinds = ["person"] * n_honest + [k for k in SCRIPTS for _ in range(n_scripts)]
    kinds = [kinds[int(i)] for i in rng.permutation(len(kinds))]
    clock, who, timing = _Clock(), {}, {}
    app = create_app(study.catalogue, db, study=study, config=ServeConfig(admin_token="owner"))
    with _simulated_time(clock), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

        with TestClient(app) as c:
            for kind in kinds:
                draws = np.random.default_rng(rng.integers(2**63))
                extra = honest if kind == "person" else {}

                def person_of(t: int, kind: str = kind, draws: Any = draws, extra: dict = extra):
                    return StudyPerson(kind, X, t, rng=draws, **extra)

                who[_take_part(c, person_of, clock, attention, timing)] = kind
            owner = {"Authorization": "Bearer owner"}
            table = c.get("/api/admin/study", headers=owner).json()["participants"]
    store = Store(db)
    rep = study_report(store, None, study.fingerprint)
    store.dispose()
    people = [
        {"id": p["participant"], "kind": who[p["participant"]], "flagged": p["flagged"],
         "rules": p["flagged_by"].split(), "outcome": p["outcome"]}
        for p in table
    ]  # fmt: skip
    return {"people": people, "report": rep, "timing": timing}


def simulate(seeds: int = 3, n_honest: int = 40, n_scripts: int = 8) -> dict[str, Any]:
    """Every study: per honest kind and seed. The people, the reply times, the reports."""
    people: list[dict] = []
    timing: dict[str, list[float]] = {}
    flagged_parts = []
    t0 = time.time()
    for label, honest in HONEST.items():
        for seed in range(seeds):
            with tempfile.TemporaryDirectory() as tmp:
                got = run_study(honest, n_honest, n_scripts, seed, Path(tmp))
            for rec in got["people"]:
                kind = label if rec["kind"] == "person" else rec["kind"]
                people.append({**rec, "kind": kind})
            for k, v in got["timing"].items():
                timing.setdefault(k, []).extend(v)
            flagged_parts.append(got["report"]["flagged"])
            print(f"{label}, seed {seed}: {time.time() - t0:.0f} s", file=sys.stderr)
    return {
        "people": people,
        "timing": timing,
        "flagged": flagged_parts,
        "seconds": round(time.time() - t0, 1),
    }


def table(people: list[dict]) -> list[dict]:
    """Flag rates per kind of person, with counts and the rules that flagged them."""
    rows = []
    for kind in [*HONEST, *SCRIPTS]:
        mine = [p for p in people if p["kind"] == kind]
        if not mine:
            continue
        flagged = sum(p["flagged"] for p in mine)
        rows.append(
            {
                "people": kind,
                "flagged": f"{flagged}/{len(mine)}",
                "rate": round(flagged / len(mine), 3),
                "rules": dict(Counter(r for p in mine for r in p["rules"])),
                "finished": sum(p["outcome"] == "finished" for p in mine),
            }
        )
    return rows


def reply_times(timing: dict[str, list[float]]) -> dict[str, Any]:
    """The median reply time (ms) of the answers whose reply is an attention screen, and
    of the others', with their counts."""
    return {k: {"median_ms": round(float(np.median(v)), 2), "n": len(v)} for k, v in timing.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--honest", type=int, default=40)
    ap.add_argument("--scripts", type=int, default=8)
    args = ap.parse_args()
    res = simulate(args.seeds, args.honest, args.scripts)
    for row in table(res["people"]):
        print(json.dumps(row))
    print(json.dumps(reply_times(res["timing"])))
    print(f"{res['seconds']} s")


if __name__ == "__main__":
    main()
