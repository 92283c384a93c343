"""Pure-NumPy twins of every native kernel: the executable specification.

Each class or function here has the signature of its public counterpart and computes
the same quantity with NumPy only. Tests assert that both agree; benchmarks time both.
"""

from .embedding import Embedding
from .oracles import CKL, STE, TSTE, GammaCKL, Probit
from .theory import p_correct_monte_carlo

__all__ = ["Embedding", "GammaCKL", "CKL", "TSTE", "STE", "Probit", "p_correct_monte_carlo"]
