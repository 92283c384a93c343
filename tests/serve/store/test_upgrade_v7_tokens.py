"""A version-7 database (built from the tables version 7 laid out, ``schema_v7``), where
each participant's session held a copy of their token hash: upgraded to version 8, a
participant's sessions keep none (``""``) and open with their participant's token alone
(a stale copy that differed opens nothing), free sessions and sessions whose participant
has no row keep their own; a new token given to the participant (a resume) is then the
only one their sessions open with. On SQLite and on PostgreSQL."""

from __future__ import annotations

import os

import pytest
import sqlalchemy as sa

from serve.helpers import postgres_bindir, postgres_cluster
from serve.store import schema_v7 as v7
from tripletsearch.serve.service.tokens import token_hash
from tripletsearch.serve.store import SCHEMA_VERSION, Store

GROUP = "s" * 32
#: session: (participant, its token hash as version 7 stored it)
SESSIONS = {
    "A-0": ("P-A", "h-A"),  # the participant's copy
    "A-1": ("P-A", "h-stale"),  # a copy that differed (a resume racing its start)
    "B-0": ("P-B", "h-B"),
    "G-0": ("P-GHOST", "h-ghost"),  # a participant without a row
    "FREE": (None, "h-free"),  # a free search
}


def version_7(url: str) -> None:
    """A version-7 database at ``url`` holding :data:`SESSIONS` and participants A, B."""
    engine = sa.create_engine(url)
    v7.metadata.create_all(engine)
    with engine.begin() as c:
        c.execute(v7.meta_table.insert(), [{"key": "schema_version", "value": "7"}])
        for number, (pid, key) in enumerate((("P-A", "pa"), ("P-B", None))):
            c.execute(
                v7.participants.insert().values(
                    id=pid, token_hash="h-" + pid[2:], study=GROUP, number=number,
                    created=100.0, platform_id=key, platform_key=key,
                )
            )  # fmt: skip
        for slot, (sid, (pid, hashed)) in enumerate(SESSIONS.items()):
            c.execute(
                v7.sessions.insert().values(
                    id=sid, token_hash=hashed, mode="find", n_choices=4, seed="1",
                    params="{}", catalogue="cat", library="0.5", created=100.0 + slot,
                    updated=100.0, screen=0, done=False, result=None, participant=pid,
                    slot=None if pid is None else slot, target=None,
                    experiment=None if pid is None else GROUP,
                )
            )  # fmt: skip
    engine.dispose()


def upgraded_keeps_one_token(url: str) -> None:
    version_7(url)
    store = Store(url)
    assert store.setup() == 7 and Store(url).setup() == SCHEMA_VERSION
    engine = sa.create_engine(url)
    with engine.connect() as c:
        kept = dict(c.exec_driver_sql("SELECT id, token_hash FROM ts_sessions").all())
    engine.dispose()
    assert kept == {"A-0": "", "A-1": "", "B-0": "", "G-0": "h-ghost", "FREE": "h-free"}
    read = {sid: store.session(sid).token_hash for sid in SESSIONS}
    assert read == {"A-0": "h-A", "A-1": "h-A", "B-0": "h-B", "G-0": "h-ghost", "FREE": "h-free"}
    assert [s.token_hash for s in store.participant_sessions("P-A")] == ["h-A", "h-A"]
    assert {s.id: s.token_hash for s in store.iter_sessions()} == read
    # a resume (the same id and a first kept visit) gives P-A a new token: the one place
    pid, _, resumed = store.enrol_as(GROUP, "P-NEW", token_hash("new"), 1, "pa", visit="V1")
    assert (pid, resumed) == ("P-A", True)
    assert {store.session(sid).token_hash for sid in ("A-0", "A-1")} == {token_hash("new")}
    assert store.session("B-0").token_hash == "h-B"  # nobody else's changed


def test_a_version_7_sqlite_database_keeps_one_token_per_participant(tmp_path):
    upgraded_keeps_one_token(f"sqlite:///{tmp_path / 'v7.sqlite'}")


@pytest.mark.once
@pytest.mark.skipif(
    postgres_bindir() is None and not os.environ.get("TRIPLETSEARCH_REQUIRE_POSTGRES"),
    reason="PostgreSQL is not installed (Debian: apt-get install postgresql)",
)
def test_a_version_7_postgresql_database_keeps_one_token_per_participant():
    with postgres_cluster() as url:
        upgraded_keeps_one_token(url)
