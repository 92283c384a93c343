"""The collect rules read alike everywhere: a participant's sampler (the service, the
dashboard, the export and the arms' balance), the response-time rule, and the server's clock
check, which runs as it ships unless a reader is given ``fast_server_ms``."""

from __future__ import annotations

import json
import sqlite3
import textwrap
from collections import Counter

import numpy as np
import pytest

from serve.collect.collected import INSTANT, collected_database
from serve.helpers import catalogue_folder, collect_toml, enrol, in_process, parts_of
from tripletsearch.serve import clock, create_app
from tripletsearch.serve.collect import load_collect, quality, refitter
from tripletsearch.serve.collect.dashboard import collect_dashboard
from tripletsearch.serve.collect.export import participant_checks
from tripletsearch.serve.collect.refitter import refit_once
from tripletsearch.serve.collect.rules import FAST_AFTER, Arms, collect_arms, median_ms
from tripletsearch.serve.collect.service import CollectService
from tripletsearch.serve.config import ServeConfig
from tripletsearch.serve.store import Store
from tripletsearch.utils import derived_seed

TWO = collect_toml(samplers=["random", "active"], n_choices=3, max_queries=12, seed=4)


def drawn(samplers, seed, number):
    """The sampler 0.2 drew for enrolment ``number`` (no arm kept then): its formula."""
    rng = np.random.default_rng(derived_seed(seed, 7, number))
    return samplers[int(rng.integers(len(samplers)))]


def test_a_participants_sampler_is_one_rule_for_every_reader(tmp_path):
    """Participants enrolled before arms were kept: the sampler their session names, else
    the one drawn for their number (their session starts with it); the service, the
    dashboard, the export and the arms' balance agree."""
    catalogue_folder(tmp_path)
    (tmp_path / "collect.toml").write_text(textwrap.dedent(TWO))
    cfg = load_collect(tmp_path / "collect.toml")
    names, seed = list(cfg.samplers), cfg.seed
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    app = create_app(cfg.catalogue, db, collect=cfg, config=ServeConfig(admin_token="owner"))
    store = Store(db)
    with in_process(app) as c:
        started, h = enrol(c)
        c.post(f"/api/participants/{started['id']}/next", json={}, headers=h)
        waiting, _ = enrol(c)  # no session yet
    # as 0.2 kept them: no arm; the started one's session names the sampler not drawn
    other = next(n for n in names if n != drawn(names, seed, 0))
    with sqlite3.connect(tmp_path / "s.sqlite") as con:
        con.execute("UPDATE ts_participants SET arm = NULL")
        (params,) = con.execute("SELECT params FROM ts_sessions").fetchone()
        params = json.dumps({**json.loads(params), "sampler": other})
        con.execute("UPDATE ts_sessions SET params = ?", (params,))
    want = {started["id"]: other, waiting["id"]: drawn(names, seed, 1)}
    service = CollectService(cfg, parts_of(app).service)
    row = store.participant(waiting["id"])
    assert service.sampler_of(row) == want[waiting["id"]]
    board = collect_dashboard(store, cfg)
    assert {p["id"]: p["sampler"] for p in board["participants"]} == want
    assert {r["participant"]: r["sampler"] for r in participant_checks(store, cfg)} == want
    # the balance counts them by the same rule: the next enrolment goes to the least assigned
    counts = Counter(want.values())
    nxt = store.enrol(cfg.fingerprint, "P-NEXT", "hash", arms=collect_arms(cfg))
    assert store.participant("P-NEXT").arm == Arms(names, seed).pick(nxt, counts)


def test_the_response_time_rule_is_a_median_of_at_least_five():
    assert FAST_AFTER == 5
    assert median_ms([100.0] * 4) is None and median_ms([1.0, 2.0, 3.0, 400.0, 500.0]) == 3.0
    # the checks and the dashboard read it alike: a participant with four answers has none
    few = [
        {
            "number": i, "kind": "answer", "undone": False, "choice": 0, "response_ms": 900,
            "query": {"kind": "random", "head": 0, "candidates": [1, 2]},
            "shown_at": 0.0, "answered_at": 0.01,
        }
        for i in range(FAST_AFTER - 1)
    ]  # fmt: skip
    got = quality.checks(few)
    assert got["response_ms"] is None and got["server_ms"] is None and not got["flagged"]
    assert quality.checks(few * 2)["response_ms"] == 900.0


def test_every_reader_takes_the_servers_clock_bound_recorded_with_the_collect(tmp_path):
    """People in process answer at once. The server that collected them ran with
    ``fast_server_ms=0`` and recorded it with the collect: the dashboard, the counted
    sessions and the refitter read it there (they count); a bound given to a reader (an
    export's ``--fast-server-ms``) overrides it, and a server started again with the shipped
    bound records that one, by which every one of them is flagged."""
    cfg, db, roles = collected_database(tmp_path)
    store = Store(db)
    assert clock.fast_server_ms(store, cfg.fingerprint) == 0
    board = collect_dashboard(store, cfg)
    assert not any("server_time" in [f["rule"] for f in p["flags"]] for p in board["participants"])
    assert len(quality.counted_sessions(store, cfg.fingerprint)) == 5
    assert quality.counted_sessions(store, cfg.fingerprint, fast_server_ms=250) == []
    create_app(
        cfg.catalogue, db, collect=cfg, config=ServeConfig(admin_token="owner")
    )  # the shipped bound
    assert clock.fast_server_ms(store, cfg.fingerprint) == quality.FAST_SERVER_MS == 250
    board = collect_dashboard(store, cfg)
    assert all("server_time" in [f["rule"] for f in p["flags"]] for p in board["participants"])
    assert quality.counted_sessions(store, cfg.fingerprint) == []
    refit_once(store, cfg, buffer=5)
    assert store.embedding_versions(cfg.fingerprint) == []
    refit_once(store, cfg, buffer=5, **INSTANT)
    assert len(store.embedding_versions(cfg.fingerprint)) == 1
    assert clock.fast_server_ms(store, "no such key") == 250  # nothing recorded: the default


def test_the_refitter_takes_its_servers_clock_check_on_its_command_line():
    """``--fast-server-ms=MS`` (the supervisor hands the server's setting over so); a value
    that is not a finite number >= 0 is refused before the refitter starts."""
    for bad in ("-1", "nan", "inf"):
        with pytest.raises(ValueError, match="--fast-server-ms"):
            refitter.main(["db", "design.json", "server", f"--fast-server-ms={bad}"])
