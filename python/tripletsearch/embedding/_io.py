"""A fitted embedding in a NumPy ``.npz`` file (no pickles): ``Embedding.save`` / ``load``."""

from __future__ import annotations

import json
import math
import os
import zipfile
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ._estimator import Embedding

__all__ = ["save_embedding", "load_embedding", "SAVE_VERSION"]

SAVE_VERSION = 1  # the file format's version
_FORMAT = "tripletsearch.Embedding"


def save_embedding(estimator: Embedding, path: Any) -> None:
    """Write a fitted ``estimator`` to ``path`` (see :meth:`Embedding.save`)."""
    estimator._check_fitted()
    params = {}
    for k, v in estimator.get_params().items():
        ok = v is None or isinstance(v, (bool, int, float, str))
        params[k] = v if ok and not isinstance(v, np.generic) else None
    meta = {
        "format": _FORMAT,
        "version": SAVE_VERSION,
        "params": params,
        "gamma_": estimator.gamma_,
        "n_items_": int(estimator.n_items_),
        "n_epochs_": int(estimator.n_epochs_),
        "status_": estimator.status_,
    }
    with open(os.fspath(path), "wb") as fh:  # exactly `path`: savez appends no suffix
        np.savez(
            fh,
            embedding=np.asarray(estimator.embedding_, dtype=np.float64),
            loss_curve=np.asarray(estimator.loss_curve_, dtype=np.float64),
            meta=np.array(json.dumps(meta)),
        )


def _read(name: str) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """(embedding, loss curve, metadata) of the file; ValueError when it is none of ours."""
    try:
        with np.load(name, allow_pickle=False) as f:
            X = np.array(f["embedding"], dtype=np.float64)
            loss = np.array(f["loss_curve"], dtype=np.float64)
            meta = json.loads(str(f["meta"]))
    except (KeyError, ValueError, OSError, zipfile.BadZipFile) as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise ValueError(f"{name}: not an Embedding saved by Embedding.save ({exc})") from None
    if not isinstance(meta, dict) or meta.get("format") != _FORMAT:
        raise ValueError(f"{name}: not an Embedding saved by Embedding.save")
    if meta.get("version") != SAVE_VERSION:
        raise ValueError(
            f"{name}: unsupported Embedding file version {meta.get('version')!r} "
            f"(this library reads version {SAVE_VERSION})"
        )
    return X, loss, meta


def load_embedding(cls: type[Embedding], path: Any) -> Embedding:
    """An estimator of class ``cls`` read from ``path`` (see :meth:`Embedding.load`)."""
    name = os.fspath(path)
    X, loss, meta = _read(name)
    try:
        params = dict(meta["params"])
        for old, new in cls._renamed_params.items():  # files written before 0.2.0
            if old in params:
                params.setdefault(new, params.pop(old))
        params = {k: v for k, v in params.items() if k in cls._param_names()}
        obj = cls(**params)
        checked = obj._validate_params()
        d, model = checked["dim"], checked["model"]
        if X.ndim != 2 or X.shape[1] != d or not np.isfinite(X).all():
            raise ValueError(f"embedding of shape {X.shape} does not fit dim={d}")
        obj.embedding_ = X
        obj.n_items_ = int(meta["n_items_"])
        obj.gamma_ = float(meta["gamma_"]) if meta["gamma_"] is not None else math.nan
        obj.oracle_ = obj._make_oracle(obj.gamma_ if model == "gamma-ckl" else None)
        obj.gamma_path_ = None  # not saved
        obj.loss_curve_ = loss
        obj.n_epochs_ = int(meta["n_epochs_"])
        obj.status_ = str(meta["status_"])
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ValueError(f"{name}: malformed Embedding file ({exc})") from None
    if obj.n_items_ != X.shape[0]:
        raise ValueError(f"{name}: n_items_ {obj.n_items_} != {X.shape[0]} embedding rows")
    return obj
