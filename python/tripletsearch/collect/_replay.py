"""Replaying recorded answers through a sampler, and what recorded samplers' answers gave.

**Replay** (:func:`replay_collection`): the sampler asks, and a query ``(head, a, b)`` is
answered by a recorded answer to the same head and the same unordered pair, each recorded
answer used once (the run's seed orders the answers of a query). When none is left for the
query the sampler is asked again (a *re-ask*: its answer never came); after
``max_reasks`` re-asks in a row, an unused recorded answer about the head of the last query
asked is told instead, drawn at random (any head when that one has none left): a
*fallback* (rows asked elsewhere are accepted), which keeps the sampler's choice of head.
Both are counted per run (``CollectionResult.info``). A sampler whose choice is a
deterministic function of its state (``"active"`` picks each head's most informative pair)
asks a head's exhausted query again whenever the head comes round: its re-asks end in
fallbacks, and the more answers it has taken, the more often. The recorded test answers
are kept apart: the fixed fitter's embedding of the answers so far is scored on them.
People's seconds are the recorded response times of the answers used (each clipped to
[0, 60] s: a few published times are negative, some hours long).

The NEXT 30-egg study (:func:`next_eggs`) suits a replay: its 16,072 training answers
(random, CrowdKernel, STE and uncertainty sampling) cover 6,573 of the 12,180 possible
queries. salmon's 300-egg study (:func:`salmon_eggs`) covers 15,020 of 13.4 million, too
few to replay; :func:`as_collected` reports what each recorded sampler's answers gave, in
their recorded order.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._progress import Progress
from .._validation import check_int, check_random_state, derived_seed, seed_from
from ..outcomes import triplet_agreement
from ._results import CollectionResult
from ._simulate import _budgets, _check_fitter, _sampler_kw, default_fitter, embedding_accuracy

__all__ = [
    "RecordedAnswers",
    "next_eggs",
    "salmon_eggs",
    "AnswerPool",
    "replay_collection",
    "as_collected",
    "AWAY_SECONDS",
]

AWAY_SECONDS = 60.0  # a recorded time is clipped to [0, AWAY_SECONDS]


@dataclass(frozen=True, eq=False)
class RecordedAnswers:
    """Answers recorded from people, for replays.

    Attributes
    ----------
    name : str
    n_items : int
    train : ndarray of int64 (m, 3)
        The answers a replay may use, rows ``(head, closer, farther)`` in recorded order.
    train_sampler : ndarray of str (m,)
        The sampler that asked each.
    train_seconds : ndarray (m,)
        Each answer's recorded time, clipped to [0, 60] s.
    test : ndarray of int64 (t, 3)
        The held-out answers (to random queries).
    truth : ndarray (n_items, k) or None
        A known ground truth (the eggs' 1-D parameter as (n, 1)).
    """

    name: str
    n_items: int
    train: np.ndarray
    train_sampler: np.ndarray
    train_seconds: np.ndarray
    test: np.ndarray
    truth: np.ndarray | None = None


def _eggs(n: int, test_label: str, name: str) -> RecordedAnswers:
    from ..datasets import load_alien_eggs

    d = load_alien_eggs(n)
    assert d.sampler is not None and d.response_time_s is not None and d.truth is not None
    test = d.sampler == test_label
    return RecordedAnswers(
        name,
        d.n_items,
        d.triplets[~test],
        d.sampler[~test],
        np.clip(d.response_time_s[~test], 0.0, AWAY_SECONDS),
        d.triplets[test],
        np.asarray(d.truth, dtype=np.float64).reshape(-1, 1),
    )


def next_eggs() -> RecordedAnswers:
    """The NEXT alien eggs (n = 30, 2015) for replays.

    16,072 answers to replay; the 4,014 answers to random ``Test`` queries kept apart.
    """
    return _eggs(30, "Test", "NEXT alien eggs, n = 30")


def salmon_eggs() -> RecordedAnswers:
    """The alien eggs of salmon (n = 300, 2020), as collected.

    7,456 random and 7,598 uncertainty-sampling answers; the 2,557 ``Test`` answers kept
    apart.
    """
    return _eggs(300, "Test", "salmon alien eggs, n = 300")


class AnswerPool:
    """Recorded answers by query, each used once.

    ``take((head, a, b))`` returns an unused answer to the same head and unordered pair, or
    None. Each query's answers are used in an order drawn from ``rng`` (a run's seed).
    """

    def __init__(self, rows: np.ndarray, seconds: np.ndarray, rng: np.random.Generator):
        order = rng.permutation(len(rows))
        self.by_query: dict[tuple[int, int, int], list[int]] = {}
        for i in order.tolist():
            h, a, b = (int(v) for v in rows[i])
            self.by_query.setdefault((h, min(a, b), max(a, b)), []).append(i)
        self.rows, self.seconds = rows, seconds
        self.left = list(order.tolist())  # for fallbacks: any unused answer
        self.by_head: dict[int, list[int]] = {}
        for i in order.tolist():
            self.by_head.setdefault(int(rows[i, 0]), []).append(i)
        self.used = np.zeros(len(rows), dtype=bool)

    def take(self, query: np.ndarray) -> int | None:
        """The index of an unused answer to ``query``, marked used; None when none is left."""
        h, a, b = (int(v) for v in query[:3])
        stack = self.by_query.get((h, min(a, b), max(a, b)))
        while stack:
            i = stack.pop()
            if not self.used[i]:
                self.used[i] = True
                return i
        return None

    def take_any(self, head: int | None = None) -> int | None:
        """The index of an unused answer about ``head`` (None: any head), marked used.

        In the pool's random order; another head's when that one has none left.
        """
        stack = self.by_head.get(-1 if head is None else int(head), [])
        for source in (stack, self.left):
            while source:
                i = source.pop()
                if not self.used[i]:
                    self.used[i] = True
                    return i
        return None


def _replay_run(
    recorded: RecordedAnswers,
    method: str,
    kw: dict,
    budget: int,
    seed: int,
    n_jobs: Any,
    max_reasks: int,
) -> tuple[np.ndarray, np.ndarray, int, int]:
    """One run: (answer indices used, refits by each answer, re-asks, fallbacks)."""
    from ._sampler import TripletSampler

    pool = AnswerPool(recorded.train, recorded.train_seconds, np.random.default_rng([seed, 1]))
    sampler = TripletSampler(
        recorded.n_items,
        kw.get("dim", 2),
        method=method,
        refit="auto",
        random_state=derived_seed(seed, 0),
        n_jobs=n_jobs,
        **{k: v for k, v in kw.items() if k != "dim"},
    )
    used = np.empty(budget, dtype=np.int64)
    refits = np.empty(budget, dtype=np.int64)
    reasks = fallbacks = in_a_row = count = 0
    current = None
    k = 0
    while k < budget:
        query = np.asarray(sampler.ask(1)).reshape(3)
        i = pool.take(query)
        if i is None:
            reasks += 1
            in_a_row += 1
            if in_a_row <= max_reasks:
                continue
            i = pool.take_any(int(query[0]))
            fallbacks += 1
            if i is None:
                raise ValueError(f"budget: only {k} recorded answers to replay")
        in_a_row = 0
        used[k] = i
        sampler.tell(recorded.train[i : i + 1])
        count += sampler.embedding_ is not current
        current = sampler.embedding_
        refits[k] = count
        k += 1
    return used, refits, reasks, fallbacks


def _measure(
    recorded: RecordedAnswers,
    rows: np.ndarray,
    seconds: np.ndarray,
    budgets: tuple[int, ...],
    fitter: Any,
    dim: int,
    seed: int,
    n_jobs: Any,
) -> dict[str, np.ndarray]:
    """Fit the first ``m`` rows for each budget m; scores on the recorded test answers."""
    import copy

    truth_test = None
    if recorded.truth is not None:
        truth_test = _truth_order(recorded.truth, recorded.test)
    out = {k: np.empty(len(budgets)) for k in ("accuracy", "truth_accuracy")}
    for b, m in enumerate(budgets):
        est = copy.deepcopy(fitter) if fitter is not None else default_fitter(dim)
        est.set_params(n_items=recorded.n_items, random_state=seed, n_jobs=n_jobs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            E = np.asarray(est.fit(rows[:m]).embedding_)
        out["accuracy"][b] = embedding_accuracy(E, recorded.test)
        out["truth_accuracy"][b] = (
            np.nan if truth_test is None else embedding_accuracy(E, truth_test)
        )
    idx = np.asarray(budgets) - 1
    out["seconds"] = np.cumsum(seconds)[idx]
    if recorded.truth is not None:
        out["agreement"] = np.cumsum(triplet_agreement(recorded.truth, rows))[idx] / (idx + 1)
    return out


def _truth_order(truth: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``rows`` with closer and farther put in the truth's order (ties as recorded)."""
    out = rows.copy()
    wrong = triplet_agreement(truth, rows) == 0.0
    out[wrong, 1], out[wrong, 2] = rows[wrong, 2], rows[wrong, 1]
    return out


