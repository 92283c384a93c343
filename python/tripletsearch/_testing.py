"""Glue between the public API and its NumPy twins, for tests and benchmarks.

The twins in :mod:`tripletsearch._reference` import nothing of the public modules; this
module plugs them into the public classes where a whole workflow (a fit) is compared.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ._reference.embedding import train as _reference_train
from .embedding import Embedding, TrainOutput
from .oracles import Oracle


def reference_train(
    oracle: Oracle,
    init: np.ndarray,
    triplets: np.ndarray,
    options: dict[str, Any],
    seed: int,
    threads: int,
    callback: Callable[[int, float, float], bool] | None = None,
    validation: np.ndarray | None = None,
) -> TrainOutput:
    """:func:`tripletsearch.embedding.native_train`'s signature, run by the NumPy twin."""
    return TrainOutput(
        *_reference_train(
            oracle.kind,
            oracle.parameter(init.shape[1]),
            init,
            triplets,
            options,
            seed,
            threads,
            callback,
            validation,
        )
    )


class ReferenceEmbedding(Embedding):
    """The public estimator with the NumPy twin of the trainer."""

    _train = staticmethod(reference_train)
