"""Cross-validated fits over a grid of settings: in threads, joblib or on Dask."""

from __future__ import annotations

import numbers
import time
import warnings
from typing import Any

import numpy as np

from .._deprecation import move_keywords
from .._distributed import check_client, map_chunks, n_chunks
from .._params import renamed_params
from .._progress import Progress
from .._validation import (
    check_random_state,
    check_triplets,
    derived_seed,
    resolve_n_jobs,
    seed_from,
)
from ..embedding import Embedding, TrialData, as_trial_data, valid_rows
from ._folds import ParameterGrid, kfold
from ._result import FitScore, GridResult, _summary

__all__ = ["grid_search_cv", "cross_validate"]


def _fit_score(
    estimator: Embedding,
    params: dict[str, Any],
    T: np.ndarray,
    fold_of: np.ndarray,
    fold: int,
    n_items: int | None,
) -> FitScore:
    """Fit a copy of ``estimator`` with ``params`` on every fold but ``fold``; score on it."""
    est = type(estimator)(**{**estimator.get_params(), **params, "n_jobs": 1, "verbose": False})
    train, test = np.flatnonzero(fold_of != fold), np.flatnonzero(fold_of == fold)
    t0 = time.perf_counter()
    est.fit(T[train], n_items=n_items)  # informative rows only: no warning in the threads
    fit_time = time.perf_counter() - t0
    return FitScore(est.score(T[test]), est.log_loss(T[test]), fit_time, est.n_epochs_, est.gamma_)


def _fit_chunk(
    tasks: list[tuple[dict[str, Any], int]],
    *,
    estimator: Embedding,
    T: np.ndarray,
    fold_of: np.ndarray,
    n_items: int | None,
) -> list[FitScore]:
    """The fits of one chunk (a Dask task): ``(params, fold)`` each, in order."""
    return [_fit_score(estimator, p, T, fold_of, f, n_items) for p, f in tasks]


def _run(
    tasks: list[tuple[dict[str, Any], int]],
    shared: dict[str, Any],
    n_jobs: int,
    verbose: bool,
    desc: str,
) -> list[FitScore]:
    """Run the fits in parallel threads through joblib, results in order.

    Through joblib, ``joblib.parallel_config`` may send them elsewhere (``backend="dask"``).
    """
    progress = Progress(len(tasks), desc, "fit", verbose)
    results = []
    try:
        import joblib
        from joblib import Parallel, delayed

        # results as they come (a progress bar that moves) from joblib 1.4 (1.3 has them
        # for its own backends only, not for dask's); a list before
        lazily = tuple(int(v) for v in joblib.__version__.split(".")[:2]) >= (1, 4)
        out = Parallel(
            n_jobs=n_jobs, prefer="threads", **({"return_as": "generator"} if lazily else {})
        )(
            delayed(_fit_score)(
                shared["estimator"], p, shared["T"], shared["fold_of"], f, shared["n_items"]
            )
            for p, f in tasks
        )
    except ImportError:  # pragma: no cover - joblib is optional
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=n_jobs) as pool:
            out = list(pool.map(lambda task: _fit_chunk([task], **shared)[0], tasks))
    for res in out:
        results.append(res)
        progress.step()
    progress.close()
    return results


def _rows(triplets: Any) -> Any:
    """The rows the folds cut: informative triplet rows, or trials trial by trial.

    Uninformative rows are warned about once here (a warning filter is process-wide state).
    """
    trials = as_trial_data(triplets)
    if trials is not None:
        return trials
    T = check_triplets(triplets, None)
    keep = valid_rows(T)
    if not keep.all():
        warnings.warn(
            f"triplets: ignoring {int((~keep).sum())} of {len(T)} rows that name the head or "
            "repeat an item",
            stacklevel=3,
        )
        T = np.ascontiguousarray(T[keep])
    return T


