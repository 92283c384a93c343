"""What collecting costs in time: people's response times and the refits' computing time.

**Response times.** Harder queries take people longer. In the NEXT alien-eggs study (30
eggs, 2015; bundled as :func:`tripletsearch.datasets.load_alien_eggs` ``(30)``, BSD-3 via
salmon) the time of an answer falls with the query's *distance ratio* in the ground truth,

    r = max(d_a, d_b) / (d_a + d_b)  in [1/2, 1]

(d the truth's Euclidean distances from the head to the two items shown; r = 1/2: both
equally far, the hardest query; r -> 1: one item at the head). :class:`ResponseTimeModel`
is a log-linear median regression,

    log seconds = intercept + slope * r + e,   median(e) = 0,

fitted by least absolute deviations (robust to the published times' heavy tail: a few
are negative, some hours long), with the expected time per answer the median times the
smearing factor mean(exp(e)) over the answers of at most 60 s (Duan's smearing estimate;
the longer ones are people away). Fitted on the 20,085 NEXT answers of positive time
(:data:`NEXT_RESPONSE_TIMES`): a median of 2.24 s at r = 1/2 and 1.18 s at r = 1, the
expected time 1.57 times the median. The model is scale-free (r is a ratio of distances),
so it prices the queries of any truth.

**Refits.** A service refits the embedding in another process while people answer
(:func:`tripletsearch.simulate_collection` with a ``rate``). :class:`RefitCostModel` is
the time a refit takes, a power law ``scale * n_answers^a * n_items^b * dim^c`` fitted
(least squares in logs) to refit times measured by :func:`measure_refit_times`
(:data:`MEASURED_REFIT_COST`: about 0.1 s for 10,000 answers over 1,000 items; a refit
after 10 % more answers starts from the last embedding and converges in few
iterations).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import check_int, check_positive, check_triplet_rows, check_X
from ..outcomes import triplet_agreement

__all__ = [
    "ResponseTimeModel",
    "NEXT_RESPONSE_TIMES",
    "distance_ratio",
    "response_times_by_sampler",
    "RefitCostModel",
    "MEASURED_REFIT_COST",
    "measure_refit_times",
]

# answers longer than this are people away, not thinking (the smearing factor's cap)
AWAY_SECONDS = 60.0


def distance_ratio(X: Any, queries: Any) -> np.ndarray:
    """The distance ratio ``max(d_a, d_b) / (d_a + d_b)`` of queries in a truth ``X``.

    Parameters
    ----------
    X : array_like (n, d)
        The ground truth (or a 1-D parameter as shape (n, 1)).
    queries : array_like of int (m, 3)
        Rows ``(head, a, b)``; the order of a and b does not matter.

    Returns
    -------
    ndarray (m,)
        In [1/2, 1]; 1/2 when both items sit at the head.
    """
    X = check_X(X)
    Q = check_triplet_rows(queries, "queries")
    if Q.size and (Q.min() < 0 or Q.max() >= len(X)):
        raise ValueError(f"queries: item indices must lie in [0, {len(X)})")
    da = np.sqrt(((X[Q[:, 1]] - X[Q[:, 0]]) ** 2).sum(axis=1))
    db = np.sqrt(((X[Q[:, 2]] - X[Q[:, 0]]) ** 2).sum(axis=1))
    total = da + db
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.maximum(da, db) / total
    return np.where(total > 0, r, 0.5)


def _lad_line(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Least absolute deviations line ``y ~ a + b x``: (a, b).

    For a slope b the best intercept is the median of ``y - b x``; the total absolute
    deviation is convex in b, minimised by a golden-section search.
    """

    def cost(b: float) -> float:
        return float(np.abs(y - b * x - np.median(y - b * x)).sum())

    lo, hi = -50.0, 50.0
    g = (math.sqrt(5.0) - 1.0) / 2.0
    c, d = hi - g * (hi - lo), lo + g * (hi - lo)
    fc, fd = cost(c), cost(d)
    while hi - lo > 1e-9:
        if fc <= fd:
            hi, d, fd = d, c, fc
            c = hi - g * (hi - lo)
            fc = cost(c)
        else:
            lo, c, fc = c, d, fd
            d = lo + g * (hi - lo)
            fd = cost(d)
    b = (lo + hi) / 2.0
    return float(np.median(y - b * x)), b


