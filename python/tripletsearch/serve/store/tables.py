"""The sessions database's tables (SQLAlchemy Core) and the migrations between versions.

Schema version :data:`SCHEMA_VERSION`, kept in ``ts_meta``:

``ts_sessions``
    one row per search: id, the hash of its token, mode, screen size (``n_choices``), seed
    and parameters, what it searches (the catalogue's fingerprint), the library version
    that started it, the current screen's number (``screen``), the answers that count
    (``n_queries``), undos, ``done`` and the result; a study session's participant, slot
    and target; the experiment it belongs to (``experiment``: the key of its participant's
    study or collect, null for a free session).
``ts_screens``
    every screen as shown (its public JSON and the query behind it), keyed by
    (session, number).
``ts_answers``
    every answer and undo with the reply it got, keyed by (session, screen): the unique key
    that makes a repeated submission, or two workers racing on one screen, record once.
``ts_participants``
    study (and collect) participants, pseudonymous, numbered within their group.
``ts_collect_queries``
    the collect mode's buffer of queries: those a sampler proposed (``taken_by`` null)
    and those shown (the session that took it).
``ts_collect_embeddings``
    the collect mode's embedding versions: per sampler, each embedding the refitter fitted,
    with the answers it used (per session, the last screen included: the sampler's rule
    picks the same answers again), their number and its held-out accuracy.
``ts_experiments``
    the experiments (studies, collects) by name: their kind, the key their rows are kept
    under (participants' ``study``, sessions' ``experiment``, a collect's queries and
    embedding versions), the design they began with (the keys of its file
    that cannot change once people took part) and their other settings.

Versions: 1 (0.1.0); 2 added undo and studies; 3 renamed ``ts_sessions``' columns to the
library's vocabulary (``k`` -> ``n_choices``, ``queries`` -> ``screen``, ``n_answers`` ->
``n_queries``); 4 added the participants' ``plan`` (the version of the study's target
orders they were enrolled under: 1, a seeded shuffle, for those enrolled before),
``withdrawn`` (when they stopped taking part) and ``platform_id`` (a crowdsourcing
platform's id for them, when given), the answers' ``response_ms`` (measured by the page)
and the collect mode's ``ts_collect_queries`` and ``ts_collect_embeddings``; 5 added
``ts_experiments`` (an experiment's rows found by its name, whatever its file's edits) and the
participants' ``arm`` (a collect's sampler, assigned at enrolment); 6 added the sessions'
``experiment`` (the experiment a session belongs to, a column: filled from the
``collect:<key>`` a collect's session searched and from a study session's participant); 7
added the participants' ``platform_params`` (their platform link's parameters),
``platform_key`` (their platform id, unique within their group: one participation per id)
and ``code`` (the completion code they were shown).
Replies
stored by version 2 keep their old keys (the service adds the new ones when it returns
them).
"""

from __future__ import annotations

from typing import Callable

import sqlalchemy as sa
from sqlalchemy.engine import Connection

__all__ = [
    "SCHEMA_VERSION",
    "MIGRATIONS",
    "metadata",
    "meta_table",
    "sessions",
    "screens",
    "collect_queries",
    "collect_embeddings",
    "experiments",
]

SCHEMA_VERSION = 7

