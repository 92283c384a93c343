"""The curves of simulated (or replayed) collections, and how the comparisons read them.

One :class:`CollectionResult` per method: accuracy and people's seconds per run and budget.
The comparisons of the issue: the mean and its standard error per budget; "answers
needed" to reach an accuracy, by linear interpolation of the mean accuracy in log answers
(:meth:`CollectionResult.answers_needed`); :func:`answers_to_match` (how many answers a
method needs to reach the accuracy another reaches with N); :func:`at_least_as_accurate`
(within one standard error of the difference, budget by budget).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "CollectionResult",
    "answers_to_match",
    "at_least_as_accurate",
    "crossing",
    "format_table",
]

# per-run arrays of a result (n_runs, n_budgets), besides accuracy and seconds
_STATS = ("truth_accuracy", "agreement", "n_refits")


def crossing(x: np.ndarray, y: np.ndarray, target: float) -> float:
    """The first x at which the piecewise-linear curve (log x, y) reaches ``target``.

    ``x`` increasing and positive. NaN when ``y`` never reaches it; ``x[0]`` when ``y[0]``
    already does (at most that many).
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if not np.isfinite(target):
        return math.nan
    above = np.flatnonzero(y >= target)
    if not len(above):
        return math.nan
    i = int(above[0])
    if i == 0:
        return float(x[0])
    lx0, lx1 = math.log(x[i - 1]), math.log(x[i])
    frac = (target - y[i - 1]) / (y[i] - y[i - 1])
    return float(math.exp(lx0 + frac * (lx1 - lx0)))


def _at(x: np.ndarray, y: np.ndarray, at: float) -> float:
    """The curve (log x, y) at ``at``, linearly interpolated (NaN outside the x range)."""
    if not x[0] <= at <= x[-1]:
        return math.nan
    return float(np.interp(math.log(at), np.log(x), y))


@dataclass(frozen=True, eq=False)
class CollectionResult:
    """Accuracy against answers (and people's seconds) of one method's collections.

    Attributes
    ----------
    method : str
    n_answers : ndarray of int64 (n_budgets,)
        The budgets measured, increasing.
    accuracy : ndarray (n_runs, n_budgets)
        Held-out accuracy of the fixed fitter's embedding of the first ``n_answers[b]``
        answers of run ``r``: the share of test answers whose closer item is closer in the
        embedding (ties 1/2).
    seconds : ndarray (n_runs, n_budgets)
        The people's cumulative time by then (the response-time model's expected seconds
        of each query asked); NaN where unknown (replayed answers).
    truth_accuracy : ndarray (n_runs, n_budgets)
        The same embeddings scored against the truth's order of the test queries (the
        noiseless accuracy); NaN where there is no truth.
    agreement : ndarray (n_runs, n_budgets)
        Share of the answers so far that name the truly closer item (harder queries:
        lower); NaN where there is no truth.
    n_refits : ndarray (n_runs, n_budgets)
        Embeddings the sampler had installed by then.
    rate : float or None
        Answers per second of the virtual clock (None: synchronous refits).
    test_size : int
        Test answers per run.
    info : dict
        Anything else the producer records (replays: re-asks and fallbacks per run).
    """

    method: str
    n_answers: np.ndarray
    accuracy: np.ndarray
    seconds: np.ndarray
    truth_accuracy: np.ndarray
    agreement: np.ndarray
    n_refits: np.ndarray
    rate: float | None = None
    test_size: int = 0
    info: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_runs(
        cls,
        method: str,
        budgets: Any,
        runs: list[dict[str, np.ndarray]],
        *,
        rate: float | None = None,
        test_size: int = 0,
        info: dict[str, Any] | None = None,
    ) -> CollectionResult:
        """Stack per-run dicts into a result.

        Each dict holds ``accuracy``, ``seconds`` and the other stats, arrays of
        len(budgets); a stat missing from the dicts is NaN.
        """
        shape = (len(runs), len(budgets))

        def stack(name: str) -> np.ndarray:
            if not runs or name not in runs[0]:
                return np.full(shape, np.nan)
            return np.array([r[name] for r in runs], dtype=np.float64).reshape(shape)

        refits = stack("n_refits")
        return cls(
            method,
            np.asarray(budgets, dtype=np.int64),
            stack("accuracy"),
            stack("seconds"),
            stack("truth_accuracy"),
            stack("agreement"),
            refits,
            rate,
            test_size,
            dict(info or {}),
        )

    @property
    def n_runs(self) -> int:
        """Runs (rows of ``accuracy``)."""
        return int(self.accuracy.shape[0])

    def _values(self, name: str) -> np.ndarray:
        if name not in ("accuracy", "seconds", *_STATS):
            raise ValueError(
                f"name: expected one of {['accuracy', 'seconds', *_STATS]}, got {name!r}"
            )
        return np.asarray(getattr(self, name), dtype=np.float64)

    def mean(self, name: str = "accuracy") -> np.ndarray:
        """Mean over runs per budget of ``accuracy``, ``seconds`` or another stat."""
        return self._values(name).mean(axis=0)

    def stderr(self, name: str = "accuracy") -> np.ndarray:
        """Standard error of the mean per budget (NaN with a single run)."""
        v = self._values(name)
        if v.shape[0] < 2:
            return np.full(v.shape[1], np.nan)
        return v.std(axis=0, ddof=1) / math.sqrt(v.shape[0])

    def accuracy_at(self, n_answers: float) -> float:
        """Mean accuracy at ``n_answers``, interpolated linearly in log answers.

        NaN outside the budgets measured.
        """
        return _at(self.n_answers.astype(np.float64), self.mean(), float(n_answers))

    def answers_needed(self, target_accuracy: float) -> float:
        """Answers the mean accuracy needs to reach ``target_accuracy``.

        Linear interpolation of the mean accuracy in log answers between the budgets
        measured; NaN when never reached, the first budget when already reached there.
        """
        return crossing(self.n_answers, self.mean(), float(target_accuracy))

    def seconds_needed(self, target_accuracy: float) -> float:
        """People's seconds the mean accuracy needs to reach ``target_accuracy``.

        As :meth:`answers_needed`, against the mean seconds.
        """
        return crossing(self.mean("seconds"), self.mean(), float(target_accuracy))

    def plot(
        self, ax: Any = None, *, against: str = "answers", label: str | None = None, **kwargs: Any
    ) -> Any:
        """Mean accuracy with a band of one standard error, against answers or seconds.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Default: a new figure's.
        against : {"answers", "seconds"}
            The x axis (log scale): answers collected or the people's time.
        label : str, optional
            Default: the method (and the rate).
        **kwargs
            Passed to ``ax.plot``.

        Returns
        -------
        matplotlib Axes
        """
        if against not in ("answers", "seconds"):
            raise ValueError(f"against: expected 'answers' or 'seconds', got {against!r}")
        if ax is None:
            import matplotlib.pyplot as plt

            ax = plt.subplots()[1]
        x = self.n_answers if against == "answers" else self.mean("seconds")
        y, se = 100 * self.mean(), 100 * np.nan_to_num(self.stderr())
        if label is None:
            label = self.method + ("" if self.rate is None else f", {self.rate:g} answers/s")
        line = ax.plot(x, y, marker="o", ms=3, label=label, **kwargs)[0]
        ax.fill_between(x, y - se, y + se, color=line.get_color(), alpha=0.2, lw=0)
        ax.set_xscale("log")
        from matplotlib.ticker import LogLocator, NullFormatter, ScalarFormatter

        # plain numbers at 1, 2 and 5 times the powers of ten, no crowded minor labels
        ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("answers" if against == "answers" else "people's seconds")
        ax.set_ylabel("held-out accuracy (%)")
        return ax

    def __repr__(self) -> str:
        rate = "" if self.rate is None else f", rate={self.rate:g}"
        return (
            f"CollectionResult(method={self.method!r}, n_runs={self.n_runs}, "
            f"n_answers={self.n_answers.tolist()}{rate})"
        )


