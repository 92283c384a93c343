"""Learn item embeddings from triplets by maximum likelihood (the paper's Section 4.1).

:class:`Embedding` is a scikit-learn style estimator; one ``fit`` is one native call
(epochs, shuffling, minibatches, the optimizer and L2 all run in C++, OpenMP over
triplets, GIL released). It works with ``sklearn.model_selection.cross_val_score``.
"""

from __future__ import annotations

import inspect
import math
import warnings
from typing import Any, Callable, NamedTuple, cast

import numpy as np

from . import _core
from ._deprecation import move_keywords, renamed, warn_renamed
from ._progress import Progress
from ._validation import (
    check_allocation,
    check_int,
    check_random_state,
    check_real,
    check_triplet_rows,
    check_triplets,
    informative_rows,
    resolve_n_jobs,
    scan_rows,
    seed_from,
)
from .oracles import CKL, STE, TSTE, GammaCKL, Oracle, Probit

__all__ = [
    "Embedding",
    "DivergenceError",
    "MODELS",
    "OPTIMIZERS",
    "valid_rows",
]

# model name -> (oracle class, native kind)
MODELS = {
    "gamma-ckl": GammaCKL,
    "ckl": CKL,
    "t-ste": TSTE,
    "ste": STE,
    "probit": Probit,
}
_ALIASES = {"gammackl": "gamma-ckl", "tste": "t-ste"}
_SAVE_VERSION = 1  # Embedding.save's file format
_PATH_START = 4.0  # gamma="auto" starts its path at the grid's gamma closest to this
_PATH_TOL = 1e-5  # the tolerance of the path's fits (the final fit uses ``tol``)
_GAMMA_RANGE = (1e-2, 1e3)  # learn_gamma's search interval
_REFINE_FITS = 6  # learn_gamma: at most this many fits after the bracketing walk
_START_ROWS = 256  # transform: rows per new item that score its candidate starts
_REFINE_RTOL = 0.02  # learn_gamma stops when the next gamma is this close to a fitted one
# optimizer name -> _core.Optimizer member
OPTIMIZERS = {"sgd": "SGD", "adam": "Adam", "lbfgs": "LBFGS"}
_DEFAULT_LR = {"sgd": 1.0, "adam": 0.05, "lbfgs": 1.0}
# _core.TrainStatus member -> status_
_STATUS = {
    "Converged": "converged",
    "MaxEpochs": "max_epochs",
    "Diverged": "diverged",
    "Stopped": "stopped",
    "EarlyStopped": "early_stopped",
}


class TrainOutput(NamedTuple):
    """One fit of the trainer (:func:`native_train` or its NumPy twin)."""

    embedding: np.ndarray
    loss: np.ndarray  # the objective after every epoch
    gamma: np.ndarray  # gamma after every epoch
    epochs: int
    status: str  # "converged", "max_epochs", "diverged", "stopped" or "early_stopped"
    val_loss: np.ndarray  # with validation rows: their mean NLL after every epoch
    best_epoch: int  # with validation rows: the epoch kept (0: the start)


def native_train(
    oracle: Oracle,
    init: np.ndarray,
    triplets: np.ndarray,
    options: dict[str, Any],
    seed: int,
    threads: int,
    callback: Callable[[int, float, float], bool] | None = None,
    validation: np.ndarray | None = None,
) -> TrainOutput:
    """One fit by the native trainer.

    ``options``: the :class:`_core.TrainOptions` fields, the optimizer by name
    (:data:`OPTIMIZERS`). With ``validation`` rows the fit stops early on their mean negative
    log-likelihood (``n_iter_no_change`` epochs without a new best) and ends at its best
    epoch. :func:`tripletsearch._reference.embedding.train` is the NumPy twin (the oracle
    given as its kind and parameter, the rest alike).
    """
    if validation is not None and validation.dtype != triplets.dtype:
        if triplets.dtype == np.int32 and len(validation) and validation.max() > 2**31 - 1:
            raise ValueError("validation: an index does not fit the rows' int32")
        validation = np.ascontiguousarray(validation, dtype=triplets.dtype)
    res = _core.train(
        oracle._spec(init.shape[1]),
        init,
        triplets,
        _train_options(options),
        seed,
        threads,
        callback,
        validation,
    )
    return TrainOutput(
        res.embedding,
        res.loss,
        res.gamma,
        int(res.epochs),
        _STATUS[res.status.name],
        res.val_loss,
        int(res.best_epoch),
    )


