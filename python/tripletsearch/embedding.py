"""Learn item embeddings from triplets by maximum likelihood (the paper's Section 4.1).

:class:`Embedding` is a scikit-learn style estimator; one ``fit`` is one native call
(epochs, shuffling, minibatches, the optimizer and L2 all run in C++, OpenMP over
triplets, GIL released). It works with ``sklearn.model_selection.cross_val_score``.
"""

from __future__ import annotations

import inspect
import math
import warnings
from typing import Any, Callable

import numpy as np

from . import _core
from ._deprecation import move_keywords, renamed, warn_renamed
from ._validation import (
    check_allocation,
    check_int,
    check_random_state,
    check_real,
    check_triplets,
    resolve_n_jobs,
    seed_from,
)
from .oracles import CKL, STE, TSTE, GammaCKL, Oracle, Probit

__all__ = ["Embedding", "DivergenceError", "MODELS", "OPTIMIZERS", "valid_rows"]

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
# optimizer name -> _core.Optimizer member
OPTIMIZERS = {"sgd": "SGD", "adam": "Adam", "lbfgs": "LBFGS"}
_DEFAULT_LR = {"sgd": 1.0, "adam": 0.05, "lbfgs": 1.0}
# _core.TrainStatus member -> status_
_STATUS = {
    "Converged": "converged",
    "MaxEpochs": "max_epochs",
    "Diverged": "diverged",
    "Stopped": "stopped",
}


def native_train(
    oracle: Oracle,
    init: np.ndarray,
    triplets: np.ndarray,
    options: dict[str, Any],
    seed: int,
    threads: int,
    callback: Callable[[int, float, float], bool] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, str]:
    """One fit by the native trainer.

    ``options``: the :class:`_core.TrainOptions` fields, the optimizer by name
    (:data:`OPTIMIZERS`). Returns ``(embedding, loss per epoch, gamma per epoch, epochs,
    status)``, the status one of "converged", "max_epochs", "diverged", "stopped".
    :func:`tripletsearch._reference.embedding.train` is the NumPy twin (the oracle given as
    its kind and parameter, the rest alike).
    """
    res = _core.train(
        oracle._spec(init.shape[1]),
        init,
        triplets,
        _train_options(options),
        seed,
        threads,
        callback,
    )
    return res.embedding, res.loss, res.gamma, int(res.epochs), _STATUS[res.status.name]


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
    t, i, j = triplets[:, 0], triplets[:, 1], triplets[:, 2]
    return (t != i) & (t != j) & (i != j)


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
    gamma : float > 0
        gamma-CKL power (the starting value when ``learn_gamma``).
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
        gamma-CKL only: fit gamma jointly (gradient in log gamma).
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
        gamma of the fitted model (learned when ``learn_gamma``).
    oracle_ : Oracle
        The fitted model's oracle (``oracle_.prob(embedding_, triplets)``).
    loss_curve_ : ndarray
        Objective (mean NLL + L2) per epoch.
    n_epochs_ : int
    status_ : {"converged", "max_epochs", "stopped"}
    n_items_ : int

    Notes
    -----
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
        gamma: float = 3.0,
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

    def _make_oracle(self, gamma: float | None = None) -> Oracle:
        name = self._model_name()
        if name == "gamma-ckl":
            return GammaCKL(self.gamma if gamma is None else gamma)
        if name == "ckl":
            return CKL(self.mu)
        if name == "t-ste":
            return TSTE(self.alpha)
        if name == "ste":
            return STE()
        return Probit(self.sigma)

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
        """The informative rows (three distinct items) and the number of items."""
        T = check_triplets(triplets, None)
        if T.shape[0] == 0:
            raise ValueError("triplets: empty; fit needs at least one valid row")
        if (T < 0).any():
            pos = np.unravel_index(int(np.argmax((T < 0).ravel())), T.shape)
            raise ValueError(
                f"triplets: negative index {T[pos]} at position {tuple(int(p) for p in pos)}"
            )
        seen = int(T.max()) + 1
        n = n_items if n_items is not None else self.n_items
        n = seen if n is None else check_int(n, "n_items", minimum=1)
        if n < seen:
            raise ValueError(f"n_items: {n} is smaller than the largest index + 1 ({seen})")
        keep = valid_rows(T)
        if not keep.any():
            raise ValueError(
                "triplets: no valid rows (every row names the head or repeats an item)"
            )
        if not keep.all():
            warnings.warn(
                f"triplets: ignoring {int((~keep).sum())} of {len(T)} rows that name the "
                "head or repeat an item",
                stacklevel=3,
            )
            T = np.ascontiguousarray(T[keep])
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
        if init == "lift":
            # Fit in d + 1 dimensions, keep the top d principal axes, refine in d: in one
            # dimension the scale-free models cannot move an item past another (log D
            # barriers at D = 0), so a random 1-D start stays in a poor local optimum.
            Y = self._run_train(oracle, X0, T, options, seed, progress=False)[0]
            Y = Y - Y.mean(axis=0)
            X0 = Y @ np.linalg.svd(Y, full_matrices=False)[2][:d].T
        X, loss, gammas, epochs, status = self._run_train(
            oracle, X0, T, options, seed, progress=True
        )
        if status == "diverged":
            raise DivergenceError(
                f"training diverged at epoch {epochs} (loss {loss[-1] if len(loss) else 'nan'}); "
                "try a smaller lr or optimizer='lbfgs'"
            )
        self.embedding_ = X
        self.n_items_ = n
        self.gamma_ = (
            float(gammas[-1])
            if name == "gamma-ckl" and len(gammas)
            else (float(self.gamma) if name == "gamma-ckl" else math.nan)
        )
        self.oracle_ = self._make_oracle(self.gamma_ if name == "gamma-ckl" else None)
        self.loss_curve_ = loss
        self.n_epochs_ = int(epochs)
        self.status_ = status
        return self

    def _run_train(
        self,
        oracle: Oracle,
        X0: np.ndarray,
        T: np.ndarray,
        options: dict[str, Any],
        seed: int,
        progress: bool,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, str]:
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
            obj.loss_curve_ = loss
            obj.n_epochs_ = int(meta["n_epochs_"])
            obj.status_ = str(meta["status_"])
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"{name}: malformed Embedding file ({exc})") from None
        if obj.n_items_ != X.shape[0]:
            raise ValueError(f"{name}: n_items_ {obj.n_items_} != {X.shape[0]} embedding rows")
        return obj
