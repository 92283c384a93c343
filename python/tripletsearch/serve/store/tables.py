"""The sessions database's tables (SQLAlchemy Core) and the migrations between versions.

Schema version :data:`SCHEMA_VERSION`, kept in ``ts_meta``:

``ts_sessions``
    one row per search: id, the hash of its token (a free session's; ``""`` for a
    participant's session, which opens with its participant's token alone), mode, screen
    size (``n_choices``), seed and parameters, what it searches (the catalogue's
    fingerprint), the library version that started it, the current screen's number
    (``screen``), the answers that count (``n_queries``), undos, ``done`` and the result; a
    study session's participant, slot and target; the experiment it belongs to
    (``experiment``: the key of its participant's study or collect, null for a free
    session).
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
and ``code`` (the completion code they were shown); 8 added the participants' ``finished``
(when they finished every part: their outcome stored, decided once, as ``withdrawn`` is),
``visit``
(the platform's value for the visit they enrolled with: a second visit's is refused),
``released`` (when the owner released them for a fresh start) and ``refused`` (second
sessions of their id refused), and keeps ``platform_key`` in its compared form (NFKC,
combining marks and invisible fillers removed); a participant's sessions keep no copy of
their token (``token_hash`` ``""``: the participant's opens them, one place to revoke it).
9 added the answers' ``picks`` (the positions picked in order on a screen that asks
several: a collect's ranked picks).
Replies
stored by version 2 keep their old keys (the service adds the new ones when it returns
them).
"""

from __future__ import annotations

import json
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

