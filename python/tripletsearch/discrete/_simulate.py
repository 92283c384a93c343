"""Simulated database searches: :func:`simulate_discrete`, natively, locally or on Dask."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from .. import _core
from .._deprecation import warn_renamed
from .._distributed import check_client, chunk_bounds, chunk_threads, map_chunks, n_chunks
from .._validation import (
    check_allocation,
    check_index_array,
    check_index_range,
    check_int,
    check_random_state,
    check_real,
    check_X,
    seed_from,
)
from ..oracles import GammaCKL, Oracle
from ._items import _store
from ._settings import DiscreteSettings

__all__ = ["simulate_discrete", "DiscreteSimulation"]


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
    if oracle_X is None and oracle.scale_free:
        user_store = store
    else:
        user_store = _core.ItemStore(OX, scaled=oracle.scale_free)
    return DiscreteChunk(
        *_core.simulate_discrete(
            store,
            config,
            oracle.spec(OX.shape[1]),
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
