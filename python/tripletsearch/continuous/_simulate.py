"""Simulated continuous searches: :func:`simulate_continuous`, natively, locally or on Dask."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from .. import _core
from .._deprecation import warn_renamed
from .._distributed import (
    check_client,
    chunk_bounds,
    chunk_threads,
    map_chunks,
    n_chunks,
)
from .._validation import check_int, check_real, seed_from
from ..oracles import GammaCKL
from ._region import Region
from ._settings import ContinuousSettings

__all__ = ["simulate_continuous", "ContinuousSimulation"]


@dataclass
class ContinuousSimulation:
    """Result of :func:`simulate_continuous`.

    Attributes
    ----------
    errors : ndarray (n_runs, max_queries + 1) or None
        Distance of the point estimate to the target after each query.
    stage_errors, stage_queries : ndarray (n_runs, stages + 1)
        Error and cumulative query count at the end of each stage (NaN-padded; for
        "global" every query is a stage).
    depths, n_queries : ndarray (n_runs,)
        Final depth and query count.
    regions : list of Region
        Final regions.
    targets : ndarray (n_runs, dim)
    """

    errors: np.ndarray | None
    stage_errors: np.ndarray
    stage_queries: np.ndarray
    depths: np.ndarray
    n_queries: np.ndarray
    regions: list
    targets: np.ndarray

    @property
    def queries(self) -> np.ndarray:
        """Deprecated spelling of :attr:`n_queries` (removed in 0.3.0)."""
        warn_renamed("ContinuousSimulation", "queries", "n_queries", stacklevel=3)
        return self.n_queries

    def ancestor_coverage(self, k: int) -> float:
        """Fraction of runs whose final region's k-th ancestor holds the target."""
        return float(
            np.mean([r.ancestor(k).contains(t) for r, t in zip(self.regions, self.targets)])
        )


def _deprecated_oracle_gamma(kwargs: dict[str, Any], oracle: GammaCKL | None) -> GammaCKL | None:
    """``oracle_gamma=g`` (before 0.2.0) is ``oracle=GammaCKL(g)``."""
    if set(kwargs) != {"oracle_gamma"}:
        bad = sorted(set(kwargs) - {"oracle_gamma"})[0]
        raise TypeError(f"simulate_continuous() got an unexpected keyword argument {bad!r}")
    if kwargs["oracle_gamma"] is None:  # the old default: the searcher's gamma
        return oracle
    if oracle is not None:
        raise TypeError("simulate_continuous: got 'oracle_gamma' and 'oracle'; give 'oracle'")
    warn_renamed("simulate_continuous", "oracle_gamma=g", "oracle=GammaCKL(g)", stacklevel=4)
    return GammaCKL(check_real(kwargs["oracle_gamma"], "oracle_gamma"))