SCHEMA_VERSION = 9

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
    # a free session's token hash; "" for a participant's (their token opens it; v8)
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
    # the positions picked in order, JSON, on a screen that asks several (a collect's
    # ranked picks; version 9); null: one pick, ``choice``
    sa.Column("picks", sa.Text, nullable=True),
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
    # v8: the stored outcome (withdrawn above): when they finished every part, decided once
    # with their code in one row update, never both finished and withdrawn
    sa.Column("finished", sa.Float, nullable=True),
    # v8: a participant's visit
    # the platform's value for the visit they enrolled with (Prolific's SESSION_ID, MTurk's
    # assignmentId, ...; "": none given; null: enrolled before version 8, their next
    # visit's value becomes theirs): the same id with another visit's value is refused
    sa.Column("visit", sa.String(128), nullable=True),
    # when the owner released them (their platform_key then null: a fresh start for the id)
    sa.Column("released", sa.Float, nullable=True),
    # second sessions of their platform id refused (another visit's value)
    sa.Column("refused", sa.Integer, nullable=False, server_default="0"),
    sa.UniqueConstraint("study", "number"),
    sa.Index("ix_ts_participants_platform", "study", "platform_key", unique=True),
)
collect_queries = sa.Table(
    "ts_collect_queries",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("collect", sa.String(64), nullable=False),  # the collect file's fingerprint
    sa.Column("sampler", sa.String(32), nullable=False),
    # the embedding version it was chosen with (0: none, a random query)
    sa.Column("version", sa.Integer, nullable=False),
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


def _v8_outcome(c: Connection) -> None:
    """The stored outcome: ``finished`` filled for those who finished under version 7.

    Version 7 derived it from the sessions: a participant not withdrawn whose every part is
    done (a study's: one session per target of its stored design; a collect's or an
    unknown experiment's: every session they have, at least one). Their ``finished`` is
    when their last session ended (its ``updated``). A withdrawn participant stays
    withdrawn (whatever code was recorded).
    """
    if "finished" not in {col["name"] for col in sa.inspect(c).get_columns("ts_participants")}:
        c.exec_driver_sql("ALTER TABLE ts_participants ADD COLUMN finished FLOAT")
    parts = {}  # a study's parts: its stored design's targets
    for key, design in c.execute(sa.select(experiments.c.key, experiments.c.design)):
        targets = json.loads(design).get("targets")
        if isinstance(targets, list):
            parts[key] = len(targets)
    p, s = participants.c, sessions.c
    done: dict[str, tuple[str, list[bool], float]] = {}
    q = (
        sa.select(p.id, p.study, s.done, s.updated)
        .select_from(participants.join(sessions, s.participant == p.id))
        .where(p.withdrawn.is_(None), p.finished.is_(None))
    )
    for pid, study, is_done, updated in c.execute(q):
        _, flags, last = done.get(pid, (study, [], 0.0))
        done[pid] = (study, [*flags, bool(is_done)], max(last, float(updated)))
    for pid, (study, flags, last) in done.items():
        n = parts.get(study, len(flags))
        if n > 0 and len(flags) >= n and sum(flags) >= n:
            c.execute(sa.update(participants).where(p.id == pid).values(finished=last))


_FILLERS = frozenset("\u034f\u115f\u1160\u3164\uffa0\u2800")


def _compared_v8(value: str) -> str:
    """An id's compared form as version 8 has it (``crowd.platforms.compared_text``).

    NFKC, combining marks and the invisible fillers NFKC keeps removed; a Prolific id (24
    hexadecimal digits) lower-case. Frozen here: the upgrade does what it did.
    """
    import re
    import unicodedata

    text = unicodedata.normalize("NFKD", value)
    kept = "".join(
        ch for ch in text if unicodedata.category(ch) not in ("Mn", "Me") and ch not in _FILLERS
    )
    text = unicodedata.normalize("NFKC", kept) or value
    return text.lower() if re.fullmatch(r"[0-9a-fA-F]{24}", text) else text


def _v8_identity(c: Connection) -> None:
    """A participant's visit, release and refusals; platform keys in their compared form.

    The columns ``visit`` (null for everyone enrolled before: their next visit's value
    becomes theirs), ``released`` and ``refused`` (0). Each ``platform_key`` becomes its
    compared form (:func:`_compared_v8`); of two or more of one group that now compare
    equal, the first enrolled keeps it and the later ones have none (kept: duplicates, as
    version 7 marked them). Ids (``platform_id``) and participants' ids stay as they were.
    """
    have = {col["name"] for col in sa.inspect(c).get_columns("ts_participants")}
    for column, ddl in (
        ("visit", "visit VARCHAR(128)"),
        ("released", "released FLOAT"),
        ("refused", "refused INTEGER NOT NULL DEFAULT 0"),
    ):
        if column not in have:
            c.exec_driver_sql(f"ALTER TABLE ts_participants ADD COLUMN {ddl}")
    rows = c.exec_driver_sql(
        "SELECT id, study, platform_key FROM ts_participants "
        "WHERE platform_key IS NOT NULL ORDER BY study, number"
    ).all()
    first: dict[tuple[str, str], str] = {}
    later, renamed = [], []
    for pid, study, key in rows:
        form = _compared_v8(key)
        if (study, form) in first:
            later.append(pid)
        else:
            first[(study, form)] = pid
            if form != key:
                renamed.append((pid, form))
    p = participants.c
    for pid in later:  # first: their keys free the compared forms
        c.execute(sa.update(participants).where(p.id == pid).values(platform_key=None))
    for pid, form in renamed:
        c.execute(sa.update(participants).where(p.id == pid).values(platform_key=form))


def _v8_tokens(c: Connection) -> None:
    """A participant's sessions keep no copy of their token: the participant's opens them.

    Each session of a participant who has a row gets ``token_hash`` ``""`` (read as the
    participant's: ``sessions.SESSION_READ``); a copy that differed from the participant's
    (a resume racing a session's start before version 7's fix) opens nothing any more. A
    session whose participant has no row, and a free session, keep their own.
    """
    c.exec_driver_sql(
        "UPDATE ts_sessions SET token_hash = '' WHERE participant IS NOT NULL AND EXISTS "
        "(SELECT 1 FROM ts_participants p WHERE p.id = ts_sessions.participant)"
    )


def _v7_to_v8(c: Connection) -> None:
    """Version 8: the stored outcome, a participant's visit, one token (each its own step)."""
    _v8_outcome(c)
    _v8_identity(c)
    _v8_tokens(c)


def _v8_to_v9(c: Connection) -> None:
    """The answers' ``picks`` (ranked picks in order); every answer before has one pick."""
    cols = {col["name"] for col in sa.inspect(c).get_columns("ts_answers")}
    if "picks" not in cols:
        c.exec_driver_sql("ALTER TABLE ts_answers ADD COLUMN picks TEXT")


# MIGRATIONS[v] upgrades a version-v database to v + 1 (in one transaction); a database at
# an older version is upgraded once, when the service starts
MIGRATIONS: dict[int, Callable[[Connection], None]] = {
    1: _v1_to_v2,
    2: _v2_to_v3,
    3: _v3_to_v4,
    4: _v4_to_v5,
    5: _v5_to_v6,
    6: _v6_to_v7,
    7: _v7_to_v8,
    8: _v8_to_v9,
}
