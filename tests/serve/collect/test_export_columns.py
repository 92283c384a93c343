"""Every column of a collect's export says what it holds (issue 49, item 8). A collected
answer's ``kind`` says which sampler chose its query and how (issue 49,
item 8): ``burn-in`` (the participant's first random queries), ``random`` (the random
sampler's, or another sampler's before its own burn-in's end and first fit), the method's
own (``active``, ``arr``), ``test`` or ``fallback`` (the buffer empty); never
``adaptive`` (before: any buffered query, random or not). ``answers`` in
``collect_participants.csv`` counts the answers that count (picks on the samplers' and test
queries), its median times rounded to the digits their clocks carry."""

from __future__ import annotations

import csv
from collections import Counter

from serve.helpers import answer_all, catalogue_folder, enrol, in_process
from tripletsearch.cli import main
from tripletsearch.serve import create_app
from tripletsearch.serve.collect import load_collect
from tripletsearch.serve.collect.refitter import refit_once
from tripletsearch.serve.export import TABLES, data_path
from tripletsearch.serve.store import Store

KINDS = {"burn-in", "random", "active", "arr", "test", "fallback"}


def nearest_or_skip(reply: dict) -> dict:
    """The candidate nearest the head (a 1-d order), a skip on a few screens, at 900 ms."""
    q = reply["screen"]
    near = [abs(x["id"] - q["head"]["id"]) for x in q["candidates"]]
    choice = None if q["number"] % 9 == 8 else near.index(min(near))  # a few skips
    return {"screen": q["number"], "choice": choice, "response_ms": 900}


def test_each_query_is_said_by_the_sampler_that_chose_it(tmp_path, collect_file):
    catalogue_folder(tmp_path, n=8)
    keys = dict(samplers=["random", "active"], dim=1, max_queries=30, burn_in=2, seed=3)
    keys["attention"] = [4]
    path = collect_file(tmp_path, **keys, test_share=0.1, title=None)
    cfg = load_collect(path)
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    store = Store(db)
    store.setup()
    refit_once(store, cfg, buffer=12, fast_server_ms=0)
    kinds: dict[str, Counter] = {"random": Counter(), "active": Counter()}
    with in_process(create_app(cfg.catalogue, db, collect=cfg, setup=False)) as c:
        for _ in range(8):  # people who pick the candidate nearest the head (1-d order)
            pr, h = enrol(c)
            answer_all(c, pr["id"], h, body=nearest_or_skip)
            refit_once(store, cfg, buffer=12, fast_server_ms=0)
            (s,) = store.participant_sessions(pr["id"])
            kinds[s.params["sampler"]].update(x["query"]["kind"] for x in store.history(s.id))
    kinds = {k: Counter({x: n for x, n in v.items() if x != "attention"}) for k, v in kinds.items()}
    assert set(kinds["random"]) <= KINDS - {"active", "arr"}, kinds
    assert kinds["random"]["random"] > 0
    # the active sampler's own burn-in is random; then its own queries
    assert kinds["active"]["random"] > 0 and kinds["active"]["active"] > 0, kinds
    assert set(kinds["active"]) <= KINDS - {"arr"}
    # the export says so, and its description names only these values
    out = tmp_path / "export"
    argv = ["export", "--database", db, "--out", str(out), "--fast-server-ms=0"]
    argv += ["--collect", str(path)]
    assert main(argv) == 0
    with open(out / data_path("collect_triplets_info.csv"), newline="") as fh:
        rows = list(csv.DictReader(fh))
    said = {(r["sampler"], r["kind"]) for r in rows}
    assert {k for _, k in said} <= KINDS and ("active", "active") in said
    assert ("random", "active") not in said and ("random", "random") in said
    text = TABLES["collect_triplets_info.csv"].column("kind").description
    assert all(k in text for k in KINDS)  # (and adaptive: old collects only)
    # answers: the picks that give triplets (not the attention check's, not skips)
    with open(out / data_path("collect_participants.csv"), newline="") as fh:
        people = list(csv.DictReader(fh))
    for p in people:
        (s,) = store.participant_sessions(p["participant"])
        history = store.history(s.id)
        picks = [x for x in history if x["choice"] is not None and x["query"]["kind"] in KINDS]
        assert int(p["answers"]) == len(picks) < len(history)
        for column, digits in (("server_ms_median", 3), ("response_ms_median", 1)):
            assert p[column] == "" or len(p[column].partition(".")[2]) <= digits, p[column]
