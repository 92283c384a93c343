"""The estimator that chooses dim, l2 and gamma by cross-validation: :class:`EmbeddingCV`."""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Sequence
from typing import Any

from .._params import Interval, ParamsMixin, SequenceOf, StrOptions
from .._validation import (
    check_random_state,
    seed_from,
)
from ..embedding import Embedding, checked_params
from ._grid import grid_search_cv

__all__ = ["EmbeddingCV"]

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
        checked_params(Embedding(self.model, **{**params, **{k: v[0] for k, v in grid.items()}}))
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
