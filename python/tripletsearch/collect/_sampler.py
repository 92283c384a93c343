"""The :class:`TripletSampler`: which triplet queries to show people, asked and told."""

from __future__ import annotations

import math
import weakref
from numbers import Integral, Real
from typing import Any

import numpy as np

from .._params import Interval, StrOptions, check_param
from .._sync import new_lock, synchronized
from .._validation import check_index_array, derived_seed, resolve_n_jobs, seed_from
from ..embedding import MODEL_ALIASES, MODELS, Embedding
from ._methods import METHODS, QueryMethod
from ._screens import ScreenKind

__all__ = ["TripletSampler"]

_STATE_KIND = "TripletSampler"
_STATE_VERSION = 1
FIT_SEED = 1  # purpose of the seeds derived for the fits (derived_seed(seed, FIT_SEED, n))
# the models whose answers have a log-odds form (the scoring's; Probit has none)
SAMPLER_MODELS = sorted(set(MODELS) - {"probit"})
REFIT_GROWTH, REFIT_MIN = 0.1, 50  # refit="auto": answers grew by 10 %, at least 50


def refit_due(n_answers: int, n_fitted: int, minimum: int, step: int = REFIT_MIN) -> bool:
    """The refit rule: whether to refit ``n_answers`` answers after a fit on ``n_fitted``.

    They reach ``minimum`` and grew by 10 % and ``step`` since (:attr:`TripletSampler.refit_due_`
    and a service's refitter apply it).
    """
    grown = n_answers - n_fitted
    return n_answers >= minimum and grown >= step and grown >= REFIT_GROWTH * n_fitted


