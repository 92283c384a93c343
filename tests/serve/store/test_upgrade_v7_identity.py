"""A version-7 database (built from the tables version 7 laid out, ``schema_v7``)
upgraded to version 8's visits: platform keys in their compared form (ids that look the
same now one: the first enrolled keeps the key, the later a duplicate, both rows kept),
the ids as given kept; everyone enrolled before has no visit, and their next visit's value
becomes theirs (another then refused and counted). On SQLite and on PostgreSQL."""

from __future__ import annotations

import os
import time

import pytest
import sqlalchemy as sa

from serve.helpers import postgres_bindir, postgres_cluster
from serve.store import schema_v7 as v7
from tripletsearch.serve.participation.roster import is_duplicate
from tripletsearch.serve.store import SCHEMA_VERSION, SecondVisit, Store

GROUP, OTHER = "a" * 32, "b" * 32
HEX = "5f1a2b3c4d5e6f7a8b9c0d1e"
WIDE = "\uff21\uff22\uff23\uff11\uff12\uff13"  # ABC123 in full-width letters and digits


def version_7(url: str) -> None:
    """A version-7 database at ``url`` whose keys were kept as given."""
    engine = sa.create_engine(url)
    v7.metadata.create_all(engine)
    now = time.time()

    def row(pid, study, number, key):
        return dict(
            id=pid, token_hash="h-" + pid, study=study, number=number, created=now + number,
            plan=1, withdrawn=None, platform_id=key, arm=None, platform_params=None,
            platform_key=key, code=None,
        )  # fmt: skip

    with engine.begin() as c:
        c.execute(v7.meta_table.insert(), [{"key": "schema_version", "value": "7"}])
        c.execute(
            v7.participants.insert(),
            [
                row("P-WIDE", GROUP, 0, WIDE),
                row("P-NARROW", GROUP, 1, "ABC123"),  # the same id, as it looks
                row("P-FILLER", GROUP, 2, "xyz\u2800"),
                row("P-MARK", GROUP, 3, "xyz\u0301"),  # xyz once more (after P-FILLER)
                row("P-HEX", GROUP, 4, HEX),
                row("P-NONE", GROUP, 5, None),
                row("P-ELSEWHERE", OTHER, 0, "ABC123"),
            ],
        )
    engine.dispose()


def upgraded(url: str) -> None:
    version_7(url)
    store = Store(url)
    with pytest.raises(Exception, match="schema version 7"):
        store.check()
    assert store.setup() == 7 and Store(url).setup() == SCHEMA_VERSION  # once
    rows = {r.id: r for r in store.iter_participants()}
    assert {k: (r.platform_id, r.platform_key) for k, r in rows.items()} == {
        "P-WIDE": (WIDE, "ABC123"),
        "P-NARROW": ("ABC123", None),  # kept, a duplicate
        "P-FILLER": ("xyz\u2800", "xyz"),
        "P-MARK": ("xyz\u0301", None),
        "P-HEX": (HEX, HEX),
        "P-NONE": (None, None),
        "P-ELSEWHERE": ("ABC123", "ABC123"),  # another experiment: its own
    }
    assert [k for k, r in rows.items() if is_duplicate(r)] == ["P-NARROW", "P-MARK"]
    assert {(r.visit, r.released, r.refused) for r in rows.values()} == {(None, None, 0)}
    # an id enrolled before: its next visit's value becomes theirs; another is refused
    assert store.enrol_as(GROUP, "P-NEW", "h1", platform_id="ABC123", visit="V1") == (
        "P-WIDE", 0, True,
    )  # fmt: skip
    with pytest.raises(SecondVisit):
        store.enrol_as(GROUP, "P-NEW", "h2", platform_id="ABC123", visit="V2")
    wide = store.participant("P-WIDE")
    assert (wide.visit, wide.token_hash, wide.refused) == ("V1", "h1", 1)
    assert store.refused_count(GROUP) == 1 and store.refused_count(OTHER) == 0
    assert store.participant("P-NEW") is None
    # a new id: a new participant, numbered after the others
    assert store.enrol_as(GROUP, "P-NEW", "h3", platform_id="NEW", visit="V") == (
        "P-NEW", 6, False,
    )  # fmt: skip


def test_a_version_7_sqlite_database_gets_visits_and_compared_keys(tmp_path):
    upgraded(f"sqlite:///{tmp_path / 'v7.sqlite'}")


@pytest.mark.once
@pytest.mark.skipif(
    postgres_bindir() is None and not os.environ.get("TRIPLETSEARCH_REQUIRE_POSTGRES"),
    reason="PostgreSQL is not installed (Debian: apt-get install postgresql)",
)
def test_a_version_7_postgresql_database_gets_visits_and_compared_keys():
    with postgres_cluster() as url:
        upgraded(url)
