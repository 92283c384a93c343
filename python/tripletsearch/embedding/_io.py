"""A fitted embedding in a NumPy ``.npz`` file (no pickles): ``Embedding.save`` / ``load``.

Functions of arrays and plain values: they know no estimator (:class:`Embedding` passes
its parameters and fitted arrays, and sets its attributes from what :func:`read_embedding`
returns).
"""

from __future__ import annotations

import json
import math
import os
import zipfile
from typing import Any, NamedTuple

import numpy as np

__all__ = [
    "save_embedding",
    "read_embedding",
    "check_saved_embedding",
    "SavedEmbedding",
    "current_params",
    "SAVE_VERSION",
]

SAVE_VERSION = 1  # the file format's version
_FORMAT = "tripletsearch.Embedding"


class SavedEmbedding(NamedTuple):
    """What an embedding's file holds."""

    params: dict[str, Any]  # the estimator's parameters that are plain values
    embedding: np.ndarray  # (n_items, dim)
    loss_curve: np.ndarray
    gamma: float  # NaN for a model without gamma
    n_items: int
    n_epochs: int
    status: str


def save_embedding(
    path: Any,
    *,
    params: dict[str, Any],
    embedding: np.ndarray,
    loss_curve: np.ndarray,
    gamma: float,
    n_items: int,
    n_epochs: int,
    status: str,
) -> None:
    """Write a fitted embedding to ``path`` (see :meth:`Embedding.save`).

    ``params``: the estimator's; a value that is not a plain value (a Generator, an array)
    is stored as None.
    """
    plain = {}
    for k, v in params.items():
        ok = v is None or isinstance(v, (bool, int, float, str))
        plain[k] = v if ok and not isinstance(v, np.generic) else None
    meta = {
        "format": _FORMAT,
        "version": SAVE_VERSION,
        "params": plain,
        "gamma_": gamma,
        "n_items_": int(n_items),
        "n_epochs_": int(n_epochs),
        "status_": status,
    }
    with open(os.fspath(path), "wb") as fh:  # exactly `path`: savez appends no suffix
        np.savez(
            fh,
            embedding=np.asarray(embedding, dtype=np.float64),
            loss_curve=np.asarray(loss_curve, dtype=np.float64),
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


def read_embedding(path: Any) -> SavedEmbedding:
    """The embedding saved at ``path``; ValueError naming the file when it is not one."""
    name = os.fspath(path)
    X, loss, meta = _read(name)
    try:
        saved = SavedEmbedding(
            dict(meta["params"]),
            X,
            loss,
            float(meta["gamma_"]) if meta["gamma_"] is not None else math.nan,
            int(meta["n_items_"]),
            int(meta["n_epochs_"]),
            str(meta["status_"]),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ValueError(f"{name}: malformed Embedding file ({exc})") from None
    if saved.n_items != X.shape[0]:
        raise ValueError(f"{name}: n_items_ {saved.n_items} != {X.shape[0]} embedding rows")
    return saved


def check_saved_embedding(X: np.ndarray, dim: int) -> None:
    """ValueError unless the saved ``X`` is finite and of ``dim`` columns."""
    if X.ndim != 2 or X.shape[1] != dim or not np.isfinite(X).all():
        raise ValueError(f"embedding of shape {X.shape} does not fit dim={dim}")


def current_params(
    params: dict[str, Any], renamed: dict[str, str], names: list[str]
) -> dict[str, Any]:
    """Saved parameters under today's ``names`` (files written before 0.2.0: ``renamed``)."""
    params = dict(params)
    for old, new in renamed.items():
        if old in params:
            params.setdefault(new, params.pop(old))
    return {k: v for k, v in params.items() if k in names}


class Persistence:
    """An estimator's file (a part of :class:`~tripletsearch.Embedding`).

    :meth:`save`, :meth:`load` and :meth:`from_fitted`.
    """

    def save(self: Any, path: Any) -> None:
        """Save a fitted embedding to ``path`` (a NumPy ``.npz`` file, no pickles).

        The file holds the embedding, the fitted gamma and training record, and the
        parameters that are plain values (a Generator ``random_state`` or an array ``init``
        is stored as None). ``Embedding.load(path)`` reads it back; ``tripletsearch serve
        --catalogue`` accepts such a file as a catalogue's embedding.
        """
        self._check_fitted()
        save_embedding(
            path,
            params=self.get_params(),
            embedding=self.embedding_,
            loss_curve=self.loss_curve_,
            gamma=self.gamma_,
            n_items=self.n_items_,
            n_epochs=self.n_epochs_,
            status=self.status_,
        )

    @classmethod
    def load(cls: Any, path: Any) -> Any:
        """Load an embedding saved by :meth:`save`.

        It is fitted: ``embedding_``, ``oracle_`` and the scores work as after ``fit``.
        """
        name = os.fspath(path)
        saved = read_embedding(name)
        try:
            return cls.from_fitted(
                saved.embedding,
                gamma_=saved.gamma,
                loss_curve_=saved.loss_curve,
                n_epochs_=saved.n_epochs,
                status_=saved.status,
                **current_params(saved.params, cls._renamed_params, cls._param_names()),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"{name}: malformed Embedding file ({exc})") from None

    @classmethod
    def from_fitted(cls: Any, embedding: Any, *, gamma_: float = math.nan, **record: Any) -> Any:
        """An estimator holding ``embedding`` (n_items x dim, finite) as if ``fit`` found it.

        ``gamma_``: a gamma-CKL model's fitted gamma (NaN for others); ``record``: the
        estimator's parameters and, optionally, ``loss_curve_``, ``n_epochs_``, ``status_``.
        The scores and ``transform`` work as after ``fit``; ValueError when it does not fit.
        """
        loss_curve_ = record.pop("loss_curve_", None)
        n_epochs_, status_ = record.pop("n_epochs_", 0), record.pop("status_", "")
        params = record
        obj = cls(**params)
        p = obj._validate_params()
        X = np.ascontiguousarray(embedding, dtype=np.float64)
        check_saved_embedding(X, p["dim"])
        obj.oracle_ = obj._make_oracle(float(gamma_) if p["model"] == "gamma-ckl" else None)
        obj.embedding_, obj.n_items_, obj.gamma_ = X, X.shape[0], float(gamma_)
        obj.gamma_path_ = None
        obj.loss_curve_ = np.empty(0) if loss_curve_ is None else np.asarray(loss_curve_)
        obj.n_epochs_, obj.status_ = int(n_epochs_), str(status_)
        return obj
