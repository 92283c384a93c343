"""Pure-NumPy twins of every native kernel: the executable specification.

Each module mirrors one part of ``cpp/include/tripletsearch/`` and imports nothing but
NumPy and the standard library: neither the public modules nor the compiled core, so a
bug in one cannot hide in the other. Tests assert that both agree; benchmarks time both.

=================  ==========================================================
module             twin of
=================  ==========================================================
``choice``         ``oracle/choice.hpp``: the gamma-CKL probabilities
``oracles``        ``oracle/``: the five models' kernels over triplet rows
``embedding``      ``embedding/``: the trainer (SGD, Adam, L-BFGS)
``rng``            ``core/rng.hpp``, ``core/seeding.hpp``: the random streams
``resample``       ``core/resample.hpp``: systematic resampling
``discrete``       ``discrete/`` and ``simulate/discrete.hpp``
``continuous``     ``continuous/`` and ``simulate/continuous.hpp``
``theory``         ``theory/monte_carlo.hpp``
=================  ==========================================================
"""

from .oracles import CKL, STE, TSTE, GammaCKL, Probit
from .theory import p_correct_monte_carlo

__all__ = ["GammaCKL", "CKL", "TSTE", "STE", "Probit", "p_correct_monte_carlo"]
