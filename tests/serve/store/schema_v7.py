"""The sessions database's tables as schema version 7 laid them out (tripletsearch at
commit 81f9895, ``serve/store/tables.py``, copied as it was): the upgrade tests build a
version-7 database from it (the outcome "finished" derived from the sessions, not stored;
platform keys as given, no visits), on SQLite or PostgreSQL."""

import sqlalchemy as sa

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
    # "answer" or "undo" (an undo takes back the last answer that counts)
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
