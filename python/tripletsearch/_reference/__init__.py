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
``collect``        ``collect/information.hpp``, ``collect/choice_information.hpp``: the
                   sampler's scoring (pairs, and screens past the pair)
``trials``         ``oracle/trials.hpp``: ranked and odd-one-out likelihoods, their fit
=================  ==========================================================
"""

from .oracles import CKL, STE, TSTE, GammaCKL, Probit
from .theory import p_correct_monte_carlo

__all__ = ["GammaCKL", "CKL", "TSTE", "STE", "Probit", "p_correct_monte_carlo", "TWINS", "NO_TWIN"]

_ORACLE = ("oracle_prob", "oracle_log_prob", "oracle_log_likelihood", "oracle_grad")

#: Each twin (``module.name``, one of that module's ``__all__``) and the entry points of the
#: compiled core it mirrors. ``tests/project/test_structure.py`` checks that every kernel of
#: the extension has a twin here (or a reason in :data:`NO_TWIN`) and that a test marked
#: ``twin`` names every twin.
TWINS: dict[str, tuple[str, ...]] = {
    "oracles.GammaCKL": (*_ORACLE, "oracle_choice_prob"),
    "oracles.CKL": (*_ORACLE, "oracle_choice_prob"),
    "oracles.TSTE": (*_ORACLE, "oracle_choice_prob"),
    "oracles.STE": (*_ORACLE, "oracle_choice_prob"),
    "oracles.Probit": _ORACLE,
    "embedding.train": ("train",),
    "rng.Rng": ("rng_u64",),
    "rng.epoch_permutation": ("epoch_permutation",),
    "rng.child_seed": ("child_seed",),
    "rng.Purpose": ("Purpose",),
    "choice.gamma_log_prior": ("gamma_log_prior",),
    "theory.p_correct_monte_carlo": ("p_correct_monte_carlo",),
    "discrete.store_frame": ("ItemStore",),
    "discrete.top_eigenpairs": ("principal_axes",),
    "discrete.DiscreteSearcher": ("DiscreteSearcher",),
    "discrete.simulate": ("simulate_discrete",),
    "continuous.ContinuousSearcher": ("ContinuousSearcher",),
    "continuous.simulate": ("simulate_continuous",),
    "collect.log_weights": ("collect_log_weights",),
    "collect.table_log_weights": ("collect_table_log_weights",),
    "collect.log_odds": ("collect_log_odds",),
    "collect.pair_information": ("collect_pair_information",),
    "collect.choice_log_weights": ("collect_choice_log_weights",),
    "collect.choice_information": ("collect_choice_information",),
    "trials.log_prob": ("trials_log_prob",),
    "trials.loss_grad": ("trials_loss_grad",),
    "trials.train": ("train_trials",),
}

#: Entry points of the compiled core without a twin, and what their tests compare with.
NO_TWIN: dict[str, str] = {
    "binomial_upper_tail": "the binomial tail summed in exact arithmetic",
    "scan_candidates": "a test hook: the plain scan and NumPy's ranking",
    "vector_math": "the SIMD exp/log against NumPy's",
    "max_threads": "a query of the OpenMP runtime",
    "openmp_enabled": "a query of the build",
    "require_allocation": "a guard against oversized allocations",
    "set_simd_isa": "the SIMD dispatch switch",
    "simd_isa": "the SIMD dispatch in use",
}
