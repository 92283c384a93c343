"""One fit by the native trainer.

Its options, its result, the rows it learns from and where it starts.
"""

from __future__ import annotations

import math
import warnings
from numbers import Integral
from typing import Any, Callable, NamedTuple

import numpy as np

from .. import _core
from .._params import Interval, check_param
from .._validation import (
    caller_stacklevel,
    check_allocation,
    check_triplet_rows,
    informative_rows,
    scan_rows,
)
from ..oracles import CKL, STE, TSTE, GammaCKL, Oracle, Probit

__all__ = [
    "MODELS",
    "OPTIMIZERS",
    "DivergenceError",
    "fit_options",
    "TrainOutput",
    "native_train",
    "train_options",
    "valid_rows",
    "training_rows",
    "split_rows",
    "initial_embedding",
    "best_start",
    "COUNT",
]

COUNT = Interval(Integral, 1, None, closed="left")  # a number of items, epochs, rows

# model name -> oracle class
MODELS = {
    "gamma-ckl": GammaCKL,
    "ckl": CKL,
    "t-ste": TSTE,
    "ste": STE,
    "probit": Probit,
}
MODEL_ALIASES = {"gammackl": "gamma-ckl", "tste": "t-ste"}
# optimizer name -> _core.Optimizer member
OPTIMIZERS = {"sgd": "SGD", "adam": "Adam", "lbfgs": "LBFGS"}
DEFAULT_LR = {"sgd": 1.0, "adam": 0.05, "lbfgs": 1.0}
# _core.TrainStatus member -> status_
_STATUS = {
    "Converged": "converged",
    "MaxEpochs": "max_epochs",
    "Diverged": "diverged",
    "Stopped": "stopped",
    "EarlyStopped": "early_stopped",
}


class DivergenceError(FloatingPointError):
    """The training loss became NaN or infinite (e.g. a too large ``lr``)."""


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
        oracle.spec(init.shape[1]),
        init,
        triplets,
        train_options(options),
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


def train_options(options: dict[str, Any]) -> _core.TrainOptions:
    """The native options (ValueError naming the argument when out of range)."""
    opts = dict(options, optimizer=getattr(_core.Optimizer, OPTIMIZERS[options["optimizer"]]))
    return _core.TrainOptions(**opts)


def valid_rows(triplets: np.ndarray) -> np.ndarray:
    """Mask of informative rows: three distinct items.

    Rows naming the head (``t == i``: p = 1, ``t == j``: p = 0) or offering one item twice
    (p = 1/2) carry no information about an embedding; ``fit``, ``score`` and ``log_loss``
    ignore them.
    """
    return informative_rows(triplets)


def fit_options(params: dict[str, Any]) -> dict[str, Any]:
    """The trainer's options of checked :class:`~tripletsearch.Embedding` parameters.

    ``lr`` None: the optimizer's default; ``batch_size`` None: full batch (the core's 0).
    """
    return {
        "optimizer": params["optimizer"],
        "lr": DEFAULT_LR[params["optimizer"]] if params["lr"] is None else params["lr"],
        "batch_size": 0 if params["batch_size"] is None else params["batch_size"],
        "max_epochs": params["max_epochs"],
        "tol": params["tol"],
        "n_iter_no_change": 10,
        "l2": params["l2"],
        "learn_gamma": params["learn_gamma"],
    }


def training_rows(triplets: Any, n_items: Any) -> tuple[np.ndarray, int]:
    """The informative rows (three distinct items) and the number of items.

    ``n_items`` None: one more than the largest index. int32 and int64 rows are used as
    they are (no copy, memory-mapped arrays included); the checks run over blocks of rows.
    Only when some rows are uninformative are the others copied.
    """
    if isinstance(triplets, np.ndarray) and triplets.size == 0:  # (an empty file's read)
        raise ValueError("triplets: empty; fit needs at least one valid row")
    T = check_triplet_rows(triplets)
    if T.shape[0] == 0:
        raise ValueError("triplets: empty; fit needs at least one valid row")
    top, bad = scan_rows(T)
    seen = top + 1
    n = seen if n_items is None else check_param(n_items, "n_items", [COUNT])
    if n < seen:
        raise ValueError(f"n_items: {n} is smaller than the largest index + 1 ({seen})")
    if bad == len(T):
        raise ValueError("triplets: no valid rows (every row names the head or repeats an item)")
    if bad:
        warnings.warn(
            f"triplets: ignoring {bad} of {len(T)} rows that name the head or repeat an item",
            stacklevel=caller_stacklevel(),
        )
        T = np.ascontiguousarray(T[valid_rows(T)])
    return T, n


def split_rows(
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


def initial_embedding(
    init: Any, rng: np.random.Generator, n: int, d: int
) -> tuple[str | None, np.ndarray]:
    """(the init rule, or None for a given array; the starting embedding).

    ``init``: a checked ``Embedding`` init ("auto", "random", "lift", an array or None).
    "lift" starts in d + 1 dimensions.
    """
    init = "auto" if init is None else init
    check_allocation(8.0 * n * (d + 1), "n_items, dim")
    if isinstance(init, str):
        if init == "auto":
            init = "lift" if d == 1 else "random"
        return init, 0.1 * rng.standard_normal((n, d + (init == "lift")))
    X0 = np.asarray(init, dtype=np.float64)
    if X0.shape != (n, d):
        raise ValueError(f"init: expected shape {(n, d)}, got {X0.shape}")
    if not np.isfinite(X0).all():
        raise ValueError("init: contains NaN or inf")
    return None, X0


def best_start(
    fit: Callable[[np.ndarray], TrainOutput], X0: np.ndarray, n_init: int, seed: int, d: int
) -> np.ndarray:
    """The final fit's start: of ``n_init`` fits at one fixed gamma, the one of least loss.

    The first fit starts from ``X0``, the others from ``N(0, 0.1^2)`` draws of their own
    (seeded by ``seed`` and their number). A start in more than ``d`` dimensions (the
    "lift") is projected on the kept fit's top ``d`` principal axes. Fits whose loss is not
    finite are passed over unless all are.
    """
    best_loss, best = math.inf, None
    for j in range(n_init):
        start = X0 if j == 0 else 0.1 * np.random.default_rng([seed, j]).standard_normal(X0.shape)
        out = fit(start)
        loss = float(out.loss[-1]) if len(out.loss) else math.inf
        loss = loss if math.isfinite(loss) else math.inf
        if best is None or loss < best_loss:
            best_loss, best = loss, out.embedding
    assert best is not None
    if best.shape[1] == d:
        return best
    Y = best - best.mean(axis=0)
    return Y @ np.linalg.svd(Y, full_matrices=False)[2][:d].T
