"""Search a database of n items by comparisons (the paper's appendix, gamma-CKLSearch).

A user looks for one of n items with known embedding ``X`` by repeatedly picking, among
the items shown, the one closest to the target they have in mind, until the target itself
is shown. :class:`DiscreteSearch` is an ask/tell session (JSON-persistable for a web
server); :func:`simulate_discrete` runs many searches with simulated users natively.

Methods
-------
``"gamma-ckl"``
    gamma-CKLSearch: a posterior over the n items under the gamma-CKL oracle (uniform
    prior, Bayes update with the k-alternative choice model), its mean and covariance,
    the top eigenpair(s) by Jacobi rotations, proto-queries ``mean +- r sqrt(lambda) v``
    (k = 4: the next eigen-direction gives the second pair), and the items nearest to the
    protos under a posterior weighting (``selection``).
``"gauss"``
    GaussSearch (Chumbalov et al. 2020): a Gaussian belief N(mu, Sigma) over the target's
    location (prior: the items' mean and covariance), the probit likelihood with noise
    ``sigma``, a moment-matched (ADF) update per pairwise preference (k items: the chosen
    one beats each other one, applied in turn), and SampleMirror queries: z ~ N(mu, Sigma)
    and its mirror image across the hyperplane through mu orthogonal to the top eigenvector,
    each snapped to the nearest unshown item.
``"random"``
    k unshown items uniformly at random.

Selection rules (gamma-CKL)
---------------------------
``"infogain"``: candidates are the weighted-nearest items to protos at five radii along the
top eigen-directions (and the most probable items); the pair (k-tuple) with the largest
expected one-step information about {target shown as i, target shown as j, i wins, j wins}
is asked (quadratic entropy, the expectation over 128 posterior draws).
``"weighted"``: argmin ``||x_i - z||^2 / p_i`` ("near and probable", the text's intent).
``"paper"``: the appendix's literal ``argmin p_i ||x_i - z||``, which favours *improbable*
items (kept to measure it). ``"nearest"``: argmin ``||x_i - z||`` among items with p_i > 0.

Openings
--------
``"uniform"`` (the default): the first screen is ``n_choices`` distinct items drawn
uniformly from the session's seed by one rule for every method (the same seed, n and k:
the same screen); each method's own rule from the second screen on. ``"random"``: gamma-CKL
turns its first query's axes by a seeded rotation, the others open by their own rule.
``"principal"``: gamma-CKL opens on the principal axes.

The database is stored in single precision (a pass over it is what a query costs); all
arithmetic is in double precision.

The package keeps one concept per module: the settings (``_settings``), the items and the
checks of an answer (``_items``), the session (``_session``), its answers, JSON state and
replay (``_state``: the session holds its ``Answers`` and replays a state through its own
public methods) and the simulation (``_simulate``). :class:`ItemStore` is the native store a
session searches (a server maps one per catalogue and shares it between its workers);
``GAMMA_GRID`` the 13 values of gamma a session with ``gamma="auto"`` marginalizes.
"""

from __future__ import annotations

from .._core import ItemStore
from .._user_model import GAMMA_GRID
from ._session import DiscreteSearch
from ._settings import METHODS, OPENINGS, SELECTIONS, DiscreteSettings
from ._simulate import DiscreteSimulation, simulate_discrete

__all__ = [
    "DiscreteSearch",
    "DiscreteSettings",
    "simulate_discrete",
    "DiscreteSimulation",
    "METHODS",
    "SELECTIONS",
    "OPENINGS",
    "ItemStore",
    "GAMMA_GRID",
]

# the public names live here (their pickles, their documentation): the modules are private
for _obj in (DiscreteSearch, DiscreteSettings, DiscreteSimulation, simulate_discrete):
    _obj.__module__ = __name__
del _obj
