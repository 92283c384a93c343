"""The native scoring of an embedding's heads (``collect/information.hpp``).

:class:`HeadScorer` is what the active method's triplets and its screens past the triplet
(``_active_screens``) share: a head's log weights, the log-odds table, the information.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _core

__all__ = ["HeadScorer"]


class HeadScorer:
    """The native scoring of one embedding: a head's log weights, a table, the information.

    Parameters
    ----------
    spec : _core.OracleSpec
        The fitted model.
    X : ndarray (n, d)
        The embedding.
    lapse : float
        The lapse mixed into the model's answers.
    threads : int
    """

    def __init__(self, spec: Any, X: np.ndarray, lapse: float, threads: int) -> None:
        self.spec, self.X, self.lapse, self.threads = spec, X, lapse, threads

    def log_weights(self, support: np.ndarray, answers: np.ndarray, prior: np.ndarray) -> Any:
        """Add the log-probability of each answer (closer, farther) at each support point."""
        return _core.collect_log_weights(
            self.spec, self.lapse, self.X, support, answers, prior, self.threads
        )

    def table_log_weights(self, table: np.ndarray, answers: np.ndarray, prior: np.ndarray) -> Any:
        """:meth:`log_weights` with the answers as rows of ``table`` (its support's)."""
        return _core.collect_table_log_weights(self.lapse, table, answers, prior, self.threads)

    def table(self, support: np.ndarray, items: np.ndarray) -> Any:
        """The log-odds terms of ``items`` for every support point, (len(items), M)."""
        return _core.collect_log_odds(self.spec, self.X, support, items, self.threads)

    def information(self, table: np.ndarray, log_w: np.ndarray, pairs: np.ndarray) -> Any:
        """Information (nats) of each pair (rows of ``table``) about the head."""
        return _core.collect_pair_information(self.lapse, table, log_w, pairs, self.threads)
