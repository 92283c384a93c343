"""Simulated collections: a :class:`~tripletsearch.TripletSampler` asks simulated people.

:func:`simulate_collection` runs a sampler against people who answer from a known truth,
measures the held-out accuracy of one fixed fitter on the answers collected so far, and
the people's time (:mod:`._timing`). With a ``rate`` it runs a virtual clock: refits take
the time of a cost model and run "elsewhere" while the sampler keeps asking from the
embedding it has (a service's situation). :class:`CollectionResult` holds the curves and
reads them the way the issue's comparisons do (:mod:`._results`).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .._distributed import check_client, chunk_bounds, chunk_threads, map_chunks, n_chunks
from .._progress import Progress
from .._validation import (
    check_int,
    check_random_state,
    check_real,
    check_X,
    derived_seed,
    resolve_n_jobs,
    seed_from,
)
from ..oracles import Oracle
from ..outcomes import triplet_agreement
from ..people import TripletPeople
from ._results import CollectionResult
from ._screens import ScreenKind, odd_one_out_answer, ranked_answer
from ._timing import (
    MEASURED_REFIT_COST,
    NEXT_RESPONSE_TIMES,
    ResponseTimeModel,
    check_rate,
    random_queries,
)

__all__ = ["simulate_collection", "DEFAULT_BUDGETS", "default_fitter"]

# the answers at which a collection is measured (clipped to the budget, which is added)
DEFAULT_BUDGETS = (500, 700, 1000, 1500, 2000, 2500, 3500, 5000, 7000, 10000)

# the sampler's own parameters, which simulate_collection sets (not sampler_kw's)
_RESERVED = (
    "n_items",
    "dim",
    "method",
    "refit",
    "random_state",
    "n_jobs",
    "trial",
    "n_choices",
    "picks",
)
FIT_AS = ("trials", "triplets")

# one seed stream per purpose of a run: derived_seed(seed, run, purpose)
_SAMPLER, _ANSWERS, _TEST, _FIT = range(4)


def default_fitter(dim: int) -> Any:
    """The fixed fitter of the measurements: ``Embedding("gamma-ckl", dim, gamma="auto")``."""
    from ..embedding import Embedding

    return Embedding("gamma-ckl", dim=dim, gamma="auto")


def embedding_accuracy(E: np.ndarray, rows: np.ndarray) -> float:
    """Share of rows ``(head, closer, farther)`` whose closer item is closer in ``E``.

    Squared Euclidean distances; a tie counts 1/2.
    """
    return float(np.mean(triplet_agreement(E, rows)))


@dataclass(frozen=True)
class Spec:
    """Everything a run needs but the truth (picklable: sent once to each Dask worker)."""

    oracle: Oracle
    oracle_lapse: float
    method: str
    sampler_kw: dict[str, Any]
    fitter: Any
    budgets: tuple[int, ...]
    test_size: int
    rate: float | None
    response_times: ResponseTimeModel
    refit_cost: Callable[[int, int, int], float]
    seed: int
    n_jobs: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    screen: ScreenKind = ScreenKind()
    fit_as: str = "trials"

    @property
    def budget(self) -> int:
        """Answers collected per run."""
        return self.budgets[-1]


class VirtualClock:
    """Refits that run elsewhere: answer ``k`` arrives at ``k / rate`` seconds.

    After a tell, when the sampler's refit is due and none is running, a refit starts: its
    embedding is fitted now (on the answers as of now, :meth:`TripletSampler.fit_embedding`)
    and installed (``set_embedding``) once ``refit_cost(n_answers, n_items, dim)`` seconds
    of virtual time have passed; meanwhile the sampler asks from the embedding it has.
    """

    def __init__(self, rate: float, cost: Callable[[int, int, int], float], n: int, dim: int):
        self.rate, self.cost, self.n, self.dim = rate, cost, n, dim
        self.pending: tuple[float, Any] | None = None
        self.installed = 0

    def before_ask(self, k: int, sampler: Any) -> None:
        """Install the running refit if it is done by the time of answer ``k``."""
        if self.pending is not None and self.pending[0] <= k / self.rate:
            sampler.set_embedding(self.pending[1])
            self.pending = None
            self.installed += 1

    def after_tell(self, k: int, sampler: Any) -> None:
        """Start a refit when one is due and none runs."""
        if self.pending is None and sampler.refit_due_:
            seconds = float(self.cost(int(sampler.n_answers_), self.n, self.dim))
            if not np.isfinite(seconds) or seconds < 0:
                raise ValueError(f"refit_cost: returned {seconds} (expected finite seconds >= 0)")
            self.pending = (k / self.rate + seconds, sampler.fit_embedding())


def _collect(X: np.ndarray, spec: Spec, run: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One run's collection.

    Returns the answers (budget, 3), the queries (budget, 3) and the refits installed by
    each answer (budget,).
    """
    from ._sampler import TripletSampler

    n = X.shape[0]
    dim: int = spec.sampler_kw["dim"] if "dim" in spec.sampler_kw else X.shape[1]  # sampler
    people = TripletPeople(X, spec.oracle, spec.oracle_lapse)
    screen = spec.screen
    draws = np.random.default_rng(derived_seed(spec.seed, run, _ANSWERS))
    u = draws.random((spec.budget, 2) if screen.is_triplet else (spec.budget, screen.r, 2))
    trial_kw: dict[str, Any] = {} if screen.is_triplet else {"trial": screen.trial}
    if screen.trial == "rank":
        trial_kw.update(n_choices=screen.k, picks=screen.r)
    sampler = TripletSampler(
        n,
        dim,
        method=spec.method,
        refit="auto" if spec.rate is None else None,
        random_state=derived_seed(spec.seed, run, _SAMPLER),
        n_jobs=spec.n_jobs,
        **trial_kw,
        **{k: v for k, v in spec.sampler_kw.items() if k != "dim"},
    )
    clock = None if spec.rate is None else VirtualClock(spec.rate, spec.refit_cost, n, dim)
    answers = np.empty((spec.budget, screen.width), dtype=np.int64)
    queries = np.empty((spec.budget, screen.width), dtype=np.int64)
    refits = np.empty(spec.budget, dtype=np.int64)
    count, current = 0, None
    for k in range(spec.budget):
        if clock is not None:
            clock.before_ask(k, sampler)
        q = np.asarray(sampler.ask(1), dtype=np.int64).reshape(screen.width)
        queries[k] = q
        answers[k] = screen_answer(people, screen, q, u[k])
        sampler.tell(answers[k : k + 1])
        if clock is not None:
            clock.after_tell(k, sampler)
            refits[k] = clock.installed
        else:
            count += sampler.embedding_ is not current
            current = sampler.embedding_
            refits[k] = count
    return answers, queries, refits


