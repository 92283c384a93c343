"""What the reproductions share: matplotlib on its file backend, and a median's interval."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["pyplot", "median_ci"]


def pyplot() -> Any:
    """matplotlib.pyplot on the Agg backend, or None (with a note) when not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover
        print("matplotlib is not installed: no plot (pip install matplotlib)")
        return None
    return plt


def median_ci(values, level=0.95):
    """Distribution-free confidence interval of the median.

    Order statistics k and n + 1 - k with k the largest index such that
    P(Binomial(n, 1/2) < k) <= (1 - level)/2.
    """
    from math import comb

    v = np.sort(values)
    n = len(v)
    cdf, k = 0.0, 0
    while k < n:
        p = comb(n, k) / 2.0**n
        if cdf + p > (1 - level) / 2:
            break
        cdf += p
        k += 1
    k = max(k, 1)
    return v[k - 1], v[n - k]