def simulate_continuous(
    dim: int,
    gamma: float | str,
    *,
    n_runs: int,
    max_queries: int | None = None,
    max_stages: int | None = None,
    bounds: tuple[Any, Any] = (-1.0, 1.0),
    method: str = "global",
    alpha: float = 0.8,
    lapse: float | str = 0.0,
    oracle: GammaCKL | None = None,
    oracle_lapse: float = 0.0,
    delta: float = 0.05,
    stage_cap: int | None = None,
    n_particles: int | None = None,
    random_state: Any = None,
    n_jobs: int | None = None,
    client: Any = None,
    verbose: bool = False,
    **deprecated: Any,
) -> ContinuousSimulation:
    """Simulate searches for targets uniform in Omega, answered by simulated users.

    The searcher assumes ``gamma`` and ``lapse``, or infers them ("auto", see
    :class:`ContinuousSearch`); the users answer by ``oracle`` with lapse rate
    ``oracle_lapse``. The whole loop is native, parallel over runs ("hypothesis-test": over
    cells). Run ``r`` draws its target and answers from ``(random_state, r)`` only, so the
    result is the same for any ``n_jobs`` and any ``client``: one local call, or chunks of
    runs on the workers of a Dask cluster.

    Parameters
    ----------
    dim, gamma, bounds, method, alpha, lapse, delta, stage_cap, n_particles
        The searcher's, as for :class:`ContinuousSearch`.
    n_runs : int >= 1
        Searches, each for its own target drawn uniformly in Omega.
    max_queries : int, optional
        Queries per search; the errors after every query are recorded.
    max_stages : int, optional
        Stages per search (give this and/or ``max_queries``; the hypothesis test records
        stages only: its stages take ~1e8 queries).
    oracle : GammaCKL, optional
        The simulated users' answer model (default ``GammaCKL(gamma)``; required when
        ``gamma`` is "auto").
    oracle_lapse : float in [0, 1)
        The users answer at random with this probability.
    random_state : None, int or numpy.random.Generator
    n_jobs : int or None
        Threads (None: all cores; on a Dask worker, one per chunk: the workers' threads
        are the parallelism).
    client : dask.distributed.Client, optional
        Run the searches on this cluster, in chunks of runs (the ``dask`` extra).
    verbose : bool
        With ``client``: a progress bar of the chunks done.

    Returns
    -------
    ContinuousSimulation
    """
    if deprecated:
        oracle = _deprecated_oracle_gamma(deprecated, oracle)
    settings = ContinuousSettings(
        dim, gamma, bounds, method, alpha, lapse, delta, stage_cap, n_particles
    )
    config = settings.to_native()
    if oracle is None:
        if settings.gamma == "auto":
            raise ValueError("oracle: give the simulated users' model when gamma is 'auto'")
        oracle = GammaCKL(config.gamma)
    if not isinstance(oracle, GammaCKL):
        raise TypeError(
            "oracle: the continuous simulator's users answer by gamma-CKL; expected a "
            f"GammaCKL, got {type(oracle).__name__}"
        )
    runs = check_int(n_runs, "n_runs", minimum=1)
    record: dict[str, Any] = dict(
        # None: not recorded / no limit (the core's -1)
        max_queries=-1 if max_queries is None else check_int(max_queries, "max_queries", minimum=0),
        max_stages=-1 if max_stages is None else check_int(max_stages, "max_stages", minimum=0),
        oracle=oracle.spec(config.dim),
        oracle_lapse=check_real(oracle_lapse, "oracle_lapse"),
    )
    shared: dict[str, Any] = {"config": config, "seed": seed_from(random_state), "n_jobs": n_jobs}
    client = check_client(client)
    if client is None:
        options = _core.ContinuousSimOptions(n_runs=runs, first_run=0, **record)
        parts = [_simulate_chunk(options, **shared)]
    else:
        parts = map_chunks(
            client,
            _simulate_chunk,
            [
                (_core.ContinuousSimOptions(n_runs=b - a, first_run=a, **record),)
                for a, b in chunk_bounds(runs, n_chunks(client, runs))
            ],
            shared,
            desc="simulate_continuous",
            verbose=verbose,
        )

    return _joined(parts)


class ContinuousChunk(NamedTuple):
    """The records of one chunk of runs (one native call), one row per run."""

    errors: np.ndarray | None
    stage_errors: np.ndarray
    stage_queries: np.ndarray
    depths: np.ndarray
    n_queries: np.ndarray
    targets: np.ndarray
    centers: np.ndarray
    edges: np.ndarray


def _joined(parts: list[ContinuousChunk]) -> ContinuousSimulation:
    """The simulation of the chunks' records, in order."""

    def joined(name: str) -> np.ndarray:
        return np.concatenate([getattr(p, name) for p in parts])

    errors = None if parts[0].errors is None else joined("errors")
    depths, centers, edges = joined("depths"), joined("centers"), joined("edges")
    regions = [Region(c, float(e), int(dp)) for c, e, dp in zip(centers, edges, depths)]
    return ContinuousSimulation(
        errors,
        joined("stage_errors"),
        joined("stage_queries"),
        depths,
        joined("n_queries"),
        regions,
        joined("targets"),
    )


def _simulate_chunk(
    options: _core.ContinuousSimOptions,
    *,
    config: _core.ContinuousConfig,
    seed: int,
    n_jobs: int | None,
) -> ContinuousChunk:
    """Run searches ``options.first_run`` to ``options.first_run + options.n_runs - 1``.

    One native call: on a Dask worker for a chunk, or locally for the whole study.
    """
    out = _core.simulate_continuous(config, options, seed, chunk_threads(n_jobs))
    return ContinuousChunk(
        out.errors,
        out.stage_errors,
        out.stage_queries,
        out.depths,
        out.n_queries,
        out.targets,
        out.centers,
        out.edges,
    )
