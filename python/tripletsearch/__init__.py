"""tripletsearch: search and learn by comparisons with the scale-free gamma-CKL oracle.

Implements "Fast Interactive Search with a Scale-Free Comparison Oracle" (Chumbalov,
Klein, Maystre, Grossglauser; UAI 2024) on a C++/OpenMP core.

The submodules are imported on first use: ``import tripletsearch`` needs NumPy only, and
the compiled core (``tripletsearch._core``) loads with the first class or function that
runs it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.2.0"  # the one place of the version (pyproject reads it)

# public name -> the submodule that defines it
_EXPORTS = {
    "GammaCKL": "oracles",
    "CKL": "oracles",
    "TSTE": "oracles",
    "STE": "oracles",
    "Probit": "oracles",
    "Oracle": "oracles",
    "Embedding": "embedding",
    "DivergenceError": "embedding",
    "EmbeddingCV": "model_selection",
    "DiscreteSearch": "discrete",
    "simulate_discrete": "discrete",
    "ContinuousSearch": "continuous",
    "simulate_continuous": "continuous",
    "fit_choice_model": "users",
    "TripletSampler": "collect",
    "simulate_collection": "collect",
    "RankedChoices": "trials",
    "OddOneOut": "trials",
}
_SUBMODULES = {
    "theory",
    "datasets",
    "oracles",
    "embedding",
    "discrete",
    "continuous",
    "model_selection",
    "reproduce",
    "users",
    "collect",
    "trials",
}

__all__ = [
    "GammaCKL",
    "CKL",
    "TSTE",
    "STE",
    "Probit",
    "Oracle",
    "Embedding",
    "DivergenceError",
    "EmbeddingCV",
    "DiscreteSearch",
    "simulate_discrete",
    "ContinuousSearch",
    "simulate_continuous",
    "fit_choice_model",
    "TripletSampler",
    "simulate_collection",
    "RankedChoices",
    "OddOneOut",
    "theory",
    "datasets",
    "openmp_enabled",
    "__version__",
]

if TYPE_CHECKING:  # what static checkers and IDEs see
    from . import datasets, theory
    from .collect import TripletSampler, simulate_collection
    from .continuous import ContinuousSearch, simulate_continuous
    from .discrete import DiscreteSearch, simulate_discrete
    from .embedding import DivergenceError, Embedding
    from .model_selection import EmbeddingCV
    from .oracles import CKL, STE, TSTE, GammaCKL, Oracle, Probit
    from .trials import OddOneOut, RankedChoices
    from .users import fit_choice_model


def openmp_enabled() -> bool:
    """Whether the compiled core runs its kernels with OpenMP threads."""
    from . import _core

    return bool(_core.openmp_enabled())


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS, *_SUBMODULES})
