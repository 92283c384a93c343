"""Sessions, their screens and answers: reads and the answer's transaction.

An answer is one transaction: the session row advances only from the screen being
answered (``UPDATE ... WHERE screen = :n``), then the answer and the next screen are
inserted, then it commits, before the reply is sent.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from .engine import Database, WriteConflict
from .records import PREVIEW, SessionRow, counted_answers, is_counted
from .tables import answers, participants, screens, sessions

__all__ = ["SessionRecords", "SessionRow", "is_counted", "counted_answers"]


def _insert_screen(
    c: Connection, sid: str, number: int, payload: dict, query: Any, now: float
) -> None:
    c.execute(
        _INSERT_SCREEN,
        {
            "session_id": sid,
            "number": number,
            "payload": json.dumps(payload),
            "query": json.dumps(query),
            "shown_at": now,
        },
    )


# the hot path's statements, built once (SQLAlchemy builds and keys a new statement object
# at every call otherwise: a millisecond per answer on this machine)
# a session as read: its token hash its participant's when it has one (a participant's
# sessions keep none of their own, ``""``: one token, revoked or replaced in one place), its
# own for a free session
_TOKEN = sa.func.coalesce(participants.c.token_hash, sessions.c.token_hash).label("token_hash")
SESSION_READ = sa.select(
    *(_TOKEN if col.name == "token_hash" else col for col in sessions.c)
).select_from(sessions.outerjoin(participants, participants.c.id == sessions.c.participant))
_SESSION = SESSION_READ.where(sessions.c.id == sa.bindparam("sid"))
_SCREEN = sa.select(screens.c.payload, screens.c.query).where(
    screens.c.session_id == sa.bindparam("sid"), screens.c.number == sa.bindparam("number")
)
_ANSWERED = (
    sa.update(sessions)
    .where(
        sessions.c.id == sa.bindparam("b_sid"),
        sessions.c.screen == sa.bindparam("b_number"),
        sessions.c.done == sa.false(),
    )
    .values(
        screen=sa.bindparam("b_next"),
        updated=sa.bindparam("b_now"),
        done=sa.bindparam("b_done"),
        n_queries=sessions.c.n_queries + 1,
        result=sa.bindparam("b_result"),
    )
)
# (an attention screen's answer: the session moves on, its queries do not count it)
_CHECKED = _ANSWERED.values(n_queries=sessions.c.n_queries)
_INSERT_SCREEN = sa.insert(screens)
_INSERT_ANSWER = sa.insert(answers)
_ANSWER = sa.select(
    answers.c.kind, answers.c.choice, answers.c.found, answers.c.reply, answers.c.picks
).where(answers.c.session_id == sa.bindparam("sid"), answers.c.screen == sa.bindparam("number"))


def _picks(stored: str | None) -> tuple[int, ...] | None:
    """An answer's ``picks`` as stored (JSON) read back (None: one pick)."""
    return None if stored is None else tuple(int(p) for p in json.loads(stored))


def _insert_answer(
    c: Connection,
    sid: str,
    number: int,
    choice: int | None,
    found: bool,
    reply: dict,
    now: float,
    kind: str = "answer",
    response_ms: int | None = None,
    picks: Any = None,
) -> None:
    c.execute(
        _INSERT_ANSWER,
        {
            "session_id": sid,
            "screen": number,
            "choice": choice,
            "found": found,
            "reply": json.dumps(reply),
            "answered_at": now,
            "kind": kind,
            "response_ms": response_ms,
            "picks": None if picks is None else json.dumps([int(p) for p in picks]),
        },
    )