def replay_collection(
    recorded: RecordedAnswers,
    *,
    method: str,
    budget: int,
    n_runs: int,
    n_answers: Any = None,
    max_reasks: int = 10,
    sampler_kw: dict[str, Any] | None = None,
    fitter: Any = None,
    random_state: Any = None,
    n_jobs: int | None = None,
    verbose: bool = False,
) -> CollectionResult:
    """Replay recorded answers through a :class:`~tripletsearch.TripletSampler`.

    See the module's notes: each query the sampler asks is answered by an unused recorded
    answer to the same head and pair, or asked again.

    Parameters
    ----------
    recorded : RecordedAnswers
        E.g. :func:`next_eggs`.
    method : str
        The sampler's method.
    budget : int >= 1
        Answers per run (at most the recorded answers).
    n_runs : int >= 1
        Runs; each seeds the sampler and the order of each query's answers.
    n_answers : sequence of int, optional
        Budgets measured (as :func:`~tripletsearch.simulate_collection`).
    max_reasks : int >= 0
        Re-asks in a row before a fallback to a recorded answer about the last head asked.
    sampler_kw : dict, optional
        More sampler parameters (``dim`` default 2, ``model``, ``gamma``).
    fitter : Embedding, optional
        The fixed fitter (default ``Embedding("gamma-ckl", dim, gamma="auto")`` with the
        sampler's dim).
    random_state : None, int or numpy.random.Generator
    n_jobs : int or None
        Threads of the sampler and the fits; results do not depend on it.
    verbose : bool
        A progress bar of the runs.

    Returns
    -------
    CollectionResult
        ``seconds`` are recorded times; ``info`` holds ``reasks`` and ``fallbacks`` per run
        (arrays of n_runs).
    """
    if not isinstance(recorded, RecordedAnswers):
        raise TypeError(f"recorded: expected RecordedAnswers, got {type(recorded).__name__}")
    budget = check_int(budget, "budget", minimum=1)
    if budget > len(recorded.train):
        raise ValueError(
            f"budget: at most the {len(recorded.train)} recorded answers, got {budget}"
        )
    n_runs = check_int(n_runs, "n_runs", minimum=1)
    max_reasks = check_int(max_reasks, "max_reasks", minimum=0)
    budgets = _budgets(n_answers, budget)
    kw = _sampler_kw(sampler_kw)
    fitter = _check_fitter(fitter)
    seed = seed_from(check_random_state(random_state))
    runs, reasks, fallbacks = [], [], []
    progress = Progress(n_runs, f"replay {method}", "run", verbose)
    for run in range(n_runs):
        run_seed = derived_seed(seed, run)
        used, refits, r, f = _replay_run(recorded, method, kw, budget, run_seed, n_jobs, max_reasks)
        rows, secs = recorded.train[used], recorded.train_seconds[used]
        stats = _measure(recorded, rows, secs, budgets, fitter, kw.get("dim", 2), run_seed, n_jobs)
        stats["n_refits"] = refits[np.asarray(budgets) - 1]
        runs.append(stats)
        reasks.append(r)
        fallbacks.append(f)
        progress.step()
    progress.close()
    info = {"reasks": np.array(reasks), "fallbacks": np.array(fallbacks), "data": recorded.name}
    return CollectionResult.from_runs(
        method, budgets, runs, test_size=len(recorded.test), info=info
    )


