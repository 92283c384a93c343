"""Work split into chunks for a Dask cluster (the ``dask`` extra; imported only when used).

A simulation's runs and a cross-validation's fits are independent, and each draws its
randomness from (seed, its own index) only, so any cut into chunks, run on any worker in
any order, gives the same numbers as one local call. This module cuts, submits, shows
progress and gathers in order; the chunk functions live with their families
(:mod:`tripletsearch.discrete`, :mod:`tripletsearch.continuous`,
:mod:`tripletsearch.model_selection`) and run the native core.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, Callable

from ._progress import Progress

__all__ = [
    "CHUNKS_PER_THREAD",
    "local_cluster",
    "check_client",
    "chunk_bounds",
    "n_chunks",
    "map_chunks",
    "chunk_threads",
]

# Chunks per thread of the cluster: enough for the load to balance when chunks differ in
# cost (searches that end early), few enough that scheduling stays a small fraction of the
# work (measured in bench/test_bench_dask.py).
CHUNKS_PER_THREAD = 4


def local_cluster(n_workers: int, *, quiet: bool = False) -> Any:
    """A ``distributed.LocalCluster`` of ``n_workers`` processes with one thread each.

    The layout this library's chunks assume (the workers' threads are the parallelism); the
    dashboard on a free port. ``quiet``: the workers log errors only.
    """
    import logging

    from distributed import LocalCluster

    return LocalCluster(
        n_workers=n_workers,
        threads_per_worker=1,
        processes=True,
        dashboard_address=":0",
        silence_logs=logging.CRITICAL if quiet else logging.WARNING,
    )


def check_client(client: Any) -> Any:
    """Return ``client`` after checking it is a ``dask.distributed.Client`` (or None)."""
    if client is None:
        return None
    try:
        from distributed import Client
    except ImportError as exc:
        raise ImportError(
            "client: running on a Dask cluster needs the 'dask' extra: "
            f"pip install 'tripletsearch[dask]' ({exc})"
        ) from exc
    if not isinstance(client, Client):
        raise TypeError(f"client: expected a dask.distributed.Client, got {type(client).__name__}")
    return client


def chunk_bounds(n: int, count: int) -> list[tuple[int, int]]:
    """Cut ``range(n)`` into ``count`` contiguous chunks whose sizes differ by at most one."""
    count = max(1, min(count, n))
    edges = [n * k // count for k in range(count + 1)]
    return [(edges[k], edges[k + 1]) for k in range(count) if edges[k] < edges[k + 1]]


def n_chunks(client: Any, n: int) -> int:
    """How many chunks ``n`` independent pieces of work make on this cluster."""
    threads = sum(client.nthreads().values()) or 1
    return max(1, min(n, CHUNKS_PER_THREAD * threads))


def chunk_threads(n_jobs: int | None) -> int:
    """Threads of one chunk's native call.

    ``n_jobs`` when given; else one on a Dask worker (the workers' threads are the
    parallelism: a worker with k threads runs k chunks at once) and all cores elsewhere.
    """
    from ._validation import resolve_n_jobs

    if n_jobs is not None:
        return resolve_n_jobs(n_jobs)
    worker_module = sys.modules.get("distributed")  # a worker has imported it; never import
    if worker_module is None:
        return resolve_n_jobs(None)
    try:
        worker_module.get_worker()
    except ValueError:  # not in a worker's task
        return resolve_n_jobs(None)
    return 1


def _held(value: Any) -> Any:
    """The identity: a task whose result is ``value``, kept on the workers that need it."""
    return value


def map_chunks(
    client: Any,
    func: Callable[..., Any],
    chunks: Sequence[tuple[Any, ...]],
    shared: dict[str, Any],
    *,
    desc: str,
    verbose: bool = False,
) -> list[Any]:
    """``[func(*chunk, **shared) for chunk in chunks]`` on the cluster, in order.

    ``shared`` (the embedding, the triplets, the settings) is sent to each worker once. A
    chunk whose worker dies is run again elsewhere by the scheduler; chunks are
    deterministic, so the result is the same. With ``verbose``, a tqdm bar counts the chunks
    done (the Dask dashboard shows them too).
    """
    import numpy as np
    from distributed import as_completed

    # arrays travel once per worker, as the results of tasks that hold them (not scattered
    # data: a task's result is recomputed when every worker that held it died, scattered
    # data would be lost); small values (settings, an oracle) go with each chunk
    sent = {
        k: client.submit(_held, v, pure=False) if isinstance(v, np.ndarray) else v
        for k, v in shared.items()
    }
    # no retries of exceptions (bad input fails alike every time); a chunk whose worker dies
    # is rerun by the scheduler all the same
    futures = [client.submit(func, *chunk, **sent, pure=False) for chunk in chunks]
    if verbose:
        progress = Progress(len(futures), desc, "chunk", verbose)
        for _ in as_completed(futures):
            progress.step()
        progress.close()
    return list(client.gather(futures))