def _train_options(options: dict[str, Any]) -> _core.TrainOptions:
    """The validated native options (ValueError naming the argument when out of range)."""
    opts = dict(options, optimizer=getattr(_core.Optimizer, OPTIMIZERS[options["optimizer"]]))
    return _core.TrainOptions(**opts)


class DivergenceError(FloatingPointError):
    """The training loss became NaN or infinite (e.g. a too large ``lr``)."""


def valid_rows(triplets: np.ndarray) -> np.ndarray:
    """Mask of informative rows: three distinct items.

    Rows naming the head (``t == i``: p = 1, ``t == j``: p = 0) or offering one item twice
    (p = 1/2) carry no information about an embedding; ``fit``, ``score`` and ``log_loss``
    ignore them.
    """
    return informative_rows(triplets)


def _parabola_vertex(
    fits: dict[float, tuple[np.ndarray, float, float]], best: float, limit: float
) -> float:
    """The minimum of the parabola in log gamma through ``best`` and its fitted neighbours.

    ``fits`` maps gamma to (embedding, held-out NLL, accuracy). The vertex stays within
    ``limit`` times the distance to the nearer neighbour; ``best`` itself when it is at an
    end of the fitted gammas or the three points do not curve upwards.
    """
    order = sorted(fits)
    k = order.index(best)
    if k == 0 or k == len(order) - 1:
        return best
    x = np.log([order[k - 1], order[k], order[k + 1]])
    y = np.array([fits[order[k - 1]][1], fits[order[k]][1], fits[order[k + 1]][1]])
    if not np.isfinite(y).all():
        return best
    # the vertex of the interpolating parabola (unequal steps)
    d1, d2 = x[1] - x[0], x[2] - x[1]
    num = d1 * d1 * (y[1] - y[2]) - d2 * d2 * (y[1] - y[0])
    den = d1 * (y[1] - y[2]) + d2 * (y[1] - y[0])
    if not den < 0.0:  # y[1] below both neighbours makes den < 0: upward curvature
        return best
    shift = -0.5 * num / den
    step = min(d1, d2) * limit
    return float(math.exp(x[1] + max(-step, min(step, shift))))


class _ParamsMixin:
    """get_params / set_params in the scikit-learn convention (no sklearn import)."""

    @classmethod
    def _param_names(cls):
        sig = inspect.signature(cls.__init__)
        return [p for p in sig.parameters if p != "self"]

    def get_params(self, deep: bool = True) -> dict:
        return {name: getattr(self, name) for name in self._param_names()}

    # old keyword spellings (old -> new), accepted for one release with a warning
    _renamed_params: dict[str, str] = {}

    def set_params(self, **params):
        move_keywords(f"{type(self).__name__}.set_params", params, self._renamed_params)
        valid = self._param_names()
        for key, value in params.items():
            if key not in valid:
                raise ValueError(f"{key}: not a parameter of {type(self).__name__} ({valid})")
            setattr(self, key, value)
        return self

    def __sklearn_tags__(self):
        """scikit-learn (>= 1.6) estimator tags, built lazily: sklearn stays optional."""
        from sklearn.utils import Tags, TargetTags

        return Tags(
            estimator_type=None,
            target_tags=TargetTags(required=False),
            transformer_tags=None,
            regressor_tags=None,
            classifier_tags=None,
        )

    def __repr__(self) -> str:
        defaults = {
            k: v.default for k, v in inspect.signature(type(self).__init__).parameters.items()
        }
        args = [
            f"{k}={v!r}"
            for k, v in self.get_params().items()
            if not (isinstance(v, (str, int, float, bool, type(None))) and v == defaults.get(k))
        ]
        return f"{type(self).__name__}({', '.join(args)})"


