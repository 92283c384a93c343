"""Triplet oracle models: gamma-CKL and its peers CKL, t-STE, STE and Probit.

A triplet row ``(t, i, j)`` states "item ``i`` was judged closer to head ``t`` than item
``j``". With squared distances ``D_i = ||x_i - x_t||^2`` and ``D_j = ||x_j - x_t||^2``:

==============  =====================================================================
model           probability of the stated outcome
==============  =====================================================================
``GammaCKL``    ``D_j^(g/2) / (D_i^(g/2) + D_j^(g/2)) = sigmoid((g/2)(log D_j - log D_i))``
``CKL``         ``(mu + D_j) / (2 mu + D_i + D_j)`` (Tamuz et al. 2011)
``TSTE``        ``K_i / (K_i + K_j)``, ``K = (1 + D/alpha)^(-(alpha+1)/2)``
``STE``         ``exp(-D_i) / (exp(-D_i) + exp(-D_j))``
``Probit``      ``Phi((D_j - D_i) / (2 sigma ||x_i - x_j||))``
==============  =====================================================================

Everything is computed in log space, so gamma = 100 at coordinate scales from 1e-8 to
1e8 stays finite and correct. Conventions for degenerate rows (identical in the native
core and in :mod:`tripletsearch._reference`):

* ``t == i``: the head is always closest to itself, ``p = 1`` (``log p = 0``);
  otherwise ``t == j``: ``p = 0`` (``log p = -inf``). Both rows have zero gradient.
* ``i == j`` (``t != i``): both offered items are the same, ``p = 1/2``.
* coincident points (a squared distance below ``DBL_MIN`` ~ 2.2e-308, e.g. two items
  with the same coordinates) enter logarithms as ``DBL_MIN``, so results stay finite;
  the derivative there is taken as 0. Probit with ``x_i == x_j`` gives ``p = 1/2``.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from . import _core
from ._deprecation import keyword_only
from ._validation import (
    check_index_array,
    check_random_state,
    check_real,
    check_triplets,
    check_X,
    resolve_n_jobs,
)

__all__ = ["Oracle", "GammaCKL", "CKL", "TSTE", "STE", "Probit"]


class Oracle:
    """Base class of the triplet oracles.

    A model of the native core (:attr:`kind`) and its one parameter (:meth:`parameter`);
    :meth:`spec` is the two as the native kernels take them.

    The NumPy twin of every method is in :mod:`tripletsearch._reference.oracles`.
    """

    _kind: ClassVar[str] = ""  # each model's name in the native core (its _core.ModelKind)

    @property
    def kind(self) -> str:
        """The model's name in the native core.

        Returns
        -------
        str
            One of ``"GammaCKL"``, ``"CKL"``, ``"TSTE"``, ``"STE"``, ``"Probit"``.
        """
        return self._kind

    def _param(self, d: int) -> float:  # pragma: no cover - overridden by each model
        raise NotImplementedError

    def parameter(self, dim: int) -> float:
        """The model's one parameter for a ``dim``-dimensional embedding.

        Parameters
        ----------
        dim : int
            The embedding's dimension (TSTE's default ``alpha`` depends on it).

        Returns
        -------
        float
            gamma (GammaCKL), mu (CKL), alpha (TSTE), sigma (Probit), 0.0 (STE).
        """
        return self._param(dim)

    @property
    def scale_free(self) -> bool:
        """Whether the model is invariant to ``X -> c X`` (gamma-CKL; CKL with mu = 0)."""
        return self._kind == "GammaCKL" or (self._kind == "CKL" and self.parameter(1) == 0.0)

    def spec(self, dim: int) -> _core.OracleSpec:
        """The model as the native kernels take it, for a ``dim``-dimensional embedding.

        Parameters
        ----------
        dim : int
            The embedding's dimension.

        Returns
        -------
        tripletsearch._core.OracleSpec
            The model's kind and its parameter (validated: ``ValueError`` when out of range).
        """
        return _core.OracleSpec(getattr(_core.ModelKind, self._kind), self.parameter(dim))

    def _validate(self, X: Any, triplets: Any) -> tuple[np.ndarray, np.ndarray]:
        # index ranges are checked by the native kernels, in their own pass over the rows
        return check_X(X), check_triplets(triplets, None)

    # ------------------------------------------------------------------ public API
    def prob(self, X: Any, triplets: Any, *, n_jobs: int | None = None) -> np.ndarray:
        """Probability of each row's stated outcome.

        Parameters
        ----------
        X : array_like, shape (n, d)
            Item embedding.
        triplets : array_like of int, shape (m, 3)
            Rows ``(t, i, j)``: "``i`` is closer to ``t`` than ``j``".
        n_jobs : int, optional
            Threads (None: all cores). Results do not depend on it.

        Returns
        -------
        ndarray, shape (m,)
        """
        X, T = self._validate(X, triplets)
        return _core.oracle_prob(self.spec(X.shape[1]), X, T, resolve_n_jobs(n_jobs))

    def log_prob(self, X: Any, triplets: Any, *, n_jobs: int | None = None) -> np.ndarray:
        """Natural log of :meth:`prob`, computed stably in log space; shape (m,)."""
        X, T = self._validate(X, triplets)
        return _core.oracle_log_prob(self.spec(X.shape[1]), X, T, resolve_n_jobs(n_jobs))

    def log_likelihood(self, X: Any, triplets: Any, *, n_jobs: int | None = None) -> float:
        """Sum of :meth:`log_prob` over the rows (0.0 for no rows)."""
        X, T = self._validate(X, triplets)
        spec = self.spec(X.shape[1])
        return float(_core.oracle_log_likelihood(spec, X, T, resolve_n_jobs(n_jobs)))

    @keyword_only("n_jobs")
    def grad(self, X: Any, triplets: Any, *, n_jobs: int | None = None) -> np.ndarray:
        """Gradient of :meth:`log_likelihood` with respect to ``X``.

        Returns
        -------
        ndarray, shape (n, d)
            Bitwise identical for any ``n_jobs``.
        """
        X, T = self._validate(X, triplets)
        return _core.oracle_grad(self.spec(X.shape[1]), X, T, resolve_n_jobs(n_jobs))

    @keyword_only("random_state")
    def sample(self, X: Any, queries: Any, *, random_state: Any = None) -> np.ndarray:
        """Simulate the oracle's answers to ``queries``.

        Parameters
        ----------
        X : array_like, shape (n, d)
        queries : array_like of int, shape (m, 3)
            Rows ``(t, a, b)``: head ``t`` (the target the simulated user has in mind)
            and the two items shown.
        random_state : None, int or numpy.random.Generator

        Returns
        -------
        ndarray of int64, shape (m, 3)
            Row ``(t, a, b)`` comes back as ``(t, a, b)`` when ``a`` was answered closer
            (probability :meth:`prob` of the row), else as ``(t, b, a)``.
        """
        X = check_X(X)
        Q = check_triplets(queries, X.shape[0], name="queries")  # the kernel's says "triplets"
        rng = check_random_state(random_state)
        p = _core.oracle_prob(self.spec(X.shape[1]), X, Q, resolve_n_jobs(None))
        swap = rng.random(Q.shape[0]) >= p
        out = Q.copy()
        out[swap, 1], out[swap, 2] = Q[swap, 2], Q[swap, 1]
        return out

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._repr_args().items())
        return f"{type(self).__name__}({args})"

    def _repr_args(self) -> dict[str, Any]:
        return {}

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self._repr_args() == other._repr_args()

    def __hash__(self) -> int:
        return hash((type(self).__name__, tuple(self._repr_args().items())))


class _ChoiceOracle(Oracle):
    """Oracles of the form ``p = w_i / (w_i + w_j)`` with a kernel weight ``w(D)``.

    They extend to k alternatives as Luce choice models, ``P(c | t) = w_c / sum_k w_k``.
    """

    def choice_prob(
        self, X: Any, heads: Any, candidates: Any, *, n_jobs: int | None = None
    ) -> np.ndarray:
        """Probability that each candidate is chosen as closest to the head.

        For :class:`GammaCKL`, ``P(c | t)`` is proportional to ``||x_c - x_t||^(-gamma)``
        (used for 4-image queries). Candidates equal to the head share probability 1.
        With two candidates this equals :meth:`prob` of ``(t, c_0, c_1)``.

        Parameters
        ----------
        X : array_like, shape (n, d)
        heads : array_like of int, shape (m,)
        candidates : array_like of int, shape (m, k), k >= 1

        Returns
        -------
        ndarray, shape (m, k)
            Rows sum to 1.
        """
        X = check_X(X)
        H = check_index_array(heads, "heads", 1, None)
        C = check_index_array(candidates, "candidates", 2, None)
        if C.shape[0] != H.shape[0]:
            raise ValueError(
                f"candidates: expected one row per head ({H.shape[0]}), got {C.shape[0]}"
            )
        if H.shape[0] == 0:
            return np.empty((0, C.shape[1]))
        if C.shape[1] < 1:
            raise ValueError("candidates: needs at least one column")
        spec = self.spec(X.shape[1])
        return _core.oracle_choice_prob(spec, X, H, C, resolve_n_jobs(n_jobs))


class GammaCKL(_ChoiceOracle):
    """The scale-free gamma-CKL oracle (the paper's Eq. 2).

    ``p = ||x_j - x_t||^gamma / (||x_i - x_t||^gamma + ||x_j - x_t||^gamma)``.
    Invariant to ``X -> c X`` for any ``c > 0``; gamma = 2 is CKL with mu = 0.

    Parameters
    ----------
    gamma : float > 0
        Oracle power: larger is more reliable. For a fixed accuracy on random queries,
        gamma grows linearly with the dimension (see :func:`tripletsearch.theory.calibrate_gamma`).
    """

    _kind = "GammaCKL"

    def __init__(self, gamma: float):
        self.gamma = check_real(gamma, "gamma")
        self.spec(1)  # validates gamma

    def _param(self, d: int) -> float:
        return self.gamma

    def _repr_args(self) -> dict[str, Any]:
        return {"gamma": self.gamma}


class CKL(_ChoiceOracle):
    """The crowd-kernel oracle of Tamuz et al. (2011): ``p = (mu + D_j) / (2 mu + D_i + D_j)``.

    Parameters
    ----------
    mu : float >= 0
        Regularizer; ``mu = 0`` makes the model scale-free (gamma-CKL with gamma = 2).
    """

    _kind = "CKL"

    def __init__(self, mu: float = 0.0):
        self.mu = check_real(mu, "mu")
        self.spec(1)  # validates mu

    def _param(self, d: int) -> float:
        return self.mu

    def _repr_args(self) -> dict[str, Any]:
        return {"mu": self.mu}


class TSTE(_ChoiceOracle):
    """t-distributed stochastic triplet embedding (van der Maaten & Weinberger 2012).

    ``p = K_i / (K_i + K_j)`` with the Student-t kernel ``K = (1 + D/alpha)^(-(alpha+1)/2)``.

    Parameters
    ----------
    alpha : float > 0 or None
        Degrees of freedom; None means ``max(d - 1, 1)`` for a d-dimensional embedding.
    """

    _kind = "TSTE"

    def __init__(self, alpha: float | None = None):
        self.alpha = None if alpha is None else check_real(alpha, "alpha")
        self.spec(1)  # validates alpha

    def _param(self, d: int) -> float:
        return float(max(d - 1, 1)) if self.alpha is None else self.alpha

    def _repr_args(self) -> dict[str, Any]:
        return {"alpha": self.alpha}


class STE(_ChoiceOracle):
    """Stochastic triplet embedding: ``p = exp(-D_i) / (exp(-D_i) + exp(-D_j))``."""

    _kind = "STE"

    def _param(self, d: int) -> float:
        return 0.0


class Probit(Oracle):
    """Probit oracle (Chumbalov et al. 2020).

    ``p = Phi((D_j - D_i) / (2 sigma ||x_i - x_j||))``, the signed distance of ``x_t`` from
    the bisecting hyperplane of ``x_i, x_j`` over sigma.

    Parameters
    ----------
    sigma : float > 0
        Noise scale, in the units of the embedding.
    """

    _kind = "Probit"

    def __init__(self, sigma: float):
        self.sigma = check_real(sigma, "sigma")
        self.spec(1)  # validates sigma

    def _param(self, d: int) -> float:
        return self.sigma

    def _repr_args(self) -> dict[str, Any]:
        return {"sigma": self.sigma}
