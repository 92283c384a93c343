"""The settings of a continuous search: one frozen object, its bounds and its test plan."""

from __future__ import annotations

import dataclasses
import math
import numbers
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .. import _core, theory
from .._params import Interval, StrOptions, validate_params
from .._user_model import auto_or
from .._validation import check_real

__all__ = ["ContinuousSettings", "METHODS", "hypothesis_test_plan"]

# public name -> _core.ContinuousMethod member
METHODS = {"hypothesis-test": "HypothesisTest", "posterior": "Posterior", "global": "Global"}
_STATE_VERSION = 1

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