def screen_answer(people: TripletPeople, screen: ScreenKind, q: np.ndarray, u: Any) -> Any:
    """The simulated people's answer to one screen (a row of ``screen``'s layout)."""
    if screen.is_triplet:
        return people.answer(q[None], u[None])[0]
    if screen.trial == "rank":
        return ranked_answer(people.spec, people.X, q, screen.r, people.lapse, u)
    return odd_one_out_answer(people.spec, people.X, q, people.lapse, u[0])


def _fit(spec: Spec, dim: int, n: int, rows: np.ndarray, seed: int) -> np.ndarray:
    """The fixed fitter's embedding of ``rows`` (trials: themselves, or their triplets)."""
    import copy

    fitter = copy.deepcopy(spec.fitter) if spec.fitter is not None else default_fitter(dim)
    fitter.set_params(n_items=n, random_state=seed, n_jobs=spec.n_jobs)
    screen = spec.screen
    if not screen.is_triplet:
        rows = screen.triplets(rows) if spec.fit_as == "triplets" else screen.fit_input(rows)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(fitter.fit(rows).embedding_)


def simulate_run(X: np.ndarray, spec: Spec, run: int) -> dict[str, np.ndarray]:
    """One run: collect, then measure at each budget (arrays of len(budgets))."""
    n, dim = X.shape
    answers, queries, refits = _collect(X, spec, run)
    people = TripletPeople(X, spec.oracle, spec.oracle_lapse)
    trng = np.random.default_rng(derived_seed(spec.seed, run, _TEST))
    test_q = random_queries(trng, n, spec.test_size)
    test = people.answer(test_q, trng.random((spec.test_size, 2)))
    truth = test.copy()  # the test queries ordered by the truth
    wrong = people.truly_closer(test) == 0.0  # (ties keep the people's order)
    truth[wrong, 1], truth[wrong, 2] = test[wrong, 2], test[wrong, 1]
    if spec.screen.is_triplet:
        cumulative = np.cumsum(spec.response_times.seconds(X, queries))
        agree = np.cumsum(people.truly_closer(answers))
    else:  # no response-time model for grids; agreement over each screen's triplets
        cumulative = np.full(len(answers), np.nan)
        implied = spec.screen.triplets(answers)
        agree = np.cumsum(people.truly_closer(implied).reshape(len(answers), -1).mean(axis=1))
    idx = np.asarray(spec.budgets) - 1
    fit_seed = derived_seed(spec.seed, run, _FIT)
    acc, tacc = np.empty(len(idx)), np.empty(len(idx))
    for b, m in enumerate(spec.budgets):
        E = _fit(spec, dim, n, answers[:m], fit_seed)
        acc[b] = embedding_accuracy(E, test)
        tacc[b] = embedding_accuracy(E, truth)
    return {
        "accuracy": acc,
        "truth_accuracy": tacc,
        "seconds": cumulative[idx],
        "agreement": agree[idx] / (idx + 1),
        "n_refits": refits[idx],
    }


