"""The :class:`Embedding` estimator: parameters, fit, scores (the paper's Section 4.1).

One ``fit`` is one native call per fit of the trainer (:mod:`._train`); the gamma path
(:mod:`._path`), new items (:mod:`._placement`) and files (:mod:`._io`) live beside it.
"""

from __future__ import annotations

import copy
import math
from numbers import Integral, Real
from typing import Any, Callable, NamedTuple

import numpy as np

from .._deprecation import renamed, warn_renamed
from .._params import Interval, ParamsMixin, SequenceOf, StrOptions, check_param, validate_params
from .._validation import check_random_state, check_triplets, resolve_n_jobs, seed_from
from ..oracles import CKL, STE, TSTE, GammaCKL, Oracle, Probit
from ..outcomes import triplet_accuracy
from ..trials import LAPSE
from ._io import Persistence
from ._path import PATH_START, GammaPath, path_arguments, sqrt2_steps, walk_gamma_path
from ._placement import place_items
from ._train import (
    COUNT,
    MODEL_ALIASES,
    MODELS,
    OPTIMIZERS,
    DivergenceError,
    TrainOutput,
    best_start,
    fit_options,
    initial_embedding,
    native_train,
    split_rows,
    train_options,
    training_rows,
    valid_rows,
)
from ._trials import TrialData, TrialsFit, as_trial_data

__all__ = ["Embedding", "checked_params", "gamma_path"]


class _Prepared(NamedTuple):
    """A triplet fit up to its final fit (``Embedding._before_final_fit``)."""

    T: np.ndarray  # the informative rows
    n: int  # items
    oracle: Oracle  # at the gamma chosen (or given)
    X0: np.ndarray  # the final fit's start
    path: dict | None  # gamma_path_
    options: dict[str, Any]  # the final fit's
    seed: int
    T_fit: np.ndarray  # the rows fitted before the final fit (all but the held-out ones)
    T_val: np.ndarray | None  # the held-out rows


_POSITIVE = Interval(Real, 0, None, closed="neither")
_NONNEGATIVE = Interval(Real, 0, None, closed="left")


