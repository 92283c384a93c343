"""Cross-validation of embeddings over parameter grids (the paper's Figure 5 sweep).

Fits run in parallel threads (the native trainer releases the GIL), through joblib when it
is installed, else ``concurrent.futures``; each fit uses one native thread.
"""

from __future__ import annotations

import csv
import itertools
import math
import numbers
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._deprecation import keyword_only, move_keywords
from ._distributed import check_client, map_chunks, n_chunks
from ._progress import Progress
from ._validation import (
    check_int,
    check_random_state,
    check_triplets,
    derived_seed,
    resolve_n_jobs,
    seed_from,
)
from .embedding import Embedding, valid_rows

__all__ = ["kfold", "cross_validate", "grid_search_cv", "GridResult", "ParameterGrid"]


@keyword_only("random_state")
def kfold(
    m: int, n_splits: int = 10, *, random_state: Any = None
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Shuffled k-fold split of ``m`` rows: a list of (train_index, test_index)."""
    n_splits = check_int(n_splits, "cv", minimum=2)
    if m < n_splits:
        raise ValueError(f"cv: {n_splits} folds need at least {n_splits} rows, got {m}")
    perm = check_random_state(random_state).permutation(m)
    folds = np.array_split(perm, n_splits)
    return [
        (np.sort(np.concatenate(folds[:k] + folds[k + 1 :])), np.sort(folds[k]))
        for k in range(n_splits)
    ]


def ParameterGrid(grid):
    """All settings of a grid: a dict of lists, or a list of such dicts."""
    grids = [grid] if isinstance(grid, dict) else list(grid)
    out = []
    for g in grids:
        if not isinstance(g, dict):
            raise TypeError("param_grid: expected a dict of lists or a list of dicts")
        keys = sorted(g)
        for values in itertools.product(*(g[k] for k in keys)):
            out.append(dict(zip(keys, values)))
    return out


def _fit_score(
    estimator: Embedding,
    params: dict[str, Any],
    T: np.ndarray,
    fold_of: np.ndarray,
    fold: int,
    n_items: int | None,
) -> tuple[float, float, float, int]:
    """Fit a copy of ``estimator`` with ``params`` on every fold but ``fold``; score on it."""
    est = type(estimator)(**{**estimator.get_params(), **params, "n_jobs": 1, "verbose": False})
    train, test = np.flatnonzero(fold_of != fold), np.flatnonzero(fold_of == fold)
    t0 = time.perf_counter()
    est.fit(T[train], n_items=n_items)  # informative rows only: no warning in the threads
    fit_time = time.perf_counter() - t0
    return est.score(T[test]), est.log_loss(T[test]), fit_time, est.n_epochs_


def _fit_chunk(
    tasks: list[tuple[dict[str, Any], int]],
    *,
    estimator: Embedding,
    T: np.ndarray,
    fold_of: np.ndarray,
    n_items: int | None,
) -> list[tuple[float, float, float, int]]:
    """The fits of one chunk (a Dask task): ``(params, fold)`` each, in order."""
    return [_fit_score(estimator, p, T, fold_of, f, n_items) for p, f in tasks]


def _run(
    tasks: list[tuple[dict[str, Any], int]],
    shared: dict[str, Any],
    n_jobs: int,
    verbose: bool,
    desc: str,
) -> list[tuple[float, float, float, int]]:
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


@dataclass
class GridResult:
    """Cross-validated scores per setting.

    ``rows`` is a list of dicts with the parameters, ``accuracy``, ``accuracy_se``, ``nll``,
    ``nll_se`` (mean and standard error over folds), ``fit_time`` (mean seconds) and
    ``epochs`` (mean).
    """

    rows: list = field(default_factory=list)
    param_names: list = field(default_factory=list)

    def best(self, by: str = "accuracy", group_by: Sequence[str] = ()) -> Any:
        """The best row (max accuracy, or min nll), or one best row per group."""
        # returns Any rather than a union: one row (a dict) without group_by, else a list
        if by not in ("accuracy", "nll"):
            raise ValueError(f"by: expected 'accuracy' or 'nll', got {by!r}")
        sign = -1.0 if by == "accuracy" else 1.0
        if not group_by:
            return min(self.rows, key=lambda r: sign * r[by])
        groups: dict[tuple[Any, ...], dict[str, Any]] = {}
        for r in self.rows:
            key = tuple(r[k] for k in group_by)
            if key not in groups or sign * r[by] < sign * groups[key][by]:
                groups[key] = r
        return [groups[k] for k in sorted(groups, key=lambda k: tuple(map(str, k)))]

    def to_csv(self, path):
        """Write the rows to the CSV file ``path``: the parameters, then the scores."""
        cols = self.param_names + ["accuracy", "accuracy_se", "nll", "nll_se", "fit_time", "epochs"]
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
            w.writeheader()
            w.writerows(self.rows)

    def format(self, rows: list[dict[str, Any]] | None = None) -> str:
        """A text table of ``rows`` (default: all): parameters, accuracy, nll, fit time."""
        rows = self.rows if rows is None else rows
        cols = self.param_names
        lines = [" ".join(f"{c:>10s}" for c in cols) + "   accuracy        nll     fit(s)"]
        for r in rows:
            lines.append(
                " ".join(f"{_fmt(r[c]):>10s}" for c in cols)
                + f"   {r['accuracy']:.4f}+-{r['accuracy_se']:.4f}"
                + f" {r['nll']:.4f}+-{r['nll_se']:.4f} {r['fit_time']:.3f}"
            )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format()


def _fmt(v):
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def _summary(scores):
    a = np.array([s[0] for s in scores])
    nll = np.array([s[1] for s in scores])
    k = len(scores)

    def se(x):
        return float(np.std(x, ddof=1) / math.sqrt(k)) if k > 1 else math.nan

    return {
        "accuracy": float(a.mean()),
        "accuracy_se": se(a),
        "nll": float(nll.mean()),
        "nll_se": se(nll),
        "fit_time": float(np.mean([s[2] for s in scores])),
        "epochs": float(np.mean([s[3] for s in scores])),
    }


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
    triplets : array_like of int, shape (m, 3)
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
    T = check_triplets(triplets, None)
    if n_items is None:
        n_items = int(T.max()) + 1 if len(T) else 0
    keep = valid_rows(T)
    if not keep.all():  # warned once here: a warning filter is process-wide state
        warnings.warn(
            f"triplets: ignoring {int((~keep).sum())} of {len(T)} rows that name the head or "
            "repeat an item",
            stacklevel=2,
        )
        T = np.ascontiguousarray(T[keep])
    settings = ParameterGrid(param_grid)
    for p in settings:  # old spellings of parameters (n_components), with a warning
        move_keywords("grid_search_cv: param_grid", p, getattr(estimator, "_renamed_params", {}))
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