class Embedding(_ParamsMixin):
    """Maximum-likelihood embedding of items from triplets under a choice model.

    Parameters
    ----------
    model : {"gamma-ckl", "ckl", "t-ste", "ste", "probit"}
        The oracle model (see :mod:`tripletsearch.oracles`).
    dim : int >= 1
        Embedding dimension d.
    gamma : float > 0 or "auto"
        gamma-CKL power. ``"auto"`` (default): chosen by held-out likelihood inside ``fit``
        (see Notes); a number fixes it (the starting value when ``learn_gamma``).
    mu : float >= 0
        CKL regularizer.
    alpha : float > 0 or None
        t-STE degrees of freedom; None: ``max(d - 1, 1)``.
    sigma : float > 0
        Probit noise.
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
        ``"auto"`` or ``learn_gamma`` (in increasing gamma); None when gamma was fixed or
        learned by joint maximum likelihood (``validation_fraction=0``).
    oracle_ : Oracle
        The fitted model's oracle (``oracle_.prob(embedding_, triplets)``).
    loss_curve_ : ndarray
        Objective (mean NLL + L2) per epoch.
    n_epochs_ : int
    status_ : {"converged", "max_epochs", "stopped", "early_stopped"}
    n_items_ : int

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

    # the training loop (tests swap in the NumPy twin's, of the same signature)
    _train = staticmethod(native_train)

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
        self.n_items = n_items
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    @property
    def n_components(self) -> int:
        """Deprecated spelling of :attr:`dim` (removed in 0.3.0)."""
        warn_renamed("Embedding", "n_components", "dim", stacklevel=3)
        return self.dim

    # ------------------------------------------------------------------ helpers
    def _model_name(self) -> str:
        if not isinstance(self.model, str):
            raise TypeError(f"model: expected a string, got {type(self.model).__name__}")
        name = _ALIASES.get(self.model.lower(), self.model.lower())
        if name not in MODELS:
            raise ValueError(f"model: expected one of {sorted(MODELS)}, got {self.model!r}")
        return name

    def _auto_gamma(self) -> bool:
        """True when gamma is chosen by ``fit`` (``gamma="auto"``, gamma-CKL)."""
        return isinstance(self.gamma, str) and self._model_name() == "gamma-ckl"

    def _make_oracle(self, gamma: float | None = None) -> Oracle:
        name = self._model_name()
        if name == "gamma-ckl":
            if gamma is None and isinstance(self.gamma, str):
                if self.gamma != "auto":
                    raise ValueError(f"gamma: expected a number > 0 or 'auto', got {self.gamma!r}")
                gamma = 3.0  # a stand-in: fit chooses
            return GammaCKL(cast(float, self.gamma) if gamma is None else gamma)
        if name == "ckl":
            return CKL(self.mu)
        if name == "t-ste":
            return TSTE(self.alpha)
        if name == "ste":
            return STE()
        return Probit(self.sigma)

    def _gamma_grid(self) -> np.ndarray:
        """The increasing path of ``gamma="auto"``."""
        if self.gammas is None:
            return np.sqrt(2.0) ** np.arange(11)  # 1 ... 32
        try:
            g = np.asarray(self.gammas, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError("gammas: expected a sequence of numbers") from None
        if g.ndim != 1 or len(g) < 1:
            raise ValueError("gammas: expected a non-empty 1-D sequence")
        if not (np.isfinite(g).all() and (g > 0).all()):
            raise ValueError("gammas: every gamma must be finite and > 0")
        return np.unique(g)

    def _check_params(self) -> tuple[str, int, Oracle, dict[str, Any]]:
        """(model name, dim, oracle, trainer options), all validated."""
        name = self._model_name()
        d = check_int(self.dim, "dim", minimum=1)
        oracle = self._make_oracle()  # validates gamma / mu / alpha / sigma
        if not isinstance(self.optimizer, str) or self.optimizer not in OPTIMIZERS:
            raise ValueError(
                f"optimizer: expected one of {sorted(OPTIMIZERS)}, got {self.optimizer!r}"
            )
        if not isinstance(self.learn_gamma, (bool, np.bool_)):
            raise TypeError("learn_gamma: expected a bool")
        if self.learn_gamma and name != "gamma-ckl":
            raise ValueError(f"learn_gamma: only the gamma-ckl model has a gamma (model={name!r})")
        vf = check_real(self.validation_fraction, "validation_fraction")
        if not 0.0 <= vf < 1.0:
            raise ValueError(f"validation_fraction: expected a value in [0, 1), got {vf}")
        if not isinstance(self.early_stopping, (bool, np.bool_)):
            raise TypeError("early_stopping: expected a bool")
        if self._auto_gamma():
            self._gamma_grid()
        if vf == 0.0 and (self._auto_gamma() or self.early_stopping):
            raise ValueError(
                "validation_fraction: gamma='auto' and early_stopping need held-out rows (> 0)"
            )
        options = {
            "optimizer": self.optimizer,
            "lr": _DEFAULT_LR[self.optimizer] if self.lr is None else check_real(self.lr, "lr"),
            # None: full batch (the core's 0)
            "batch_size": 0
            if self.batch_size is None
            else check_int(self.batch_size, "batch_size", minimum=1),
            "max_epochs": check_int(self.max_epochs, "max_epochs"),
            "tol": check_real(self.tol, "tol"),
            "n_iter_no_change": 10,
            "l2": check_real(self.l2, "l2"),
            "learn_gamma": bool(self.learn_gamma),
        }
        _train_options(options)  # the native range checks
        return name, d, oracle, options

    def _check_fitted(self):
        if not hasattr(self, "embedding_"):
            raise RuntimeError("this Embedding is not fitted yet; call fit(triplets) first")

    def _prepare_rows(self, triplets, name="triplets"):
        self._check_fitted()
        T = check_triplets(triplets, None, name=name)
        return T, valid_rows(T)

    # ------------------------------------------------------------------ API
    def _training_rows(self, triplets: Any, n_items: int | None) -> tuple[np.ndarray, int]:
        """The informative rows (three distinct items) and the number of items.

        int32 and int64 rows are used as they are (no copy, memory-mapped arrays included);
        the checks run over blocks of rows. Only when some rows are uninformative are the
        others copied.
        """
        T = check_triplet_rows(triplets)
        if T.shape[0] == 0:
            raise ValueError("triplets: empty; fit needs at least one valid row")
        top, bad = scan_rows(T)
        seen = top + 1
        n = n_items if n_items is not None else self.n_items
        n = seen if n is None else check_int(n, "n_items", minimum=1)
        if n < seen:
            raise ValueError(f"n_items: {n} is smaller than the largest index + 1 ({seen})")
        if bad == len(T):
            raise ValueError(
                "triplets: no valid rows (every row names the head or repeats an item)"
            )
        if bad:
            warnings.warn(
                f"triplets: ignoring {bad} of {len(T)} rows that name the head or repeat an item",
                stacklevel=3,
            )
            T = np.ascontiguousarray(T[valid_rows(T)])
        return T, n

    def _initial_embedding(
        self, rng: np.random.Generator, n: int, d: int
    ) -> tuple[str | None, np.ndarray]:
        """(the init rule, or None for a given array; the starting embedding).

        "lift" starts in d + 1 dimensions.
        """
        init = "auto" if self.init is None else self.init
        check_allocation(8.0 * n * (d + 1), "n_items, dim")
        if isinstance(init, str):
            if init not in ("auto", "random", "lift"):
                raise ValueError(
                    f"init: expected 'auto', 'random', 'lift' or an array, got {init!r}"
                )
            if init == "auto":
                init = "lift" if d == 1 else "random"
            return init, 0.1 * rng.standard_normal((n, d + (init == "lift")))
        X0 = np.asarray(init, dtype=np.float64)
        if X0.shape != (n, d):
            raise ValueError(f"init: expected shape {(n, d)}, got {X0.shape}")
        if not np.isfinite(X0).all():
            raise ValueError("init: contains NaN or inf")
        return None, X0

    def fit(self, triplets: Any, n_items: int | None = None) -> Embedding:
        """Fit the embedding to triplets.

        Parameters
        ----------
        triplets : array_like of int, shape (m, 3)
            Rows ``(t, i, j)``: "i was judged closer to t than j".
        n_items : int, optional
            Number of items (overrides the ``n_items`` parameter); default: one more
            than the largest index.

        Returns
        -------
        self
        """
        name, d, oracle, options = self._check_params()
        T, n = self._training_rows(triplets, n_items)
        rng = check_random_state(self.random_state)
        init, X0 = self._initial_embedding(rng, n, d)
        seed = seed_from(rng)
        auto, vf = self._auto_gamma(), float(self.validation_fraction)
        held_out = auto or (self.learn_gamma and vf > 0.0)
        early = bool(self.early_stopping)
        if held_out or early:
            T_fit, T_val = self._split(T, vf, rng)
            if auto:  # the lift's gamma, and the stand-in of the refit's options check
                oracle = GammaCKL(_PATH_START)
        fixed = {**options, "learn_gamma": False}
        if init == "lift":
            # Fit in d + 1 dimensions, keep the top d principal axes, refine in d: in one
            # dimension the scale-free models cannot move an item past another (log D
            # barriers at D = 0), so a random 1-D start stays in a poor local optimum.
            lift_rows = T_fit if (held_out or early) else T  # never the held-out rows
            Y = self._run_train(oracle, X0, lift_rows, fixed, seed, progress=False).embedding
            Y = Y - Y.mean(axis=0)
            X0 = Y @ np.linalg.svd(Y, full_matrices=False)[2][:d].T
        path = None
        if held_out:
            if auto:  # the grid, from its point nearest _PATH_START
                grid = self._gamma_grid()
                first = int(np.argmin(np.abs(np.log(grid) - math.log(_PATH_START))))
            else:  # steps of sqrt(2) around the given gamma
                g0 = float(oracle._param(d))
                lo, hi = (math.log(v / g0) / math.log(math.sqrt(2.0)) for v in _GAMMA_RANGE)
                grid = g0 * np.sqrt(2.0) ** np.arange(math.ceil(lo), math.floor(hi) + 1)
                first = int(np.argmin(np.abs(grid - g0)))
            oracle, X0, path = self._gamma_path(
                X0, T_fit, T_val, fixed, seed, grid, first, refine=bool(self.learn_gamma)
            )
            options = fixed  # the refit on all rows keeps the gamma chosen on held-out rows
        if early:  # the final fit on the fit rows, stopped on the held-out ones
            out = self._run_train(oracle, X0, T_fit, options, seed, progress=True, validation=T_val)
        else:
            out = self._run_train(oracle, X0, T, options, seed, progress=True)
        if out.status == "diverged":
            loss = out.loss
            raise DivergenceError(
                f"training diverged at epoch {out.epochs} "
                f"(loss {loss[-1] if len(loss) else 'nan'}); try a smaller lr or optimizer='lbfgs'"
            )
        self.embedding_ = out.embedding
        self.n_items_ = n
        if name != "gamma-ckl":
            self.gamma_ = math.nan
        elif options["learn_gamma"] and len(out.gamma):
            self.gamma_ = float(out.gamma[-1])
        else:
            self.gamma_ = float(oracle._param(d))
        self.gamma_path_ = path
        self.oracle_ = self._make_oracle(self.gamma_ if name == "gamma-ckl" else None)
        self.loss_curve_ = out.loss
        self.n_epochs_ = int(out.epochs)
        self.status_ = out.status
        return self

    @staticmethod
    def _split(
        T: np.ndarray, fraction: float, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray]:
        """(fit rows, held-out rows): a random ``fraction`` held out, at least one of each."""
        if len(T) < 2:
            raise ValueError(
                "triplets: holding out rows (gamma='auto', learn_gamma or early_stopping) "
                "needs at least 2 valid rows"
            )
        k = min(len(T) - 1, max(1, int(round(fraction * len(T)))))
        perm = rng.permutation(len(T))
        return (
            np.ascontiguousarray(T[np.sort(perm[k:])]),
            np.ascontiguousarray(T[np.sort(perm[:k])]),
        )

    def _gamma_path(
        self,
        X0: np.ndarray,
        T_fit: np.ndarray,
        T_val: np.ndarray,
        options: dict[str, Any],
        seed: int,
        grid: np.ndarray,
        first: int,
        refine: bool,
    ) -> tuple[Oracle, np.ndarray, dict[str, np.ndarray]]:
        """Gamma by the held-out likelihood; (its oracle, the start of the refit, the curve).

        Fits on ``T_fit`` at ``grid[first]``, then up the (increasing) grid while the
        held-out likelihood improves, then down when the first point was the best; each fit
        starts from its neighbour's embedding. The best gamma is then refined by the vertex of
        the parabola through it and its neighbours in log gamma: without ``refine`` that
        vertex is the answer (kept within half a step of the best point); with ``refine``
        each vertex is fitted in turn until it falls within 2 % of a fitted gamma.
        """
        total = len(grid) + (_REFINE_FITS if refine else 0)
        progress = Progress(total, f"Embedding({self.model}) gamma", "fit", self.verbose)
        # the path's fits stop at a looser tolerance than the final one: the held-out
        # likelihood settles before the training loss does
        path_options = {**options, "tol": max(float(options["tol"]), _PATH_TOL)}
        fits: dict[float, tuple[np.ndarray, float, float]] = {}  # gamma -> (X, nll, accuracy)

        def fit_at(gamma: float, start: np.ndarray) -> float:
            o = GammaCKL(gamma)
            X = self._run_train(o, start, T_fit, path_options, seed, progress=False).embedding
            lp = o.log_prob(X, T_val, n_jobs=self.n_jobs)
            nll = float(-np.mean(lp)) if np.isfinite(lp).all() else math.inf
            fits[gamma] = (X, nll, float(np.mean(lp > math.log(0.5))))
            progress.step()
            return nll

        def best_gamma() -> float:
            return min(fits, key=lambda g: fits[g][1])

        try:
            g = [float(v) for v in grid]
            fit_at(g[first], X0)
            for k in range(first + 1, len(g)):
                record = fits[best_gamma()][1]
                if fit_at(g[k], fits[g[k - 1]][0]) >= record:
                    break
            if best_gamma() == g[first]:
                for k in range(first - 1, -1, -1):
                    record = fits[best_gamma()][1]
                    if fit_at(g[k], fits[g[k + 1]][0]) >= record:
                        break
            gamma = _parabola_vertex(fits, best_gamma(), limit=0.5)
            if refine:
                for _ in range(_REFINE_FITS):
                    if min(abs(math.log(gamma / f)) for f in fits) < _REFINE_RTOL:
                        break
                    nearest = min(fits, key=lambda f: abs(math.log(gamma / f)))
                    fit_at(gamma, fits[nearest][0])
                    gamma = _parabola_vertex(fits, best_gamma(), limit=1.0)
        finally:
            progress.close()
        order = sorted(fits)
        path = {
            "gamma": np.array(order),
            "val_nll": np.array([fits[f][1] for f in order]),
            "val_accuracy": np.array([fits[f][2] for f in order]),
        }
        nearest = min(fits, key=lambda f: abs(math.log(gamma / f)))
        return GammaCKL(gamma), fits[nearest][0], path

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
            self._progress(options["max_epochs"]) if progress else (None, lambda: None)
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

    def _progress(self, total):
        if not self.verbose:
            return None, lambda: None
        try:
            from tqdm.auto import tqdm
        except ImportError:  # pragma: no cover - depends on the environment

            def log(epoch, loss, gamma):
                print(f"epoch {epoch:5d}  loss {loss:.6f}  gamma {gamma:.4g}", flush=True)
                return True

            return log, lambda: None
        bar = tqdm(total=total, desc=f"Embedding({self.model})", unit="epoch")

        def update(epoch, loss, gamma):
            bar.update(1)
            bar.set_postfix(loss=f"{loss:.5f}")
            return True

        return update, bar.close

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
        T = check_triplets(triplets, None)
        if (T < 0).any():
            raise ValueError("triplets: negative index")
        n0 = int(self.n_items_)
        top = int(T.max()) + 1 if len(T) else n0
        k = max(0, top - n0) if n_new is None else check_int(n_new, "n_new", minimum=0)
        if top > n0 + k:
            raise ValueError(
                f"triplets: index {top - 1} is beyond the {n0} fitted and {k} new items (n_new)"
            )
        X = self.embedding_
        d = X.shape[1]
        if k == 0:
            return np.empty((0, d))
        T = T[valid_rows(T) & (T >= n0).any(axis=1)]
        named = np.zeros(k, dtype=bool)
        named[T[T >= n0] - n0] = True
        if not named.all():
            missing = np.flatnonzero(~named)[:5] + n0
            raise ValueError(
                f"triplets: no informative row names the new item(s) {missing.tolist()}; "
                "every new item needs a row with two other distinct items"
            )
        # the fitted items the rows name (held fixed) first, then the new ones
        old = np.unique(T[T < n0])
        local = np.full(n0 + k, -1, dtype=np.int64)
        local[old] = np.arange(len(old))
        local[n0:] = len(old) + np.arange(k)
        T_local = np.ascontiguousarray(local[T])
        rng = check_random_state(self.random_state)
        start = self._placement_start(X, T, n0, k, rng)
        X0 = np.concatenate([X[old], start]) if len(old) else start
        _, _, _, options = self._check_params()
        # L-BFGS over the new items' coordinates whatever the fit's optimizer; the L2 penalty
        # is l2 * mean ||x||^2 over the items of these rows (the fixed ones add a constant)
        options = {
            **options,
            "optimizer": "lbfgs",
            "lr": 1.0,
            "batch_size": 0,
            "learn_gamma": False,
            "n_fixed": len(old),
        }
        out = self._train(
            self.oracle_,
            np.ascontiguousarray(X0),
            T_local,
            options,
            seed_from(rng),
            resolve_n_jobs(self.n_jobs),
            None,
            None,
        )
        if out.status == "diverged":
            raise DivergenceError("placing the new items diverged; try optimizer='lbfgs'")
        return np.array(out.embedding[len(old) :])

    def add_items(self, triplets: Any, n_new: int | None = None) -> Embedding:
        """Append the new items placed by :meth:`transform` to ``embedding_``; returns self."""
        new = self.transform(triplets, n_new)
        self.embedding_ = np.concatenate([self.embedding_, new])
        self.n_items_ = int(self.n_items_) + len(new)
        return self

    def _placement_start(
        self, X: np.ndarray, T: np.ndarray, n0: int, k: int, rng: np.random.Generator
    ) -> np.ndarray:
        """A start for each new item: near the fitted item of its rows that explains them best.

        For new item q, each fitted item named in the rows where q is the only new item (a
        random 256 of those rows at most) is a candidate: q placed at its position plus a small
        random offset; the candidate with the largest log-likelihood of those rows wins. Items
        without such rows start at the centre of the fitted items plus the offset.
        """
        d = X.shape[1]
        spread = float(np.sqrt(np.mean(np.sum((X - X.mean(axis=0)) ** 2, axis=1))))
        eps = 1e-3 * (spread if spread > 0 else 1.0)
        start = X.mean(axis=0) + eps * rng.standard_normal((k, d))
        single = T[(T >= n0).sum(axis=1) == 1]
        owner = single.max(axis=1) - n0  # the new item of each row (the largest index)
        for q in np.unique(owner):
            rows = single[owner == q]
            if len(rows) > _START_ROWS:  # the start from a sample: cost bounded per item
                rows = rows[rng.choice(len(rows), _START_ROWS, replace=False)]
            cands = np.unique(rows[rows < n0])
            best, best_ll = None, -math.inf
            for c0 in range(0, len(cands), 256):  # candidates in blocks: bounded memory
                c = cands[c0 : c0 + 256]
                P = X[c] + eps * rng.standard_normal((len(c), d))  # (C, d)
                ll = np.zeros(len(c))
                for pos in range(3):
                    sel = rows[rows[:, pos] >= n0]
                    if not len(sel):
                        continue
                    ll += self._candidate_loglik(X, P, sel, pos)
                j = int(np.argmax(ll))
                if ll[j] > best_ll:
                    best, best_ll = P[j], float(ll[j])
            if best is not None:
                start[q] = best
        return start

    def _candidate_loglik(
        self, X: np.ndarray, P: np.ndarray, rows: np.ndarray, pos: int
    ) -> np.ndarray:
        """Log-likelihood of ``rows`` (the new item in column ``pos``) per candidate in P."""
        C, m = len(P), len(rows)
        # a small table: the rows' 3 m fitted items, then the C candidates
        fitted = rows.copy()
        fitted[:, pos] = 0  # the new item's column points at the candidates below
        table = np.concatenate([X[fitted.T.ravel()], P])
        base = (np.arange(3)[:, None] * m + np.arange(m)[None, :]).T  # (m, 3): row r, column a
        trip = np.broadcast_to(base, (C, m, 3)).copy()
        trip[:, :, pos] = 3 * m + np.arange(C)[:, None]
        lp = self.oracle_.log_prob(table, trip.reshape(-1, 3), n_jobs=self.n_jobs)
        return lp.reshape(C, m).sum(axis=1)

    def predict_proba(self, triplets: Any) -> np.ndarray:
        """Probability of each row's stated outcome under the fitted model; shape (m,)."""
        self._check_fitted()
        return self.oracle_.prob(self.embedding_, triplets, n_jobs=self.n_jobs)

    def score(self, triplets: Any, y: Any = None) -> float:
        """Accuracy: fraction of valid rows whose stated outcome the model finds more likely.

        More likely than not: p > 1/2.
        """
        T, keep = self._prepare_rows(triplets)
        if not keep.any():
            return math.nan
        p = self.oracle_.prob(self.embedding_, T[keep], n_jobs=self.n_jobs)
        return float(np.mean(p > 0.5))

    def log_loss(self, triplets: Any) -> float:
        """Mean negative log-likelihood over the valid rows."""
        T, keep = self._prepare_rows(triplets)
        if not keep.any():
            return math.nan
        lp = self.oracle_.log_prob(self.embedding_, T[keep], n_jobs=self.n_jobs)
        return float(-np.mean(lp))

    # ------------------------------------------------------------------ persistence
    def save(self, path: Any) -> None:
        """Save a fitted embedding to ``path`` (a NumPy ``.npz`` file, no pickles).

        The file holds the embedding, the fitted gamma and training record, and the
        parameters that are plain values (a Generator ``random_state`` or an array ``init``
        is stored as None). ``Embedding.load(path)`` reads it back; ``tripletsearch serve
        --catalogue`` accepts such a file as a catalogue's embedding.
        """
        import json
        import os

        self._check_fitted()
        params = {}
        for k, v in self.get_params().items():
            ok = v is None or isinstance(v, (bool, int, float, str))
            params[k] = v if ok and not isinstance(v, np.generic) else None
        meta = {
            "format": "tripletsearch.Embedding",
            "version": _SAVE_VERSION,
            "params": params,
            "gamma_": self.gamma_,
            "n_items_": int(self.n_items_),
            "n_epochs_": int(self.n_epochs_),
            "status_": self.status_,
        }
        with open(os.fspath(path), "wb") as fh:  # exactly `path`: savez appends no suffix
            np.savez(
                fh,
                embedding=np.asarray(self.embedding_, dtype=np.float64),
                loss_curve=np.asarray(self.loss_curve_, dtype=np.float64),
                meta=np.array(json.dumps(meta)),
            )

    @classmethod
    def load(cls, path: Any) -> Embedding:
        """Load an embedding saved by :meth:`save`.

        It is fitted: ``embedding_``, ``oracle_`` and the scores work as after ``fit``.
        """
        import json
        import os
        import zipfile

        name = os.fspath(path)
        try:
            with np.load(name, allow_pickle=False) as f:
                X = np.array(f["embedding"], dtype=np.float64)
                loss = np.array(f["loss_curve"], dtype=np.float64)
                meta = json.loads(str(f["meta"]))
        except (KeyError, ValueError, OSError, zipfile.BadZipFile) as exc:
            if isinstance(exc, FileNotFoundError):
                raise
            raise ValueError(f"{name}: not an Embedding saved by Embedding.save ({exc})") from None
        if not isinstance(meta, dict) or meta.get("format") != "tripletsearch.Embedding":
            raise ValueError(f"{name}: not an Embedding saved by Embedding.save")
        if meta.get("version") != _SAVE_VERSION:
            raise ValueError(
                f"{name}: unsupported Embedding file version {meta.get('version')!r} "
                f"(this library reads version {_SAVE_VERSION})"
            )
        try:
            params = dict(meta["params"])
            for old, new in cls._renamed_params.items():  # files written before 0.2.0
                if old in params:
                    params.setdefault(new, params.pop(old))
            params = {k: v for k, v in params.items() if k in cls._param_names()}
            obj = cls(**params)
            name_, d, _, _ = obj._check_params()
            if X.ndim != 2 or X.shape[1] != d or not np.isfinite(X).all():
                raise ValueError(f"embedding of shape {X.shape} does not fit dim={d}")
            obj.embedding_ = X
            obj.n_items_ = int(meta["n_items_"])
            obj.gamma_ = float(meta["gamma_"]) if meta["gamma_"] is not None else math.nan
            obj.oracle_ = obj._make_oracle(obj.gamma_ if name_ == "gamma-ckl" else None)
            obj.gamma_path_ = None  # not saved
            obj.loss_curve_ = loss
            obj.n_epochs_ = int(meta["n_epochs_"])
            obj.status_ = str(meta["status_"])
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"{name}: malformed Embedding file ({exc})") from None
        if obj.n_items_ != X.shape[0]:
            raise ValueError(f"{name}: n_items_ {obj.n_items_} != {X.shape[0]} embedding rows")
        return obj
