"""Search a continuous space by comparisons (the paper's Section 3).

A user has a target point in a box Omega (a range per dimension) in mind and answers
queries "is it closer to a or to b?" like a gamma-CKL oracle. :class:`ContinuousSearch` is
an ask/tell session (:meth:`ContinuousSearch.observe` records answers to queries asked
elsewhere); :func:`simulate_continuous` runs many searches against simulated users natively.

Methods
-------
``"global"`` (default)
    One posterior over Omega kept across all queries (particles with resample-move,
    zooming: tails below 1e-3 are dropped when the particles are refreshed), queries by
    expected information gain, point estimate the posterior median. Beyond the paper,
    which names it future work. In our measurements (``bench/test_bench_continuous.py``)
    it is the best method with and without lapses (epsilon = 0.1) and with users half as
    reliable as assumed.
``"posterior"``
    Section 3.3's decider inside the paper's stages: per stage a posterior over the
    parent domain u(X) (within Omega), discarded at each new stage. After every answer,
    the heaviest half-edge box on the quarter lattice of u(X) decides once its mass
    exceeds ``alpha``: a child of X means proceed (and descend further while a child of
    the child also holds mass > alpha), any other box means backtrack; the per-stage
    query cap backtracks too. (The literal "backtrack when X holds < 1 - alpha" fires at
    once: a uniform prior gives X only (1/4)^d of u(X).)
``"hypothesis-test"``
    Algorithm 2 exactly as stated: the tiling T(S, r_c) with r_c < 1/(8 r_u) and 1.5/r_c an
    integer, each cell's query repeated n_obs times, a one-tailed binomial test between
    p_X and p_F (:mod:`tripletsearch.theory`), the bounding box of the non-rejected cells,
    proceed to the child holding it, else backtrack. The per-test error comes from the
    stage budget ``delta``: (1 - delta_test)^K = 1 - delta. Provably exponential, and
    astronomically expensive (about 7e7 queries per stage in d = 2). d = 1 is outside the
    lemma.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

import numpy as np

from . import _core, theory
from ._deprecation import warn_renamed
from ._distributed import check_client, chunk_bounds, chunk_threads, map_chunks, n_chunks
from ._params import Interval, StrOptions, validate_params
from ._sync import new_lock, synchronized
from ._user_model import InferredUser, auto_or
from ._validation import (
    check_int,
    check_real,
    check_state,
    resolve_n_jobs,
    seed_from,
)
from .oracles import GammaCKL

__all__ = [
    "ContinuousSearch",
    "ContinuousSettings",
    "Region",
    "simulate_continuous",
    "ContinuousSimulation",
    "METHODS",
]

# public name -> _core.ContinuousMethod member
METHODS = {"hypothesis-test": "HypothesisTest", "posterior": "Posterior", "global": "Global"}
_STATE_VERSION = 1


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


_AUTO_GAMMA = 3.0  # the configuration's gamma value when gamma is "auto" (unused)


@dataclass(frozen=True)
class ContinuousSettings:
    """All the settings of a continuous search, checked and normalized on construction.

    The arguments of :class:`ContinuousSearch` (and the searcher's of
    :func:`simulate_continuous`) in one frozen object: :meth:`to_native` gives the core's
    configuration (with Algorithm 2's plan for "hypothesis-test"; it pickles, for a Dask
    worker), :meth:`to_dict` / :meth:`from_dict` the JSON form a session's state keeps.
    ``bounds``: ``(low, high)`` as tuples (one entry: the same range on every axis);
    ``stage_cap`` / ``n_particles`` None: the method's default (:meth:`resolve` fills it in).
    """

    dim: int
    gamma: float | str
    bounds: tuple[Any, Any] = (-1.0, 1.0)
    method: str = "global"
    alpha: float = 0.8
    lapse: float | str = 0.0
    delta: float = 0.05
    stage_cap: int | None = None
    n_particles: int | None = None

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "dim": [Interval(numbers.Integral, 1, None, closed="left")],
        "gamma": auto_or(Interval(numbers.Real, 0, None, closed="neither")),
        "method": [StrOptions(METHODS)],
        "alpha": [Interval(numbers.Real, 0.5, 1, closed="neither")],
        "lapse": auto_or(Interval(numbers.Real, 0, 0.5, closed="left")),
        "delta": [Interval(numbers.Real, 0, 0.5, closed="neither")],
        "stage_cap": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "n_particles": [Interval(numbers.Integral, 16, None, closed="left"), None],
    }

    def __post_init__(self) -> None:
        p = validate_params(dataclasses.asdict(self), self._parameter_constraints)
        low, high = _check_bounds(self.bounds)
        p["bounds"] = (tuple(low), tuple(high))
        for name, value in p.items():
            object.__setattr__(self, name, value)

    def resolve(self) -> ContinuousSettings:
        """These settings with the defaults of ``stage_cap`` and ``n_particles`` filled in.

        The core's rule (``n_particles`` None for "hypothesis-test", which has none).
        """
        config = self._base()
        return dataclasses.replace(
            self, stage_cap=int(config.stage_cap), n_particles=int(config.n_particles) or None
        )

    def _base(self, **plan: int) -> _core.ContinuousConfig:
        """The core's configuration (with Algorithm 2's ``plan`` when given)."""
        gamma_auto, lapse_auto = self.gamma == "auto", self.lapse == "auto"
        return _core.ContinuousConfig(
            dim=self.dim,
            # "auto": inferred; the fixed values then only fill the configuration
            gamma=_AUTO_GAMMA if gamma_auto else float(self.gamma),
            low=list(self.bounds[0]),
            high=list(self.bounds[1]),
            method=getattr(_core.ContinuousMethod, METHODS[self.method]),
            alpha=self.alpha,
            lapse=0.0 if lapse_auto else float(self.lapse),
            gamma_auto=gamma_auto,
            lapse_auto=lapse_auto,
            # None: the core's default (its 0)
            stage_cap=self.stage_cap or 0,
            n_particles=self.n_particles or 0,
            **plan,
        )

    def to_native(self) -> _core.ContinuousConfig:
        """The core's configuration (it checks the ranges again and the rules that tie them).

        For the hypothesis test, with Algorithm 2's plan for the stage error budget
        ``delta``.
        """
        config = self._base()
        if self.method != "hypothesis-test":
            return config
        cells, n_obs, tau = hypothesis_test_plan(config.dim, config.gamma, config.lapse, self.delta)
        return self._base(cells_per_axis=cells, n_obs=n_obs, tau=tau)

    def to_dict(self) -> dict[str, Any]:
        """The settings as a JSON-safe dict (the keys of a session's state).

        ``bounds``: ``[low, high]`` reals for a cube (the format of every version),
        ``[[low...], [high...]]`` for a box with its own range per axis.
        """
        low, high = (np.array(b * self.dim if len(b) == 1 else b) for b in self.bounds)
        return {**dataclasses.asdict(self), "bounds": _bounds_state(low, high)}

    @classmethod
    def from_dict(cls, state: dict[str, Any]) -> ContinuousSettings:
        """The settings of :meth:`to_dict`."""
        return cls(**{f.name: state[f.name] for f in dataclasses.fields(cls)})


def _check_bounds(bounds: Any) -> tuple[list[float], list[float]]:
    """``(low, high)`` as lists: two reals (a cube) or two vectors (a range per dimension).

    One entry: the same range on every axis. The core checks them against ``dim``.
    """
    try:
        low, high = bounds
    except (TypeError, ValueError):
        raise TypeError(f"bounds: expected (low, high), got {bounds!r}") from None
    out = []
    for v in (low, high):
        if isinstance(v, (str, bytes)):
            raise TypeError(f"bounds: expected reals or vectors of reals, got {v!r}")
        if np.ndim(v) == 0:
            out.append([check_real(v, "bounds")])
            continue
        try:
            arr = np.asarray(v)
        except (TypeError, ValueError):
            raise TypeError(f"bounds: expected reals or vectors of reals, got {v!r}") from None
        if arr.ndim != 1 or arr.size == 0:
            raise ValueError(f"bounds: expected vectors of shape (dim,), got shape {arr.shape}")
        if arr.dtype == bool or not np.issubdtype(arr.dtype, np.number):
            raise TypeError(f"bounds: expected real numbers, got dtype {arr.dtype}")
        if np.iscomplexobj(arr):
            raise TypeError("bounds: expected real numbers, got complex values")
        out.append(arr.astype(np.float64).tolist())
    if len(out[0]) > 1 and len(out[1]) > 1 and len(out[0]) != len(out[1]):
        raise ValueError(
            f"bounds: low and high have different lengths ({len(out[0])} and {len(out[1])})"
        )
    return out[0], out[1]


def hypothesis_test_plan(
    dim: int, gamma: float, lapse: float = 0.0, delta: float = 0.05
) -> tuple[int, int, int]:
    """(cells_per_axis, n_obs, tau) of Algorithm 2 for a stage error budget ``delta``."""
    ru = theory.uncertainty_radius(dim)
    n_axis = int(math.floor(12.0 * ru)) + 1  # r_c = 1.5 / n_axis < 1 / (8 r_u)
    if n_axis**dim > _core.MAX_HYPTEST_CELLS:  # the core's limit, checked before planning
        raise ValueError(
            f"dim: the hypothesis test tests {n_axis}^{dim} cells per stage, beyond what it "
            f"can run (at most {_core.MAX_HYPTEST_CELLS}); use method='global'"
        )
    p_x, p_f = theory.hypothesis_test_probs(dim, gamma, lapse)
    per_test = theory.per_test_delta(delta, n_axis**dim)
    try:
        n_obs, tau = theory.binomial_test_plan(p_x, p_f, per_test)
    except ValueError as exc:  # p_X and p_F too close (or equal in double precision)
        raise ValueError(
            f"gamma: at gamma = {gamma} in dim = {dim} the hypothesis test cannot tell the "
            f"region (p_X = {p_x!r}) from the far set (p_F = {p_f!r}) in a practical number "
            f"of repetitions ({exc}); use method='global'"
        ) from None
    return n_axis, n_obs, tau


def _bounds_state(low: np.ndarray, high: np.ndarray) -> list:
    """The state's bounds.

    ``[low, high]`` reals for a cube (the format of every version), ``[[low...], [high...]]``
    for a box with its own range per axis.
    """
    if np.all(low == low[0]) and np.all(high == high[0]):
        return [float(low[0]), float(high[0])]
    return [low.tolist(), high.tolist()]


def _same_query(recorded: Any, query: tuple[np.ndarray, np.ndarray]) -> bool:
    """Whether a state's recorded last query (any JSON value) is `query`, to 1e-12."""
    try:
        rec = np.asarray(recorded, dtype=np.float64)
    except (TypeError, ValueError):
        return False
    expected = np.asarray(query)
    return rec.shape == expected.shape and bool(np.allclose(rec, expected, rtol=1e-12, atol=0))


class ContinuousSearch(InferredUser):
    """An interactive continuous search session.

    Parameters
    ----------
    dim : int >= 1
    gamma : float > 0 or "auto"
        The user's gamma-CKL power: assumed, or "auto": inferred while searching (part of
        the posterior, with the prior of :mod:`tripletsearch._user_model`: log-uniform on
        [0.5, 4], falling beyond, up to 32). "global" only. Estimate: :attr:`gamma_`,
        :attr:`gamma_interval_`.
    bounds : (low, high)
        Omega: reals for the cube [low, high]^dim, or vectors of length dim for the box
        [low_0, high_0] x ... x [low_{dim-1}, high_{dim-1}]. The search runs in a frame
        scaled by the largest half-width, the same on every axis (the user model is about
        distances); its regions start from the box's bounding cube. The particle methods'
        queries are points of the box; the hypothesis test's may leave it (its tiles cover
        the slack around the region).
    method : {"global", "posterior", "hypothesis-test"}
    alpha : float in (0.5, 1)
        "posterior": the mass a box needs to decide.
    lapse : float in [0, 0.5) or "auto"
        Answers are assumed random with this probability; "auto": inferred (uniform prior
        on {0, 0.02, 0.05, 0.1, 0.2, 0.3}; "global" only). Estimate: :attr:`lapse_`.
    delta : float
        "hypothesis-test": the error budget of one stage.
    stage_cap : int, optional
        "posterior": queries per stage before backtracking (default 30 * dim).
    n_particles : int, optional
        Posterior particles (default: "posterior" 2048, 4096 from dim 4; "global" 1024).
    random_state : None, int or numpy.random.Generator
    n_jobs : int or None
        Threads for the particle refresh.

    Examples
    --------
    >>> s = ContinuousSearch(2, gamma=3.0, random_state=0)
    >>> a, b = s.ask()
    >>> s.tell(True)        # the user finds a closer
    >>> s.estimate().shape
    (2,)
    """

    def __init__(
        self,
        dim: int,
        gamma: float | str,
        *,
        bounds: tuple[Any, Any] = (-1.0, 1.0),
        method: str = "global",
        alpha: float = 0.8,
        lapse: float | str = 0.0,
        delta: float = 0.05,
        stage_cap: int | None = None,
        n_particles: int | None = None,
        random_state: Any = None,
        n_jobs: int | None = None,
    ):
        settings = ContinuousSettings(
            dim, gamma, bounds, method, alpha, lapse, delta, stage_cap, n_particles
        )
        self._setup(settings, seed_from(random_state), resolve_n_jobs(n_jobs))

    def _setup(self, settings: ContinuousSettings, seed: int, threads: int) -> None:
        self._settings = settings.resolve()  # the defaults as they run
        self._config = self._settings.to_native()
        self._seed, self._threads = seed, threads
        self._reset()

    def _reset(self) -> None:
        self._lock = new_lock()
        self._s = _core.ContinuousSearcher(self._config, self._seed, self._threads)
        self._pending: tuple[np.ndarray, np.ndarray] | None = None
        self._answers: list[bool] = []
        self._queries: list[tuple[np.ndarray, np.ndarray]] = []
        self._observed = False  # some queries came from observe(): the state stores them

    # ------------------------------------------------------------------ parameters
    @property
    def settings(self) -> ContinuousSettings:
        """The search's settings (``stage_cap`` and ``n_particles`` as they run)."""
        return self._settings

    @property
    def method(self) -> str:
        """The search method."""
        return self.settings.method

    @property
    def delta(self) -> float:
        """The hypothesis test's error budget of one stage."""
        return float(self.settings.delta)

    @property
    def dim(self) -> int:
        """Dimension of Omega."""
        return int(self._config.dim)

    @synchronized
    def _user_grids(self) -> Any:
        return self._s.user_posterior()

    @property
    def low(self) -> np.ndarray:
        """Omega's lower corner (dim,)."""
        return np.array(self._config.low, dtype=np.float64)

    @property
    def high(self) -> np.ndarray:
        """Omega's upper corner (dim,)."""
        return np.array(self._config.high, dtype=np.float64)

    @property
    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """``(low, high)``: Omega's corners."""
        return self.low, self.high

    @property
    def alpha(self) -> float:
        """The mass a box needs to decide ("posterior")."""
        return float(self._config.alpha)

    @property
    def stage_cap(self) -> int:
        """Queries per stage before backtracking ("posterior")."""
        return int(self._config.stage_cap)

    @property
    def n_particles(self) -> int:
        """Particles of the posterior ("hypothesis-test": 0)."""
        return int(self._config.n_particles)

    # ------------------------------------------------------------------ state
    @property
    @synchronized
    def region(self) -> Region:
        """The current region.

        For "global": the cube around the posterior median of edge L 2^-depth, the smallest
        such edge >= 4x the largest posterior interquartile range.
        """
        return Region(np.asarray(self._s.center), float(self._s.edge), int(self._s.depth))

    @property
    @synchronized
    def depth(self) -> int:
        """The current region's depth (halvings from Omega; a backtrack loses 2)."""
        return int(self._s.depth)

    @property
    @synchronized
    def n_queries(self) -> int:
        """Number of queries answered so far."""
        return int(self._s.n_queries)

    @property
    @synchronized
    def n_stages(self) -> int:
        """Number of stages completed so far ("global": one per answer)."""
        return int(self._s.n_stages)

    @property
    @synchronized
    def history(self) -> list:
        """One dict per answered query, keyed as :meth:`observe`'s arguments.

        ``a``, ``b`` (the two points) and ``a_is_closer`` (bool); ``observe(**record)``
        replays it.
        """
        return [
            {"a": a.copy(), "b": b.copy(), "a_is_closer": bool(x)}
            for (a, b), x in zip(self._queries, self._answers)
        ]

    @property
    def test_plan(self) -> tuple[int, int, int]:
        """Algorithm 2's plan ("hypothesis-test"): (cells_per_axis, n_obs, tau).

        Queries per stage = cells * n_obs. (0, 0, 0) for the other methods.
        """
        c = self._config
        return int(c.cells_per_axis), int(c.n_obs), int(c.tau)

    @synchronized
    def estimate(self, k=None):
        """The point estimate, or with ``k`` the k-th ancestor of the current region.

        The point estimate: the posterior median ("hypothesis-test": the region's center). The
        k-th ancestor holds the target with probability >= 1 - delta for k large enough
        (theorem:exp_v2).
        """
        if k is None:
            return self._s.estimate()
        return self.region.ancestor(k)

    # ------------------------------------------------------------------ protocol
    @synchronized
    def ask(self):
        """The next query ``(a, b)``: two points of R^dim (the same until answered)."""
        if self._pending is None:
            self._pending = self._s.ask()
        return self._pending[0].copy(), self._pending[1].copy()

    @synchronized
    def tell(self, a_is_closer: Any) -> None:
        """Record the answer to the pending query: True when the target is closer to a."""
        if self._pending is None:
            raise RuntimeError("tell before ask(): there is no query to answer")
        if not isinstance(a_is_closer, (bool, np.bool_)):
            raise TypeError(f"a_is_closer: expected a bool, got {type(a_is_closer).__name__}")
        self._s.tell(bool(a_is_closer))
        self._queries.append(self._pending)
        self._answers.append(bool(a_is_closer))
        self._pending = None

    @synchronized
    def observe(self, a: Any, b: Any, a_is_closer: Any) -> None:
        """Record the answer to a query ``(a, b)`` asked elsewhere.

        Asked by another process, or by an earlier version of the library (a stored session
        replayed from the queries as they were shown). Replaces any pending query. Not for
        "hypothesis-test", whose stages are its own tiling.
        """
        if not isinstance(a_is_closer, (bool, np.bool_)):
            raise TypeError(f"a_is_closer: expected a bool, got {type(a_is_closer).__name__}")
        pts = []
        for name, p in (("a", a), ("b", b)):
            try:
                arr = np.array(p, dtype=np.float64)
            except (TypeError, ValueError):
                raise TypeError(f"{name}: expected a point of R^{self.dim}") from None
            if arr.shape != (self.dim,):
                raise ValueError(f"{name}: expected shape ({self.dim},), got {arr.shape}")
            if not np.isfinite(arr).all():
                raise ValueError(f"{name}: the point must be finite")
            pts.append(arr)
        if self.method == "hypothesis-test":
            raise ValueError("method: the hypothesis test only records answers to its own queries")
        self._s.observe(pts[0], pts[1], bool(a_is_closer))
        self._queries.append((pts[0], pts[1]))
        self._answers.append(bool(a_is_closer))
        self._pending = None
        self._observed = True

    # ------------------------------------------------------------------ persistence
    @synchronized
    def to_dict(self) -> dict:
        """A JSON-safe snapshot (parameters, seed, answers); ``from_dict`` replays it."""
        return {
            "version": _STATE_VERSION,
            **self.settings.to_dict(),  # stage_cap and n_particles as they run
            **self._user_state(),  # the estimates (for readers; from_dict replays)
            "seed": str(self._seed),
            "answers": "".join("1" if x else "0" for x in self._answers),
            "last_query": None if not self._queries else [q.tolist() for q in self._queries[-1]],
            # after observe(): every query, replayed as observed
            **(
                {"queries": [[a.tolist(), b.tolist()] for a, b in self._queries]}
                if self._observed
                else {}
            ),
        }

    @classmethod
    def from_dict(cls, state: Any, *, n_jobs: int | None = None) -> ContinuousSearch:
        """Rebuild a session from :meth:`to_dict` output (the answers are replayed)."""
        seed = check_state(state, _STATE_VERSION)
        try:
            answers = state["answers"]
            if not isinstance(answers, str) or set(answers) - {"0", "1"}:
                raise ValueError("state: answers must be a string of 0 and 1")
            obj = cls.__new__(cls)
            obj._setup(ContinuousSettings.from_dict(state), seed, resolve_n_jobs(n_jobs))
        except (KeyError, TypeError) as exc:
            raise ValueError(f"state: malformed ({exc!r})") from None
        except ValueError as exc:
            raise (exc if str(exc).startswith("state:") else ValueError(f"state: {exc}")) from None
        queries = state.get("queries")
        if queries is not None:  # a session that observed queries asked elsewhere
            if not isinstance(queries, list) or len(queries) != len(answers):
                raise ValueError("state: queries must be a list with one entry per answer")
            for step, (q, ch) in enumerate(zip(queries, answers)):
                try:
                    a, b = q
                    obj.observe(a, b, ch == "1")
                except (TypeError, ValueError) as exc:
                    raise ValueError(f"state: query {step} is malformed ({exc})") from None
        else:
            for ch in answers:
                obj.ask()
                obj.tell(ch == "1")
        if answers and not _same_query(state.get("last_query"), obj._queries[-1]):
            raise ValueError("state: the answers do not replay to the recorded last query")
        return obj

    @synchronized
    def __repr__(self) -> str:
        return (
            f"ContinuousSearch(dim={self.dim}, gamma={self.gamma}, method={self.method!r}, "
            f"n_queries={self.n_queries}, depth={self.depth})"
        )


# ---------------------------------------------------------------------- simulation


@dataclass
class ContinuousSimulation:
    """Result of :func:`simulate_continuous`.

    Attributes
    ----------
    errors : ndarray (n_runs, max_queries + 1) or None
        Distance of the point estimate to the target after each query.
    stage_errors, stage_queries : ndarray (n_runs, stages + 1)
        Error and cumulative query count at the end of each stage (NaN-padded; for
        "global" every query is a stage).
    depths, n_queries : ndarray (n_runs,)
        Final depth and query count.
    regions : list of Region
        Final regions.
    targets : ndarray (n_runs, dim)
    """

    errors: np.ndarray | None
    stage_errors: np.ndarray
    stage_queries: np.ndarray
    depths: np.ndarray
    n_queries: np.ndarray
    regions: list
    targets: np.ndarray

    @property
    def queries(self) -> np.ndarray:
        """Deprecated spelling of :attr:`n_queries` (removed in 0.3.0)."""
        warn_renamed("ContinuousSimulation", "queries", "n_queries", stacklevel=3)
        return self.n_queries

    def ancestor_coverage(self, k: int) -> float:
        """Fraction of runs whose final region's k-th ancestor holds the target."""
        return float(
            np.mean([r.ancestor(k).contains(t) for r, t in zip(self.regions, self.targets)])
        )


def _deprecated_oracle_gamma(kwargs: dict[str, Any], oracle: GammaCKL | None) -> GammaCKL | None:
    """``oracle_gamma=g`` (before 0.2.0) is ``oracle=GammaCKL(g)``."""
    if set(kwargs) != {"oracle_gamma"}:
        bad = sorted(set(kwargs) - {"oracle_gamma"})[0]
        raise TypeError(f"simulate_continuous() got an unexpected keyword argument {bad!r}")
    if kwargs["oracle_gamma"] is None:  # the old default: the searcher's gamma
        return oracle
    if oracle is not None:
        raise TypeError("simulate_continuous: got 'oracle_gamma' and 'oracle'; give 'oracle'")
    warn_renamed("simulate_continuous", "oracle_gamma=g", "oracle=GammaCKL(g)", stacklevel=4)
    return GammaCKL(check_real(kwargs["oracle_gamma"], "oracle_gamma"))


def simulate_continuous(
    dim: int,
    gamma: float | str,
    *,
    n_runs: int,
    max_queries: int | None = None,
    max_stages: int | None = None,
    bounds: tuple[Any, Any] = (-1.0, 1.0),
    method: str = "global",
    alpha: float = 0.8,
    lapse: float | str = 0.0,
    oracle: GammaCKL | None = None,
    oracle_lapse: float = 0.0,
    delta: float = 0.05,
    stage_cap: int | None = None,
    n_particles: int | None = None,
    random_state: Any = None,
    n_jobs: int | None = None,
    client: Any = None,
    verbose: bool = False,
    **deprecated: Any,
) -> ContinuousSimulation:
    """Simulate searches for targets uniform in Omega, answered by simulated users.

    The searcher assumes ``gamma`` and ``lapse``, or infers them ("auto", see
    :class:`ContinuousSearch`); the users answer by ``oracle`` with lapse rate
    ``oracle_lapse``. The whole loop is native, parallel over runs ("hypothesis-test": over
    cells). Run ``r`` draws its target and answers from ``(random_state, r)`` only, so the
    result is the same for any ``n_jobs`` and any ``client``: one local call, or chunks of
    runs on the workers of a Dask cluster.

    Parameters
    ----------
    dim, gamma, bounds, method, alpha, lapse, delta, stage_cap, n_particles
        The searcher's, as for :class:`ContinuousSearch`.
    n_runs : int >= 1
        Searches, each for its own target drawn uniformly in Omega.
    max_queries : int, optional
        Queries per search; the errors after every query are recorded.
    max_stages : int, optional
        Stages per search (give this and/or ``max_queries``; the hypothesis test records
        stages only: its stages take ~1e8 queries).
    oracle : GammaCKL, optional
        The simulated users' answer model (default ``GammaCKL(gamma)``; required when
        ``gamma`` is "auto").
    oracle_lapse : float in [0, 1)
        The users answer at random with this probability.
    random_state : None, int or numpy.random.Generator
    n_jobs : int or None
        Threads (None: all cores; on a Dask worker, one per chunk: the workers' threads
        are the parallelism).
    client : dask.distributed.Client, optional
        Run the searches on this cluster, in chunks of runs (the ``dask`` extra).
    verbose : bool
        With ``client``: a progress bar of the chunks done.

    Returns
    -------
    ContinuousSimulation
    """
    if deprecated:
        oracle = _deprecated_oracle_gamma(deprecated, oracle)
    settings = ContinuousSettings(
        dim, gamma, bounds, method, alpha, lapse, delta, stage_cap, n_particles
    )
    config = settings.to_native()
    if oracle is None:
        if settings.gamma == "auto":
            raise ValueError("oracle: give the simulated users' model when gamma is 'auto'")
        oracle = GammaCKL(config.gamma)
    if not isinstance(oracle, GammaCKL):
        raise TypeError(
            "oracle: the continuous simulator's users answer by gamma-CKL; expected a "
            f"GammaCKL, got {type(oracle).__name__}"
        )
    runs = check_int(n_runs, "n_runs", minimum=1)
    record: dict[str, Any] = dict(
        # None: not recorded / no limit (the core's -1)
        max_queries=-1 if max_queries is None else check_int(max_queries, "max_queries", minimum=0),
        max_stages=-1 if max_stages is None else check_int(max_stages, "max_stages", minimum=0),
        oracle=oracle._spec(config.dim),
        oracle_lapse=check_real(oracle_lapse, "oracle_lapse"),
    )
    shared: dict[str, Any] = {"config": config, "seed": seed_from(random_state), "n_jobs": n_jobs}
    client = check_client(client)
    if client is None:
        options = _core.ContinuousSimOptions(n_runs=runs, first_run=0, **record)
        parts = [_simulate_chunk(options, **shared)]
    else:
        parts = map_chunks(
            client,
            _simulate_chunk,
            [
                (_core.ContinuousSimOptions(n_runs=b - a, first_run=a, **record),)
                for a, b in chunk_bounds(runs, n_chunks(client, runs))
            ],
            shared,
            desc="simulate_continuous",
            verbose=verbose,
        )

    return _joined(parts)


class ContinuousChunk(NamedTuple):
    """The records of one chunk of runs (one native call), one row per run."""

    errors: np.ndarray | None
    stage_errors: np.ndarray
    stage_queries: np.ndarray
    depths: np.ndarray
    n_queries: np.ndarray
    targets: np.ndarray
    centers: np.ndarray
    edges: np.ndarray


def _joined(parts: list[ContinuousChunk]) -> ContinuousSimulation:
    """The simulation of the chunks' records, in order."""

    def joined(name: str) -> np.ndarray:
        return np.concatenate([getattr(p, name) for p in parts])

    errors = None if parts[0].errors is None else joined("errors")
    depths, centers, edges = joined("depths"), joined("centers"), joined("edges")
    regions = [Region(c, float(e), int(dp)) for c, e, dp in zip(centers, edges, depths)]
    return ContinuousSimulation(
        errors,
        joined("stage_errors"),
        joined("stage_queries"),
        depths,
        joined("n_queries"),
        regions,
        joined("targets"),
    )


def _simulate_chunk(
    options: _core.ContinuousSimOptions,
    *,
    config: _core.ContinuousConfig,
    seed: int,
    n_jobs: int | None,
) -> ContinuousChunk:
    """Run searches ``options.first_run`` to ``options.first_run + options.n_runs - 1``.

    One native call: on a Dask worker for a chunk, or locally for the whole study.
    """
    out = _core.simulate_continuous(config, options, seed, chunk_threads(n_jobs))
    return ContinuousChunk(
        out.errors,
        out.stage_errors,
        out.stage_queries,
        out.depths,
        out.n_queries,
        out.targets,
        out.centers,
        out.edges,
    )
