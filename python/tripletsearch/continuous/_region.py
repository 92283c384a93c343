"""The hypercubes a continuous search narrows down: :class:`Region`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import check_int

__all__ = ["Region"]


@dataclass(frozen=True)
class Region:
    """A hypercube of the search.

    ``center`` (d,), ``edge`` and ``depth`` (halvings from Omega; a backtrack loses 2).
    """

    center: np.ndarray
    edge: float
    depth: int

    def contains(self, x: Any) -> bool:
        """Whether the point ``x`` lies in the (closed) hypercube."""
        return bool(np.all(np.abs(np.asarray(x, float) - self.center) <= 0.5 * self.edge))

    def parent(self) -> Region:
        """u(X): same center, edge 4x."""
        return Region(self.center.copy(), 4.0 * self.edge, self.depth - 2)

    def ancestor(self, k: int) -> Region:
        """The k-th ancestor (k backtracks)."""
        k = check_int(k, "k", minimum=0)
        return Region(self.center.copy(), self.edge * 4.0**k, self.depth - 2 * k)

    def children(self) -> list:
        """The 5^d children: edge/2, centers at offsets (m - 2) edge/4, m in 0..4."""
        d = len(self.center)
        out = []
        for code in range(5**d):
            m = np.array([(code // 5**a) % 5 for a in range(d)])
            out.append(
                Region(self.center + (m - 2) * 0.25 * self.edge, 0.5 * self.edge, self.depth + 1)
            )
        return out
