"""Search a database of n items by comparisons (the paper's appendix, gamma-CKLSearch).

A user looks for one of n items with known embedding ``X`` by repeatedly picking, among
the items shown, the one closest to the target they have in mind, until the target itself
is shown. :class:`DiscreteSearch` is an ask/tell session (JSON-persistable for a web
server); :func:`simulate_discrete` runs many searches with simulated users natively.

Methods
-------
``"gamma-ckl"``
    gamma-CKLSearch: a posterior over the n items under the gamma-CKL oracle (uniform
    prior, Bayes update with the k-alternative choice model), its mean and covariance,
    the top eigenpair(s) by Jacobi rotations, proto-queries ``mean +- r sqrt(lambda) v``
    (k = 4: the next eigen-direction gives the second pair), and the items nearest to the
    protos under a posterior weighting (``selection``).
``"gauss"``
    GaussSearch (Chumbalov et al. 2020): a Gaussian belief N(mu, Sigma) over the target's
    location (prior: the items' mean and covariance), the probit likelihood with noise
    ``sigma``, a moment-matched (ADF) update per pairwise preference (k items: the chosen
    one beats each other one, applied in turn), and SampleMirror queries: z ~ N(mu, Sigma)
    and its mirror image across the hyperplane through mu orthogonal to the top eigenvector,
    each snapped to the nearest unshown item.
``"random"``
    k unshown items uniformly at random.

Selection rules (gamma-CKL)
---------------------------
``"infogain"``: candidates are the weighted-nearest items to protos at five radii along the
top eigen-directions (and the most probable items); the pair (k-tuple) with the largest
expected one-step information about {target shown as i, target shown as j, i wins, j wins}
is asked (quadratic entropy, the expectation over 128 posterior draws).
``"weighted"``: argmin ``||x_i - z||^2 / p_i`` ("near and probable", the text's intent).
``"paper"``: the appendix's literal ``argmin p_i ||x_i - z||``, which favours *improbable*
items (kept to measure it). ``"nearest"``: argmin ``||x_i - z||`` among items with p_i > 0.

Openings
--------
``"uniform"`` (the default): the first screen is ``n_choices`` distinct items drawn
uniformly from the session's seed by one rule for every method (the same seed, n and k:
the same screen); each method's own rule from the second screen on. ``"random"``: gamma-CKL
turns its first query's axes by a seeded rotation, the others open by their own rule.
``"principal"``: gamma-CKL opens on the principal axes.

The database is stored in single precision (a pass over it is what a query costs); all
arithmetic is in double precision.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import math
import numbers
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

import numpy as np

from . import _core
from ._deprecation import keyword_only, renamed, warn_renamed
from ._distributed import check_client, chunk_bounds, chunk_threads, map_chunks, n_chunks
from ._params import Interval, StrOptions, validate_params
from ._sync import new_lock, synchronized
from ._user_model import InferredUser, auto_or
from ._validation import (
    check_allocation,
    check_index_array,
    check_index_range,
    check_int,
    check_items,
    check_random_state,
    check_real,
    check_state,
    check_X,
    resolve_n_jobs,
    row_blocks,
    seed_from,
)
from .oracles import GammaCKL, Oracle

__all__ = [
    "DiscreteSearch",
    "DiscreteSettings",
    "simulate_discrete",
    "DiscreteSimulation",
    "METHODS",
    "SELECTIONS",
]

# public name -> _core.SearchMethod / _core.Selection member
METHODS = {"gamma-ckl": "GammaCKL", "gauss": "Gauss", "random": "Random"}
SELECTIONS = {
    "weighted": "Weighted",
    "paper": "Paper",
    "nearest": "Nearest",
    "infogain": "InfoGain",
}
_AUTO_INFOGAIN_MAX_N = 100_000
# 2: the settings' opening (a state of version 1 replays as it opened: "principal");
# 3: the opening "uniform" (a state of version 2 keeps its "random" or "principal")
# 4: best guesses (a state of version 3 or before has none: guesses=0)
_STATE_VERSION = 4
# public name -> _core.Opening member; the first is new sessions' default
OPENINGS = {"uniform": "Uniform", "random": "Random", "principal": "Principal"}


_AUTO_GAMMA = 3.0  # the native configuration's gamma when gamma is "auto" (unused)


@dataclass(frozen=True)
class DiscreteSettings:
    """All the settings of a database search, checked and normalized on construction.

    The arguments of :class:`DiscreteSearch` (and the searcher's of
    :func:`simulate_discrete`) in one frozen object: :meth:`to_native` gives the core's
    configuration (which pickles, for a Dask worker), :meth:`to_dict` / :meth:`from_dict`
    the JSON form a session's state keeps. ``gamma`` and ``lapse`` are gamma-CKLSearch's:
    with another method "auto" stands for the unused defaults (3.0 and 0.0).
    ``selection="auto"`` depends on the database's size: :meth:`resolve` picks the rule.
    """

    method: str = "gamma-ckl"
    gamma: float | str = "auto"
    r: float = 2.0
    sigma: float = 0.1
    n_choices: int = 2
    selection: str = "auto"
    lapse: float | str = 0.0
    opening: str = "uniform"
    guesses: int = 0
    miss: float | str = "auto"

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "method": [StrOptions(METHODS)],
        "gamma": auto_or(Interval(numbers.Real, 0, None, closed="neither")),
        "r": [Interval(numbers.Real, 0, None, closed="neither")],
        "sigma": [Interval(numbers.Real, 0, None, closed="neither")],
        "n_choices": [Interval(numbers.Integral, 2, _core.MAX_CHOICES, closed="both")],
        "selection": [StrOptions({"auto", *SELECTIONS})],
        "lapse": auto_or(Interval(numbers.Real, 0, 1, closed="left")),
        "opening": [StrOptions(set(OPENINGS))],
        "guesses": [Interval(numbers.Integral, 0, None, closed="left")],
        "miss": auto_or(Interval(numbers.Real, 0, 1, closed="left")),
    }

    def __post_init__(self) -> None:
        p = validate_params(dataclasses.asdict(self), self._parameter_constraints)
        if p["method"] != "gamma-ckl":  # gamma and the lapse rate are unused
            p["gamma"] = _AUTO_GAMMA if p["gamma"] == "auto" else p["gamma"]
            p["lapse"] = 0.0 if p["lapse"] == "auto" else p["lapse"]
        if p["method"] == "random":
            if p["guesses"] > 0:
                raise ValueError("guesses: the random method offers no guesses (use 0)")
            p["miss"] = 0.0 if p["miss"] == "auto" else p["miss"]
        p["guesses"] = int(p["guesses"])
        for name, value in p.items():
            object.__setattr__(self, name, value)

    def resolve(self, n_items: int) -> DiscreteSettings:
        """These settings with ``selection="auto"`` decided for a database of ``n_items``.

        "infogain" up to 100,000 items (gamma-CKL), "weighted" beyond.
        """
        if self.selection != "auto":
            return self
        big = self.method != "gamma-ckl" or n_items > _AUTO_INFOGAIN_MAX_N
        return dataclasses.replace(self, selection="weighted" if big else "infogain")

    def to_native(self) -> _core.SearchConfig:
        """The core's configuration (it checks the ranges again, ValueError naming them)."""
        if self.selection == "auto":
            raise ValueError("selection: 'auto' is decided by resolve(n_items) first")
        gamma_auto, lapse_auto = self.gamma == "auto", self.lapse == "auto"
        return _core.SearchConfig(
            method=getattr(_core.SearchMethod, METHODS[self.method]),
            gamma=_AUTO_GAMMA if gamma_auto else float(self.gamma),
            r=self.r,
            sigma=self.sigma,
            n_choices=self.n_choices,
            selection=getattr(_core.Selection, SELECTIONS[self.selection]),
            lapse=0.0 if lapse_auto else float(self.lapse),
            gamma_auto=gamma_auto,
            lapse_auto=lapse_auto,
            opening=getattr(_core.Opening, OPENINGS[self.opening]),
            guesses=self.guesses,
            miss=0.0 if self.miss == "auto" else float(self.miss),
            miss_auto=self.miss == "auto",
        )

    def to_dict(self) -> dict[str, Any]:
        """The settings as a JSON-safe dict (the keys of a session's state)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, state: dict[str, Any]) -> DiscreteSettings:
        """The settings of :meth:`to_dict`.

        A state written before the lapse rate has none; one written before the opening
        (state version 1) opened on the principal axes; one of version 2 keeps the opening
        it names ("random" or "principal"), whatever the default of new sessions; one
        written before best guesses (version 3 or before) offers none.
        """
        names = [f.name for f in dataclasses.fields(cls)]
        later = ("lapse", "opening", "guesses", "miss")
        given = {k: state[k] for k in names if k not in later}
        return cls(
            **given,
            lapse=state.get("lapse", 0.0),
            opening=state.get("opening", "principal"),
            guesses=state.get("guesses", 0),
            miss=state.get("miss", 0.0),
        )


def _store(X: np.ndarray) -> _core.ItemStore:
    """The searcher's store: centred and scaled, items that coincide in it rejected.

    The search is scale-free; GaussSearch's sigma is rescaled by the core. Coinciding items
    raise ValueError.
    """
    return _core.ItemStore(X, scaled=True, distinct=True)


def _fingerprint(X: np.ndarray) -> str:
    """SHA-256 of the items as float64 bytes, in blocks of rows (no copy of the catalogue)."""
    h = hashlib.sha256()
    for rows in row_blocks(X):
        h.update(np.ascontiguousarray(X[rows], dtype=np.float64).data)
    return h.hexdigest()[:32]


def _position(
    item: Any, shown: np.ndarray, name: str = "item", offered: np.ndarray | None = None
) -> int:
    """The position of ``item`` among ``shown`` (None: -1, a skip).

    ``offered``: the strip, named in the error (an item there is handled by the caller).
    """
    if item is None:
        return -1
    if isinstance(item, (bool, np.bool_)) or not isinstance(item, numbers.Integral):
        raise TypeError(f"{name}: expected an item index or None, got {type(item).__name__}")
    hits = np.nonzero(shown == int(item))[0]
    if len(hits) == 0:
        if offered is not None and int(item) in offered:
            raise ValueError(
                f"{name}: item {item} was offered, not shown: it is picked only as the "
                "target (found=True)"
            )
        strip = "" if offered is None or not len(offered) else f", offered: {offered.tolist()}"
        what = "shown" if not strip else "shown nor offered"
        raise ValueError(f"{name}: item {item} was not {what} (shown: {shown.tolist()}{strip})")
    return int(hits[0])


def _in(item: Any, items: np.ndarray) -> bool:
    """Whether ``item`` (an item index; anything else: False) is among ``items``."""
    if isinstance(item, (bool, np.bool_)) or not isinstance(item, numbers.Integral):
        return False
    return bool(len(items)) and int(item) in items


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
    def _over_store(
        cls,
        X: Any,
        store: _core.ItemStore,
        *,
        method: str = "gamma-ckl",
        gamma: float | str = "auto",
        sigma: float = 0.1,
        n_choices: int = 2,
        opening: str = "uniform",
        random_state: Any = None,
        n_jobs: int | None = None,
    ) -> DiscreteSearch:
        """A session over ``X`` whose item store is ``store``, built from ``X`` before.

        A server's templates take the store that ``ItemStore.map`` shares between its
        worker processes. ``ValueError`` when the store's size is not ``X``'s.
        """
        obj = cls.__new__(cls)
        settings = DiscreteSettings(method, gamma, 2.0, sigma, n_choices, "auto", 0.0, opening)
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
        self._pending: np.ndarray | None = None
        self._offered: np.ndarray = np.empty(0, dtype=np.int64)  # the pending screen's strip
        self._history: list[dict[str, Any]] = []
        self._done = False
        self._target: int | None = None
        self._observed = False  # some answers came from observe(): replayed as such

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
        return self._offered.copy() if self._pending is not None else self._offered[:0].copy()

    # ------------------------------------------------------------------ properties
    @property
    def n_items(self) -> int:
        """Number of items in the database."""
        return self._X.shape[0]

    @property
    @synchronized
    def n_queries(self) -> int:
        """Queries asked and answered so far (the query that showed the target counts)."""
        return len(self._history)

    @property
    @synchronized
    def done(self) -> bool:
        """True once the target was found or every item has been shown."""
        return self._done

    @property
    @synchronized
    def target(self):
        """The found item, or None."""
        return self._target

    @property
    @synchronized
    def history(self) -> list:
        """One dict per query, keyed as :meth:`observe`'s arguments.

        ``shown`` (indices), ``item`` (the item picked, None for a skip) and ``found``
        (bool), and with ``guesses`` the strip ``offered``; ``observe(**record)`` replays it.
        """
        return [dict(h) for h in self._history]

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
        if self._done:
            raise RuntimeError("the search is done; start a new DiscreteSearch")
        if self._pending is None:
            q = self._searcher.select()
            if len(q) == 0:
                self._done = True
                return q
            self._pending = q
            self._offered = self._searcher.offer(q) if self.guesses else q[:0]
        return self._pending.copy()

    def _check_pending(self, what: str) -> np.ndarray:
        """The pending query's items; raises when there is none to answer."""
        if self._done:
            raise RuntimeError(f"{what} after the search is done")
        if self._pending is None:
            raise RuntimeError(f"{what} before ask(): there is no query to answer")
        return self._pending

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
        offered = self._offered
        if item is not None and _in(item, offered):
            self._end(pending, int(item), offered)
            return
        self._record(pending, _position(item, pending, offered=offered), offered)

    @renamed(index="item")
    @synchronized
    def found(self, item: Any) -> None:
        """The user saw their target, ``item``, among the pending query's items: the end.

        With ``guesses``, ``item`` may be an item of the strip (:attr:`offered`).
        """
        pending = self._check_pending("found")
        if isinstance(item, (bool, np.bool_)) or not isinstance(item, numbers.Integral):
            raise TypeError(f"item: expected an item index, got {type(item).__name__}")
        offered = self._offered
        if int(item) not in pending and not _in(item, offered):
            _position(item, pending, offered=offered)  # raises, naming the item
        self._end(pending, int(item), offered)

    def _record_of(self, shown: np.ndarray, item: Any, found: bool, offered: np.ndarray) -> dict:
        """A history record (``offered`` only with guesses: the paper's records unchanged)."""
        record = {"shown": shown.tolist(), "item": item, "found": found}
        if self.guesses:
            record["offered"] = offered.tolist()
        return record

    def _end(self, shown: np.ndarray, target: int, offered: np.ndarray) -> None:
        """The search ends: ``target`` was among ``shown`` or ``offered``."""
        self._history.append(self._record_of(shown, target, True, offered))
        self._pending = None
        self._done = True
        self._target = target

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
        if self._done:
            raise RuntimeError("observe after the search is done")
        q = check_index_array(shown, "shown", 1, self.n_items)
        if not 1 <= len(q) <= self.n_choices:
            raise ValueError(f"shown: expected 1 to {self.n_choices} items, got {len(q)}")
        if len(np.unique(q)) != len(q):
            raise ValueError(f"shown: items must be distinct, got {q.tolist()}")
        if not isinstance(found, (bool, np.bool_)):
            raise TypeError(f"found: expected a bool, got {type(found).__name__}")
        strip = self._check_offered(offered, q)
        if found and item is not None and _in(item, strip):
            self._observed = True
            self._end(q, int(item), strip)
            return
        pos = _position(item, q, offered=strip)
        if found and pos < 0:
            raise ValueError("item: found=True needs the found item")
        self._observed = True
        if found:
            self._end(q, int(q[pos]), strip)
            return
        self._record(q, pos, strip)

    def _check_offered(self, offered: Any, shown: np.ndarray) -> np.ndarray:
        """The strip of :meth:`observe`, checked: at most ``guesses`` distinct items, unshown."""
        if offered is None:
            return np.empty(0, dtype=np.int64)
        g = check_index_array(offered, "offered", 1, self.n_items)
        if len(g) > self.guesses:
            raise ValueError(
                f"offered: expected at most guesses = {self.guesses} items, got {len(g)}"
            )
        if len(np.unique(g)) != len(g):
            raise ValueError(f"offered: items must be distinct, got {g.tolist()}")
        if np.isin(g, shown).any():
            raise ValueError(f"offered: items of the screen, got {g.tolist()} and {shown.tolist()}")
        return g

    def _record(self, shown: np.ndarray, pos: int, offered: np.ndarray) -> None:
        """Record the answer into the posterior and the history.

        The answer: the item at ``pos`` of ``shown`` picked; -1: a skip; the strip
        ``offered`` passed over.
        """
        self._searcher.update(shown, pos, offered if len(offered) else None)
        self._history.append(
            self._record_of(shown, None if pos < 0 else int(shown[pos]), False, offered)
        )
        self._pending = None
        if self._searcher.n_unshown == 0:
            self._done = True

    # ------------------------------------------------------------------ persistence
    @synchronized
    def to_dict(self) -> dict:
        """A JSON-safe snapshot (parameters, seed, history).

        Restore with ``DiscreteSearch.from_dict(state, X)``. X itself is not stored, only a
        fingerprint.
        """
        return {
            "version": _STATE_VERSION,
            "n_items": int(self.n_items),
            "dim": int(self._X.shape[1]),
            "fingerprint": _fingerprint(self._X),
            **self.settings.to_dict(),
            **self._user_state(),  # the estimates (for readers; from_dict replays)
            "seed": str(self._seed),
            "history": self.history,
            "pending": None if self._pending is None else self._pending.tolist(),
            **(
                {"pending_offered": self._offered.tolist() if self._pending is not None else None}
                if self.guesses
                else {}
            ),
            "done": self._done,
            # after observe(): the history is replayed as observed, not re-asked
            **({"observed": True} if self._observed else {}),
        }

    @classmethod
    def from_dict(cls, state: Any, X: Any, *, n_jobs: int | None = None) -> DiscreteSearch:
        """Rebuild a session from :meth:`to_dict` output and the same database ``X``.

        The posterior is replayed from the history, which is checked on the way. History
        records of states written before 0.2.0 name the picked item ``choice``.
        """
        seed = check_state(state, tuple(range(1, _STATE_VERSION + 1)))
        obj = cls.__new__(cls)
        try:
            obj._setup(X, DiscreteSettings.from_dict(state), seed, resolve_n_jobs(n_jobs))
        except (KeyError, TypeError) as exc:
            raise ValueError(f"state: malformed ({exc!r})") from None
        except ValueError as exc:  # a bad value in the state (X's own errors say "X:")
            raise (exc if str(exc).startswith("X:") else ValueError(f"state: {exc}")) from None
        if state.get("n_items") != obj.n_items or state.get("fingerprint") != _fingerprint(obj._X):
            raise ValueError("state: X is not the database this session was created with")
        history = state.get("history")
        if not isinstance(history, list):
            raise ValueError("state: history must be a list")
        for step, h in enumerate(history):
            obj._replay(step, h, observed=state.get("observed") is True)
        obj._replay_pending(
            state.get("pending"),
            observed=state.get("observed") is True,
            offered=state.get("pending_offered"),
        )
        if bool(state.get("done")) != obj._done:
            raise ValueError("state: 'done' does not match the history")
        return obj

    def _replay(self, step: int, record: Any, observed: bool) -> None:
        """Replay history record ``step`` of a state (asked again, or ``observed``)."""
        try:
            item = record["item"] if "item" in record else record["choice"]
            shown, found = record["shown"], record["found"]
            offered = record.get("offered")
        except (KeyError, TypeError, AttributeError):
            raise ValueError(f"state: history entry {step} is malformed") from None
        if self._done:
            raise ValueError(f"state: history continues after the search ended (entry {step})")
        if not observed:
            q = self.ask()
            if not isinstance(shown, list) or q.tolist() != shown:
                raise ValueError(
                    f"state: history entry {step} does not replay "
                    f"(shown {shown}, expected {q.tolist()})"
                )
            if self.guesses and offered != self._offered.tolist():
                raise ValueError(
                    f"state: history entry {step} does not replay "
                    f"(offered {offered}, expected {self._offered.tolist()})"
                )
        try:
            if observed:
                self.observe(shown, item, found, offered)
            else:
                self.found(item) if found else self.tell(item)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"state: history entry {step}: {exc}") from None

    def _replay_pending(self, pending: Any, observed: bool, offered: Any = None) -> None:
        """The state's pending query: as it was shown (``observed``), or asked again."""
        if pending is None:
            return
        if observed and not self._done:
            try:  # the pending items as they were shown
                q = check_index_array(pending, "pending", 1, self.n_items)
                strip = self._check_offered(offered, q)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"state: {exc}") from None
            if not 1 <= len(q) <= self.n_choices or len(np.unique(q)) != len(q):
                raise ValueError("state: the pending query is malformed")
            self._pending, self._offered = q, strip
        elif self.ask().tolist() != pending or (self.guesses and self._offered.tolist() != offered):
            raise ValueError("state: the pending query does not replay")

    @synchronized
    def __repr__(self) -> str:
        return (
            f"DiscreteSearch(n_items={self.n_items}, method={self.method!r}, "
            f"n_choices={self.n_choices}, n_queries={self.n_queries}, done={self._done})"
        )