class Embedding(ParamsMixin, Persistence, TrialsFit):
    """Maximum-likelihood embedding of items from triplets under a choice model.

    Parameters
    ----------
    model : {"gamma-ckl", "ckl", "t-ste", "ste", "probit"}
        The oracle model (see :mod:`tripletsearch.oracles`).
    dim : int >= 1
        Embedding dimension d.
    gamma : float > 0 or "auto"
        gamma-CKL power. ``"auto"`` (default): chosen by held-out likelihood inside ``fit``
        (see Notes; for ranked and odd-one-out trials, on the triplets they imply); a
        number fixes it (the starting value when ``learn_gamma``).
    mu : float >= 0
        CKL regularizer.
    alpha : float > 0 or None
        t-STE degrees of freedom; None: ``max(d - 1, 1)``.
    sigma : float > 0
        Probit noise.
    lapse : float in [0, 1)
        The probability that a person picks at random among the alternatives left, each
        pick of a ranked answer and an odd-one-out answer alike: ``p = (1 - lapse) q +
        lapse / s`` for the model's choice probability ``q`` among ``s`` alternatives.
        Fits, scores and log-losses of trials use it; triplet rows with ``lapse > 0`` are
        fitted as two-candidate trials (L-BFGS), and their probabilities are ``(1 - lapse)
        q + lapse / 2``. Default 0: the model's choice alone. Not for Probit (its noise is
        ``sigma``).
    optimizer : {"lbfgs", "adam", "sgd"}
        ``"lbfgs"`` (default): full-batch L-BFGS with a backtracking line search, no step
        size to tune; runs to the maximum-likelihood fit. ``"adam"`` / ``"sgd"``: first
        order, full batch or minibatches; ``lr`` and ``max_epochs`` act as regularizers
        (early stopping), as in the paper's sweep.
    lr : float > 0 or None
        Step size of Adam (default 0.05) and SGD (default 1.0); unused by L-BFGS.
    batch_size : int or None
        Rows per step; None: full batch (required by L-BFGS).
    max_epochs : int >= 1
        Passes over the training rows (L-BFGS: iterations).
    tol : float >= 0
        Convergence: L-BFGS stops when an iteration improves the loss by less than
        ``tol`` (relative); Adam/SGD when 10 epochs in a row do.
    l2 : float >= 0
        Penalty ``l2 * mean_k ||x_k||^2`` added to the mean negative log-likelihood.
    learn_gamma : bool
        gamma-CKL only: learn gamma as a continuous value by the held-out likelihood (the
        criterion of ``"auto"``), starting from ``gamma`` (with ``"auto"``: from the gamma
        the grid chose); see Notes. With ``validation_fraction=0``: joint maximum
        likelihood of the embedding and gamma on all rows (gradient in log gamma), which on
        small sets runs gamma off to large values.
    gammas : sequence of float > 0 or None
        The path ``gamma="auto"`` walks (increasing); None: 11 values from 1 to 32 in
        steps of sqrt(2).
    validation_fraction : float in [0, 1)
        Share of the rows held out to choose gamma (``"auto"``, ``learn_gamma``; the final
        embedding is then refit on all rows) and for ``early_stopping``.
    early_stopping : bool
        Train on all rows but the held-out ones and stop when their likelihood has not
        improved for 10 epochs, keeping the best epoch (a regularizer, mostly for Adam and
        SGD). Default False: the fit runs to the ``tol`` rule on all rows.
    init : {"auto", "random", "lift"}, array_like (n_items, dim) or None
        Starting embedding. ``"random"``: ``N(0, 0.1^2)``. ``"lift"``: fit in
        ``dim + 1`` dimensions from a random start, then start from its top
        principal axes (escapes the local optima of one-dimensional fits, where the
        scale-free models cannot move an item past another). None or ``"auto"``: "lift"
        for ``dim == 1``, else "random".
    n_init : int >= 1
        Number of starts. Each is fitted at the first gamma the fit uses (the path's start
        with ``"auto"``) on the rows it trains on (never the held-out ones), from its own
        random start (the first from ``init``); the one of least training loss is where the
        fit goes on from. The scale-free models have local optima that one random start can
        fall in (the trials guide measures six starts). Needs ``init`` a rule, not an array.
    n_items : int or None
        Number of items; None: one more than the largest index seen by ``fit``.
    random_state : None, int or numpy.random.Generator
        Seeds the initial embedding and the minibatch order.
    n_jobs : int or None
        Threads (None: all cores). Results do not depend on it.
    verbose : bool
        A progress bar (tqdm, when installed) or a log line per epoch.

    Attributes
    ----------
    embedding_ : ndarray (n_items, dim)
    gamma_ : float
        gamma of the fitted model (chosen when ``"auto"``, learned when ``learn_gamma``).
    gamma_path_ : dict of ndarray or None
        The validation curve behind ``gamma_``: ``"gamma"``, ``"val_nll"`` (mean negative
        log-likelihood of the held-out rows) and ``"val_accuracy"`` per gamma fitted by
        ``"auto"`` or ``learn_gamma`` (in increasing gamma; for trials, of the triplets
        they imply); None when gamma was fixed or learned by joint maximum likelihood
        (``validation_fraction=0``).
    oracle_ : Oracle
        The fitted model's oracle (``oracle_.prob(embedding_, triplets)``).
    loss_curve_ : ndarray
        Objective (mean NLL + L2) per epoch.
    n_epochs_ : int
    status_ : {"converged", "max_epochs", "stopped", "early_stopped"}
    n_items_ : int

    See Also
    --------
    gamma_path : The walk behind ``gamma="auto"``, as a function.

    Notes
    -----
    ``gamma="auto"`` holds out ``validation_fraction`` of the rows and fits the rest at
    gammas of the path ``gammas``: first at the one nearest 4, then up the path while the
    held-out likelihood improves, then down when 4 was the best, each fit starting from its
    neighbour's embedding (as scikit-learn's ``LassoCV`` walks its alphas). The best gamma
    is refined by the vertex of the parabola through it and its neighbours (in log gamma),
    and the embedding is refit on all rows at that gamma. It takes about two to three times
    a fixed-gamma fit.

    ``learn_gamma=True`` optimizes the same criterion continuously: the walk goes in steps
    of sqrt(2) from the given ``gamma`` (or from the grid's choice with ``"auto"``), then
    fits at each new parabola vertex until it falls within 2 % of a gamma already fitted.
    The joint maximum likelihood of the embedding and gamma (``validation_fraction=0``) is
    degenerate on small sets: the embedding separates most training triplets, and a larger
    gamma then always fits them better (Musical Artists, d = 20: gamma runs to ~150 and the
    held-out accuracy drops by 3 points).

    gamma is not a scale: the likelihood of gamma-CKL does not change when the embedding is
    scaled, so gamma sets how sharply answers follow distance ratios. CKL's ``mu`` and
    Probit's ``sigma`` are not chosen: scaling the embedding by c has the effect of
    ``mu / c**2`` and ``sigma / c``, so without ``l2`` they do not change the fitted
    likelihood.

    Items that never occur in the training rows keep their initial position. Rows naming
    the head or repeating an item are ignored by ``fit``, ``score`` and ``log_loss`` (see
    :func:`valid_rows`).

    Examples
    --------
    >>> from tripletsearch.datasets import load_music
    >>> data = load_music()
    >>> emb = Embedding("gamma-ckl", dim=5, gamma=5.0, random_state=0)
    >>> emb.fit(data.triplets).embedding_.shape
    (412, 5)
    """

    # each parameter, declared once with what it accepts (checked by _validate_params)
    _parameter_constraints = {
        "model": [StrOptions(MODELS, aliases=MODEL_ALIASES, ignore_case=True)],
        "dim": [COUNT],
        "gamma": [_POSITIVE, StrOptions({"auto"})],
        "mu": [_NONNEGATIVE],
        "alpha": [_POSITIVE, None],
        "sigma": [_POSITIVE],
        "lapse": LAPSE,
        "optimizer": [StrOptions(OPTIMIZERS)],
        "lr": [_POSITIVE, None],
        "batch_size": [COUNT, None],
        "max_epochs": [COUNT],
        "tol": [_NONNEGATIVE],
        "l2": [_NONNEGATIVE],
        "learn_gamma": ["boolean"],
        "gammas": [SequenceOf(_POSITIVE), None],
        "validation_fraction": [Interval(Real, 0, 1, closed="left")],
        "early_stopping": ["boolean"],
        "init": [StrOptions({"auto", "random", "lift"}), "array-like", None],
        "n_init": [COUNT],
        "n_items": [COUNT, None],
        "random_state": ["random_state"],
        "n_jobs": [Interval(Integral, None, None, closed="neither"), None],
        "verbose": ["verbose"],
    }

    # the training loop (tests swap in the NumPy twin's, of the same signature)
    _train = staticmethod(native_train)

    # parameters added since 0.2.0, at their defaults for the estimators pickled before
    lapse = 0.0
    n_init = 1

    _renamed_params = {"n_components": "dim"}

    @renamed(n_components="dim")
    def __init__(
        self,
        model: str = "gamma-ckl",
        dim: int = 2,
        *,
        gamma: float | str = "auto",
        mu: float = 0.0,
        alpha: float | None = None,
        sigma: float = 0.1,
        lapse: float = 0.0,
        optimizer: str = "lbfgs",
        lr: float | None = None,
        batch_size: int | None = None,
        max_epochs: int = 1000,
        tol: float = 1e-6,
        l2: float = 0.0,
        learn_gamma: bool = False,
        gammas: Any = None,
        validation_fraction: float = 0.1,
        early_stopping: bool = False,
        init: Any = None,
        n_init: int = 1,
        n_items: int | None = None,
        random_state: Any = None,
        n_jobs: int | None = None,
        verbose: bool = False,
    ) -> None:
        self.model = model
        self.dim = dim
        self.gamma = gamma
        self.mu = mu
        self.alpha = alpha
        self.sigma = sigma
        self.lapse = lapse
        self.optimizer = optimizer
        self.lr = lr
        self.batch_size = batch_size
        self.max_epochs = max_epochs
        self.tol = tol
        self.l2 = l2
        self.learn_gamma = learn_gamma
        self.gammas = gammas
        self.validation_fraction = validation_fraction
        self.early_stopping = early_stopping
        self.init = init
        self.n_init = n_init
        self.n_items = n_items
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    @property
    def n_components(self) -> int:
        """Deprecated spelling of :attr:`dim` (removed in 0.3.0)."""
        warn_renamed("Embedding", "n_components", "dim", stacklevel=3)
        return self.dim

    # ------------------------------------------------------------------ parameters
    def _validate_params(self) -> dict[str, Any]:
        """The parameters, checked in one place and normalized (the model's canonical name).

        Each against its declared constraints, then the rules that tie several together and
        the trainer's own (L-BFGS is full batch).
        """
        p = super()._validate_params()
        if p["learn_gamma"] and p["model"] != "gamma-ckl":
            raise ValueError(
                f"learn_gamma: only the gamma-ckl model has a gamma (model={p['model']!r})"
            )
        if p["lapse"] > 0.0 and p["model"] == "probit":
            raise ValueError("lapse: Probit's noise is sigma; lapse > 0 needs another model")
        if p["n_init"] > 1 and not (p["init"] is None or isinstance(p["init"], str)):
            raise ValueError("n_init: a given init array is one start; n_init must be 1")
        if p["validation_fraction"] == 0.0 and (self._auto_gamma() or p["early_stopping"]):
            raise ValueError(
                "validation_fraction: gamma='auto' and early_stopping need held-out rows (> 0)"
            )
        train_options(fit_options(p))  # the native range checks
        return p

    def _model_name(self) -> str:
        return check_param(self.model, "model", self._parameter_constraints["model"])

    def _auto_gamma(self) -> bool:
        """True when gamma is chosen by ``fit`` (``gamma="auto"``, gamma-CKL)."""
        return isinstance(self.gamma, str) and self._model_name() == "gamma-ckl"

    def _make_oracle(self, gamma: float | None = None) -> Oracle:
        """The model's oracle (gamma-CKL: at ``gamma``, else at the parameter)."""
        name = self._model_name()
        if name == "gamma-ckl":
            if gamma is None:
                gamma = check_param(self.gamma, "gamma", self._parameter_constraints["gamma"])
            return GammaCKL(3.0 if gamma == "auto" else gamma)  # "auto": a stand-in
        if name == "ckl":
            return CKL(self.mu)
        if name == "t-ste":
            return TSTE(self.alpha)
        if name == "ste":
            return STE()
        return Probit(self.sigma)

    def _check_fitted(self) -> None:
        if not hasattr(self, "embedding_"):
            raise RuntimeError("this Embedding is not fitted yet; call fit(triplets) first")

    def _prepare_rows(self, triplets: Any, name: str = "triplets") -> tuple[np.ndarray, Any]:
        self._check_fitted()
        T = check_triplets(triplets, None, name=name)
        return T, valid_rows(T)

    # ------------------------------------------------------------------ fit
    def fit(self, triplets: Any, n_items: int | None = None) -> Embedding:
        """Fit the embedding to triplets.

        Parameters
        ----------
        triplets : array_like of int, shape (m, 3), or trials
            Rows ``(t, i, j)``: "i was judged closer to t than j"; or a
            :class:`~tripletsearch.RankedChoices`, an :class:`~tripletsearch.OddOneOut`, or
            a list of trial sets (triplet arrays among them), fitted by their own
            likelihoods summed (L-BFGS only, no ``early_stopping``; Probit: triplets only).
        n_items : int, optional
            Number of items (overrides the ``n_items`` parameter); default: one more
            than the largest index.

        Returns
        -------
        self
        """
        data = as_trial_data(triplets)  # read once: its warnings said once
        if data is not None:  # ranked or odd-one-out trials
            return self._fit_trials(data, n_items)
        p = self._validate_params()
        if p["lapse"] > 0.0:  # triplets as two-candidate trials, with the lapse
            return self._fit_trials(triplets, n_items)
        T, n = training_rows(triplets, p["n_items"] if n_items is None else n_items)
        c = self._before_final_fit(T, n, p, check_random_state(self.random_state))
        if p["early_stopping"]:  # the final fit on the fit rows, stopped on the held-out ones
            out = self._run_train(
                c.oracle, c.X0, c.T_fit, c.options, c.seed, progress=True, validation=c.T_val
            )
        else:
            out = self._run_train(c.oracle, c.X0, c.T, c.options, c.seed, progress=True)
        return self._fitted(out, c.oracle, c.n, p, c.path)

    def _before_final_fit(
        self, T: np.ndarray, n: int, p: dict[str, Any], rng: np.random.Generator
    ) -> _Prepared:
        """The start (lift, ``n_init``) and gamma (the path) of a fit of the rows ``T``.

        Everything but the final fit, its draws from ``rng`` (``T``, ``n``:
        :func:`training_rows`'); a trial fit uses it on the triplets its trials imply to
        choose gamma (``_trials.TrialsFit``).
        """
        options, oracle, d = fit_options(p), self._make_oracle(), p["dim"]
        init, X0 = initial_embedding(p["init"], rng, n, d)
        auto, vf = self._auto_gamma(), p["validation_fraction"]
        held_out = auto or (p["learn_gamma"] and vf > 0.0)
        path_rng = copy.deepcopy(rng) if held_out else None  # the path draws the same seed
        seed = seed_from(rng)
        split = held_out or p["early_stopping"]
        T_fit, T_val = split_rows(T, vf, rng) if split else (T, None)
        if auto:  # the lift's gamma, and the stand-in of the refit's options check
            oracle = GammaCKL(PATH_START)
        fixed = {**options, "learn_gamma": False}
        if init == "lift" or p["n_init"] > 1:  # never on the held-out rows

            def fit_start(X: np.ndarray) -> TrainOutput:
                return self._run_train(oracle, X, T_fit, fixed, seed, progress=False)

            X0 = best_start(fit_start, X0, p["n_init"], seed, d)
        path = None
        if held_out:
            g0 = float(oracle.parameter(d))  # learn_gamma: steps of sqrt(2) around the given gamma
            grid, start = (None, PATH_START) if auto else (sqrt2_steps(g0), g0)
            res = gamma_path(
                self,
                T_fit,
                T_val,
                X0,
                grid,
                start=start,
                refine=p["learn_gamma"],
                random_state=path_rng,
            )
            oracle, X0, path = GammaCKL(res.gamma), res.embedding, res.curve()
            options = fixed  # the refit on all rows keeps the gamma chosen on held-out rows
        return _Prepared(T, n, oracle, X0, path, options, seed, T_fit, T_val)

    def _fitted(
        self, out: TrainOutput, oracle: Oracle, n: int, p: dict, path: dict | None
    ) -> Embedding:
        """Set the fitted attributes from the final fit; returns self."""
        if out.status == "diverged":
            loss = out.loss
            raise DivergenceError(
                f"training diverged at epoch {out.epochs} "
                f"(loss {loss[-1] if len(loss) else 'nan'}); try a smaller lr or optimizer='lbfgs'"
            )
        gamma_model = p["model"] == "gamma-ckl"
        self.embedding_ = out.embedding
        self.n_items_ = n
        if not gamma_model:
            self.gamma_ = math.nan
        elif p["learn_gamma"] and path is None and len(out.gamma):
            self.gamma_ = float(out.gamma[-1])
        else:
            self.gamma_ = float(oracle.parameter(p["dim"]))
        self.gamma_path_ = path
        self.oracle_ = self._make_oracle(self.gamma_ if gamma_model else None)
        self.loss_curve_ = out.loss
        self.n_epochs_ = int(out.epochs)
        self.status_ = out.status
        return self

    def _run_train(
        self,
        oracle: Oracle,
        X0: np.ndarray,
        T: np.ndarray,
        options: dict[str, Any],
        seed: int,
        progress: bool,
        validation: np.ndarray | None = None,
    ) -> TrainOutput:
        callback, close = (
            _epoch_progress(self.model, self.verbose, options["max_epochs"])
            if progress
            else (None, lambda: None)
        )
        try:
            return self._train(
                oracle,
                np.ascontiguousarray(X0),
                T,
                options,
                seed,
                resolve_n_jobs(self.n_jobs),
                callback,
                validation,
            )
        finally:
            close()

    def _path_trainer(
        self, oracle: Oracle, X0: np.ndarray, T: np.ndarray, options: dict[str, Any], seed: int
    ) -> np.ndarray:
        """One fit of the gamma path (no progress bar of its own): its embedding."""
        return self._run_train(oracle, X0, T, options, seed, progress=False).embedding

    # ------------------------------------------------------------------ new items
    def transform(self, triplets: Any, n_new: int | None = None) -> np.ndarray:
        """Positions of new items from their triplets; the fitted items do not move.

        New items are the indices ``n_items_, n_items_ + 1, ...``; each gets its position by
        maximum likelihood of the rows that name it, under the fitted model, with every
        fitted item held where it is (the way a catalogue grows without refitting). Each new
        item starts next to the fitted item of its rows that explains them best, then all new
        items are refined together (L-BFGS over their coordinates only).

        Parameters
        ----------
        triplets : array_like of int, shape (m, 3)
            Rows ``(t, i, j)`` over fitted and new items; rows without a new item, and rows
            naming the head or repeating an item, carry nothing for the placement and are
            ignored.
        n_new : int, optional
            Number of new items; default: one more than the largest index, minus
            ``n_items_``. Every new item needs at least one row.

        Returns
        -------
        ndarray, shape (n_new, dim)
            Row ``k`` is item ``n_items_ + k``. :meth:`add_items` appends them.
        """
        self._check_fitted()
        return place_items(
            self.oracle_,
            self.embedding_,
            int(self.n_items_),
            triplets,
            n_new,
            train=self._train,
            options=fit_options(self._validate_params()),
            random_state=self.random_state,
            n_jobs=self.n_jobs,
        )

    def add_items(self, triplets: Any, n_new: int | None = None) -> Embedding:
        """Append the new items placed by :meth:`transform` to ``embedding_``; returns self."""
        new = self.transform(triplets, n_new)
        self.embedding_ = np.concatenate([self.embedding_, new])
        self.n_items_ = int(self.n_items_) + len(new)
        return self

    # ------------------------------------------------------------------ scores
    def predict_proba(self, triplets: Any, *, log: bool = False) -> np.ndarray:
        """Probability (``log``: its log) of each row's or trial's stated answer; shape (m,)."""
        trials = self._trials(triplets)
        if trials is not None:
            lp = trials.log_prob(self.oracle_, self.embedding_, self.n_jobs)
            return lp if log else np.exp(lp)
        lapse = float(self.lapse)
        if lapse > 0.0:
            p = self.oracle_.prob(self.embedding_, triplets, n_jobs=self.n_jobs)
            p = (1.0 - lapse) * p + 0.5 * lapse
            return np.log(p) if log else p
        if log:
            return self.oracle_.log_prob(self.embedding_, triplets, n_jobs=self.n_jobs)
        return self.oracle_.prob(self.embedding_, triplets, n_jobs=self.n_jobs)

    def _trials(self, obj: Any) -> TrialData | None:
        """Trials checked against the fitted items, or None for triplet rows."""
        self._check_fitted()
        trials = as_trial_data(obj)
        if trials is not None:
            if self._model_name() == "probit" and not trials.all_pairs():
                raise ValueError("model: Probit models pairs only (triplets)")
            trials.check_n_items(int(self.n_items_))
            trials = trials.with_lapse(float(self.lapse))
        return trials

    def score(self, triplets: Any, y: Any = None) -> float:
        """Triplet accuracy on the valid rows, an exact tie counting 1/2.

        A row counts 1 when its ``closer`` item is nearer its head than ``farther`` in
        ``embedding_`` (every model finds that outcome the likelier), 0 when farther and 1/2
        at a tie: the library's one rule, :func:`tripletsearch.outcomes.triplet_accuracy`.
        NaN without valid rows. On trials: the share whose first pick (or odd item) the
        embedding makes likeliest (its pair the nearest; a tie at the nearest shares the
        credit).
        """
        trials = self._trials(triplets)
        if trials is not None:
            return trials.accuracy(self.embedding_)
        T, keep = self._prepare_rows(triplets)
        if not keep.any():
            return math.nan
        return triplet_accuracy(self.embedding_, T[keep])

    def log_loss(self, triplets: Any) -> float:
        """Mean negative log-likelihood over the valid rows."""
        trials = self._trials(triplets)
        if trials is not None:
            return float(-np.mean(self.predict_proba(trials, log=True)))
        T, keep = self._prepare_rows(triplets)
        if not keep.any():
            return math.nan
        return float(-np.mean(self.predict_proba(T[keep], log=True)))


