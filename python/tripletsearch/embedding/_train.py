"""One fit by the native trainer: its options, its result, and the rows it learns from."""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

from .. import _core
from .._validation import informative_rows
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
]

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
        oracle._spec(init.shape[1]),
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