@dataclass(frozen=True)
class ResponseTimeModel:
    """People's time per answer against the query's distance ratio r in the truth.

    ``log seconds = intercept + slope * r + e`` with median(e) = 0; the expected time is
    the median times ``smearing`` (see the module's notes).

    Attributes
    ----------
    intercept, slope : float
        Of the median of log seconds against r.
    smearing : float
        mean(exp(e)) over the fitted answers of at most 60 s: expected / median time.
    n_answers : int
        Answers fitted.
    source : str
        What the model was fitted on.
    """

    intercept: float
    slope: float
    smearing: float
    n_answers: int = 0
    source: str = ""

    @classmethod
    def fit(cls, ratio: Any, seconds: Any, *, source: str = "") -> ResponseTimeModel:
        """Fit the model to answers' distance ratios and response times.

        Answers of zero or negative time (recording errors) are left out; the line is a
        least-absolute-deviations fit of log seconds, robust to the long times.
        """
        r = np.asarray(ratio, dtype=np.float64).ravel()
        t = np.asarray(seconds, dtype=np.float64).ravel()
        if r.shape != t.shape:
            raise ValueError(f"seconds: expected {r.shape[0]} times (one per ratio), got {t.size}")
        keep = np.isfinite(r) & np.isfinite(t) & (t > 0)
        if keep.sum() < 3:
            raise ValueError("seconds: need at least 3 answers of positive time to fit")
        x, y = r[keep], np.log(t[keep])
        a, b = _lad_line(x, y)
        e = y - a - b * x
        here = t[keep] <= AWAY_SECONDS
        smearing = float(np.mean(np.exp(e[here]))) if here.any() else 1.0
        return cls(a, b, smearing, int(keep.sum()), source)

    def median(self, ratio: Any) -> np.ndarray:
        """The median seconds of answers to queries of these distance ratios."""
        return np.exp(self.intercept + self.slope * np.asarray(ratio, dtype=np.float64))

    def mean(self, ratio: Any) -> np.ndarray:
        """The expected seconds of answers to queries of these distance ratios."""
        return self.smearing * self.median(ratio)

    def seconds(self, X: Any, queries: Any) -> np.ndarray:
        """The expected seconds of each query ``(head, a, b)`` in the truth ``X``."""
        return self.mean(distance_ratio(X, queries))


# fitted by ResponseTimeModel.fit on the bundled NEXT answers (fit_next_response_times();
# tests/collect/test_timing.py refits them from the bundled file and from ../shared/data)
NEXT_RESPONSE_TIMES = ResponseTimeModel(
    intercept=1.449036,
    slope=-1.284966,
    smearing=1.566535,
    n_answers=20085,
    source="NEXT alien eggs (n = 30, 2015): 20,085 answers of positive time",
)


def _egg_ratios(dataset: Any) -> np.ndarray:
    truth = np.asarray(dataset.truth, dtype=np.float64).reshape(-1, 1)
    return distance_ratio(truth, dataset.triplets)


def fit_next_response_times() -> ResponseTimeModel:
    """The :class:`ResponseTimeModel` of the bundled NEXT answers.

    What :data:`NEXT_RESPONSE_TIMES` holds.
    """
    from ..datasets import load_alien_eggs

    eggs = load_alien_eggs(30)
    return ResponseTimeModel.fit(
        _egg_ratios(eggs), eggs.response_time_s, source=NEXT_RESPONSE_TIMES.source
    )