def answers_to_match(result: CollectionResult, reference: CollectionResult, at: float) -> float:
    """Answers ``result`` needs to reach the mean accuracy ``reference`` reaches with ``at``.

    For instance ``answers_to_match(active, random, 5000)``: how many answers "active"
    needs for random's 5,000-answer accuracy (NaN when never within its budgets).
    """
    return result.answers_needed(reference.accuracy_at(at))


def at_least_as_accurate(
    result: CollectionResult, reference: CollectionResult, *, start: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """Whether ``result`` is at least as accurate as ``reference``, within one s.e.

    Per budget from ``start`` answers on, at the budgets both measured:
    ``mean_result - mean_reference >= -sqrt(se_result^2 + se_reference^2)`` (the standard
    error of the difference of independent means).

    Returns
    -------
    n_answers : ndarray of int64
        The budgets both measured, ``>= start``, increasing.
    ok : ndarray of bool
        Whether ``result`` is at least as accurate there.
    """
    common = np.intersect1d(result.n_answers, reference.n_answers)
    common = common[common >= start]
    a = np.searchsorted(result.n_answers, common)
    b = np.searchsorted(reference.n_answers, common)
    diff = result.mean()[a] - reference.mean()[b]
    se = np.sqrt(np.nan_to_num(result.stderr()[a]) ** 2 + np.nan_to_num(reference.stderr()[b]) ** 2)
    return common.astype(np.int64), np.asarray(diff >= -se)


def format_table(results: dict[str, CollectionResult], name: str = "accuracy") -> str:
    """A text table of the mean (and standard error) of ``name`` per budget.

    One column per result (accuracy in %); the rows are the union of the budgets, "-"
    where a result did not measure one.
    """
    budgets = sorted({int(b) for r in results.values() for b in r.n_answers})
    scale, fmt = (100.0, "{:6.2f} +- {:4.2f}") if name != "seconds" else (1.0, "{:8.0f} +- {:5.0f}")
    width = len(fmt.format(0, 0))
    lines = [f"{'answers':>8} " + " ".join(f"{k:>{width}}" for k in results)]
    for b in budgets:
        cells = []
        for r in results.values():
            hit = np.flatnonzero(r.n_answers == b)
            if not len(hit):
                cells.append(f"{'-':>{width}}")
                continue
            i = int(hit[0])
            m, se = scale * r.mean(name)[i], scale * np.nan_to_num(r.stderr(name)[i])
            cells.append(fmt.format(m, se))
        lines.append(f"{b:>8} " + " ".join(cells))
    return "\n".join(lines)