def checked_params(estimator: Embedding) -> dict[str, Any]:
    """``estimator``'s parameters checked as ``fit`` checks them first, and normalized.

    ``ValueError`` or ``TypeError`` naming the first bad parameter (the model's canonical
    name in the result). :class:`~tripletsearch.model_selection.EmbeddingCV` checks its
    grid's first setting with it before any fit.
    """
    return estimator._validate_params()


def gamma_path(
    estimator: Embedding,
    triplets: Any,
    validation: Any,
    init: Any = None,
    gammas: Any = None,
    *,
    start: float = PATH_START,
    refine: bool = False,
    random_state: Any = None,
) -> GammaPath:
    """gamma-CKL's gamma chosen by the likelihood of held-out rows.

    Fits ``estimator``'s model (its optimizer, ``lr``, ``batch_size``, ``max_epochs``,
    ``l2``; ``tol`` at least 1e-5, gamma fixed) on ``triplets`` at the gamma of the path
    nearest ``start``, then up the path while the held-out likelihood of ``validation``
    improves, then down when the first gamma was the best; each fit starts from its
    neighbour's embedding. The best gamma is then refined by the vertex of the parabola
    through it and its neighbours in log gamma: without ``refine`` that vertex is the answer
    (kept within half a step of the best gamma); with ``refine`` each vertex is fitted in
    turn (up to 6 fits) until it falls within 2 % of a fitted gamma.

    Parameters
    ----------
    estimator : Embedding
        A gamma-CKL :class:`~tripletsearch.Embedding` whose settings the fits use (its
        ``gamma`` and ``learn_gamma`` are not).
    triplets, validation : array_like of int, shape (m, 3)
        The rows fitted and the held-out rows that score the fits.
    init : array_like (n_items, dim), optional
        The start of the first fit; default ``N(0, 0.1^2)`` drawn from ``random_state``
        (``n_items``: one more than the largest index of the rows).
    gammas : sequence of float > 0, optional
        The path (sorted); default the estimator's ``gammas`` (default 1 to 32 in steps of
        sqrt(2)).
    start : float
        The path starts at its gamma nearest this (in log gamma).
    refine : bool
        Fit the parabola's vertices (see above).
    random_state : None, int or numpy.random.Generator
        Draws ``init`` (when not given), then the trainer's seed (the minibatch order).

    Returns
    -------
    GammaPath
    """
    est = validate_params(estimator.get_params(), estimator._parameter_constraints)
    if est["model"] != "gamma-ckl":
        raise ValueError(f"estimator: the gamma path is gamma-CKL's, got model={est['model']!r}")
    if gammas is not None:  # checked as the estimator's own gammas
        gammas = check_param(gammas, "gammas", estimator._parameter_constraints["gammas"])
    T, V, X0, grid, first, seed = path_arguments(
        triplets,
        validation,
        init,
        est["gammas"] if gammas is None else gammas,
        est["dim"],
        start,
        random_state,
    )
    return walk_gamma_path(
        X0,
        T,
        V,
        grid,
        first,
        train=estimator._path_trainer,
        options={**fit_options(est), "learn_gamma": False},
        seed=seed,
        refine=refine,
        n_jobs=estimator.n_jobs,
        label=f"Embedding({estimator.model}) gamma",
        verbose=estimator.verbose,
    )


def _epoch_progress(
    model: Any, verbose: Any, total: int
) -> tuple[Callable[[int, float, float], bool] | None, Callable[[], None]]:
    """(the trainer's per-epoch callback, its closer): a tqdm bar or a log line per epoch."""
    if not verbose:
        return None, lambda: None
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - depends on the environment

        def log(epoch: int, loss: float, gamma: float) -> bool:
            print(f"epoch {epoch:5d}  loss {loss:.6f}  gamma {gamma:.4g}", flush=True)
            return True

        return log, lambda: None
    bar = tqdm(total=total, desc=f"Embedding({model})", unit="epoch")

    def update(epoch: int, loss: float, gamma: float) -> bool:
        bar.update(1)
        bar.set_postfix(loss=f"{loss:.5f}")
        return True

    return update, bar.close
