"""Participants of studies and collects: enrolment, withdrawal and their sessions."""

from __future__ import annotations

import json
import random
import time
import zlib
from collections.abc import Iterator
from typing import Any

import sqlalchemy as sa

from .engine import Database, IdTaken, StoreBusy
from .records import PREVIEW
from .sessions import SESSION_READ, SessionRow
from .tables import participants, sessions

__all__ = ["ParticipantRecords", "OUTCOMES", "ENDED", "outcome", "SecondVisit"]

#: A participant's outcomes, the one rule (:func:`outcome`): ``finished`` (every part done,
#: stored when it was decided), ``withdrawn`` (they stopped taking part: their answers are
#: left out of fits, report and export) or ``started`` (neither, yet). The first two end a
#: part, each decided once (``ParticipantRecords.finish``, ``withdraw``), never both.
OUTCOMES = ("finished", "withdrawn", "started")
#: The outcomes that end a part (a file gives each a completion code and redirect).
ENDED = OUTCOMES[:2]


class SecondVisit(Exception):
    """A platform id enrolled already came with another visit's value: refused (counted)."""


_PARTICIPANT = sa.select(participants).where(participants.c.id == sa.bindparam("pid"))
_ONES = sessions.c.participant == sa.bindparam("pid")
_PARTICIPANT_SESSIONS = SESSION_READ.where(_ONES).order_by(sessions.c.slot)


def outcome(row: Any) -> str:
    """Participant ``row``'s outcome (:data:`OUTCOMES`), as stored."""
    if row.withdrawn is not None:
        return "withdrawn"
    return "finished" if row.finished is not None else "started"


def _arm_counts(c: Any, study: str, arms: Any) -> dict[str, int]:
    """Participants per arm of group ``study``, withdrawn ones included.

    Those enrolled before arms were kept count by ``arms.sampler``.
    """
    p = participants.c
    mine = p.study == study
    q = sa.select(p.arm, sa.func.count()).where(mine, p.arm.is_not(None)).group_by(p.arm)
    counts = {str(arm): int(n) for arm, n in c.execute(q)}
    older = (
        sa.select(p.id, p.number, sessions.c.params)
        .select_from(participants.outerjoin(sessions, sessions.c.participant == p.id))
        .where(mine, p.arm.is_(None))
        .order_by(p.number, sessions.c.slot)
    )
    seen: set[str] = set()
    for pid, number, params in c.execute(older):
        if pid in seen:  # (their first session names their sampler)
            continue
        seen.add(pid)
        arm = arms.sampler(None, number, None if params is None else json.loads(params))
        if arm is not None:
            counts[arm] = counts.get(arm, 0) + 1
    return counts


def _resumes(c: Any, had: Any, token_hash: str, params: dict | None, visit: str | None) -> bool:
    """Resume participant ``had`` on ``visit`` (True), or count a second session refused."""
    p = participants.c
    if visit is None or had.visit not in (None, visit):
        c.execute(sa.update(participants).where(p.id == had.id).values(refused=p.refused + 1))
        return False
    latest: dict = {"visit": visit}  # the new link's parameters (each the latest)
    if params:
        old = json.loads(had.platform_params or "{}")
        latest["platform_params"] = json.dumps({**old, **params})
    # their sessions open with this token alone (they keep none of their own)
    c.execute(sa.update(participants).where(p.id == had.id).values(token_hash=token_hash, **latest))
    return True