def response_times_by_sampler(
    dataset: Any, model: ResponseTimeModel = NEXT_RESPONSE_TIMES
) -> list[dict[str, Any]]:
    """Per sampler of a recorded study: its answers' agreement with the truth and times.

    Parameters
    ----------
    dataset : TripletDataset
        With a 1-D ``truth``, ``sampler`` and ``response_time_s`` (the alien eggs).
    model : ResponseTimeModel
        Gives each sampler's median time predicted from its queries' distance ratios.

    Returns
    -------
    list of dict
        ``sampler``, ``answers``, ``agreement`` (share of answers naming the truly closer
        item; ties count 1/2), ``median_ratio``, ``median_seconds`` (observed) and
        ``model_median_seconds`` (the model's median time of the sampler's queries).
    """
    if dataset.sampler is None or dataset.response_time_s is None:
        raise ValueError("dataset: needs each answer's sampler and response time")
    truth = np.asarray(dataset.truth, dtype=np.float64)
    agree = triplet_agreement(truth, dataset.triplets)
    ratio = _egg_ratios(dataset)
    rows = []
    for name in sorted(set(dataset.sampler.tolist())):
        mine = dataset.sampler == name
        timed = mine & (dataset.response_time_s > 0)
        rows.append(
            {
                "sampler": name,
                "answers": int(mine.sum()),
                "agreement": float(agree[mine].mean()),
                "median_ratio": float(np.median(ratio[mine])),
                "median_seconds": float(np.median(dataset.response_time_s[timed])),
                "model_median_seconds": float(np.median(model.median(ratio[mine]))),
            }
        )
    return rows


# ---------------------------------------------------------------------- refit cost


@dataclass(frozen=True)
class RefitCostModel:
    """Seconds a sampler's refit takes: a power law in its size.

    ``scale * n_answers**answers_exp * n_items**items_exp * dim**dim_exp``.

    Attributes
    ----------
    scale, answers_exp, items_exp, dim_exp : float
    rms_log_error : float
        Root mean square of log(model / measured) over the measurements fitted.
    source : str
        Where the times were measured.
    """

    scale: float
    answers_exp: float
    items_exp: float
    dim_exp: float
    rms_log_error: float = math.nan
    source: str = ""

    def __call__(self, n_answers: int, n_items: int, dim: int) -> float:
        """The seconds of a refit on ``n_answers`` answers over ``n_items`` items in ``dim``."""
        return float(
            self.scale
            * max(n_answers, 1) ** self.answers_exp
            * n_items**self.items_exp
            * dim**self.dim_exp
        )

    @classmethod
    def fit(
        cls,
        n_answers: Sequence[int],
        n_items: Sequence[int],
        dim: Sequence[int],
        seconds: Sequence[float],
        *,
        source: str = "",
    ) -> RefitCostModel:
        """Least squares of log seconds on the logs of the three sizes (a power law).

        A term whose size never varies among the measurements gets exponent 0.
        """
        cols = [np.asarray(v, dtype=np.float64).ravel() for v in (n_answers, n_items, dim)]
        t = np.asarray(seconds, dtype=np.float64).ravel()
        if len({c.size for c in cols} | {t.size}) != 1 or t.size < 4:
            raise ValueError(
                "seconds: need at least 4 measurements, one per (n_answers, n_items, dim)"
            )
        if (t <= 0).any() or not np.isfinite(t).all():
            raise ValueError("seconds: measured times must be finite and > 0")
        if min(c.min() for c in cols) < 1:
            raise ValueError("n_answers: sizes must be >= 1")
        logs = [np.log(c) for c in cols]
        varied = [j for j, lc in enumerate(logs) if np.ptp(lc) > 0]
        A = np.stack([np.ones_like(t)] + [logs[j] for j in varied], axis=1)
        coef, *_ = np.linalg.lstsq(A, np.log(t), rcond=None)
        exps = np.zeros(3)
        exps[varied] = coef[1:]
        rms = float(np.sqrt(np.mean((A @ coef - np.log(t)) ** 2)))
        a, b, c = (float(e) for e in exps)
        return cls(float(np.exp(coef[0])), a, b, c, rms, source)


