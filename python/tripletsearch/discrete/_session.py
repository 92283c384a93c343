"""The database search session: :class:`DiscreteSearch`, asked and told."""

from __future__ import annotations

import copy
import numbers
from typing import Any

import numpy as np

from .. import _core
from .._deprecation import keyword_only, renamed
from .._sync import new_lock, synchronized
from .._user_model import InferredUser
from .._validation import check_int, check_items, check_state, resolve_n_jobs, seed_from
from ._items import _check_offered, _check_shown, _in, _position, _store
from ._settings import _STATE_VERSION, DiscreteSettings
from ._state import Answers, replay, snapshot, state_errors

__all__ = ["DiscreteSearch"]


class DiscreteSearch(InferredUser):
    """An interactive search session over a database of items.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Item embedding (finite, no duplicate rows, n >= n_choices).
    method : {"gamma-ckl", "gauss", "random"}
    gamma : "auto" (default) or float > 0
        gamma-CKL power of the user model: "auto" infers it while searching (a grid of 13
        values from 0.5 to 32 marginalized in the posterior, with the prior of
        :mod:`tripletsearch._user_model`; query selection draws (item, gamma) pairs);
        estimate: :attr:`gamma_`, :attr:`gamma_interval_`. Measured (n = 1000, d = 5,
        pairs, 1000 targets): 2 %, 6 % and 7 % more queries than a searcher told the
        user's gamma of 1.5, 3 and 6, where assuming 3 costs 10 %, 0 % and 6 % (README).
        A number: assumed (the paper's study: 3); with method "gauss" or "random" the
        value is unused.
    lapse : float in [0, 1) or "auto"
        gamma-CKL: the probability of a random answer (P(c) = lapse / k + (1 - lapse)
        P_gamma(c)), or "auto": inferred (uniform on {0, 0.02, 0.05, 0.1, 0.2, 0.3}).
        A lapse rate or "auto" keeps one weight per item and hypothesis (13 x 6 with both
        inferred): memory and the update grow by that factor.
    r : float > 0
        Proto-query distance in units of the posterior's standard deviation (study: 2).
    sigma : float > 0
        GaussSearch probit noise, in embedding units (study: 0.1).
    n_choices : int in [2, 64]
        Items per query (the study showed 4).
    selection : {"auto", "infogain", "weighted", "paper", "nearest"}
        gamma-CKL selection rule (see the module docstring); "auto": "infogain" up to
        100,000 items, "weighted" beyond.
    opening : {"uniform", "random", "principal"}
        The first screen. "uniform" (the default): ``n_choices`` distinct items drawn
        uniformly at random from the session's ``random_state`` by one rule shared by
        every method, so the same seed opens every method on the same screen and no
        method can be told by its opening (the methods differ from the second screen on).
        "random": gamma-CKL turns the prior's principal axes by a rotation drawn from the
        seed, GaussSearch opens with its mirror sample, the random baseline with its own
        draw (0.3.0's default: on a small catalogue gamma-CKL's openings repeat and can be
        told from GaussSearch's). "principal": gamma-CKL opens on the principal axes
        themselves, as before 0.3.0. A state of :meth:`from_dict` keeps the opening it was
        written with. The price of "uniform", measured (the guide's "The first screen"):
        gamma-CKLSearch +0.2 to +0.45 queries to find, GaussSearch 0.06 to 5.9 fewer.
    guesses : int >= 0
        Best guesses (the guide's "Best guesses"): with each screen, :attr:`offered` gives
        the ``guesses`` most probable items not on it (the strip), for the person to click
        when they see their target there; a strip passed over is evidence that the target
        is not in it. 0 (the default): the paper's protocol. gamma-CKL and GaussSearch only;
        ``guesses + n_choices`` at most the number of items.
    miss : float in [0, 1) or "auto"
        How often the person passes over their target in the strip. gamma-CKL multiplies
        each passed-over item's weight by it (0: ruled out), or with "auto" (the default)
        by its marginal over the lapse rate's grid {0, 0.02, 0.05, 0.1, 0.2, 0.3} (uniform:
        0.11 for a first pass-over, 0.21 for a second, ...). GaussSearch keeps passed-over
        items out of later strips, and with ``miss=0`` out of later screens too.
    random_state : None, int or numpy.random.Generator
        Seeds the session (its opening, its posterior draws, GaussSearch's and random
        queries): sessions of different seeds open differently.
    n_jobs : int or None
        Threads for the passes over the database (None: all cores).

    Examples
    --------
    >>> X = np.random.default_rng(0).uniform(-1, 1, size=(500, 2))
    >>> s = DiscreteSearch(X, random_state=0)
    >>> shown = s.ask()          # indices to show
    >>> s.tell(int(shown[0]))    # the user picked the first one
    >>> s.n_queries
    1
    """

    def __init__(
        self,
        X: Any,
        *,
        method: str = "gamma-ckl",
        gamma: float | str = "auto",
        r: float = 2.0,
        sigma: float = 0.1,
        n_choices: int = 2,
        selection: str = "auto",
        lapse: float | str = 0.0,
        opening: str = "uniform",
        guesses: int = 0,
        miss: float | str = "auto",
        random_state: Any = None,
        n_jobs: int | None = None,
    ):
        settings = DiscreteSettings(
            method, gamma, r, sigma, n_choices, selection, lapse, opening, guesses, miss
        )
        self._setup(X, settings, seed_from(random_state), resolve_n_jobs(n_jobs))

    @classmethod
    def over_store(
        cls,
        X: Any,
        store: _core.ItemStore,
        *,
        method: str = "gamma-ckl",
        gamma: float | str = "auto",
        sigma: float = 0.1,
        n_choices: int = 2,
        opening: str = "uniform",
        guesses: int = 0,
        random_state: Any = None,
        n_jobs: int | None = None,
    ) -> DiscreteSearch:
        """A session over ``X`` whose item store is ``store``, built from ``X`` before.

        The store (an :class:`~tripletsearch.discrete.ItemStore` of ``X``, e.g. the one
        ``ItemStore.map`` shares between a server's worker processes) is used as it is,
        not rebuilt; the other arguments are :class:`DiscreteSearch`'s (``r``, ``lapse``,
        ``selection`` and ``miss`` at their defaults). ``ValueError`` when the store's size
        is not ``X``'s.
        """
        obj = cls.__new__(cls)
        settings = DiscreteSettings(
            method, gamma, 2.0, sigma, n_choices, "auto", 0.0, opening, guesses
        )
        obj._setup(X, settings, seed_from(random_state), resolve_n_jobs(n_jobs), store)
        return obj

    def _setup(
        self,
        X: Any,
        settings: DiscreteSettings,
        seed: int,
        threads: int,
        store: _core.ItemStore | None = None,
    ) -> None:
        self._X = check_items(X)
        self._settings = settings.resolve(self._X.shape[0])
        self._config = self._settings.to_native()
        self._seed, self._threads = seed, threads
        if store is not None and (store.n, store.d) != self._X.shape:
            raise ValueError(
                f"store: {store.n} items of {store.d} dimensions for X of shape {self._X.shape}"
            )
        self._store = _store(self._X) if store is None else store
        self._prior: _core.DiscreteSearcher | None = None  # spawn's: never asked nor told
        self._reset()

    @keyword_only("random_state")  # outermost: its warning names the caller
    @synchronized
    def spawn(self, *, random_state: Any = None) -> DiscreteSearch:
        """A new session over the same database and parameters.

        It shares this one's prepared copy of the database and its prior, computed once and
        copied (no rebuild: what a server does per visitor). The same as
        ``DiscreteSearch(X, ..., random_state=random_state)``.
        """
        if self._prior is None:
            self._prior = _core.DiscreteSearcher(self._store, self._config, 0, self._threads)
        obj = copy.copy(self)
        obj._seed = seed_from(random_state)
        obj._reset(self._prior.copy(obj._seed))
        return obj

    @property
    def state_bytes(self) -> int:
        """The bytes of this session's own state in the native core.

        Its posterior weights (single precision, one array per user hypothesis with
        ``gamma="auto"``), shown items and moments, not the item store that sessions share:
        what a server keeps per live session.
        """
        return int(self._searcher.state_bytes)

    def _reset(self, searcher: _core.DiscreteSearcher | None = None) -> None:
        self._lock = new_lock()
        self._searcher = (
            _core.DiscreteSearcher(self._store, self._config, self._seed, self._threads)
            if searcher is None
            else searcher
        )
        self._answers = Answers(self.guesses > 0)  # the pending screen, the history, the end

    # ------------------------------------------------------------------ parameters
    @synchronized
    def _user_grids(self) -> Any:
        return self._searcher.user_posterior()

    @property
    def settings(self) -> DiscreteSettings:
        """The search's settings (``selection="auto"`` decided)."""
        return self._settings

    @property
    def method(self) -> str:
        """The search method."""
        return self.settings.method

    @property
    def selection(self) -> str:
        """gamma-CKLSearch's selection rule ("auto" decided)."""
        return self.settings.selection

    @property
    def r(self) -> float:
        """Proto-query distance in posterior standard deviations."""
        return float(self.settings.r)

    @property
    def sigma(self) -> float:
        """GaussSearch probit noise."""
        return float(self.settings.sigma)

    @property
    def n_choices(self) -> int:
        """Items per query."""
        return int(self.settings.n_choices)

    @property
    def guesses(self) -> int:
        """Best guesses offered with each screen (0: none, the paper's protocol)."""
        return int(self.settings.guesses)

    @property
    @synchronized
    def offered(self) -> np.ndarray:
        """The pending screen's strip of best guesses, most probable first.

        The items :meth:`ask`'s screen comes with (at most ``guesses``; empty without
        guesses or without a pending screen): the most probable items not on the screen
        and not shown before (GaussSearch: nor passed over). :meth:`tell` an item of the
        strip to end the search there, an item of the screen (or None) to pass it over.
        """
        a = self._answers
        return a.offered.copy() if a.pending is not None else a.offered[:0].copy()

    # ------------------------------------------------------------------ properties
    @property
    def n_items(self) -> int:
        """Number of items in the database."""
        return self._X.shape[0]

    @property
    @synchronized
    def n_queries(self) -> int:
        """Queries asked and answered so far (the query that showed the target counts)."""
        return len(self._answers.history)

    @property
    @synchronized
    def done(self) -> bool:
        """True once the target was found or every item has been shown."""
        return self._answers.done

    @property
    @synchronized
    def target(self):
        """The found item, or None."""
        return self._answers.target

    @property
    @synchronized
    def history(self) -> list:
        """One dict per query, keyed as :meth:`observe`'s arguments.

        ``shown`` (indices), ``item`` (the item picked, None for a skip) and ``found``
        (bool), and with ``guesses`` the strip ``offered``; ``observe(**record)`` replays it.
        """
        return [dict(h) for h in self._answers.history]

    @property
    @synchronized
    def posterior(self) -> np.ndarray:
        """Probability of each item being the target, shape (n,).

        Shown items have 0 (gauss: the belief's density at the items, normalized; random:
        uniform).
        """
        return self._searcher.posterior()

    @synchronized
    def top(self, k: int = 10) -> np.ndarray:
        """Indices of the k most probable unshown items, most probable first."""
        k = check_int(k, "k", minimum=1)
        p = self.posterior
        order = np.lexsort((np.arange(len(p)), -p))
        return order[: min(k, len(p))]

    # ------------------------------------------------------------------ protocol
    @synchronized
    def ask(self) -> np.ndarray:
        """Indices of the items to show next (the same ones again until answered).

        Returns
        -------
        ndarray of int64, shape (<= n_choices,)
            Empty when every item has been shown (the search is then ``done``).
        """
        a = self._answers
        if a.done:
            raise RuntimeError("the search is done; start a new DiscreteSearch")
        if a.pending is None:
            q = self._searcher.select()
            if len(q) == 0:
                a.done = True
                return q
            a.pending = q
            a.offered = self._searcher.offer(q) if self.guesses else q[:0]
        return a.pending.copy()

    def _check_pending(self, what: str) -> np.ndarray:
        """The pending query's items; raises when there is none to answer."""
        if self._answers.done:
            raise RuntimeError(f"{what} after the search is done")
        if self._answers.pending is None:
            raise RuntimeError(f"{what} before ask(): there is no query to answer")
        return self._answers.pending

    def _update(self, shown: np.ndarray, pos: int, offered: np.ndarray) -> None:
        """The answer into the posterior and the history.

        The item at ``pos`` of ``shown`` picked (-1: a skip); the strip ``offered`` passed
        over.
        """
        self._searcher.update(shown, pos, offered if len(offered) else None)
        item = None if pos < 0 else int(shown[pos])
        self._answers.record(shown, item, offered, last=self._searcher.n_unshown == 0)

    @renamed(choice="item")  # outermost: its warning names the caller
    @synchronized
    def tell(self, item: Any) -> None:
        """Record the user's answer to the pending query.

        Parameters
        ----------
        item : int or None
            The shown item the user picked as closest to their target (an item index);
            None to skip (the shown items are then only ruled out as the target). With
            ``guesses``: an item of the strip (:attr:`offered`) is the target, found (the
            search ends); otherwise the strip was passed over.
        """
        pending = self._check_pending("tell")
        offered = self._answers.offered
        if item is not None and _in(item, offered):
            self._answers.end(pending, int(item), offered)
            return
        self._update(pending, _position(item, pending, offered=offered), offered)

    @renamed(index="item")
    @synchronized
    def found(self, item: Any) -> None:
        """The user saw their target, ``item``, among the pending query's items: the end.

        With ``guesses``, ``item`` may be an item of the strip (:attr:`offered`).
        """
        pending = self._check_pending("found")
        if isinstance(item, (bool, np.bool_)) or not isinstance(item, numbers.Integral):
            raise TypeError(f"item: expected an item index, got {type(item).__name__}")
        offered = self._answers.offered
        if int(item) not in pending and not _in(item, offered):
            _position(item, pending, offered=offered)  # raises, naming the item
        self._answers.end(pending, int(item), offered)

    @renamed(choice="item")
    @synchronized
    def observe(self, shown: Any, item: Any, found: bool = False, offered: Any = None) -> None:
        """Record the answer to items shown elsewhere.

        Shown by another process, or by an earlier version of the library (a stored session
        replayed from its screens as shown). Replaces any pending query.

        Parameters
        ----------
        shown : sequence of int
            The items shown (1 to n_choices distinct indices).
        item : int or None
            The shown item picked as closest (None: a skip); with ``found``, the target,
            shown or offered.
        found : bool
            ``item`` is the target: the search ends.
        offered : sequence of int, optional
            The strip of best guesses shown with the screen (at most ``guesses`` distinct
            items, none of them in ``shown``): passed over unless ``found`` names one.
        """
        if self._answers.done:
            raise RuntimeError("observe after the search is done")
        q = _check_shown(shown, self.n_items, self.n_choices)
        if not isinstance(found, (bool, np.bool_)):
            raise TypeError(f"found: expected a bool, got {type(found).__name__}")
        strip = _check_offered(offered, q, self.guesses, self.n_items)
        if found and item is not None and _in(item, strip):
            self._answers.observed = True
            self._answers.end(q, int(item), strip)
            return
        pos = _position(item, q, offered=strip)
        if found and pos < 0:
            raise ValueError("item: found=True needs the found item")
        self._answers.observed = True
        if found:
            self._answers.end(q, int(q[pos]), strip)
            return
        self._update(q, pos, strip)

    # ------------------------------------------------------------------ persistence
    @synchronized
    def to_dict(self) -> dict:
        """A JSON-safe snapshot (parameters, seed, history).

        Restore with ``DiscreteSearch.from_dict(state, X)``. X itself is not stored, only a
        fingerprint.
        """
        return snapshot(self._X, self.settings, self._user_state(), self._seed, self._answers)

    @classmethod
    def from_dict(cls, state: Any, X: Any, *, n_jobs: int | None = None) -> DiscreteSearch:
        """Rebuild a session from :meth:`to_dict` output and the same database ``X``.

        The posterior is replayed from the history, which is checked on the way. History
        records of states written before 0.2.0 name the picked item ``choice``.
        """
        seed = check_state(state, tuple(range(1, _STATE_VERSION + 1)))
        obj = cls.__new__(cls)
        with state_errors():
            obj._setup(X, DiscreteSettings.from_dict(state), seed, resolve_n_jobs(n_jobs))
        replay(obj, obj._answers, state, obj._X)
        return obj

    @synchronized
    def __repr__(self) -> str:
        return (
            f"DiscreteSearch(n_items={self.n_items}, method={self.method!r}, "
            f"n_choices={self.n_choices}, n_queries={self.n_queries}, done={self._answers.done})"
        )