class TripletSampler:
    """Chooses triplet queries to show people, and learns an embedding from their answers.

    A query ``(head, a, b)`` asks "which of a and b is more similar to head?"; its answer
    is the row ``(head, closer, farther)``. ``ask`` proposes queries, ``tell`` takes
    answered rows (also rows asked elsewhere), and the embedding of the answers so far is
    refit as they grow (``refit="auto"``) or installed from elsewhere (``set_embedding``).

    Parameters
    ----------
    n_items : int >= 3
        Number of items.
    dim : int >= 1
        Embedding dimension.
    method : {"active", "random", "arr"}
        How queries are chosen. ``"active"`` (default): each head's next pair is the one
        whose answer tells most about where the head lies, among the pairs asked of it
        least often (a hedge for people's noise,
        :class:`~tripletsearch.collect.ActiveQueries`). ``"random"``: uniform queries,
        none repeated before all have been asked. ``"arr"``: salmon's adaptive round robin
        as published (:class:`~tripletsearch.collect.AdaptiveRoundRobin`; salmon's
        configuration is ``method="arr", model="t-ste", dim=2``).
    model : {"gamma-ckl", "ckl", "t-ste", "ste"}
        The model of the embedding (:class:`~tripletsearch.Embedding`'s), which the
        adaptive methods also use to score queries.
    gamma : float > 0 or "auto"
        gamma-CKL's gamma for the fits (``"auto"``: chosen by each fit).
    trial : {"triplet", "rank", "odd-one-out"}
        What a screen asks. ``"triplet"`` (default): a head and two candidates, answered
        by rows ``(head, closer, farther)``. ``"rank"``: a head and ``n_choices``
        candidates of which people rank the ``picks`` most similar (PsiZ's "8-rank-2"),
        told as :class:`~tripletsearch.RankedChoices` or rows ``(head, pick 1, ..., pick
        r, the other candidates)``. ``"odd-one-out"``: three items, told as
        :class:`~tripletsearch.OddOneOut` or rows ``(a, b, odd)``. The fits take the
        trials themselves; ``"active"`` asks the screen whose whole answer tells most
        about the head (``collect/_active_screens.py``); ``"arr"`` asks
        triplets only.
    n_choices, picks : int or None
        Candidates and ranked picks of a ``"rank"`` screen (None: 8 and 2); a triplet has
        2 and 1, an odd-one-out 3 and 1.
    refit : {"auto", None}
        ``"auto"``: ``tell`` refits, warm-started, whenever the answers grew by 10 % (and
        at least 50, or as many screens as tell 50 triplets' bits) since the last fit (see
        :attr:`refit_due_`). None: never by itself
        (:meth:`refit`, or an embedding fitted elsewhere and installed by
        :meth:`set_embedding`).
    random_state : None, int or numpy.random.Generator
        Seeds the queries and the fits: the same seed and the same answers give the same
        queries.
    n_jobs : int or None
        Threads (None: all cores). Results do not depend on it.

    Attributes
    ----------
    embedding_ : Embedding or None
        The installed embedding (None before the first fit).
    n_answers_ : int
        Answers told so far.
    answers_ : ndarray, shape ``(n_answers_, 3)``
        A copy of the rows told.
    refit_due_ : bool
        Whether ``refit="auto"`` would refit now.
    burn_in_ : int or None
        The answers the method asks random queries for before its own (None: all random).

    Examples
    --------
    >>> import numpy as np
    >>> from tripletsearch import GammaCKL, TripletSampler
    >>> X = np.random.default_rng(0).normal(size=(30, 2))  # what people perceive
    >>> sampler = TripletSampler(30, 2, method="random", random_state=0)
    >>> for _ in range(10):
    ...     queries = sampler.ask(20)
    ...     sampler.tell(GammaCKL(4.0).sample(X, queries, random_state=1))
    >>> sampler.n_answers_, sampler.embedding_.embedding_.shape
    (200, (30, 2))
    """

    _parameter_constraints: dict[str, list[Any]] = {
        "n_items": [Interval(Integral, 3, None, closed="left")],
        "dim": [Interval(Integral, 1, None, closed="left")],
        "method": [StrOptions(METHODS)],
        "model": [StrOptions(SAMPLER_MODELS, aliases=MODEL_ALIASES, ignore_case=True)],
        "gamma": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "refit": [StrOptions({"auto"}), None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_items: int,
        dim: int,
        *,
        method: str = "active",
        model: str = "gamma-ckl",
        gamma: float | str = "auto",
        trial: str = "triplet",
        n_choices: int | None = None,
        picks: int | None = None,
        refit: str | None = "auto",
        random_state: Any = None,
        n_jobs: int | None = None,
    ) -> None:
        given = dict(n_items=n_items, dim=dim, method=method, model=model, gamma=gamma)
        checked = {k: check_param(v, k, self._parameter_constraints[k]) for k, v in given.items()}
        check_param(refit, "refit", self._parameter_constraints["refit"])
        check_param(random_state, "random_state", self._parameter_constraints["random_state"])
        self._threads = resolve_n_jobs(n_jobs)
        self._lock = new_lock()  # a service's threads share a sampler: calls take turns
        self.n_items, self.dim = int(checked["n_items"]), int(checked["dim"])
        self.method, self.model, self.gamma = checked["method"], checked["model"], checked["gamma"]
        self.screen = ScreenKind.of(trial, n_choices, picks, self.n_items)
        self.trial, self.n_choices, self.picks = trial, n_choices, picks
        self.refit_policy = refit
        self.n_jobs = n_jobs
        self._seed = seed_from(random_state)
        self._rng = np.random.default_rng(self._seed)
        self._answers = np.empty((64, self.screen.width), dtype=np.int64)
        self.n_answers_ = 0
        self.embedding_: Embedding | None = None
        self._n_fitted = 0  # answers the installed embedding was fitted on
        self._n_installs = 0
        # embeddings made by fit_embedding, with the answers they saw (for set_embedding)
        self._fits: weakref.WeakKeyDictionary[Embedding, int] = weakref.WeakKeyDictionary()
        self._method: QueryMethod = METHODS[self.method](self)

    # ------------------------------------------------------------------ answers
    def _rows(self) -> np.ndarray:
        """The rows told so far (a view)."""
        return self._answers[: self.n_answers_]

    @property
    @synchronized
    def answers_(self) -> np.ndarray:
        """int64 ``(n_answers_, 3)``: a copy of the rows told, in order."""
        return self._rows().copy()

    # ------------------------------------------------------------------ for query methods
    # What a QueryMethod reads of its sampler (besides n_items, dim, n_answers_ and
    # embedding_): called under the sampler's lock, from ask_one, told and installed.
    @property
    def rng(self) -> np.random.Generator:
        """The sampler's random stream: every random draw of its queries, in order.

        Its state is part of :meth:`to_dict`; a query method draws from it and from no
        other stream of its own, so a restored sampler asks what the original would.
        """
        return self._rng

    @property
    def seed(self) -> int:
        """The 64-bit seed of :attr:`rng` and of the seeds derived from it (fits, particles)."""
        return self._seed

    @property
    def told_rows(self) -> np.ndarray:
        """The rows told so far, in order: a read-only view (no copy, unlike ``answers_``)."""
        view = self._rows()
        view.flags.writeable = False
        return view

    @property
    def n_installs_(self) -> int:
        """How many embeddings were installed (:meth:`set_embedding`, refits included)."""
        return self._n_installs

    @property
    def n_threads(self) -> int:
        """The threads of the native scoring (``n_jobs`` resolved)."""
        return self._threads

    def _check_rows(self, rows: Any) -> np.ndarray:
        if not self.screen.is_triplet:
            return self.screen.rows(rows, self.n_items)
        T = check_index_array(rows, "rows", 2, self.n_items, cols=3)
        t, i, j = T[:, 0], T[:, 1], T[:, 2]
        bad = np.flatnonzero((t == i) | (t == j) | (i == j))
        if len(bad):
            r = int(bad[0])
            raise ValueError(
                f"rows: row {r} {T[r].tolist()} names an item twice (a head among its own "
                "candidates, or the same candidate twice)"
            )
        return T

    @synchronized
    def tell(self, rows: Any) -> None:
        """Take answered rows ``(head, closer, farther)``; with ``refit="auto"``, refit when due.

        Parameters
        ----------
        rows : array_like of int, shape (m, 3)
            Answers, asked by this sampler or elsewhere. A query of k candidates answered
            "c is the most similar" gives the k - 1 rows ``(head, c, other)``.
        """
        T = self._check_rows(rows)  # before anything changes
        if not len(T):
            return
        need = self.n_answers_ + len(T)
        if need > len(self._answers):
            grown = np.empty((max(need, 2 * len(self._answers)), T.shape[1]), dtype=np.int64)
            grown[: self.n_answers_] = self._rows()
            self._answers = grown
        self._answers[self.n_answers_ : need] = T
        self.n_answers_ = need
        self._method.told(self, T)
        if self.refit_policy == "auto" and self.refit_due_:
            self.refit()

    # ------------------------------------------------------------------ queries
    @synchronized
    def ask(self, n: int = 1, *, k: int | None = None) -> np.ndarray:
        """Queries to show.

        Parameters
        ----------
        n : int >= 1
            How many.
        k : int or None
            Candidates per query (None: 2, a pair); at most ``n_items - 1``. Triplet
            screens only: other trials ask the screens of their ``trial``.

        Returns
        -------
        ndarray of int64, shape (n, k + 1)
            Rows ``(head, a, b)`` (``(head, c_1, ..., c_k)``): which candidate is the most
            similar to the head? The sides are in random order.
        """
        n = check_param(n, "n", [Interval(Integral, 1, None, closed="left")])
        if not self.screen.is_triplet:
            if k is not None:
                raise ValueError(f"k: a {self.trial} sampler asks its own screens; omit k")
            return np.stack([self._method.ask_one(self, self.screen.k) for _ in range(n)])
        k = 2 if k is None else check_param(k, "k", [Interval(Integral, 2, None, closed="left")])
        if k > self.n_items - 1:
            raise ValueError(f"k: at most n_items - 1 = {self.n_items - 1} candidates, got {k}")
        return np.stack([self._method.ask_one(self, k) for _ in range(n)])

    @property
    def burn_in_(self) -> int | None:
        """The answers the method asks random queries for before its own (its burn-in).

        ``"active"``: ``ceil(L0 * dim * log2(L0))`` with ``L0`` anchors (see
        :class:`~tripletsearch.collect.ActiveQueries`); ``"arr"``: ``n_items``. Both also
        ask random queries until an embedding is installed (fitted at :attr:`refit_due_`).
        None: ``"random"``, whose queries are all random.
        """
        return self._method.random_until()

    # ------------------------------------------------------------------ embeddings
    @property
    @synchronized
    def refit_due_(self) -> bool:
        """Whether ``refit="auto"`` would refit now.

        The answers grew by at least 10 % and 50 since the last fit (50 triplets' bits:
        9 8-rank-2 screens, 32 odd-one-out trials), and reach the method's minimum to fit
        at all (the burn-in of ``"active"``).
        """
        # as many screens as tell REFIT_MIN triplets' bits (the burn-in's own conversion)
        step = self.screen.burn_in(REFIT_MIN)
        return refit_due(self.n_answers_, self._n_fitted, self._method.min_answers(), step)

    def fit_embedding(self) -> Embedding:
        """The embedding of all answers so far, warm-started from the installed one; not installed.

        What :meth:`refit` installs: a service (or a simulation of one) fits it elsewhere
        and installs it with :meth:`set_embedding`. Its seed depends on the sampler's seed
        and the number of answers only.

        Returns
        -------
        Embedding
            ``Embedding(model, dim, gamma=gamma, n_items=n_items, init=<the installed
            embedding>)`` fitted to :attr:`answers_`.
        """
        with self._lock:  # a snapshot; the fit itself runs without the lock
            if self.n_answers_ == 0:
                raise ValueError("refit: no answers to fit yet")
            installed = self.embedding_
            init = None if installed is None else np.array(installed.embedding_)
            answers, n = self.answers_, self.n_answers_
        emb = Embedding(
            self.model,
            self.dim,
            gamma=self.gamma,
            n_items=self.n_items,
            init=init,
            random_state=derived_seed(self._seed, FIT_SEED, n),
            n_jobs=self.n_jobs,
        )
        emb.fit(answers if self.screen.is_triplet else self.screen.fit_input(answers))
        with self._lock:
            self._fits[emb] = n
        return emb

    @synchronized
    def refit(self) -> Embedding:
        """Fit the embedding of all answers now (warm-started) and install it; returns it."""
        emb = self.fit_embedding()
        self.set_embedding(emb)
        return emb

    @synchronized
    def set_embedding(self, emb: Embedding, *, n_fitted: int | None = None) -> None:
        """Install an embedding fitted elsewhere.

        Parameters
        ----------
        emb : Embedding
            Fitted, with ``n_items`` rows of ``dim`` coordinates, of a model with a log-odds
            form (not Probit).
        n_fitted : int, optional
            How many of the answers told it was fitted on (for :attr:`refit_due_`; a
            stored version's). None: those of :meth:`fit_embedding` when it came from
            there, else all answers told so far.
        """
        if not isinstance(emb, Embedding):
            raise TypeError(f"emb: expected a fitted Embedding, got {type(emb).__name__}")
        X = getattr(emb, "embedding_", None)
        if X is None:
            raise ValueError("emb: not fitted")
        if np.shape(X) != (self.n_items, self.dim):
            raise ValueError(
                f"emb: expected an embedding of shape {(self.n_items, self.dim)}, got {np.shape(X)}"
            )
        if not np.isfinite(X).all():
            raise ValueError("emb: contains NaN or inf")
        if emb.oracle_.kind == "Probit":
            raise ValueError("emb: a Probit embedding has no log-odds form to score queries")
        self.embedding_ = emb
        if n_fitted is not None:
            n_fitted = check_param(
                n_fitted, "n_fitted", [Interval(Integral, 0, None, closed="left")]
            )
        fitted = self._fits.get(emb, self.n_answers_) if n_fitted is None else n_fitted
        self._n_fitted = min(fitted, self.n_answers_)
        self._n_installs += 1
        self._method.installed(self)

    # ------------------------------------------------------------------ persistence
    @synchronized
    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe snapshot: parameters, answers, the installed embedding, the state.

        :meth:`from_dict` continues from it exactly as this sampler would.
        """
        return {
            "kind": _STATE_KIND,
            "version": _STATE_VERSION,
            "n_items": self.n_items,
            "dim": self.dim,
            "method": self.method,
            "model": self.model,
            "gamma": self.gamma,
            "trial": self.trial,
            "n_choices": self.n_choices,
            "picks": self.picks,
            "refit": self.refit_policy,
            "seed": str(self._seed),
            "answers": self._rows().tolist(),
            "embedding": None if self.embedding_ is None else embedding_state(self.embedding_),
            "n_fitted": self._n_fitted,
            "n_installs": self._n_installs,
            "rng": rng_state(self._rng),
            "method_state": self._method.state(),
        }

    @classmethod
    def from_dict(cls, state: Any, *, n_jobs: int | None = None) -> TripletSampler:
        """Rebuild a sampler from :meth:`to_dict` output.

        Raises ValueError naming ``state`` when it is not a TripletSampler's.
        """
        return _restore(cls, state, n_jobs)

    def __repr__(self) -> str:
        return (
            f"TripletSampler(n_items={self.n_items}, dim={self.dim}, method={self.method!r}, "
            f"model={self.model!r}, n_answers_={self.n_answers_})"
        )


# ---------------------------------------------------------------------- the state's parts
_EMBEDDING_PARAMS = ("model", "dim", "mu", "alpha", "sigma")


def embedding_state(emb: Embedding) -> dict[str, Any]:
    """A fitted embedding as JSON-safe values (what the sampler uses of it)."""
    gamma = float(emb.gamma_)
    return {
        "params": {k: getattr(emb, k) for k in _EMBEDDING_PARAMS},
        "embedding": np.asarray(emb.embedding_, dtype=np.float64).tolist(),
        "gamma_": None if math.isnan(gamma) else gamma,
        "n_epochs_": int(emb.n_epochs_),
        "status_": str(emb.status_),
    }


def embedding_from_state(state: dict[str, Any], n_items: int) -> Embedding:
    """The fitted :class:`Embedding` of :func:`embedding_state`."""
    gamma = state["gamma_"]
    X = np.asarray(state["embedding"], dtype=np.float64)
    if X.ndim != 2 or X.shape[0] != n_items or not np.isfinite(X).all():
        raise ValueError(f"the embedding of shape {X.shape} is malformed")
    params = {**state["params"], "n_items": n_items}
    params["gamma"] = "auto" if gamma is None else float(gamma)
    return Embedding.from_fitted(  # (ValueError when its columns are not the params' dim)
        X,
        gamma_=math.nan if gamma is None else float(gamma),
        n_epochs_=int(state["n_epochs_"]),
        status_=str(state["status_"]),
        **params,
    )


def rng_state(rng: np.random.Generator) -> dict[str, Any]:
    """The PCG64 generator's state, its 128-bit words as decimal strings."""
    st = rng.bit_generator.state
    return {
        "state": str(st["state"]["state"]),
        "inc": str(st["state"]["inc"]),
        "has_uint32": int(st["has_uint32"]),
        "uinteger": int(st["uinteger"]),
    }


def rng_from_state(state: dict[str, Any]) -> np.random.Generator:
    bits = np.random.PCG64()
    bits.state = {
        "bit_generator": "PCG64",
        "state": {"state": int(state["state"]), "inc": int(state["inc"])},
        "has_uint32": int(state["has_uint32"]),
        "uinteger": int(state["uinteger"]),
    }
    return np.random.Generator(bits)


def _restore(cls: type[TripletSampler], state: Any, n_jobs: int | None) -> TripletSampler:
    """``TripletSampler.from_dict``: every check before the sampler is returned."""
    if not isinstance(state, dict):
        raise TypeError(f"state: expected a dict, got {type(state).__name__}")
    if state.get("kind") != _STATE_KIND:
        raise ValueError(
            f"state: not a TripletSampler state (kind {state.get('kind')!r}; another "
            "object's to_dict?)"
        )
    if state.get("version") != _STATE_VERSION:
        raise ValueError(f"state: unsupported version {state.get('version')!r}")
    try:
        obj = cls(
            state["n_items"],
            state["dim"],
            method=state["method"],
            model=state["model"],
            gamma=state["gamma"],
            trial=state.get("trial", "triplet"),
            n_choices=state.get("n_choices"),
            picks=state.get("picks"),
            refit=state["refit"],
            n_jobs=n_jobs,
        )
        seed = int(state["seed"])
        if not 0 <= seed < 2**64:
            raise ValueError("seed out of range")
        obj._seed = seed
        width = obj.screen.width
        T = obj._check_rows(np.asarray(state["answers"], dtype=np.int64).reshape(-1, width))
        obj._answers = np.array(T, dtype=np.int64).reshape(-1, width)
        obj.n_answers_ = len(T)
        emb = state["embedding"]
        obj.embedding_ = None if emb is None else embedding_from_state(emb, obj.n_items)
        obj._n_fitted, obj._n_installs = int(state["n_fitted"]), int(state["n_installs"])
        if not 0 <= obj._n_fitted <= obj.n_answers_:
            raise ValueError("n_fitted out of range")
        obj._rng = rng_from_state(state["rng"])
        obj._method.restore(state["method_state"], obj)
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
        raise ValueError(f"state: malformed ({exc})") from None
    return obj
