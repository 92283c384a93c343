"""A version-6 database (built from the tables version 6 laid out, ``schema_v6``) holding
two participants of one platform id in one experiment, as nothing stopped then: upgraded
to version 7, both rows are kept, the first enrolled keeps the id as its ``platform_key``
and the later one has none (a duplicate); a new enrolment of that id resumes the first.
On SQLite and on PostgreSQL."""

from __future__ import annotations

import os
import time

import pytest
import sqlalchemy as sa

from serve.helpers import postgres_bindir, postgres_cluster
from serve.store import schema_v6
from tripletsearch.serve.store import SCHEMA_VERSION, Store

GROUP, OTHER = "a" * 32, "b" * 32


def version_6_with_duplicates(url: str) -> None:
    """A version-6 database at ``url``: group GROUP has DUP twice (numbers 0 and 2), ONE
    once and one participant without an id; group OTHER has DUP once."""
    engine = sa.create_engine(url)
    schema_v6.metadata.create_all(engine)
    now = time.time()

    def row(pid, study, number, platform_id):
        return dict(
            id=pid, token_hash="h-" + pid, study=study, number=number, created=now + number,
            plan=1, withdrawn=None, platform_id=platform_id, arm=None,
        )  # fmt: skip

    with engine.begin() as c:
        c.execute(schema_v6.meta_table.insert(), [{"key": "schema_version", "value": "6"}])
        c.execute(
            schema_v6.participants.insert(),
            [
                row("P-FIRST", GROUP, 0, "DUP"),
                row("P-ONE", GROUP, 1, "ONE"),
                row("P-LATER", GROUP, 2, "DUP"),
                row("P-NONE", GROUP, 3, None),
                row("P-ELSEWHERE", OTHER, 0, "DUP"),
            ],
        )
    engine.dispose()


def upgraded_keeps_duplicates(url: str) -> None:
    version_6_with_duplicates(url)
    store = Store(url)
    with pytest.raises(Exception, match="schema version 6"):
        store.check()
    assert store.setup() == 6 and Store(url).setup() == SCHEMA_VERSION  # once
    keys = {r.id: (r.platform_id, r.platform_key) for r in store.iter_participants()}
    assert keys == {
        "P-FIRST": ("DUP", "DUP"),
        "P-ONE": ("ONE", "ONE"),
        "P-LATER": ("DUP", None),  # kept, a duplicate
        "P-NONE": (None, None),
        "P-ELSEWHERE": ("DUP", "DUP"),  # another experiment: its own
    }
    # the id again: the first of the two, resumed with the new token; nobody new
    found = store.enrol_as(GROUP, "P-NEW", "h-new", platform_id="DUP", visit="V1")
    assert found == ("P-FIRST", 0, True)
    assert store.participant("P-FIRST").token_hash == "h-new"
    assert store.participant("P-LATER").token_hash == "h-P-LATER"
    assert store.participant("P-NEW") is None
    # a new id: a new participant, numbered after the others
    assert store.enrol_as(GROUP, "P-NEW", "h2", platform_id="NEW") == ("P-NEW", 4, False)
    assert store.participant("P-NEW").platform_key == "NEW"


def test_a_version_6_sqlite_database_keeps_its_duplicate_platform_ids(tmp_path):
    upgraded_keeps_duplicates(f"sqlite:///{tmp_path / 'v6.sqlite'}")


@pytest.mark.once
@pytest.mark.skipif(
    postgres_bindir() is None and not os.environ.get("TRIPLETSEARCH_REQUIRE_POSTGRES"),
    reason="PostgreSQL is not installed (Debian: apt-get install postgresql)",
)
def test_a_version_6_postgresql_database_keeps_its_duplicate_platform_ids():
    with postgres_cluster() as url:
        upgraded_keeps_duplicates(url)
