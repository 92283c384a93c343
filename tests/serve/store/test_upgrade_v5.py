"""A version-5 database (the base's tables, :mod:`.schema_v5`) upgraded in place to version
6: every session gets the experiment it belongs to (a collect's from the ``collect:<key>``
it searched, a study's from its participant, none for a free session), and what the
refitter, the dashboard and the export read is what they read of the same rows written by
this version."""

from __future__ import annotations

import os

import pytest
import sqlalchemy as sa

from serve.collect.collected import INSTANT, collected_database
from serve.helpers import postgres_bindir, postgres_cluster
from serve.store import schema_v5
from tripletsearch.serve.collect.dashboard import collect_dashboard
from tripletsearch.serve.collect.export import participant_checks
from tripletsearch.serve.collect.quality import counted_sessions, held_out, sampler_answers
from tripletsearch.serve.collect.training import export_data
from tripletsearch.serve.experiment import listing
from tripletsearch.serve.store import SCHEMA_VERSION, Store

STUDY_KEY = "0123456789abcdef0123456789abcdef"


def with_study_and_free_sessions(store: Store, catalogue: str) -> dict[str, str]:
    """A study participant's two sessions and a free session beside the collect's; ids."""
    store.enrol(STUDY_KEY, "P-STUDY", "hash")
    ids = {}
    for slot, sid in enumerate(("study-0", "study-1")):
        store.create_session(
            sid=sid, token_hash="hash", mode="find", n_choices=4, seed="1", params={},
            catalogue=catalogue, library="0.4.0", payload={"number": 0}, query={"shown": []},
            participant="P-STUDY", slot=slot, target=slot,
        )  # fmt: skip
        ids[sid] = STUDY_KEY
    store.create_session(
        sid="free", token_hash="hash", mode="find", n_choices=4, seed="2", params={},
        catalogue=catalogue, library="0.4.0", payload={"number": 0}, query={"shown": []},
    )  # fmt: skip
    ids["free"] = None
    return ids


def as_version_5(source: str, target: str) -> None:
    """The rows of ``source`` in a new database ``target`` of version 5's tables."""
    old = sa.create_engine(target)
    schema_v5.metadata.create_all(old)
    new = sa.create_engine(source)
    with new.connect() as src, old.begin() as dst:
        for table in schema_v5.metadata.sorted_tables:
            cols = [sa.column(c.name) for c in table.columns]
            rows = [
                dict(r._mapping)
                for r in src.execute(sa.select(*cols).select_from(sa.table(table.name)))
            ]
            if table.name == "ts_meta":
                rows = [{**r, "value": "5"} if r["key"] == "schema_version" else r for r in rows]
            if rows:
                dst.execute(table.insert(), rows)
    old.dispose()
    new.dispose()


def readings(store: Store, cfg) -> dict:
    """What the refitter, the dashboard and the export read of the database."""
    counted = counted_sessions(store, cfg.fingerprint, **INSTANT)
    rows, used = sampler_answers(counted, "random")
    board = collect_dashboard(store, cfg, **INSTANT)
    board.pop("refitter")  # (this process's view of a refitter: none runs here)
    every = export_data(store, cfg.catalogue, **INSTANT)
    mine = export_data(store, cfg.catalogue, cfg.fingerprint, **INSTANT)
    study = export_data(store, cfg.catalogue, STUDY_KEY, **INSTANT)
    for data in (every, mine, study):
        data.pop("exported_at")
    return {
        "counted": [(s.id, h) for s, h in counted],
        "rows": rows.tolist(),
        "used": used,
        "held_out": held_out(counted).tolist(),
        "dashboard": board,
        "export": every,
        "export_collect": mine,
        "export_study": study,
        "checks": participant_checks(store, cfg, **INSTANT),
        "listing": listing(store),
    }


def upgraded_reads_the_same(tmp_path, url_v5: str) -> None:
    cfg, db, roles = collected_database(tmp_path)
    store = Store(db)
    expected = {
        s.id: cfg.fingerprint for s in store.iter_sessions(withdrawn=True) if s.mode == "collect"
    }
    expected.update(with_study_and_free_sessions(store, cfg.catalogue.fingerprint))
    before = readings(store, cfg)
    as_version_5(db, url_v5)
    old = Store(url_v5)
    with pytest.raises(Exception, match="schema version 5"):
        old.check()
    assert old.setup() == 5 and Store(url_v5).setup() == SCHEMA_VERSION  # once
    got = {s.id: s.experiment for s in old.iter_sessions(withdrawn=True)}
    assert got == expected and len(got) == len(roles) + 3
    assert {s.id: s.experiment for s in store.iter_sessions(withdrawn=True)} == expected
    assert readings(old, cfg) == before
    assert before["export_study"]["counts"]["sessions"] == 2 and before["used"]
    kinds = {e["key"]: e["kind"] for e in before["listing"]}
    assert kinds[cfg.fingerprint] == "collect" and kinds[STUDY_KEY] == "study"


def test_a_version_5_sqlite_database_is_upgraded_in_place_and_reads_the_same(tmp_path):
    upgraded_reads_the_same(tmp_path, f"sqlite:///{tmp_path / 'v5.sqlite'}")


@pytest.mark.once
@pytest.mark.skipif(
    postgres_bindir() is None and not os.environ.get("TRIPLETSEARCH_REQUIRE_POSTGRES"),
    reason="PostgreSQL is not installed (Debian: apt-get install postgresql)",
)
def test_a_version_5_postgresql_database_is_upgraded_in_place_and_reads_the_same(tmp_path):
    with postgres_cluster() as url:
        upgraded_reads_the_same(tmp_path, url)