# ---------------------------------------------------------------------- simulation


@dataclass
class DiscreteSimulation:
    """Result of :func:`simulate_discrete`.

    Attributes
    ----------
    n_queries : ndarray of int64, shape (runs,)
        Queries until the target was shown (the showing query counts), or max_queries.
    found : ndarray of bool, shape (runs,)
    targets : ndarray of int64, shape (runs,)
    """

    n_queries: np.ndarray
    found: np.ndarray
    targets: np.ndarray

    @property
    def mean(self) -> float:
        """Mean number of queries per search."""
        return float(self.n_queries.mean())

    @property
    def stderr(self) -> float:
        """Standard error of :attr:`mean`."""
        return float(self.n_queries.std(ddof=1) / math.sqrt(len(self.n_queries)))

    @property
    def median(self) -> float:
        """Median number of queries per search."""
        return float(np.median(self.n_queries))

    def __str__(self) -> str:
        return (
            f"{len(self.n_queries)} searches: mean {self.mean:.2f} +- {self.stderr:.2f}, "
            f"median {self.median:g} queries, found {self.found.mean():.1%}"
        )


class DiscreteChunk(NamedTuple):
    """The records of one chunk of searches (one native call)."""

    n_queries: np.ndarray
    found: np.ndarray


def _simulate_chunk(
    targets: np.ndarray,
    options: _core.DiscreteSimOptions,
    *,
    X: np.ndarray,
    oracle_X: np.ndarray | None,
    oracle: Oracle,
    config: _core.SearchConfig,
    seed: int,
    n_jobs: int | None,
) -> DiscreteChunk:
    """Run searches ``options.first_run``, ``options.first_run + 1``, ... for ``targets``.

    One native call: on a Dask worker for a chunk, or locally for the whole study.
    """
    store = _store(X)
    # the user's positions: only a scale-free user model may see them rescaled
    OX = X if oracle_X is None else oracle_X
    if oracle_X is None and oracle._scale_free:
        user_store = store
    else:
        user_store = _core.ItemStore(OX, scaled=oracle._scale_free)
    return DiscreteChunk(
        *_core.simulate_discrete(
            store,
            config,
            oracle._spec(OX.shape[1]),
            user_store,
            targets,
            options,
            seed,
            chunk_threads(n_jobs),
        )
    )