def as_collected(
    recorded: RecordedAnswers,
    sampler: str,
    *,
    n_answers: Any = None,
    n_runs: int = 1,
    dim: int = 2,
    fitter: Any = None,
    random_state: Any = None,
    n_jobs: int | None = None,
) -> CollectionResult:
    """What one recorded sampler's answers gave: fits of their first N, in recorded order.

    Parameters
    ----------
    recorded : RecordedAnswers
    sampler : str
        A label of ``recorded.train_sampler`` (e.g. ``"Random"``, ``"Uncertainty"``).
    n_answers : sequence of int, optional
        Budgets (default: the grid of :func:`~tripletsearch.simulate_collection` up to all
        of the sampler's answers).
    n_runs : int
        Fits per budget with different fitter seeds (the answers are the same).
    dim : int
        The default fitter's dimension.
    fitter, random_state, n_jobs
        As for :func:`replay_collection`.

    Returns
    -------
    CollectionResult
        ``method`` is the sampler's label; ``seconds`` the recorded times.
    """
    if not isinstance(recorded, RecordedAnswers):
        raise TypeError(f"recorded: expected RecordedAnswers, got {type(recorded).__name__}")
    mine = recorded.train_sampler == sampler
    if not mine.any():
        labels = sorted(set(recorded.train_sampler.tolist()))
        raise ValueError(f"sampler: expected one of {labels}, got {sampler!r}")
    rows, secs = recorded.train[mine], recorded.train_seconds[mine]
    budgets = _budgets(n_answers, len(rows) if n_answers is None else max(n_answers))
    if budgets[-1] > len(rows):
        raise ValueError(f"n_answers: {sampler!r} has {len(rows)} answers, asked {budgets[-1]}")
    dim = check_int(dim, "dim", minimum=1)
    fitter = _check_fitter(fitter)
    seed = seed_from(check_random_state(random_state))
    runs = [
        _measure(recorded, rows, secs, budgets, fitter, dim, derived_seed(seed, run), n_jobs)
        for run in range(check_int(n_runs, "n_runs", minimum=1))
    ]
    return CollectionResult.from_runs(
        sampler, budgets, runs, test_size=len(recorded.test), info={"data": recorded.name}
    )