def grid_search_cv(
    estimator: Embedding,
    param_grid: Any,
    triplets: Any,
    *,
    cv: int = 10,
    n_items: int | None = None,
    random_state: Any = None,
    n_jobs: int | None = None,
    verbose: bool = False,
    client: Any = None,
) -> GridResult:
    """k-fold cross-validation of every setting of ``param_grid``.

    Parameters
    ----------
    estimator : Embedding
        Template; each setting overrides its parameters.
    param_grid : dict of lists or list of dicts
        E.g. ``{"model": ["t-ste", "gamma-ckl"], "dim": [2, 10]}``.
    triplets : array_like of int, shape (m, 3), or trials
        Triplet rows, a :class:`~tripletsearch.RankedChoices`, an
        :class:`~tripletsearch.OddOneOut`, or a list of such sets (the folds cut trials).
    cv : int
        Folds (shuffled, the same folds for every setting).
    n_items : int, optional
        Default: one more than the largest index in ``triplets``.
    random_state : int, Generator or None
        Seeds the folds, and each fit when the estimator has no int ``random_state`` of its
        own (None: fresh entropy, as everywhere; pass an int to repeat a run). Fit ``i``
        draws from ``(random_state, i)`` only: the same result in any order, on any
        worker.
    n_jobs : int or None
        Parallel fits (threads, through joblib: ``joblib.parallel_config(backend="dask")``
        sends them to a Dask cluster).
    verbose : bool
        A progress bar (tqdm) of the fits done (with ``client``: of the chunks).
    client : dask.distributed.Client, optional
        Run the fits on this cluster, in chunks (the ``dask`` extra).

    Returns
    -------
    GridResult
    """
    T = _rows(triplets)
    if n_items is None:
        n_items = T.n_seen() if isinstance(T, TrialData) else int(T.max()) + 1 if len(T) else 0
    settings = ParameterGrid(param_grid)
    for p in settings:  # old spellings of parameters (n_components), with a warning
        move_keywords("grid_search_cv: param_grid", p, renamed_params(estimator))
    rng = check_random_state(random_state)
    fold_of = np.empty(len(T), dtype=np.int64)
    for k, (_, test) in enumerate(kfold(len(T), cv, random_state=rng)):
        fold_of[test] = k
    # fit (setting s, fold k) draws its randomness from (random_state, s * cv + k) only
    # (unless the estimator has its own int seed): the same for any order of the fits
    own_seed = isinstance(estimator.random_state, numbers.Integral)
    base = 0 if own_seed else seed_from(rng)
    tasks = []
    for s_index, p in enumerate(settings):
        for k in range(cv):
            own = own_seed or "random_state" in p
            tasks.append(
                (p if own else {**p, "random_state": derived_seed(base, s_index * cv + k)}, k)
            )
    shared = {"estimator": estimator, "T": T, "fold_of": fold_of, "n_items": n_items}
    client = check_client(client)
    scores: list[Any]
    if client is None:
        scores = _run(tasks, shared, resolve_n_jobs(n_jobs), verbose, "cross-validation")
    else:
        # fits differ in cost by setting (dim 2 vs 50): chunk c takes every C-th fit, so
        # that the chunks cost alike and no heavy chunk runs alone at the end
        count = n_chunks(client, len(tasks))
        parts = map_chunks(
            client,
            _fit_chunk,
            [(tasks[c::count],) for c in range(count)],
            shared,
            desc="cross-validation",
            verbose=verbose,
        )
        scores = [None] * len(tasks)
        for c, part in enumerate(parts):
            scores[c::count] = part
    names = sorted({k for p in settings for k in p})
    rows = []
    for s, p in enumerate(settings):
        rows.append({**{k: p.get(k) for k in names}, **_summary(scores[s * cv : (s + 1) * cv])})
    return GridResult(rows, names)


def cross_validate(
    estimator: Embedding,
    triplets: Any,
    *,
    cv: int = 10,
    n_items: int | None = None,
    random_state: Any = None,
    n_jobs: int | None = None,
    client: Any = None,
) -> dict:
    """k-fold cross-validated accuracy and NLL (mean and s.e.) of one estimator.

    The arguments are :func:`grid_search_cv`'s, for a grid of one setting.
    """
    return grid_search_cv(
        estimator,
        {},
        triplets,
        cv=cv,
        n_items=n_items,
        random_state=random_state,
        n_jobs=n_jobs,
        client=client,
    ).rows[0]