def _targets(n_runs: Any, targets: Any, n: int, rng: np.random.Generator) -> np.ndarray:
    """The simulation's targets: ``n_runs`` drawn, the given ones, or every item once."""
    if isinstance(targets, numbers.Integral) and not isinstance(targets, (bool, np.bool_)):
        if n_runs is not None:
            raise TypeError("simulate_discrete: got 'n_runs' and an int 'targets'; give 'n_runs'")
        warn_renamed("simulate_discrete", "targets=<int>", "n_runs", stacklevel=4)
        n_runs, targets = int(targets), None
    if n_runs is not None:
        if targets is not None:
            raise TypeError("simulate_discrete: give 'n_runs' or 'targets', not both")
        count = check_int(n_runs, "n_runs", minimum=1)
        check_allocation(24.0 * count, "n_runs")  # the targets and two records per search
        return rng.integers(0, n, size=count)
    if targets is None:
        return np.arange(n, dtype=np.int64)
    T = check_index_array(targets, "targets", 1, None)  # the core checks the range
    if len(T) == 0:
        raise ValueError("targets: empty")
    return T


def _simulated_user(oracle: Oracle | None, settings: DiscreteSettings) -> Oracle:
    """The simulated user's oracle: ``oracle``, or the searcher's gamma-CKL."""
    if oracle is None and settings.gamma == "auto":
        raise ValueError("oracle: give the simulated user when the searcher's gamma is 'auto'")
    oracle = GammaCKL(float(settings.gamma)) if oracle is None else oracle
    if not isinstance(oracle, Oracle):
        raise TypeError(f"oracle: expected a tripletsearch oracle, got {type(oracle).__name__}")
    return oracle


