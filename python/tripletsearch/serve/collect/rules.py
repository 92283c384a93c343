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

import random
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ...utils import derived_seed
from ..clock import FAST_SERVER_MS
from ..store import SessionRow, Store, counted_answers, is_counted
from .screens import MODE

__all__ = [
    "is_counted",
    "counted_answers",
    "collect_sessions",
    "median_ms",
    "participant_sampler",
    "drawn_sampler",
    "collect_arms",
    "Arms",
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


class Arms:
    """A collect's samplers, assigned at enrolment in balanced blocks (see ``enrol``).

    ``order(block)``: the samplers in the seeded order of enrolments ``block * len`` to
    ``(block + 1) * len - 1``, which breaks ties between the least assigned.
    ``sampler(arm, number, params)``: a participant's sampler (the one rule). ``drawn``:
    the sampler of a participant enrolled before arms were kept, by enrolment number (their
    session's parameters name it once it started; None: unknown until then).
    """

    def __init__(self, names: Any, seed: int, drawn: Callable[[int], str] | None = None):
        self.names, self.seed, self.drawn = tuple(names), int(seed), drawn

    def order(self, block: int) -> list[str]:
        """The samplers in block ``block``'s seeded order."""
        names = list(self.names)
        random.Random(f"arms:{self.seed}:{block}").shuffle(names)
        return names

    def pick(self, number: int, counts: dict[str, int]) -> str:
        """The arm of enrolment ``number``: the least assigned, ties in the block's order."""
        order = self.order(number // len(self.names))
        least = min(counts.get(a, 0) for a in self.names)
        return next(a for a in order if counts.get(a, 0) == least)

    def sampler(self, arm: str | None, number: int, params: dict | None) -> str | None:
        """The sampler of participant ``number``: their ``arm`` (assigned at enrolment).

        Else (enrolled before arms were kept) the one their session's ``params`` name,
        else :attr:`drawn`'s (None without it).
        """
        if arm:
            return str(arm)
        named = (params or {}).get("sampler")
        if named is not None:
            return str(named)
        return None if self.drawn is None else self.drawn(int(number))


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
        if key is not None or (s.experiment is not None and s.mode == MODE):
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

    With the rule of :func:`participant_sampler` (:meth:`Arms.sampler`).
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
