"""What a cross-validation gives: one score per fit, one row per setting."""

from __future__ import annotations

import csv
import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

__all__ = ["FitScore", "GridResult"]


class FitScore(NamedTuple):
    """One fit of a cross-validation, scored on its held-out fold."""

    accuracy: float
    nll: float
    fit_time: float  # seconds
    epochs: int
    gamma: float  # the fitted gamma (NaN for the models without one)


@dataclass
class GridResult:
    """Cross-validated scores per setting.

    ``rows`` is a list of dicts with the parameters, ``accuracy``, ``accuracy_se``, ``nll``,
    ``nll_se`` (mean and standard error over folds), ``fit_time`` (mean seconds),
    ``epochs`` (mean) and ``gamma_chosen`` (the mean fitted gamma of gamma-CKL: the gamma
    chosen by ``gamma="auto"`` or ``learn_gamma``; NaN for the other models).
    """

    rows: list = field(default_factory=list)
    param_names: list = field(default_factory=list)

    def best(self, by: str = "accuracy", group_by: Sequence[str] = ()) -> Any:
        """The best row (max accuracy, or min nll), or one best row per group."""
        # returns Any rather than a union: one row (a dict) without group_by, else a list
        if by not in ("accuracy", "nll"):
            raise ValueError(f"by: expected 'accuracy' or 'nll', got {by!r}")
        sign = -1.0 if by == "accuracy" else 1.0
        if not group_by:
            return min(self.rows, key=lambda r: sign * r[by])
        groups: dict[tuple[Any, ...], dict[str, Any]] = {}
        for r in self.rows:
            key = tuple(r[k] for k in group_by)
            if key not in groups or sign * r[by] < sign * groups[key][by]:
                groups[key] = r
        return [groups[k] for k in sorted(groups, key=lambda k: tuple(map(str, k)))]

    def to_csv(self, path):
        """Write the rows to the CSV file ``path``: the parameters, then the scores."""
        cols = self.param_names + [
            "accuracy",
            "accuracy_se",
            "nll",
            "nll_se",
            "fit_time",
            "epochs",
            "gamma_chosen",
        ]
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
            w.writeheader()
            w.writerows(self.rows)

    def format(self, rows: list[dict[str, Any]] | None = None) -> str:
        """A text table of ``rows`` (default: all): parameters, accuracy, nll, fit time."""
        rows = self.rows if rows is None else rows
        cols = self.param_names
        # the fitted gamma, where fits chose it (gamma="auto" or learn_gamma)
        chosen = any(
            math.isfinite(r.get("gamma_chosen", math.nan))
            and not isinstance(r.get("gamma"), numbers.Real)
            or r.get("learn_gamma")
            for r in rows
        )
        lines = [
            " ".join(f"{c:>10s}" for c in cols)
            + ("  gamma fit" if chosen else "")
            + "   accuracy        nll     fit(s)"
        ]
        for r in rows:
            lines.append(
                " ".join(f"{_fmt(r[c]):>10s}" for c in cols)
                + (f" {r['gamma_chosen']:10.3g}" if chosen else "")
                + f"   {r['accuracy']:.4f}+-{r['accuracy_se']:.4f}"
                + f" {r['nll']:.4f}+-{r['nll_se']:.4f} {r['fit_time']:.3f}"
            )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format()


def _fmt(v):
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def _summary(scores):
    a = np.array([s.accuracy for s in scores])
    nll = np.array([s.nll for s in scores])
    k = len(scores)

    def se(x):
        return float(np.std(x, ddof=1) / math.sqrt(k)) if k > 1 else math.nan

    return {
        "accuracy": float(a.mean()),
        "accuracy_se": se(a),
        "nll": float(nll.mean()),
        "nll_se": se(nll),
        "fit_time": float(np.mean([s.fit_time for s in scores])),
        "epochs": float(np.mean([s.epochs for s in scores])),
        "gamma_chosen": float(np.mean([s.gamma for s in scores])),
    }