def _simulate_chunk(first: int, last: int, *, X: np.ndarray, spec: Spec) -> list[dict]:
    """Runs ``first .. last - 1`` on a Dask worker (one thread each unless ``n_jobs``)."""
    from dataclasses import replace

    spec = replace(spec, n_jobs=chunk_threads(spec.n_jobs))
    return [simulate_run(X, spec, run) for run in range(first, last)]


def _budgets(n_answers: Any, budget: int) -> tuple[int, ...]:
    if n_answers is None:
        return tuple(b for b in DEFAULT_BUDGETS if b < budget) + (budget,)
    if isinstance(n_answers, (str, bytes)) or not isinstance(n_answers, (Sequence, np.ndarray)):
        raise TypeError(f"n_answers: expected a sequence of ints, got {type(n_answers).__name__}")
    values = tuple(check_int(v, "n_answers", minimum=1) for v in n_answers)
    if not values:
        raise ValueError("n_answers: empty")
    if any(b <= a for a, b in zip(values, values[1:])):
        raise ValueError(f"n_answers: must increase strictly, got {list(values)}")
    if values[-1] != budget:
        raise ValueError(f"n_answers: must end at the budget {budget}, got {values[-1]}")
    return values


def _sampler_kw(sampler_kw: Any) -> dict[str, Any]:
    if sampler_kw is None:
        return {}
    if not isinstance(sampler_kw, dict):
        raise TypeError(f"sampler_kw: expected a dict, got {type(sampler_kw).__name__}")
    bad = [k for k in sampler_kw if k in _RESERVED and k != "dim"]
    if bad:
        raise ValueError(f"sampler_kw: {bad} are set by simulate_collection, not sampler_kw")
    return dict(sampler_kw)


def _check_fitter(fitter: Any) -> Any:
    if fitter is None:
        return None
    from ..embedding import Embedding

    if not isinstance(fitter, Embedding):
        raise TypeError(f"fitter: expected an Embedding (unfitted), got {type(fitter).__name__}")
    return fitter


def _check_oracle(oracle: Any, lapse: Any) -> tuple[Oracle, float]:
    if not isinstance(oracle, Oracle):
        raise TypeError(f"oracle: expected an Oracle (e.g. GammaCKL(3.0)), got {oracle!r}")
    lapse = check_real(lapse, "oracle_lapse")
    if not 0.0 <= lapse < 1.0:
        raise ValueError(f"oracle_lapse: must lie in [0, 1), got {lapse}")
    return oracle, lapse


