"""``tripletsearch participants release``: a participation released for a fresh start.

A platform id takes part once: the same id from another visit (another Prolific
``SESSION_ID``, MTurk ``assignmentId``) is refused as a second session
(:mod:`.platforms`). When that second visit is legitimate, the owner releases the first
participation::

    tripletsearch participants release --database URL [--experiment NAME]
        (--platform-id ID | --participant P-...)

- a Prolific participant who returned the study and took it again (a new ``SESSION_ID``);
- an MTurk worker who returned the HIT and accepted it again (a new ``assignmentId``);
- someone who enrolled first with another person's id (squatting): release theirs, and the
  id's owner starts afresh.

The released participation is kept as it was (its answers, outcome and code: nothing is
deleted), marked released, and no longer holds the id: the next visit of the id enrols a
new participant, and the released one's token opens nothing more (the page says it was
released). It is not a duplicate (``roster``'s ``duplicate`` marks only the second
participants a database written before one participation per id holds). ``--platform-id``
is compared in the server's form (:func:`~.platforms.compared_text`, case ignored: two
participants that match ask for ``--participant``). Exit 0 when released, 2 on bad input
(no such participant, one released already, an unknown experiment: one line on stderr).
"""

from __future__ import annotations

import time
from typing import Any

from .platforms import compared_text

__all__ = ["find_participant", "release"]


def find_participant(store: Any, key: str, platform_id: str | None, pid: str | None) -> Any:
    """The participant of experiment ``key`` with ``platform_id`` (or id ``pid``).

    ValueError naming the option when there is none, or several, or it is released already.
    """
    rows = [r for r in store.iter_participants() if r.study == key]
    if pid is not None:
        hit = [r for r in rows if r.id == pid]
        said = f"--participant: no participant {pid!r} in this experiment"
    else:
        assert platform_id is not None
        want = compared_text(platform_id).casefold()
        hit = [
            r
            for r in rows
            if r.platform_key is not None and compared_text(r.platform_key).casefold() == want
        ]
        if not hit:
            released = [r.id for r in rows if r.platform_id is not None and r.released]
            said = f"--platform-id: no participant holds {platform_id!r} in this experiment"
            if released:
                said += " (released ones hold no id: give --participant)"
    if not hit:
        raise ValueError(said)
    if len(hit) > 1:
        ids = ", ".join(r.id for r in hit)
        raise ValueError(
            f"--platform-id: {len(hit)} participants match ({ids}): give --participant"
        )
    row = hit[0]
    if row.released is not None:
        raise ValueError(f"--participant: {row.id} was released already")
    return row


def release(store: Any, key: str, platform_id: str | None, pid: str | None) -> str:
    """Release the participant of experiment ``key`` (:func:`find_participant`); a line."""
    row = find_participant(store, key, platform_id, pid)
    if not store.release_participant(row.id, time.time()):
        raise ValueError(f"--participant: {row.id} was released already")
    who = "no platform id" if row.platform_id is None else f"platform id {row.platform_id}"
    state = "withdrawn" if row.withdrawn is not None else "kept as it was"
    return (
        f"released {row.id} ({who}, enrolled as number {row.number}; its answers {state}): "
        "the next visit of its platform id starts afresh"
    )
