"""The collect rules that several readers share, each in one place.

The refitter, the owner's dashboard, the export and the collect mode read a collect's
rows through these:

* the answers that count: :func:`is_counted` (the store's rule, here with the others);
* the sessions of a collect: :func:`collect_sessions`, by the store's column
  (``SessionRow.experiment``), never a prefix parsed;
* a participant's sampler: :func:`participant_sampler` (their arm, else the one their
  session names, else the seeded draw of the participants enrolled before arms were
  kept), the same rule that balances the arms at enrolment (:func:`collect_arms`);
* the response-time rule: :func:`median_ms` (a median of at least :data:`FAST_AFTER`
  times) and its bounds :data:`FAST_MS` (the page's measure) and :data:`FAST_SERVER_MS`
  (the server's clock's default: a server setting recorded with the experiment, which
  every check reads, :func:`..clock.fast_server_ms`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from ...utils import derived_seed
from ..clock import FAST_SERVER_MS, bound
from ..modes.collect import CollectMode
from ..store import Arms, SessionRow, Store, counted_answers, is_counted

__all__ = [
    "collect_flags",
    "is_counted",
    "counted_answers",
    "collect_sessions",
    "median_ms",
    "participant_sampler",
    "drawn_sampler",
    "collect_arms",
    "ARM_SEED",
    "FAST_MS",
    "FAST_AFTER",
    "FAST_SERVER_MS",
    "AGREEMENT_AFTER",
]

# a participant whose median response time (as the page measured it, over at least
# FAST_AFTER answers) is under this clicks without looking: flagged. People took seconds
# per triplet in NEXT's and salmon's studies.
FAST_MS, FAST_AFTER = 250, 5
# the same bound on the server's own time per screen (shown to answered), whatever the
# page claims, is :data:`..clock.FAST_SERVER_MS`'s default: a server's setting, recorded with
# the experiment (:func:`..clock.fast_server_ms`)
# the agreement rule (.quality) judges a participant from this many picks (skips count):
# a collect file whose max_queries, less its check screens, leaves fewer cannot be judged
AGREEMENT_AFTER = 40
ARM_SEED = 7  # purpose of the seeds that drew participants' samplers before arms were kept


def median_ms(values: list[float]) -> float | None:
    """The median of ``values`` (times in ms), or None when fewer than :data:`FAST_AFTER`.

    The one response-time rule: the checks flag by it and the dashboard shows it.
    """
    return float(np.median(values)) if len(values) >= FAST_AFTER else None


def collect_sessions(
    store: Store, key: str | None, *, withdrawn: bool = False
) -> Iterator[SessionRow]:
    """The sessions of the collect of key ``key``, by creation time.

    ``key`` None: of every collect in the database (sessions of the collect mode that
    belong to an experiment). ``withdrawn``: those of withdrawn participants too.
    """
    for s in store.iter_sessions(withdrawn=withdrawn, experiment=key):
        if key is not None or (s.experiment is not None and s.mode == CollectMode.name):
            yield s


def drawn_sampler(samplers: Any, seed: int, number: int) -> str:
    """The sampler drawn for enrolment ``number`` before arms were kept (before 0.3.0).

    From the collect's ``seed``, :data:`ARM_SEED` and ``number``, as then.
    """
    names = tuple(samplers)
    rng = np.random.default_rng(derived_seed(int(seed), ARM_SEED, int(number)))
    return str(names[int(rng.integers(len(names)))])


def collect_arms(config: Any) -> Arms:
    """The collect ``config``'s arms: its samplers, balanced at enrolment.

    With the rule of :func:`participant_sampler` (:meth:`~..store.Arms.sampler`).
    """
    names, seed = tuple(config.samplers), int(config.seed)
    return Arms(names, seed, drawn=lambda number: drawn_sampler(names, seed, number))


def participant_sampler(config: Any, row: Any, session: SessionRow | None = None) -> str:
    """The sampler of participant ``row`` (a ``ts_participants`` row) of collect ``config``.

    Their arm, assigned at enrolment; else (enrolled before arms were kept) the sampler
    their ``session`` names (``params["sampler"]``), else the one drawn for their
    enrolment number (:func:`drawn_sampler`), which their session starts with.
    """
    params = None if session is None else session.params
    got = collect_arms(config).sampler(getattr(row, "arm", None), int(row.number), params)
    assert got is not None  # (collect_arms draws one when nothing names it)
    return got


def collect_flags(
    store: Store, key: str, fast_server_ms: float | None = None
) -> dict[str, list[dict]]:
    """The flags of every participant of the collect of key ``key``, by participant id.

    ``fast_server_ms`` None: as its server recorded it (:func:`~..clock.fast_server_ms`).
    """
    from .quality import checks, read_agreement

    answered, scores = store.all_answers(), read_agreement(store, key)
    fast_server_ms = bound(store, key, fast_server_ms)
    out = {}
    for s in collect_sessions(store, key, withdrawn=True):
        history = answered.get(s.id, [])
        got = checks(history, scores.get(s.id), fast_server_ms=fast_server_ms)
        out[str(s.participant)] = got["flags"]
    return out
