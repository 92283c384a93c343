"""The continuous search session: :class:`ContinuousSearch`, asked and told."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _core
from .._sync import new_lock, synchronized
from .._user_model import InferredUser
from .._validation import check_state, resolve_n_jobs, seed_from
from ._region import Region
from ._settings import _STATE_VERSION, ContinuousSettings

__all__ = ["ContinuousSearch"]


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
