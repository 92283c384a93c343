"""A version-7 database (built from the tables version 7 laid out, ``schema_v7``),
where a participant's outcome "finished" was derived from their sessions: upgraded to
version 8, the outcome is stored (``finished``) for exactly those version 7 called finished
(not withdrawn, every part done: a study's targets, a collect's session), at their last
session's end; withdrawn ones stay withdrawn; and the stored outcome then decides once
(a finished participant cannot withdraw). On SQLite and on PostgreSQL."""

from __future__ import annotations

import json
import os

import pytest
import sqlalchemy as sa

from serve.helpers import postgres_bindir, postgres_cluster
from serve.store import schema_v7 as v7
from tripletsearch.serve.store import SCHEMA_VERSION, Store
from tripletsearch.serve.store.participants import outcome

STUDY, COLLECT, UNKNOWN = "s" * 32, "c" * 32, "u" * 32

#: participant: (group, withdrawn, [(slot, done, updated)], outcome after the upgrade)
PEOPLE = {
    "P-DONE": (STUDY, None, [(0, True, 110.0), (1, True, 130.0)], "finished"),
    "P-HALF": (STUDY, None, [(0, True, 120.0)], "started"),  # 1 of the 2 targets
    "P-OPEN": (STUDY, None, [(0, True, 120.0), (1, False, 125.0)], "started"),
    "P-GONE": (STUDY, 140.0, [(0, True, 120.0), (1, True, 135.0)], "withdrawn"),
    "P-NONE": (STUDY, None, [], "started"),
    "C-DONE": (COLLECT, None, [(0, True, 150.0)], "finished"),
    "C-OPEN": (COLLECT, None, [(0, False, 150.0)], "started"),
    "U-DONE": (UNKNOWN, None, [(0, True, 160.0)], "finished"),  # no experiment's row
}


def version_7(url: str) -> None:
    """A version-7 database at ``url`` holding :data:`PEOPLE`: a study of two targets, a
    collect, and a group no experiment row names."""
    engine = sa.create_engine(url)
    v7.metadata.create_all(engine)
    experiments = [
        ("study", STUDY, {"targets": [3, 7], "methods": ["gauss"]}),
        ("collect", COLLECT, {"samplers": ["random"]}),
    ]
    with engine.begin() as c:
        c.execute(v7.meta_table.insert(), [{"key": "schema_version", "value": "7"}])
        c.execute(
            v7.experiments.insert(),
            [
                dict(name=kind, kind=kind, key=key, design=json.dumps(design), settings="{}",
                     created=1.0, updated=1.0)
                for kind, key, design in experiments
            ],
        )  # fmt: skip
        number: dict[str, int] = {}
        for pid, (group, withdrawn, parts, _) in PEOPLE.items():
            number[group] = number.get(group, -1) + 1
            c.execute(
                v7.participants.insert().values(
                    id=pid, token_hash="h-" + pid, study=group, number=number[group],
                    created=100.0, withdrawn=withdrawn, code="FIN" if withdrawn else None,
                )
            )  # fmt: skip
            for slot, done, updated in parts:
                c.execute(
                    v7.sessions.insert().values(
                        id=f"{pid}-{slot}", token_hash="h-" + pid, mode="find", n_choices=4,
                        seed="1", params="{}", catalogue="cat", library="0.5", created=100.0,
                        updated=updated, screen=3, done=done, result=None, participant=pid,
                        slot=slot, target=None, experiment=group,
                    )
                )  # fmt: skip
    engine.dispose()


def upgraded_stores_the_outcome(url: str) -> None:
    version_7(url)
    store = Store(url)
    with pytest.raises(Exception, match="schema version 7"):
        store.check()
    assert store.setup() == 7 and Store(url).setup() == SCHEMA_VERSION  # once
    rows = {r.id: r for r in store.iter_participants()}
    assert {pid: outcome(r) for pid, r in rows.items()} == {
        pid: want for pid, (*_, want) in PEOPLE.items()
    }
    # finished when their last part ended; the others' stays empty
    assert {pid: r.finished for pid, r in rows.items() if r.finished is not None} == {
        "P-DONE": 130.0,
        "C-DONE": 150.0,
        "U-DONE": 160.0,
    }
    assert rows["P-GONE"].withdrawn == 140.0 and rows["P-GONE"].code == "FIN"  # kept as was
    # the stored outcome decides once: no withdraw after a finish, nor a finish after one
    assert not store.withdraw("P-DONE", 200.0, "WD")
    assert outcome(store.participant("P-DONE")) == "finished"
    assert not store.finish("P-GONE", 200.0, "FIN2")
    assert store.finish("P-OPEN", 200.0, "FIN") and not store.withdraw("P-OPEN", 201.0, "WD")
    got = store.participant("P-OPEN")
    assert (outcome(got), got.code, got.withdrawn) == ("finished", "FIN", None)
    assert store.withdraw("P-HALF", 200.0, "WD") and not store.finish("P-HALF", 201.0, "FIN")
    got = store.participant("P-HALF")
    assert (outcome(got), got.code, got.finished) == ("withdrawn", "WD", None)


def test_a_version_7_sqlite_database_stores_its_outcomes(tmp_path):
    upgraded_stores_the_outcome(f"sqlite:///{tmp_path / 'v7.sqlite'}")


@pytest.mark.once
@pytest.mark.skipif(
    postgres_bindir() is None and not os.environ.get("TRIPLETSEARCH_REQUIRE_POSTGRES"),
    reason="PostgreSQL is not installed (Debian: apt-get install postgresql)",
)
def test_a_version_7_postgresql_database_stores_its_outcomes():
    with postgres_cluster() as url:
        upgraded_stores_the_outcome(url)