# fitted by RefitCostModel.fit to measure_refit_times() over n_items in (100, 300, 1000),
# dim in (2, 3, 5), n_answers in (1000, 3000, 10000) (median of 3 problems, best of 2 runs
# each, one thread, method "random", the sampler's default fit: gamma-CKL, gamma "auto",
# warm-started) on the development machine (2 cores shared with other jobs). A refit on
# 10,000 answers over 1,000 items in d = 3: 0.10 s. The measurements scatter around the
# law by a factor of 1.55 (rms of log): the iterations a refit needs vary with its problem
MEASURED_REFIT_COST = RefitCostModel(
    scale=6.637e-4,
    answers_exp=0.2691,
    items_exp=0.3783,
    dim_exp=-0.0558,
    rms_log_error=0.437,
    source="measure_refit_times() on the development machine (2 cores, one thread)",
)


def measure_refit_times(
    sizes: Sequence[tuple[int, int, int]],
    *,
    method: str = "random",
    sampler_kw: dict[str, Any] | None = None,
    problems: int = 3,
    repeats: int = 2,
    random_state: int = 0,
    n_jobs: int | None = None,
) -> list[dict[str, Any]]:
    """Time a :class:`~tripletsearch.TripletSampler`'s refits on simulated answers.

    For each ``(n_items, dim, n_answers)`` and each of ``problems`` random problems: items
    uniform in the unit cube, ``n_answers`` answers to random queries by gamma-CKL (gamma
    3) people, a first fit installed, 10 % more answers (a refit of ``refit="auto"`` is
    due), then :meth:`~tripletsearch.TripletSampler.fit_embedding` timed, best of
    ``repeats`` (the least disturbed by other work on the machine). The median over the
    problems is reported: the cost of a refit varies with its problem (the iterations to
    converge) by a factor of two to three.

    Returns
    -------
    list of dict
        ``n_items``, ``dim``, ``n_answers``, ``seconds``.
    """
    from ._sampler import TripletSampler

    rows = []
    rng = np.random.default_rng(random_state)
    for n_items, dim, n_answers in sizes:
        n_items = check_int(n_items, "n_items", minimum=3)
        dim = check_int(dim, "dim", minimum=1)
        n_answers = check_int(n_answers, "n_answers", minimum=1)
        times = []
        for _ in range(check_int(problems, "problems", minimum=1)):
            X = rng.uniform(size=(n_items, dim))
            T = _answers(rng, X, n_answers + max(1, n_answers // 10))
            best = math.inf
            for _ in range(check_int(repeats, "repeats", minimum=1)):
                s = TripletSampler(
                    n_items, dim, method=method, refit=None, random_state=0, n_jobs=n_jobs,
                    **(sampler_kw or {}),
                )  # fmt: skip
                s.tell(T[:n_answers])
                s.set_embedding(s.fit_embedding())
                s.tell(T[n_answers:])
                t0 = time.perf_counter()
                s.fit_embedding()
                best = min(best, time.perf_counter() - t0)
            times.append(best)
        seconds = float(np.median(times))
        rows.append({"n_items": n_items, "dim": dim, "n_answers": n_answers, "seconds": seconds})
    return rows


def _answers(rng: np.random.Generator, X: np.ndarray, m: int) -> np.ndarray:
    """``m`` answers of gamma-CKL (gamma 3) people to random queries on ``X``."""
    from ..oracles import GammaCKL

    return GammaCKL(3.0).sample(X, random_queries(rng, len(X), m), random_state=rng)


def random_queries(rng: np.random.Generator, n: int, m: int) -> np.ndarray:
    """``m`` uniform queries ``(head, a, b)`` of three distinct items among ``n``."""
    head = rng.integers(0, n, m)
    a = (head + rng.integers(1, n, m)) % n
    third = rng.integers(0, n - 2, m)
    lo, hi = np.minimum(head, a), np.maximum(head, a)
    third += third >= lo
    third += third >= hi
    return np.stack([head, a, third], axis=1).astype(np.int64)


def check_rate(rate: Any) -> float | None:
    """``rate``: None or answers per second (finite, > 0)."""
    return None if rate is None else check_positive(rate, "rate")
