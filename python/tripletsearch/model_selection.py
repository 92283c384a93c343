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
from typing import Any, NamedTuple

import numpy as np

from ._deprecation import keyword_only, move_keywords
from ._distributed import check_client, map_chunks, n_chunks
from ._params import Interval, ParamsMixin, SequenceOf, StrOptions
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

__all__ = [
    "kfold",
    "cross_validate",
    "grid_search_cv",
    "GridResult",
    "ParameterGrid",
    "EmbeddingCV",
]


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


class FitScore(NamedTuple):
    """One fit of a cross-validation, scored on its held-out fold."""

    accuracy: float
    nll: float
    fit_time: float  # seconds
    epochs: int
    gamma: float  # the fitted gamma (NaN for the models without one)


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


@dataclass
class GridResult:
    """Cross-validated scores per setting.

    ``rows`` is a list of dicts with the parameters, ``accuracy``, ``accuracy_se``, ``nll``,
    ``nll_se`` (mean and standard error over folds), ``fit_time`` (mean seconds),
    ``epochs`` (mean) and ``gamma_chosen`` (the mean fitted gamma of gamma-CKL: the gamma
    chosen by ``gamma="auto"`` or ``learn_gamma``; NaN for the other models).
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
        cols = self.param_names + [
            "accuracy",
            "accuracy_se",
            "nll",
            "nll_se",
            "fit_time",
            "epochs",
            "gamma_chosen",
        ]
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
            w.writeheader()
            w.writerows(self.rows)

    def format(self, rows: list[dict[str, Any]] | None = None) -> str:
        """A text table of ``rows`` (default: all): parameters, accuracy, nll, fit time."""
        rows = self.rows if rows is None else rows
        cols = self.param_names
        # the fitted gamma, where fits chose it (gamma="auto" or learn_gamma)
        chosen = any(
            math.isfinite(r.get("gamma_chosen", math.nan))
            and not isinstance(r.get("gamma"), numbers.Real)
            or r.get("learn_gamma")
            for r in rows
        )
        lines = [
            " ".join(f"{c:>10s}" for c in cols)
            + ("  gamma fit" if chosen else "")
            + "   accuracy        nll     fit(s)"
        ]
        for r in rows:
            lines.append(
                " ".join(f"{_fmt(r[c]):>10s}" for c in cols)
                + (f" {r['gamma_chosen']:10.3g}" if chosen else "")
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
    a = np.array([s.accuracy for s in scores])
    nll = np.array([s.nll for s in scores])
    k = len(scores)

    def se(x):
        return float(np.std(x, ddof=1) / math.sqrt(k)) if k > 1 else math.nan

    return {
        "accuracy": float(a.mean()),
        "accuracy_se": se(a),
        "nll": float(nll.mean()),
        "nll_se": se(nll),
        "fit_time": float(np.mean([s.fit_time for s in scores])),
        "epochs": float(np.mean([s.epochs for s in scores])),
        "gamma_chosen": float(np.mean([s.gamma for s in scores])),
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


_DEFAULT_GAMMAS = (1.5, 2.0, 3.0, 4.0, 5.5, 8.0, 11.0, 16.0)  # EmbeddingCV's gamma-CKL grid
_EMBEDDING = Embedding._parameter_constraints  # what each of Embedding's parameters accepts


class EmbeddingCV(ParamsMixin):
    """dim, l2 and gamma chosen together by k-fold cross-validation, then one refit.

    Every setting of the grid ``dims x l2s x gammas`` is cross-validated by
    :func:`grid_search_cv` (the same folds for all; in parallel threads or on a Dask
    cluster); the best by ``scoring`` is refit on all rows. After ``fit`` it works as the
    refit :class:`~tripletsearch.Embedding` (``embedding_``, ``gamma_``, ``score``,
    ``transform``, ...) and keeps the table (``cv_results_``, printable) and :meth:`plot`.

    Parameters
    ----------
    model : str
        The model (see :class:`~tripletsearch.Embedding`).
    dims : sequence of int
        Dimensions to try.
    l2s : sequence of float
        L2 penalties to try.
    gammas : sequence of float, "auto" or None
        gamma-CKL only. None: 1.5 ... 16 (eight values); ``"auto"``: each fit chooses its
        own gamma on held-out rows of its training folds (the table then shows the mean
        chosen gamma per setting in ``gamma_chosen``; :meth:`plot` then draws against dim).
    cv : int
        Folds.
    scoring : {"nll", "accuracy"}
        What "best" means: the smallest held-out negative log-likelihood (default: it also
        ranks how well calibrated the answers' probabilities are) or the largest accuracy.
    params : dict, optional
        Further :class:`~tripletsearch.Embedding` parameters for every fit (``optimizer``,
        ``tol``, ...).
    random_state, n_jobs, verbose, client
        As in :func:`grid_search_cv`; the refit uses ``random_state`` too.

    Attributes
    ----------
    cv_results_ : GridResult
        A row per setting: the parameters, held-out accuracy and NLL (mean and s.e. over
        folds), fit time.
    best_params_ : dict
    best_estimator_ : Embedding
        Refit on all rows with ``best_params_``.
    """

    def __init__(
        self,
        model: str = "gamma-ckl",
        dims: Sequence[int] = (2, 5, 10, 20),
        l2s: Sequence[float] = (0.0,),
        gammas: Any = None,
        *,
        cv: int = 5,
        scoring: str = "nll",
        params: dict[str, Any] | None = None,
        random_state: Any = None,
        n_jobs: int | None = None,
        verbose: bool = False,
        client: Any = None,
    ) -> None:
        self.model = model
        self.dims = dims
        self.l2s = l2s
        self.gammas = gammas
        self.cv = cv
        self.scoring = scoring
        self.params = params
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.client = client

    # Embedding's declarations reused (as LogisticRegressionCV reuses LogisticRegression's):
    # a grid is a sequence of what the estimator's parameter accepts
    _parameter_constraints = {
        "model": _EMBEDDING["model"],
        "dims": [SequenceOf(_EMBEDDING["dim"][0])],
        "l2s": [SequenceOf(_EMBEDDING["l2"][0])],
        "gammas": [SequenceOf(_EMBEDDING["gamma"][0]), StrOptions({"auto"}), None],
        "cv": [Interval(numbers.Integral, 2, None, closed="left")],
        "scoring": [StrOptions({"nll", "accuracy"})],
        "params": ["dict", None],
        "random_state": _EMBEDDING["random_state"],
        "n_jobs": _EMBEDDING["n_jobs"],
        "verbose": _EMBEDDING["verbose"],
    }

    @staticmethod
    def _grid(p: dict[str, Any]) -> dict[str, list[Any]]:
        """The grid of checked parameters ``p``: dim, l2 and (gamma-CKL) gamma."""
        grid: dict[str, list[Any]] = {"dim": p["dims"], "l2": p["l2s"]}
        gamma_model = p["model"] == "gamma-ckl"
        if p["gammas"] is not None and not gamma_model:
            raise ValueError(f"gammas: only the gamma-ckl model has a gamma (model={p['model']!r})")
        if gamma_model:
            gammas = list(_DEFAULT_GAMMAS) if p["gammas"] is None else p["gammas"]
            grid["gamma"] = ["auto"] if gammas == "auto" else gammas
        return grid

    def fit(self, triplets: Any, n_items: int | None = None) -> EmbeddingCV:
        """Cross-validate the grid on ``triplets``, then refit the best setting on all rows."""
        p = self._validate_params()
        grid = self._grid(p)
        params = dict(self.params or {})
        clash = sorted(set(params) & {"model", *grid, "random_state", "n_jobs", "verbose"})
        if clash:
            raise ValueError(f"params: {clash} are set by EmbeddingCV's own arguments")
        template = Embedding(self.model, **params)
        # bad params fail here, not in every fit (checked as the grid's first setting)
        Embedding(self.model, **{**params, **{k: v[0] for k, v in grid.items()}})._validate_params()
        rng = check_random_state(self.random_state)
        result = grid_search_cv(
            template,
            grid,
            triplets,
            cv=self.cv,
            n_items=n_items,
            random_state=rng,
            n_jobs=self.n_jobs,
            verbose=self.verbose,
            client=self.client,
        )
        best = result.best(by=self.scoring)
        best_params = {k: best[k] for k in result.param_names}
        est = Embedding(
            self.model,
            **params,
            **best_params,
            random_state=seed_from(rng),
            n_jobs=self.n_jobs,
            verbose=self.verbose,
        )
        with warnings.catch_warnings():  # grid_search_cv warned about ignored rows once
            warnings.simplefilter("ignore", UserWarning)
            est.fit(triplets, n_items=n_items)
        # all three together, once the refit has succeeded
        self.cv_results_, self.best_params_, self.best_estimator_ = result, best_params, est
        return self

    # the refit estimator's methods that EmbeddingCV answers with
    _DELEGATED = frozenset({"score", "log_loss", "predict_proba", "transform", "add_items", "save"})

    def __getattr__(self, name: str) -> Any:
        # the refit estimator's fitted attributes (embedding_, gamma_, ...) and methods
        own = ("best_estimator_", "cv_results_", "best_params_")
        if name.startswith("__") or name in own:
            raise AttributeError(name)
        if not (name.endswith("_") or name in self._DELEGATED):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        if "best_estimator_" not in self.__dict__:
            raise AttributeError(
                f"{name}: this EmbeddingCV is not fitted yet; call fit(triplets) first"
            )
        return getattr(self.best_estimator_, name)

    def plot(self, ax: Any = None, metric: str = "accuracy") -> Any:
        """Held-out ``metric`` ("accuracy" or "nll") against gamma, a line per dim and l2.

        For models without gamma, against dim (a line per l2). Error bars: one standard
        error over folds; the chosen setting is circled. Returns the matplotlib Axes
        (the ``plot`` extra).
        """
        if "cv_results_" not in self.__dict__:
            raise RuntimeError("this EmbeddingCV is not fitted yet; call fit(triplets) first")
        if metric not in ("accuracy", "nll"):
            raise ValueError(f"metric: expected 'accuracy' or 'nll', got {metric!r}")
        import matplotlib.pyplot as plt

        if ax is None:
            ax = plt.subplots(figsize=(6.5, 4.2))[1]
        rows = self.cv_results_.rows
        by_gamma = "gamma" in self.cv_results_.param_names and rows[0]["gamma"] != "auto"
        x_key = "gamma" if by_gamma else "dim"
        keys = ("dim", "l2") if by_gamma else ("l2",)
        lines = sorted({tuple(r[k] for k in keys) for r in rows})
        scale = 100.0 if metric == "accuracy" else 1.0
        for line in lines:
            sel = sorted(
                (r for r in rows if tuple(r[k] for k in keys) == line), key=lambda r: r[x_key]
            )
            label = ", ".join(f"{k} = {v:g}" for k, v in zip(keys, line))
            ax.errorbar(
                [r[x_key] for r in sel],
                [scale * r[metric] for r in sel],
                yerr=[scale * r[f"{metric}_se"] for r in sel],
                marker="o",
                ms=4,
                capsize=2,
                label=label,
            )
        best = self.best_params_
        row = next(r for r in rows if all(r[k] == best[k] for k in best))
        ax.plot(row[x_key], scale * row[metric], "o", ms=14, mfc="none", mec="k", label="chosen")
        if by_gamma:
            from matplotlib.ticker import NullFormatter, ScalarFormatter

            ax.set_xscale("log")
            ax.set_xticks(sorted({r["gamma"] for r in rows}))
            ax.xaxis.set_major_formatter(ScalarFormatter())
            ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel(x_key)
        ax.set_ylabel("held-out accuracy (%)" if metric == "accuracy" else "held-out NLL")
        ax.set_title(f"{self.model}: {self.cv}-fold cross-validation")
        ax.legend(fontsize=8)
        return ax