class ParticipantRecords(Database):
    """Participants of studies and collect files: enrolment, withdrawal, their sessions."""

    def enrol(
        self,
        study: str,
        pid: str,
        token_hash: str,
        plan: int = 1,
        platform_id: str | None = None,
        arms: Any = None,
    ) -> int:
        """A new participant of ``study``; returns their enrolment number (0, 1, ...).

        ``plan``: the version of the study's plan of target orders for a study's first
        participant; later ones take the first one's (a study under way keeps its plan).
        ``platform_id``: a crowdsourcing platform's id for the participant, when given (one
        participant per id: see :meth:`enrol_as`, whose number this returns).
        ``arms``: a collect's :class:`Arms`: the participant is assigned the arm with the
        fewest participants so far (withdrawn ones included; ties: the arms' seeded order
        for the block of enrolments), in the same transaction, kept as ``arm``.

        :class:`IdTaken` when ``pid`` names a participant already. Enrolments of one study
        take turns (SQLite: the write lock; PostgreSQL: a transaction-scoped advisory lock
        on the study), so two never draw the same number; :class:`StoreBusy` if a write
        still fails after retries.
        """
        return self.enrol_as(study, pid, token_hash, plan, platform_id, arms)[1]

    def enrol_as(
        self,
        study: str,
        pid: str,
        token_hash: str,
        plan: int = 1,
        platform_id: str | None = None,
        arms: Any = None,
        platform_params: dict | None = None,
        visit: str | None = None,
    ) -> tuple[str, int, bool]:
        """As :meth:`enrol`, one participant per platform id: ``(id, number, resumed)``.

        With a ``platform_id`` that a participant of ``study`` already has (its
        ``platform_key``; a released one has none), that participant is resumed when
        ``visit`` (the platform's value for this visit; None: none given) is the one they
        enrolled with, or they enrolled before visits were kept (theirs null: this one
        becomes theirs): ``token_hash`` replaces theirs, which their sessions open with (the
        previous token stops working), the link's ``platform_params`` are recorded over the ones
        kept, and their id and number are returned with ``resumed`` True; nothing else of
        theirs changes (withdrawn or finished ones too). Another visit's value (or none):
        :class:`SecondVisit`, nothing of theirs changed but their ``refused`` count.
        Else a new participant ``pid`` is enrolled with ``platform_key`` = ``platform_id``,
        ``visit`` ("" when none given: no visit resumes them, their token does) and
        ``platform_params`` (the link's parameters, kept as JSON). The look-up runs in
        the enrolment's transaction (its lock); two enrolments of a new id racing on
        another server process meet the unique index, and the retry finds the first.
        """
        p = participants.c
        for attempt in range(20):
            try:
                with self._tx() as c:
                    if not self.is_sqlite:
                        key = zlib.crc32(f"ts_enrol:{study}".encode()) - 2**31
                        c.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": key})
                    if platform_id is not None:
                        had = c.execute(
                            sa.select(p.id, p.number, p.platform_params, p.visit).where(
                                p.study == study, p.platform_key == platform_id
                            )
                        ).first()
                        if had is not None:
                            if _resumes(c, had, token_hash, platform_params, visit):
                                return str(had.id), int(had.number), True
                            refused = str(had.id)
                            break
                    taken = c.execute(sa.select(p.id).where(p.id == pid)).first()
                    if taken is not None:
                        raise IdTaken(pid)
                    n = c.execute(
                        sa.select(sa.func.coalesce(sa.func.max(p.number), -1) + 1).where(
                            p.study == study
                        )
                    ).scalar_one()
                    first = c.execute(
                        sa.select(p.plan).where(p.study == study, p.number == 0)
                    ).scalar()
                    arm = None if arms is None else arms.pick(int(n), _arm_counts(c, study, arms))
                    params = None if platform_params is None else json.dumps(platform_params)
                    c.execute(
                        sa.insert(participants).values(
                            id=pid,
                            token_hash=token_hash,
                            study=study,
                            number=int(n),
                            created=time.time(),
                            plan=int(plan if first is None else first),
                            platform_id=platform_id,
                            arm=arm,
                            platform_params=params,
                            platform_key=platform_id,
                            visit=None if platform_id is None else (visit or ""),
                        )
                    )
                return pid, int(n), False
            except (sa.exc.IntegrityError, sa.exc.OperationalError):
                time.sleep(0.01 * (attempt + 1) * (0.5 + random.random()))
        else:
            raise StoreBusy("database: could not enrol a participant (too many at once)")
        raise SecondVisit(refused)

    def resume_ended(
        self, study: str, platform_id: str, token_hash: str, platform_params: dict | None,
        visit: str | None,
    ) -> str | None:  # fmt: skip
        """Resume the participant of ``study`` holding ``platform_id`` if their part ended.

        Only one who finished or withdrew, on the ``visit`` they enrolled with (or any, when
        theirs was never kept), is resumed as :meth:`enrol_as` resumes them: their id (their
        token now ``token_hash``). Else None, nothing changed (no refusal counted).
        """
        p = participants.c
        with self._tx() as c:
            had = c.execute(
                sa.select(p.id, p.number, p.platform_params, p.visit, p.finished, p.withdrawn)
                .where(p.study == study, p.platform_key == platform_id)
                .with_for_update()
            ).first()
            if had is None or visit is None or had.visit not in (None, visit):
                return None
            if outcome(had) not in ENDED:
                return None
            _resumes(c, had, token_hash, platform_params, visit)  # (the visit is theirs)
            return str(had.id)

    def release_participant(self, pid: str, now: float) -> bool:
        """Release participant ``pid`` for a fresh start: their platform id is free again.

        Their row stays as it was (answers, outcome, code), marked ``released`` (when) and
        without a ``platform_key``: the next visit of their id enrols a new participant.
        Once: True when this call released them.
        """
        p = participants.c
        with self._tx() as c:
            res = c.execute(
                sa.update(participants)
                .where(p.id == pid, p.released.is_(None))
                .values(released=now, platform_key=None)
            )
        return res.rowcount == 1

    def refused_count(self, study: str) -> int:
        """Second sessions refused in ``study`` (another visit's value of an enrolled id)."""
        with self._reading() as c:
            q = sa.select(sa.func.coalesce(sa.func.sum(participants.c.refused), 0))
            return int(c.execute(q.where(participants.c.study == study)).scalar_one())

    def _decide(self, c: Any, pid: str, column: str, now: float, code: str | None) -> bool:
        """Participant ``pid``'s outcome ``column`` set to ``now``, in one row update.

        Only while undecided (neither finished nor withdrawn): True when this update
        decided it. ``code``: the outcome's completion code, recorded in the same update
        (a code recorded before stays).
        """
        p = participants.c
        values: dict[str, Any] = {column: now}
        if code is not None:
            values["code"] = sa.func.coalesce(p.code, code)
        res = c.execute(
            sa.update(participants)
            .where(p.id == pid, p.finished.is_(None), p.withdrawn.is_(None))
            .values(**values)
        )
        return res.rowcount == 1

    def finish(self, pid: str, now: float, code: str | None = None) -> bool:
        """Record that participant ``pid`` finished every part, with their ``code``.

        One row update, only while they have neither finished nor withdrawn: the first of a
        finish and a withdraw to commit decides (SQLite: the write lock; PostgreSQL: the
        row's lock, the second update seeing the first's row). True when this call decided.
        """
        with self._tx() as c:
            return self._decide(c, pid, "finished", now, code)

    def withdraw(self, pid: str, now: float, code: str | None = None) -> bool:
        """Record that participant ``pid`` stopped taking part, with their ``code``.

        As :meth:`finish`: one row update, only while they have neither finished nor
        withdrawn. When it decides (True), their unfinished searches end, left, in the same
        transaction.
        """
        left = json.dumps({"target": None, "left": True, "reason": "withdrawn"})
        with self._tx() as c:
            if not self._decide(c, pid, "withdrawn", now, code):
                return False
            c.execute(
                sa.update(sessions)
                .where(sessions.c.participant == pid, sessions.c.done == sa.false())
                .values(done=True, result=left, updated=now)
            )
        return True

    def record_code(self, pid: str, code: str) -> str:
        """Keep ``code`` as the completion code participant ``pid`` was shown; the kept one.

        Once: the first code kept stays (shown again, the end screen shows it).
        """
        with self._tx() as c:
            c.execute(
                sa.update(participants)
                .where(participants.c.id == pid, participants.c.code.is_(None))
                .values(code=code)
            )
            kept = c.execute(sa.select(participants.c.code).where(participants.c.id == pid))
            return str(kept.scalar_one())

    def participant(self, pid: str) -> Any:
        """The participant's row, or None.

        Its columns: id, token_hash, study, number, created, plan, withdrawn, platform_id,
        arm, platform_params, platform_key, code, finished (its outcome: :func:`outcome`),
        visit, released, refused.
        """
        with self._reading() as c:
            return c.execute(_PARTICIPANT, {"pid": pid}).first()

    def has_participants(self, study: str) -> bool:
        """Whether ``study`` (a fingerprint) has enrolled anyone."""
        with self._reading() as c:
            q = sa.select(participants.c.id).where(participants.c.study == study).limit(1)
            return c.execute(q).first() is not None

    def participant_ids(self, study: str) -> set[str]:
        """The ids of ``study``'s participants (a group's key), withdrawn ones included."""
        with self._reading() as c:
            q = sa.select(participants.c.id).where(participants.c.study == study)
            return set(c.execute(q).scalars())

    def participant_sessions(self, pid: str) -> list[SessionRow]:
        """The participant's sessions, by slot."""
        with self._reading() as c:
            rows = c.execute(_PARTICIPANT_SESSIONS, {"pid": pid}).all()
        return [SessionRow.from_row(r) for r in rows]

    def iter_participants(self) -> Iterator[Any]:
        """Every participant row, by number; the owner's previews' left out (``PREVIEW``)."""
        q = sa.select(participants).where(
            sa.not_(participants.c.study.startswith(PREVIEW, autoescape=True))
        )
        with self._reading() as c:
            yield from c.execute(q.order_by(participants.c.number))
