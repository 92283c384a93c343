"""The settings of a database search: one frozen object, its native form and its JSON form."""

from __future__ import annotations

import dataclasses
import numbers
from dataclasses import dataclass
from typing import Any, ClassVar

from .. import _core
from .._params import Interval, StrOptions, validate_params
from .._user_model import auto_or

__all__ = ["DiscreteSettings", "METHODS", "SELECTIONS", "OPENINGS"]

# public name -> _core.SearchMethod / _core.Selection member
METHODS = {"gamma-ckl": "GammaCKL", "gauss": "Gauss", "random": "Random"}
SELECTIONS = {
    "weighted": "Weighted",
    "paper": "Paper",
    "nearest": "Nearest",
    "infogain": "InfoGain",
}
_AUTO_INFOGAIN_MAX_N = 100_000
# 2: the settings' opening (a state of version 1 replays as it opened: "principal");
# 3: the opening "uniform" (a state of version 2 keeps its "random" or "principal")
# 4: best guesses (a state of version 3 or before has none: guesses=0)
_STATE_VERSION = 4
# public name -> _core.Opening member; the first is new sessions' default
OPENINGS = {"uniform": "Uniform", "random": "Random", "principal": "Principal"}


_AUTO_GAMMA = 3.0  # the native configuration's gamma when gamma is "auto" (unused)


@dataclass(frozen=True)
class DiscreteSettings:
    """All the settings of a database search, checked and normalized on construction.

    The arguments of :class:`DiscreteSearch` (and the searcher's of
    :func:`simulate_discrete`) in one frozen object: :meth:`to_native` gives the core's
    configuration (which pickles, for a Dask worker), :meth:`to_dict` / :meth:`from_dict`
    the JSON form a session's state keeps. ``gamma`` and ``lapse`` are gamma-CKLSearch's:
    with another method "auto" stands for the unused defaults (3.0 and 0.0).
    ``selection="auto"`` depends on the database's size: :meth:`resolve` picks the rule.
    """

    method: str = "gamma-ckl"
    gamma: float | str = "auto"
    r: float = 2.0
    sigma: float = 0.1
    n_choices: int = 2
    selection: str = "auto"
    lapse: float | str = 0.0
    opening: str = "uniform"
    guesses: int = 0
    miss: float | str = "auto"

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "method": [StrOptions(METHODS)],
        "gamma": auto_or(Interval(numbers.Real, 0, None, closed="neither")),
        "r": [Interval(numbers.Real, 0, None, closed="neither")],
        "sigma": [Interval(numbers.Real, 0, None, closed="neither")],
        "n_choices": [Interval(numbers.Integral, 2, _core.MAX_CHOICES, closed="both")],
        "selection": [StrOptions({"auto", *SELECTIONS})],
        "lapse": auto_or(Interval(numbers.Real, 0, 1, closed="left")),
        "opening": [StrOptions(set(OPENINGS))],
        "guesses": [Interval(numbers.Integral, 0, None, closed="left")],
        "miss": auto_or(Interval(numbers.Real, 0, 1, closed="left")),
    }

    def __post_init__(self) -> None:
        p = validate_params(dataclasses.asdict(self), self._parameter_constraints)
        if p["method"] != "gamma-ckl":  # gamma and the lapse rate are unused
            p["gamma"] = _AUTO_GAMMA if p["gamma"] == "auto" else p["gamma"]
            p["lapse"] = 0.0 if p["lapse"] == "auto" else p["lapse"]
        if p["method"] == "random":
            if p["guesses"] > 0:
                raise ValueError("guesses: the random method offers no guesses (use 0)")
            p["miss"] = 0.0 if p["miss"] == "auto" else p["miss"]
        p["guesses"] = int(p["guesses"])
        for name, value in p.items():
            object.__setattr__(self, name, value)

    def resolve(self, n_items: int) -> DiscreteSettings:
        """These settings with ``selection="auto"`` decided for a database of ``n_items``.

        "infogain" up to 100,000 items (gamma-CKL), "weighted" beyond.
        """
        if self.selection != "auto":
            return self
        big = self.method != "gamma-ckl" or n_items > _AUTO_INFOGAIN_MAX_N
        return dataclasses.replace(self, selection="weighted" if big else "infogain")

    def to_native(self) -> _core.SearchConfig:
        """The core's configuration (it checks the ranges again, ValueError naming them)."""
        if self.selection == "auto":
            raise ValueError("selection: 'auto' is decided by resolve(n_items) first")
        gamma_auto, lapse_auto = self.gamma == "auto", self.lapse == "auto"
        return _core.SearchConfig(
            method=getattr(_core.SearchMethod, METHODS[self.method]),
            gamma=_AUTO_GAMMA if gamma_auto else float(self.gamma),
            r=self.r,
            sigma=self.sigma,
            n_choices=self.n_choices,
            selection=getattr(_core.Selection, SELECTIONS[self.selection]),
            lapse=0.0 if lapse_auto else float(self.lapse),
            gamma_auto=gamma_auto,
            lapse_auto=lapse_auto,
            opening=getattr(_core.Opening, OPENINGS[self.opening]),
            guesses=self.guesses,
            miss=0.0 if self.miss == "auto" else float(self.miss),
            miss_auto=self.miss == "auto",
        )

    def to_dict(self) -> dict[str, Any]:
        """The settings as a JSON-safe dict (the keys of a session's state)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, state: dict[str, Any]) -> DiscreteSettings:
        """The settings of :meth:`to_dict`.

        A state written before the lapse rate has none; one written before the opening
        (state version 1) opened on the principal axes; one of version 2 keeps the opening
        it names ("random" or "principal"), whatever the default of new sessions; one
        written before best guesses (version 3 or before) offers none.
        """
        names = [f.name for f in dataclasses.fields(cls)]
        later = ("lapse", "opening", "guesses", "miss")
        given = {k: state[k] for k in names if k not in later}
        return cls(
            **given,
            lapse=state.get("lapse", 0.0),
            opening=state.get("opening", "principal"),
            guesses=state.get("guesses", 0),
            miss=state.get("miss", 0.0),
        )