class SessionRecords(Database):
    """Sessions, their screens and answers (every mode's)."""

    # ------------------------------------------------------------------ reads
    def session(self, sid: str) -> SessionRow | None:
        """The session ``sid``, or None."""
        with self._reading() as c:
            r = c.execute(_SESSION, {"sid": sid}).first()
        return None if r is None else SessionRow.from_row(r)

    def screen(self, sid: str, number: int) -> tuple[dict, dict] | None:
        """(payload as shown, query) of a screen, or None."""
        with self._reading() as c:
            r = c.execute(_SCREEN, {"sid": sid, "number": number}).first()
        return None if r is None else (json.loads(r.payload), json.loads(r.query))

    def answer(self, sid: str, screen: int) -> tuple[str, Any, bool, dict, Any] | None:
        """(kind, choice, found, reply, picks: in order, or None) recorded for a screen."""
        with self._reading() as c:
            r = c.execute(_ANSWER, {"sid": sid, "number": screen}).first()
        if r is None:
            return None
        return r.kind, r.choice, bool(r.found), json.loads(r.reply), _picks(r.picks)

    def _answered(self, *where: Any) -> list[tuple[str, dict]]:
        """(session id, record) of the answered screens matching ``where``, by session and number.

        A record: number, payload, query, choice, found, kind ("answer", "undo" or "check"),
        undone, shown_at, answered_at, response_ms (the page's measure, None when not sent),
        picks (the positions picked in order on a screen that asks several; None: one pick,
        ``choice``).
        """
        on = sa.and_(
            answers.c.session_id == screens.c.session_id, answers.c.screen == screens.c.number
        )
        q = (
            sa.select(
                screens.c.session_id,
                screens.c.number,
                screens.c.payload,
                screens.c.query,
                screens.c.shown_at,
                answers.c.choice,
                answers.c.found,
                answers.c.kind,
                answers.c.undone,
                answers.c.answered_at,
                answers.c.response_ms,
                answers.c.picks,
            )
            .select_from(screens.join(answers, on))
            .where(*where)
            .order_by(screens.c.session_id, screens.c.number)
        )
        with self._reading() as c:
            rows = c.execute(q).all()
        return [
            (
                r.session_id,
                {
                    "number": int(r.number),
                    "payload": json.loads(r.payload),
                    "query": json.loads(r.query),
                    "choice": r.choice,
                    "found": bool(r.found),
                    "kind": r.kind,
                    "undone": bool(r.undone),
                    "shown_at": float(r.shown_at),
                    "answered_at": float(r.answered_at),
                    "response_ms": r.response_ms,
                    "picks": _picks(r.picks),
                },
            )
            for r in rows
        ]

    def history(self, sid: str, start: int = 0) -> list[dict]:
        """The session's answered screens from ``start`` on, in order (undos included)."""
        return [
            rec for _, rec in self._answered(screens.c.session_id == sid, screens.c.number >= start)
        ]

    def effective(self, sid: str, start: int = 0) -> list[dict]:
        """The answers that count (:func:`is_counted`) from screen ``start`` on."""
        return counted_answers(self.history(sid, start))

    def all_answers(self) -> dict[str, list[dict]]:
        """Every answered screen of every session (as :meth:`history`), by session."""
        out: dict[str, list[dict]] = {}
        for sid, rec in self._answered():
            out.setdefault(sid, []).append(rec)
        return out

    def iter_sessions(
        self, *, withdrawn: bool = False, experiment: str | None = None
    ) -> Iterator[SessionRow]:
        """Every session, by creation time (then id), but those of withdrawn participants.

        ``withdrawn``: those too (the owner's dashboard counts them). ``experiment``: only
        the sessions of the study or collect of that key (the sessions' ``experiment``);
        None: every session but the owner's previews' (:data:`~.records.PREVIEW`).
        """
        gone = sa.select(participants.c.id).where(participants.c.withdrawn.is_not(None))
        q = SESSION_READ.order_by(sessions.c.created, sessions.c.id)
        if experiment is not None:
            q = q.where(sessions.c.experiment == experiment)
        else:
            e = sessions.c.experiment
            q = q.where(sa.or_(e.is_(None), sa.not_(e.startswith(PREVIEW, autoescape=True))))
        if not withdrawn:
            q = q.where(
                sa.or_(sessions.c.participant.is_(None), sessions.c.participant.not_in(gone))
            )
        with self._reading() as c:
            for r in c.execute(q):
                yield SessionRow.from_row(r)

    def prune(self, before: float, idle_before: float, *, dry_run: bool = False) -> dict:
        """Delete old free sessions with their screens and answers; the counts deleted.

        A free session (no study participant) goes when its last activity is before
        ``before`` and it is finished (found, or left by its person), or unfinished with
        its last activity before ``idle_before`` (abandoned). Study sessions stay, but those
        of withdrawn participants go whatever their age (the participant's row stays: the
        study's numbering and balance). Batches of 500 sessions, each in its own
        transaction. ``dry_run``: count only.
        """
        done = {"sessions": 0, "screens": 0, "answers": 0}
        withdrawn = sa.select(participants.c.id).where(participants.c.withdrawn.is_not(None))
        doomed = sa.select(sessions.c.id).where(
            sa.or_(
                sa.and_(
                    sessions.c.participant.is_(None),
                    sessions.c.updated < before,
                    sa.or_(sessions.c.done == sa.true(), sessions.c.updated < idle_before),
                ),
                sessions.c.participant.in_(withdrawn),
            )
        )
        if dry_run:  # everything at once, counted in the database
            with self._reading() as c:
                n = c.execute(sa.select(sa.func.count()).select_from(doomed.subquery()))
                done["sessions"] = int(n.scalar_one())
                self._count_answers_and_screens(c, doomed.scalar_subquery(), done, False)
            return done
        while True:
            with self._tx() as c:
                ids = list(c.execute(doomed.limit(500)).scalars())
                if not ids:
                    return done
                done["sessions"] += len(ids)
                self._count_answers_and_screens(c, ids, done, True)
                c.execute(sa.delete(sessions).where(sessions.c.id.in_(ids)))

    @staticmethod
    def _count_answers_and_screens(c: Connection, ids: Any, done: dict, delete: bool) -> None:
        """Count (and delete) the answers and screens of the sessions ``ids``."""
        for key, table in (("answers", answers), ("screens", screens)):
            where = table.c.session_id.in_(ids)
            count = sa.select(sa.func.count()).select_from(table).where(where)
            done[key] += int(c.execute(count).scalar_one())
            if delete:
                c.execute(sa.delete(table).where(where))

    def count_open(self, since: float) -> int:
        """Free sessions not finished and updated at ``since`` (a time.time()) or later."""
        with self._reading() as c:
            q = (
                sa.select(sa.func.count())
                .select_from(sessions)
                .where(
                    sessions.c.done == sa.false(),
                    sessions.c.participant.is_(None),
                    sessions.c.updated >= since,
                )
            )
            return int(c.execute(q).scalar() or 0)

    def counts(self) -> dict[str, int]:
        """Row counts of the sessions, answers and screens tables."""
        with self._reading() as c:
            return {
                "sessions": int(
                    c.execute(sa.select(sa.func.count()).select_from(sessions)).scalar() or 0
                ),
                "answers": int(
                    c.execute(sa.select(sa.func.count()).select_from(answers)).scalar() or 0
                ),
                "screens": int(
                    c.execute(sa.select(sa.func.count()).select_from(screens)).scalar() or 0
                ),
            }

    def count_answers(self) -> int:
        """Answers and undos recorded (``ts_answers``' rows), of every session.

        But the owner's previews' (:data:`~.records.PREVIEW`): what the refitter waits for.
        """
        previews = sa.select(sessions.c.id).where(
            sessions.c.experiment.startswith(PREVIEW, autoescape=True)
        )
        q = sa.select(sa.func.count()).select_from(answers)
        with self._reading() as c:
            return int(c.execute(q.where(answers.c.session_id.not_in(previews))).scalar_one())

    # ------------------------------------------------------------------ writes
    def leave(self, sid: str, now: float) -> bool:
        """End session ``sid`` unfinished (left by its person: abandoned, not found).

        False when it had ended already.
        """
        left = json.dumps({"target": None, "left": True, "reason": "left"})
        with self._tx() as c:
            res = c.execute(
                sa.update(sessions)
                .where(sessions.c.id == sid, sessions.c.done == sa.false())
                .values(done=True, result=left, updated=now)
            )
        return res.rowcount == 1

    @staticmethod
    def _advance(c: Connection, sid: str, number: int, now: float, **values: Any) -> None:
        """Move the session from screen ``number`` to the next.

        Raise WriteConflict when it is not at that screen (any more) or is done.
        """
        res = c.execute(
            sa.update(sessions)
            .where(
                sessions.c.id == sid,
                sessions.c.screen == number,
                sessions.c.done == sa.false(),
            )
            .values(screen=number + 1, updated=now, **values)
        )
        if res.rowcount != 1:
            raise WriteConflict(sid)

    def record_undo(
        self,
        sid: str,
        number: int,
        *,
        undone_screen: int,
        reply: dict,
        payload: dict,
        query: Any,
    ) -> None:
        """An undo at screen ``number``.

        The answer to ``undone_screen`` stops counting (kept, marked undone), the undo is
        recorded as screen ``number``'s answer, and screen ``number + 1`` shows ``payload``
        (the undone screen again).
        """
        now = time.time()
        with self._tx() as c:
            self._advance(
                c,
                sid,
                number,
                now,
                n_queries=sessions.c.n_queries - 1,
                undos=sessions.c.undos + 1,
            )
            res = c.execute(
                sa.update(answers)
                .where(
                    answers.c.session_id == sid,
                    answers.c.screen == undone_screen,
                    answers.c.kind == "answer",
                    answers.c.undone == sa.false(),
                )
                .values(undone=True)
            )
            if res.rowcount != 1:
                raise WriteConflict(sid)
            _insert_answer(c, sid, number, None, False, reply, now, kind="undo")
            _insert_screen(c, sid, number + 1, payload, query, now)

    def create_session(
        self,
        *,
        sid: str,
        token_hash: str,
        mode: str,
        n_choices: int,
        seed: str,
        params: dict,
        catalogue: str,
        library: str,
        payload: dict,
        query: dict,
        participant: str | None = None,
        slot: int | None = None,
        target: int | None = None,
        experiment: str | None = None,
    ) -> None:
        """A new session and its screen 0, in one transaction.

        A participant's session (a study's, a collect's): its participant, slot and target;
        WriteConflict when that slot already has a session. It keeps no token of its own
        (``token_hash`` unused, ``""`` stored): it opens with its participant's token, read
        whenever the session is (:data:`SESSION_READ`), so a resume that gives the
        participant a new token, even while this session is being prepared, leaves the old
        one opening nothing. ``experiment``: the key of the study or collect it belongs to
        (default: its participant's group, none for a free session).
        """
        now = time.time()
        with self._tx() as c:
            if participant is not None:
                owner = c.execute(
                    sa.select(participants.c.study)
                    .where(participants.c.id == participant)
                    .with_for_update()
                ).first()
                taken = c.execute(
                    sa.select(sessions.c.id).where(
                        sessions.c.participant == participant, sessions.c.slot == slot
                    )
                ).first()
                if taken is not None:
                    raise WriteConflict(taken.id)
                if owner is not None:
                    token_hash = ""  # its participant's (:data:`SESSION_READ`)
                    experiment = owner.study if experiment is None else experiment
            c.execute(
                sa.insert(sessions).values(
                    id=sid,
                    token_hash=token_hash,
                    mode=mode,
                    n_choices=n_choices,
                    seed=seed,
                    params=json.dumps(params),
                    catalogue=catalogue,
                    library=library,
                    created=now,
                    updated=now,
                    screen=0,
                    done=False,
                    result=None,
                    participant=participant,
                    slot=slot,
                    target=target,
                    experiment=experiment,
                )
            )
            _insert_screen(c, sid, 0, payload, query, now)

    def record_answer(
        self,
        sid: str,
        number: int,
        *,
        choice: int | None,
        found: bool,
        reply: dict,
        done: bool,
        result: Any,
        next_payload: dict | None,
        next_query: dict | None,
        response_ms: int | None = None,
        counts: bool = True,
        picks: Any = None,
    ) -> None:
        """Record the answer to screen ``number`` and the next screen, committed before returning.

        :class:`WriteConflict` when the session is no longer at that screen (another request
        answered it first: nothing is written). ``counts`` False: an attention screen's
        answer (a study's check), kept as kind ``"check"``: not counted in ``n_queries``,
        never undone, never replayed into the searcher.
        """
        now = time.time()
        with self._tx() as c:
            moved = c.execute(
                _ANSWERED if counts else _CHECKED,
                {
                    "b_sid": sid,
                    "b_number": number,
                    "b_next": number + 1,
                    "b_now": now,
                    "b_done": done,
                    "b_result": None if result is None else json.dumps(result),
                },
            )
            if moved.rowcount != 1:  # as _advance: not at that screen (any more), or done
                raise WriteConflict(sid)
            kind = "answer" if counts else "check"
            _insert_answer(c, sid, number, choice, found, reply, now, kind, response_ms, picks)
            if next_payload is not None:
                _insert_screen(c, sid, number + 1, next_payload, next_query, now)