def _check_models(response_times: Any, refit_cost: Any) -> None:
    if not isinstance(response_times, ResponseTimeModel):
        raise TypeError(
            f"response_times: expected a ResponseTimeModel, got {type(response_times).__name__}"
        )
    if not callable(refit_cost):
        raise TypeError(
            "refit_cost: expected a callable (n_answers, n_items, dim) -> seconds, "
            f"got {type(refit_cost).__name__}"
        )


def _check_sampler(
    n: int, dim: int, method: Any, kw: dict[str, Any], n_jobs: Any, screen: ScreenKind
) -> None:
    """Bad method, model or sampler options fail here, once, by the sampler's own checks."""
    from ._sampler import TripletSampler

    if not isinstance(method, str):
        raise TypeError(f"method: expected a str, got {type(method).__name__}")
    trial_kw: dict[str, Any] = {"trial": screen.trial}
    if screen.trial == "rank":
        trial_kw.update(n_choices=screen.k, picks=screen.r)
    TripletSampler(
        n,
        kw.get("dim", dim),
        method=method,
        refit=None,
        random_state=0,
        n_jobs=n_jobs,
        **trial_kw,
        **{k: v for k, v in kw.items() if k != "dim"},
    )


def simulate_collection(
    X: Any,
    *,
    oracle: Oracle,
    oracle_lapse: float = 0.0,
    method: str,
    budget: int,
    n_runs: int,
    test_size: int,
    rate: float | None = None,
    random_state: Any = None,
    client: Any = None,
    n_answers: Sequence[int] | None = None,
    sampler_kw: dict[str, Any] | None = None,
    fitter: Any = None,
    response_times: ResponseTimeModel = NEXT_RESPONSE_TIMES,
    refit_cost: Callable[[int, int, int], float] = MEASURED_REFIT_COST,
    n_jobs: int | None = None,
    verbose: bool = False,
    trial: str = "triplet",
    n_choices: int | None = None,
    picks: int | None = None,
    fit_as: str = "trials",
) -> CollectionResult:
    """Collect triplets from simulated people with a :class:`~tripletsearch.TripletSampler`.

    Each run: a sampler asks, one query at a time, people answering from the truth ``X``
    by ``oracle`` (mixed with ``oracle_lapse`` random answers), ``budget`` answers; at each
    of the budgets ``n_answers`` the answers so far are fitted by one fixed fitter (the
    same for every method) and scored on ``test_size`` fresh random queries answered by
    the same people. Run ``i`` draws its randomness from ``(random_state, i)`` only, so
    the result is the same for any ``n_jobs`` and any ``client``.

    Parameters
    ----------
    X : array_like (n, d)
        The ground truth the people answer from (n >= 3).
    oracle : Oracle
        The people's choice model (e.g. ``GammaCKL(3.0)``).
    oracle_lapse : float in [0, 1)
        Share of random answers (a fair coin).
    method : str
        The sampler's method (``"random"``, ``"arr"``, ``"active"``).
    budget : int >= 1
        Answers per run.
    n_runs : int >= 1
        Independent runs (sampler, people and test set seeded per run).
    test_size : int >= 1
        Random test queries per run.
    rate : float > 0 or None
        None: the sampler refits synchronously whenever due (``refit="auto"``). A rate
        (answers per second): a virtual clock, answer k at k / rate seconds; refits take
        ``refit_cost`` seconds of it and run elsewhere (see Notes).
    random_state : None, int or numpy.random.Generator
    client : dask.distributed.Client, optional
        Run the runs on this cluster, in chunks (the ``dask`` extra): the same result.
    n_answers : sequence of int, optional
        The budgets measured, increasing, ending at ``budget``. Default: 500, 700, 1000,
        1500, 2000, 2500, 3500, 5000, 7000, 10000 below ``budget``, then ``budget``.
    sampler_kw : dict, optional
        More of the sampler's parameters (``model``, ``gamma``, ``dim``: default the
        truth's d), not those set here (``n_items``, ``method``, ``refit``,
        ``random_state``, ``n_jobs``).
    fitter : Embedding, optional
        The fixed fitter (unfitted; cloned per fit, with ``n_items``, a per-run
        ``random_state`` and ``n_jobs`` set). Default :func:`default_fitter`:
        ``Embedding("gamma-ckl", dim=d, gamma="auto")``.
    response_times : ResponseTimeModel
        Prices each query in people's seconds (default: fitted to NEXT's egg answers).
    refit_cost : callable (n_answers, n_items, dim) -> seconds
        The virtual duration of a refit (default: measured on this machine).
    n_jobs : int or None
        Threads of the sampler and the fits (None: all cores; on a Dask worker one per
        chunk). Results do not depend on it.
    verbose : bool
        A progress bar of the runs (of the chunks with ``client``).
    trial : {"triplet", "rank", "odd-one-out"}
        The screens asked (the sampler's ``trial``); ``budget`` and ``n_answers`` count
        screens. People rank a screen's candidates by successive choices of the oracle
        among those left (each pick a lapse with ``oracle_lapse``: uniform among those
        left); an odd-one-out's odd item ``a`` with probability proportional to the
        oracle's similarity of the other two (d(b, c)^-gamma for gamma-CKL). The test
        queries stay random triplets (trial types compare on one scale). Without a
        response-time model for grids, ``seconds`` are NaN for other trials.
    n_choices, picks : int or None
        The ``"rank"`` screens' candidates and picks (None: 8 and 2).
    fit_as : {"trials", "triplets"}
        What the fixed fitter fits of other trials: the trials themselves (their own
        likelihood, where the fitter takes trials) or the triplets they imply.

    Returns
    -------
    CollectionResult

    Notes
    -----
    With a ``rate`` the sampler never refits by itself (``refit=None``). After each answer,
    when ``refit_due_`` and no refit is running, one starts: :meth:`fit_embedding` on the
    answers as of then, installed with :meth:`set_embedding` at the first answer that
    arrives after ``refit_cost(n_answers, n_items, dim)`` more seconds. A refit still
    running at the end is dropped.
    """
    X = check_X(X)
    n, dim = X.shape
    if n < 3:
        raise ValueError(f"X: a query needs 3 items, got {n}")
    oracle, lapse = _check_oracle(oracle, oracle_lapse)
    budget = check_int(budget, "budget", minimum=1)
    n_runs = check_int(n_runs, "n_runs", minimum=1)
    test_size = check_int(test_size, "test_size", minimum=1)
    budgets = _budgets(n_answers, budget)
    kw = _sampler_kw(sampler_kw)
    _check_models(response_times, refit_cost)
    if n_jobs is not None:
        resolve_n_jobs(n_jobs)
    screen = ScreenKind.of(trial, n_choices, picks, n)
    if fit_as not in FIT_AS:
        raise ValueError(f"fit_as: expected one of {list(FIT_AS)}, got {fit_as!r}")
    _check_sampler(n, dim, method, kw, n_jobs, screen)
    spec = Spec(
        oracle,
        lapse,
        method,
        kw,
        _check_fitter(fitter),
        budgets,
        test_size,
        check_rate(rate),
        response_times,
        refit_cost,
        seed_from(check_random_state(random_state)),
        n_jobs,
        screen=screen,
        fit_as=fit_as,
    )
    client = check_client(client)
    if client is None:
        progress = Progress(n_runs, "simulate_collection", "run", verbose)
        runs = []
        for run in range(n_runs):
            runs.append(simulate_run(X, spec, run))
            progress.step()
        progress.close()
    else:
        chunks = chunk_bounds(n_runs, n_chunks(client, n_runs))
        parts = map_chunks(
            client,
            _simulate_chunk,
            chunks,
            {"X": X, "spec": spec},
            desc="simulate_collection",
            verbose=verbose,
        )
        runs = [r for part in parts for r in part]
    return CollectionResult.from_runs(method, budgets, runs, rate=spec.rate, test_size=test_size)
