"""NumPy twin of ``cpp/include/tripletsearch/core/resample.hpp``: systematic resampling."""

from __future__ import annotations

from typing import Any

import numpy as np


def systematic_resample(w: Any, total: float, n_out: int, u0: float) -> np.ndarray:
    """n_out indices drawn with probabilities w / total, ascending.

    Index k: the item where the cumulative weight first exceeds (k + u0) total / n_out; past
    the end of the cumulative sum (rounding), the last item of positive weight.
    """
    w = np.asarray(w, dtype=np.float64)
    cum = np.cumsum(w)
    step = total / n_out
    last = int(np.nonzero(w > 0)[0][-1])
    out = np.empty(n_out, dtype=np.int64)
    nxt = u0 * step
    for k in range(n_out):
        i = int(np.searchsorted(cum, nxt, side="right"))
        out[k] = i if i < len(w) else last
        nxt += step
    return out
