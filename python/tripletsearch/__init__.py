"""tripletsearch: search and learn by comparisons with the scale-free gamma-CKL oracle.

Implements "Fast Interactive Search with a Scale-Free Comparison Oracle" (Chumbalov,
Klein, Maystre, Grossglauser; UAI 2024) on a C++/OpenMP core.
"""

from . import datasets, theory
from ._core import openmp_enabled
from .continuous import ContinuousSearch, simulate_continuous
from .discrete import DiscreteSearch, simulate_discrete
from .embedding import DivergenceError, Embedding
from .oracles import CKL, STE, TSTE, GammaCKL, Oracle, Probit

__version__ = "0.1.0"

__all__ = [
    "GammaCKL",
    "CKL",
    "TSTE",
    "STE",
    "Probit",
    "Oracle",
    "Embedding",
    "DiscreteSearch",
    "ContinuousSearch",
    "simulate_continuous",
    "simulate_discrete",
    "DivergenceError",
    "theory",
    "datasets",
    "openmp_enabled",
    "__version__",
]
