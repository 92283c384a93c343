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

The package keeps one concept per module: the regions (``_region``), the settings and the
hypothesis test's plan (``_settings``), the session (``_session``) and the simulation
(``_simulate``).
"""

from __future__ import annotations

from ._region import Region
from ._session import ContinuousSearch
from ._settings import METHODS, ContinuousSettings, hypothesis_test_plan
from ._simulate import ContinuousSimulation, simulate_continuous

__all__ = [
    "ContinuousSearch",
    "ContinuousSettings",
    "Region",
    "simulate_continuous",
    "ContinuousSimulation",
    "METHODS",
    "hypothesis_test_plan",
]

# the public names live here (their pickles, their documentation): the modules are private
for _obj in (
    ContinuousSearch,
    ContinuousSettings,
    Region,
    ContinuousSimulation,
    simulate_continuous,
    hypothesis_test_plan,
):
    _obj.__module__ = __name__
del _obj