metadata = sa.MetaData()
meta_table = sa.Table(
    "ts_meta",
    metadata,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("value", sa.Text, nullable=False),
)
sessions = sa.Table(
    "ts_sessions",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("token_hash", sa.String(64), nullable=False),
    sa.Column("mode", sa.String(16), nullable=False),
    sa.Column("n_choices", sa.Integer, nullable=False),  # items per screen (version 2: k)
    sa.Column("seed", sa.String(32), nullable=False),
    sa.Column("params", sa.Text, nullable=False),  # JSON: the session's parameters
    sa.Column("catalogue", sa.String(64), nullable=False),  # what it searches: a fingerprint
    sa.Column("library", sa.String(32), nullable=False),  # the version that started it
    sa.Column("created", sa.Float, nullable=False),
    sa.Column("updated", sa.Float, nullable=False),
    sa.Column("screen", sa.Integer, nullable=False),  # the current screen (version 2: queries)
    sa.Column("done", sa.Boolean, nullable=False),
    sa.Column("result", sa.Text, nullable=True),  # JSON
    # answers that count: not undone (version 2: n_answers)
    sa.Column("n_queries", sa.Integer, nullable=False, server_default="0"),
    sa.Column("undos", sa.Integer, nullable=False, server_default="0"),
    sa.Column("participant", sa.String(64), nullable=True),
    sa.Column("slot", sa.Integer, nullable=True),
    sa.Column("target", sa.Integer, nullable=True),
    # the key of the study or collect it belongs to (version 6; null: a free session)
    sa.Column("experiment", sa.String(64), nullable=True),
    # a participant's slot holds one session, however many requests race to start it
    sa.Index("ix_ts_sessions_participant_slot", "participant", "slot", unique=True),
    sa.Index("ix_ts_sessions_experiment", "experiment"),
)
screens = sa.Table(
    "ts_screens",
    metadata,
    sa.Column("session_id", sa.String(64), sa.ForeignKey("ts_sessions.id"), primary_key=True),
    sa.Column("number", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("payload", sa.Text, nullable=False),  # JSON: the screen as shown
    sa.Column("query", sa.Text, nullable=False),  # JSON: what the searcher asked
    sa.Column("shown_at", sa.Float, nullable=False),
)
answers = sa.Table(
    "ts_answers",
    metadata,
    sa.Column("session_id", sa.String(64), sa.ForeignKey("ts_sessions.id"), primary_key=True),
    sa.Column("screen", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("choice", sa.Integer, nullable=True),  # a position on the screen
    sa.Column("found", sa.Boolean, nullable=False),
    sa.Column("reply", sa.Text, nullable=False),  # JSON: the reply it got
    sa.Column("answered_at", sa.Float, nullable=False),
    # "answer", "undo" (takes back the last answer that counts) or "check" (a study's
    # attention screen's answer: counted in no query)
    sa.Column("kind", sa.String(8), nullable=False, server_default="answer"),
    sa.Column("undone", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("response_ms", sa.Integer, nullable=True),  # the page's measure (version 4)
)
participants = sa.Table(
    "ts_participants",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("token_hash", sa.String(64), nullable=False),
    sa.Column("study", sa.String(64), nullable=False),  # the study's fingerprint
    sa.Column("number", sa.Integer, nullable=False),  # enrolment order, for the balance
    sa.Column("created", sa.Float, nullable=False),
    # the version of the study's plan of target orders (study.py's PLAN_VERSION)
    sa.Column("plan", sa.Integer, nullable=False, server_default="1"),
    sa.Column("withdrawn", sa.Float, nullable=True),  # when they stopped taking part
    sa.Column("platform_id", sa.String(128), nullable=True),  # a crowdsourcing platform's
    # a collect's participant: their sampler, assigned at enrolment (version 5)
    sa.Column("arm", sa.String(32), nullable=True),
    # all the URL parameters of their platform's link, JSON (version 7)
    sa.Column("platform_params", sa.Text, nullable=True),
    # their platform id once per group: null for a second participant of one id, which a
    # database written before version 7 may hold (kept; the dashboard marks them)
    sa.Column("platform_key", sa.String(128), nullable=True),
    # the completion code they were shown at the end of their part (version 7)
    sa.Column("code", sa.String(200), nullable=True),
    sa.UniqueConstraint("study", "number"),
    sa.Index("ix_ts_participants_platform", "study", "platform_key", unique=True),
)
collect_queries = sa.Table(
    "ts_collect_queries",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("collect", sa.String(64), nullable=False),  # the collect file's fingerprint
    sa.Column("sampler", sa.String(32), nullable=False),
    sa.Column("version", sa.Integer, nullable=False),  # its embedding version (0: none)
    sa.Column("head", sa.Integer, nullable=False),
    sa.Column("candidates", sa.Text, nullable=False),  # JSON: item ids
    sa.Column("created", sa.Float, nullable=False),
    sa.Column("taken_by", sa.String(64), nullable=True),  # the session that showed it
    sa.Index("ix_ts_collect_queries_free", "collect", "sampler", "taken_by", "id"),
)
collect_embeddings = sa.Table(
    "ts_collect_embeddings",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("collect", sa.String(64), nullable=False),  # the collect file's fingerprint
    sa.Column("sampler", sa.String(32), nullable=False),
    sa.Column("version", sa.Integer, nullable=False),  # 1, 2, ... per sampler
    sa.Column("model", sa.String(32), nullable=False),
    sa.Column("n_rows", sa.Integer, nullable=False),  # the triplets it was fitted on
    sa.Column("used", sa.Text, nullable=False),  # JSON: {session id: last screen used}
    sa.Column("n_test", sa.Integer, nullable=False),  # held-out triplets it was scored on
    sa.Column("accuracy", sa.Float, nullable=True),  # on them (None: none yet)
    sa.Column("embedding", sa.Text, nullable=False),  # JSON: collect.embedding_state
    sa.Column("created", sa.Float, nullable=False),
    sa.UniqueConstraint("collect", "sampler", "version"),
)


experiments = sa.Table(
    "ts_experiments",
    metadata,
    sa.Column("name", sa.String(128), primary_key=True),
    sa.Column("kind", sa.String(16), nullable=False),  # "study" or "collect"
    sa.Column("key", sa.String(64), nullable=False, unique=True),  # its rows' identity
    sa.Column("design", sa.Text, nullable=False),  # JSON: the keys that cannot change
    sa.Column("settings", sa.Text, nullable=False),  # JSON: the others, as last started
    sa.Column("created", sa.Float, nullable=False),
    sa.Column("updated", sa.Float, nullable=False),
)


def _v1_to_v2(c: Connection) -> None:
    """Undo (answers that no longer count, recorded not deleted) and study mode."""
    for ddl in (
        "ALTER TABLE ts_sessions ADD COLUMN n_answers INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE ts_sessions ADD COLUMN undos INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE ts_sessions ADD COLUMN participant VARCHAR(64)",
        "ALTER TABLE ts_sessions ADD COLUMN slot INTEGER",
        "ALTER TABLE ts_sessions ADD COLUMN target INTEGER",
        "ALTER TABLE ts_answers ADD COLUMN kind VARCHAR(8) NOT NULL DEFAULT 'answer'",
        "ALTER TABLE ts_answers ADD COLUMN undone BOOLEAN NOT NULL DEFAULT FALSE",
        "UPDATE ts_sessions SET n_answers = queries",  # version 1 had no undo
        "CREATE UNIQUE INDEX ix_ts_sessions_participant_slot ON ts_sessions (participant, slot)",
    ):
        c.exec_driver_sql(ddl)
    participants.create(c)


def _v2_to_v3(c: Connection) -> None:
    """The sessions' columns in the library's vocabulary (SQLite >= 3.25, PostgreSQL)."""
    for old, new in (("k", "n_choices"), ("queries", "screen"), ("n_answers", "n_queries")):
        c.exec_driver_sql(f"ALTER TABLE ts_sessions RENAME COLUMN {old} TO {new}")


def _v3_to_v4(c: Connection) -> None:
    """Participants' plan, withdrawal and platform id; response times; collect queries.

    The participants' plan version is 1 for those enrolled before. (A version-1 database
    got the participants' table as this version lays it out: nothing to add there.)
    """
    inspect = sa.inspect(c)
    have = {col["name"] for col in inspect.get_columns("ts_participants")}
    for column, ddl in (
        ("plan", "plan INTEGER NOT NULL DEFAULT 1"),
        ("withdrawn", "withdrawn FLOAT"),
        ("platform_id", "platform_id VARCHAR(128)"),
    ):
        if column not in have:
            c.exec_driver_sql(f"ALTER TABLE ts_participants ADD COLUMN {ddl}")
    c.exec_driver_sql("ALTER TABLE ts_answers ADD COLUMN response_ms INTEGER")
    collect_queries.create(c, checkfirst=True)
    collect_embeddings.create(c, checkfirst=True)


def _v4_to_v5(c: Connection) -> None:
    """The experiments by name, and a collect participant's sampler kept at enrolment.

    Their rows stay where they are: a name maps to their key when its file is first
    started, or when a report or an export reads them. Participants enrolled before keep
    the sampler their session names (``arm`` null).
    """
    experiments.create(c, checkfirst=True)
    have = {col["name"] for col in sa.inspect(c).get_columns("ts_participants")}
    if "arm" not in have:
        c.exec_driver_sql("ALTER TABLE ts_participants ADD COLUMN arm VARCHAR(32)")


def _v5_to_v6(c: Connection) -> None:
    """The experiment a session belongs to, a column (``experiment``), filled in.

    A collect's sessions searched ``collect:<key>`` (``catalogue``, which stays as it was):
    their experiment is that key; other sessions of a participant belong to the
    participant's group (``ts_participants.study``: a study's key); free sessions to none.
    (A database laid out by a newer version but marked older has the column: kept.)
    """
    inspect = sa.inspect(c)
    if "experiment" not in {col["name"] for col in inspect.get_columns("ts_sessions")}:
        c.exec_driver_sql("ALTER TABLE ts_sessions ADD COLUMN experiment VARCHAR(64)")
    for ddl in (
        "UPDATE ts_sessions SET experiment = substr(catalogue, 9) "
        "WHERE substr(catalogue, 1, 8) = 'collect:'",
        "UPDATE ts_sessions SET experiment = (SELECT p.study FROM ts_participants p "
        "WHERE p.id = ts_sessions.participant) "
        "WHERE experiment IS NULL AND participant IS NOT NULL",
    ):
        c.exec_driver_sql(ddl)
    if "ix_ts_sessions_experiment" not in {i["name"] for i in inspect.get_indexes("ts_sessions")}:
        c.exec_driver_sql("CREATE INDEX ix_ts_sessions_experiment ON ts_sessions (experiment)")


def _v6_to_v7(c: Connection) -> None:
    """One participant per platform id and group; the platform's parameters; codes shown.

    ``platform_key`` is the participant's platform id for the first enrolled (lowest
    number) of each group and id, null for the later ones a database of version 6 may hold
    (kept: the dashboard and the export mark them as duplicates); the unique index on
    (group, ``platform_key``) lets no new one in.
    """
    have = {col["name"] for col in sa.inspect(c).get_columns("ts_participants")}
    for column, ddl in (
        ("platform_params", "platform_params TEXT"),
        ("platform_key", "platform_key VARCHAR(128)"),
        ("code", "code VARCHAR(200)"),
    ):
        if column not in have:
            c.exec_driver_sql(f"ALTER TABLE ts_participants ADD COLUMN {ddl}")
    c.exec_driver_sql(
        "UPDATE ts_participants SET platform_key = platform_id "
        "WHERE platform_id IS NOT NULL AND number = (SELECT MIN(p.number) "
        "FROM ts_participants p WHERE p.study = ts_participants.study "
        "AND p.platform_id = ts_participants.platform_id)"
    )
    indexes = {i["name"] for i in sa.inspect(c).get_indexes("ts_participants")}
    if "ix_ts_participants_platform" not in indexes:
        c.exec_driver_sql(
            "CREATE UNIQUE INDEX ix_ts_participants_platform "
            "ON ts_participants (study, platform_key)"
        )


# MIGRATIONS[v] upgrades a version-v database to v + 1 (in one transaction); a database at
# an older version is upgraded once, when the service starts
MIGRATIONS: dict[int, Callable[[Connection], None]] = {
    1: _v1_to_v2,
    2: _v2_to_v3,
    3: _v3_to_v4,
    4: _v4_to_v5,
    5: _v5_to_v6,
    6: _v6_to_v7,
}