def simulate_discrete(
    X: Any,
    *,
    method: str = "gamma-ckl",
    oracle: Oracle | None = None,
    oracle_X: Any = None,
    n_choices: int = 2,
    n_runs: int | None = None,
    targets: Any = None,
    max_queries: int = 200,
    gamma: float | str = 3.0,
    r: float = 2.0,
    sigma: float = 0.1,
    selection: str = "auto",
    lapse: float | str = 0.0,
    oracle_lapse: float = 0.0,
    opening: str = "uniform",
    guesses: int = 0,
    miss: float | str = "auto",
    oracle_miss: float = 0.0,
    random_state: Any = None,
    n_jobs: int | None = None,
    client: Any = None,
    verbose: bool = False,
) -> DiscreteSimulation:
    """Simulate searches with users answering by an oracle.

    The whole loop is native and runs in parallel over targets. Search ``i`` draws its
    randomness from ``(random_state, i)`` only, so the result is the same for any
    ``n_jobs`` and any ``client``: one local call, or chunks of searches on the workers of
    a Dask cluster.

    Parameters
    ----------
    X : array_like (n, d)
        The searcher's embedding.
    method, n_choices, gamma, r, sigma, selection, lapse, opening, guesses, miss
        The searcher's, as for :class:`DiscreteSearch` (gamma / lapse / miss "auto":
        inferred). With ``guesses`` each screen comes with its strip of best guesses: a
        search ends on the screen that shows the target or offers it (and is not missed).
    oracle : Oracle, optional
        The simulated user (default ``GammaCKL(gamma)``): picks among the shown items by
        the oracle's k-alternative choice model (Probit: pairs only).
    oracle_X : array_like (n, d'), optional
        Positions the user perceives (default X): a different embedding models a
        misspecified searcher.
    n_runs : int, optional
        Searches, each for a target drawn uniformly among the items (with replacement).
    targets : array_like of int, optional
        The targets, one search each (instead of ``n_runs``). Neither given: every item
        once. (Before 0.2.0 an int here meant ``n_runs``; it still does, with a
        DeprecationWarning.)
    max_queries : int
        Queries per search before giving up.
    oracle_lapse : float in [0, 1)
        The user picks uniformly among the shown items with this probability.
    oracle_miss : float in [0, 1)
        The user passes over the target in the strip with this probability (a draw of the
        user's stream only when the strip offers the target).
    random_state : None, int or numpy.random.Generator
    n_jobs : int or None
        Threads (None: all cores; on a Dask worker, one per chunk: the workers' threads
        are the parallelism).
    client : dask.distributed.Client, optional
        Run the searches on this cluster, in chunks (the ``dask`` extra).
    verbose : bool
        With ``client``: a progress bar of the chunks done.

    Returns
    -------
    DiscreteSimulation
    """
    settings = DiscreteSettings(
        method, gamma, r, sigma, n_choices, selection, lapse, opening, guesses, miss
    )
    X = check_X(X)
    n = X.shape[0]
    settings = settings.resolve(n)
    config = settings.to_native()
    oracle = _simulated_user(oracle, settings)
    OX = X if oracle_X is None else check_X(oracle_X, "oracle_X")
    rng = check_random_state(random_state)
    T = _targets(n_runs, targets, n, rng)

    def options(first_run: int) -> _core.DiscreteSimOptions:  # checked on construction
        return _core.DiscreteSimOptions(
            max_queries=check_int(max_queries, "max_queries"),
            oracle_lapse=check_real(oracle_lapse, "oracle_lapse"),
            first_run=first_run,
            oracle_miss=check_real(oracle_miss, "oracle_miss"),
        )

    whole = options(0)
    client = check_client(client)
    seed = seed_from(rng)
    oX = None if oracle_X is None else OX
    shared = dict(X=X, oracle_X=oX, oracle=oracle, config=config, seed=seed, n_jobs=n_jobs)
    if client is None:
        nq, found = _simulate_chunk(T, whole, **shared)
        return DiscreteSimulation(nq, found, T)
    # bad input fails here, once, not on every worker
    _store(X)
    check_index_range(T, n, "targets")
    if len(OX) != n:
        raise ValueError(f"oracle_X: expected {n} rows (one per item), got {len(OX)}")
    parts = map_chunks(
        client,
        _simulate_chunk,
        [(T[a:b], options(a)) for a, b in chunk_bounds(len(T), n_chunks(client, len(T)))],
        shared,
        desc="simulate_discrete",
        verbose=verbose,
    )
    return DiscreteSimulation(
        np.concatenate([p.n_queries for p in parts]), np.concatenate([p.found for p in parts]), T
    )
