"""Trials with more than a triplet per screen: ranked choices and odd-one-out.

A triplet ``(t, i, j)`` is one screen with a head and two candidates and one pick. Two
richer screens, as people who study similarity ask them:

* :class:`RankedChoices`: a head, k candidates and the r of them picked as most similar
  (in order), as in Wilber, Kwak and Belongie's grids (16 candidates, 4 picks) and PsiZ's
  rank trials ("8-rank-2"). k = 2, r = 1 is a triplet; r = 1 a choice among k.
* :class:`OddOneOut`: three items and the one judged odd, as in the THINGS project.

Both are plain data (item ids): they validate like triplets, convert to the triplets they
imply (:meth:`~RankedChoices.to_triplets`), and index and slice like arrays (so the folds
of a cross-validation cut them as they cut triplet rows). :class:`~tripletsearch.Embedding`
fits them by their own likelihoods (see the user guide's "Trials" page).
"""

from __future__ import annotations

from numbers import Real
from typing import Any

import numpy as np

from ._params import Interval, check_param
from ._validation import check_index_range

__all__ = ["RankedChoices", "OddOneOut", "trial_log_prob", "is_trials", "n_seen"]


def _ids(a: Any, name: str, ndim: int) -> np.ndarray:
    """``a`` as a C-contiguous int64 array of ``ndim`` dimensions (ids of items)."""
    if isinstance(a, np.ndarray):
        arr = a
    else:
        try:
            arr = np.asarray(a)
        except (TypeError, ValueError):
            raise ValueError(f"{name}: ragged rows (every row needs the same length)") from None
    if arr.dtype == object:
        raise ValueError(f"{name}: ragged rows or non-integer entries (expected integer ids)")
    if arr.size == 0 and arr.dtype.kind not in "iu":
        arr = arr.astype(np.int64)
    if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"{name}: expected integer item ids, got dtype {arr.dtype}")
    if arr.ndim != ndim:
        shape = "(m,)" if ndim == 1 else "(m, k)"
        raise ValueError(f"{name}: expected a {ndim}-d array {shape}, got shape {arr.shape}")
    if arr.size and arr.min() < 0:
        raise ValueError(f"{name}: negative item id {int(arr.min())}")
    if arr.dtype.kind == "u" and arr.size and arr.max() > np.iinfo(np.int64).max:
        raise ValueError(f"{name}: item id too large for int64")
    return np.ascontiguousarray(arr, dtype=np.int64)


def _first_repeat(rows: np.ndarray) -> int:
    """Index of the first row that holds an id twice, or -1."""
    s = np.sort(rows, axis=1)
    dup = (s[:, 1:] == s[:, :-1]).any(axis=1)
    return int(np.argmax(dup)) if dup.any() else -1


def _select(index: Any, m: int) -> Any:
    """A NumPy index of rows from ``index`` (int, slice, int array or boolean mask)."""
    if isinstance(index, (int, np.integer)) and not isinstance(index, (bool, np.bool_)):
        i = int(index)
        if not -m <= i < m:
            raise IndexError(f"index {i} is out of range for {m} trials")
        return slice(i % m, i % m + 1)
    if isinstance(index, slice):
        return index
    arr = np.asarray(index)
    if arr.dtype == np.bool_:
        if arr.shape != (m,):
            raise IndexError(f"boolean index of shape {arr.shape} for {m} trials")
        return arr
    if not np.issubdtype(arr.dtype, np.integer) or arr.ndim != 1:
        raise IndexError("trials are indexed by an int, a slice, an int array or a mask")
    return arr


class RankedChoices:
    """Ranked choices: for each trial a head, its k candidates and the r picked, in order.

    Parameters
    ----------
    heads : array_like of int, shape (m,)
        The head (reference) item of each trial.
    candidates : array_like of int, shape (m, k), k >= 2
        The candidates shown with each head (distinct, the head not among them).
    picks : array_like of int, shape (m, r) or (m,)
        The candidates picked as most similar to the head, most similar first (a 1-d array:
        one pick per trial); each among its row's candidates, none twice, ``r < k``.
    ordered : bool
        True (default): the picks are ranked (the first is the most similar). False: an
        unordered choice of r of the k (Wilber's grids); its likelihood sums the orders.

    Attributes
    ----------
    heads : ndarray of int64, shape (m,)
    candidates : ndarray of int64, shape (m, k)
    picks : ndarray of int64, shape (m, r)
    ordered : bool

    Notes
    -----
    Item ids are checked against the number of items where it is known (by ``fit``,
    ``score`` and :meth:`check_n_items`).

    Examples
    --------
    >>> trials = RankedChoices([0, 1], [[2, 3, 4], [0, 2, 3]], [[3], [2]])
    >>> trials.to_triplets()
    array([[0, 3, 2],
           [0, 3, 4],
           [1, 2, 0],
           [1, 2, 3]])
    """

    def __init__(self, heads: Any, candidates: Any, picks: Any, ordered: bool = True) -> None:
        H = _ids(heads, "heads", 1)
        C = _ids(candidates, "candidates", 2)
        P = _ids(picks, "picks", 1 if np.ndim(picks) == 1 else 2)
        if P.ndim == 1:
            P = P.reshape(-1, 1)
        if not isinstance(ordered, (bool, np.bool_)):
            raise TypeError(f"ordered: expected a bool, got {type(ordered).__name__}")
        m = len(H)
        if m == 0:
            raise ValueError("heads: empty; trials need at least one row")
        if C.shape[0] != m or P.shape[0] != m:
            raise ValueError(
                f"candidates, picks: expected {m} rows (one per head), "
                f"got {C.shape[0]} and {P.shape[0]}"
            )
        k, r = C.shape[1], P.shape[1]
        if k < 2:
            raise ValueError(f"candidates: at least 2 per trial, got {k}")
        if not 1 <= r < k:
            raise ValueError(f"picks: between 1 and k - 1 = {k - 1} per trial, got {r}")
        bad = _first_repeat(C)
        if bad >= 0:
            raise ValueError(f"candidates: row {bad} repeats an item {C[bad].tolist()}")
        hit = (C == H[:, None]).any(axis=1)
        if hit.any():
            row = int(np.argmax(hit))
            raise ValueError(f"candidates: row {row} holds its head {int(H[row])}")
        bad = _first_repeat(P) if r > 1 else -1
        if bad >= 0:
            raise ValueError(f"picks: row {bad} picks an item twice {P[bad].tolist()}")
        among = (P[:, :, None] == C[:, None, :]).any(axis=2)
        if not among.all():
            row, col = (int(v) for v in np.unravel_index(int(np.argmin(among)), among.shape))
            raise ValueError(
                f"picks: row {row} picks {int(P[row, col])}, not among its candidates "
                f"{C[row].tolist()}"
            )
        self.heads, self.candidates, self.picks = H, C, P
        self.ordered = bool(ordered)

    # ------------------------------------------------------------------ shape
    @property
    def n_choices(self) -> int:
        """k, the candidates per trial."""
        return int(self.candidates.shape[1])

    @property
    def n_picks(self) -> int:
        """r, the picks per trial."""
        return int(self.picks.shape[1])

    def __len__(self) -> int:
        return len(self.heads)

    def __getitem__(self, index: Any) -> RankedChoices:
        sel = _select(index, len(self))
        out = object.__new__(RankedChoices)
        out.heads = np.ascontiguousarray(self.heads[sel])
        out.candidates = np.ascontiguousarray(self.candidates[sel])
        out.picks = np.ascontiguousarray(self.picks[sel])
        out.ordered = self.ordered
        return out

    def __repr__(self) -> str:
        kind = "ordered" if self.ordered else "unordered"
        return (
            f"RankedChoices({len(self)} trials, {self.n_choices} candidates, "
            f"{self.n_picks} picks, {kind})"
        )

    def max_id(self) -> int:
        """The largest item id of the trials."""
        return int(max(self.heads.max(), self.candidates.max()))

    def check_n_items(self, n_items: int) -> None:
        """ValueError naming the argument when an id is not below ``n_items``."""
        check_index_range(self.heads, n_items, "heads")
        check_index_range(self.candidates, n_items, "candidates")

    # ------------------------------------------------------------------ conversions
    def rows(self) -> np.ndarray:
        """Rows ``[head, pick 1, ..., pick r, the other candidates]``, shape (m, 1 + k).

        The layout of the likelihood kernels: the picks first, in order, then the candidates
        not picked, in their order of ``candidates``.
        """
        m, k, r = len(self), self.n_choices, self.n_picks
        picked = (self.candidates[:, :, None] == self.picks[:, None, :]).any(axis=2)
        rest = self.candidates[~picked].reshape(m, k - r)
        return np.ascontiguousarray(np.hstack([self.heads[:, None], self.picks, rest]))

    def to_triplets(self) -> np.ndarray:
        """The triplets the trials imply, shape (m * n_implied, 3), trial by trial.

        Each pick is closer to the head than every candidate not picked; ordered picks
        also than the picks after them. 16 candidates with 4 unordered picks imply
        4 * 12 = 48 triplets a trial; 8-rank-2, 7 + 6 = 13.
        """
        R = self.rows()
        k, r = self.n_choices, self.n_picks
        pairs = [
            (p, c) for p in range(1, r + 1) for c in range(p + 1 if self.ordered else r + 1, k + 1)
        ]
        out = np.empty((len(self), len(pairs), 3), dtype=np.int64)
        out[:, :, 0] = R[:, :1]
        for q, (p, c) in enumerate(pairs):
            out[:, q, 1] = R[:, p]
            out[:, q, 2] = R[:, c]
        return out.reshape(-1, 3)


class OddOneOut:
    """Odd-one-out trials: three items and the one judged odd (THINGS' triplet task).

    Parameters
    ----------
    items : array_like of int, shape (m, 3)
        The three items shown, distinct.
    odd : array_like of int, shape (m,)
        The item judged the odd one out, one of its row's three.

    Attributes
    ----------
    items : ndarray of int64, shape (m, 3)
    odd : ndarray of int64, shape (m,)

    Examples
    --------
    >>> trials = OddOneOut([[0, 1, 2]], [2])
    >>> trials.to_triplets()
    array([[0, 1, 2],
           [1, 0, 2]])
    """

    def __init__(self, items: Any, odd: Any) -> None:
        Z = _ids(items, "items", 2)
        o = _ids(odd, "odd", 1)
        if len(Z) == 0:
            raise ValueError("items: empty; trials need at least one row")
        if Z.shape[1] != 3:
            raise ValueError(f"items: expected 3 items a row, got shape {Z.shape}")
        if len(o) != len(Z):
            raise ValueError(f"odd: expected {len(Z)} entries (one per row), got {len(o)}")
        bad = _first_repeat(Z)
        if bad >= 0:
            raise ValueError(f"items: row {bad} repeats an item {Z[bad].tolist()}")
        among = (Z == o[:, None]).any(axis=1)
        if not among.all():
            row = int(np.argmin(among))
            raise ValueError(
                f"odd: row {row} names {int(o[row])}, not among its items {Z[row].tolist()}"
            )
        self.items, self.odd = Z, o

    @classmethod
    def from_rows(cls, rows: Any) -> OddOneOut:
        """Trials from rows of three ids with the odd one last (THINGS/SPoSE files)."""
        Z = _ids(rows, "rows", 2)
        if Z.ndim != 2 or Z.shape[1] != 3:
            raise ValueError(f"rows: expected 3 ids a row, got shape {Z.shape}")
        return cls(Z, Z[:, 2])

    def __len__(self) -> int:
        return len(self.odd)

    def __getitem__(self, index: Any) -> OddOneOut:
        sel = _select(index, len(self))
        out = object.__new__(OddOneOut)
        out.items = np.ascontiguousarray(self.items[sel])
        out.odd = np.ascontiguousarray(self.odd[sel])
        return out

    def __repr__(self) -> str:
        return f"OddOneOut({len(self)} trials)"

    def max_id(self) -> int:
        """The largest item id of the trials."""
        return int(self.items.max())

    def check_n_items(self, n_items: int) -> None:
        """ValueError naming the argument when an id is not below ``n_items``."""
        check_index_range(self.items, n_items, "items")

    def rows(self) -> np.ndarray:
        """Rows ``[a, b, odd]``: the pair judged most similar, then the odd item; (m, 3).

        The layout of THINGS' files and of the likelihood kernels; ``a, b`` keep their order
        in ``items``.
        """
        keep = self.items != self.odd[:, None]
        pair = self.items[keep].reshape(len(self), 2)
        return np.ascontiguousarray(np.hstack([pair, self.odd[:, None]]))

    def to_triplets(self) -> np.ndarray:
        """The two triplets a trial implies, shape (2 m, 3): ``(a, b, odd)`` and ``(b, a, odd)``.

        The odd item is farther from each of the other two than they are from each other.
        """
        R = self.rows()
        out = np.empty((len(self), 2, 3), dtype=np.int64)
        out[:, 0] = R
        out[:, 1] = R[:, [1, 0, 2]]
        return out.reshape(-1, 3)


#: what a lapse rate accepts (``trial_log_prob`` and :class:`~tripletsearch.Embedding`)
LAPSE = [Interval(Real, 0, 1, closed="left")]

_NativeSet = tuple[np.ndarray, int, int, int, bool, float]


def native_sets(parts: Any, lapse: float = 0.0) -> list[_NativeSet]:
    """The native core's description of trial sets: ``(rows, kind, k, r, ordered, lapse)``."""
    out = []
    for p in parts:
        if isinstance(p, OddOneOut):
            out.append((p.rows(), 1, 3, 1, True, lapse))
        else:
            out.append((p.rows(), 0, p.n_choices, p.n_picks, p.ordered, lapse))
    return out


def trial_log_prob(
    oracle: Any, X: Any, trials: Any, *, lapse: float = 0.0, n_jobs: int | None = None
) -> np.ndarray:
    """Log-probability of each trial's answer under ``oracle`` at the embedding ``X``.

    Parameters
    ----------
    oracle : GammaCKL, CKL, TSTE or STE
        The model (Probit models pairs only: ValueError).
    X : array_like, shape (n_items, dim)
    trials : RankedChoices, OddOneOut or a list of them
        Ranked answers are successive choices among the candidates left (Plackett-Luce);
        unordered ones sum the orders of their picks; an odd item names the closest pair.
    lapse : float in [0, 1)
        The probability that a pick is at random among the alternatives left: each pick's
        probability is ``(1 - lapse) q + lapse / s`` for the model's ``q`` among ``s``.
    n_jobs : int or None
        Threads (results do not depend on it).

    Returns
    -------
    ndarray, shape (m,)
        One value per trial, set after set.
    """
    from . import _core
    from ._validation import check_X, resolve_n_jobs

    X = check_X(X)
    lapse = float(check_param(lapse, "lapse", LAPSE))
    parts = list(trials) if isinstance(trials, (list, tuple)) else [trials]
    for p in parts:
        if not isinstance(p, (RankedChoices, OddOneOut)):
            raise TypeError(f"trials: expected RankedChoices or OddOneOut, got {type(p).__name__}")
        p.check_n_items(X.shape[0])
    spec = oracle.spec(X.shape[1])
    return _core.trials_log_prob(spec, X, native_sets(parts, lapse), resolve_n_jobs(n_jobs))


def is_trials(obj: Any) -> bool:
    """True for trial sets other than triplets, or a list holding one."""
    if isinstance(obj, (RankedChoices, OddOneOut)):
        return True
    return isinstance(obj, (list, tuple)) and any(
        isinstance(t, (RankedChoices, OddOneOut)) for t in obj
    )


def n_seen(obj: Any) -> int:
    """One more than the largest item id of a trial set (or of triplet rows)."""
    if isinstance(obj, (RankedChoices, OddOneOut)):
        return obj.max_id() + 1
    arr = np.asarray(obj)
    return int(arr.max()) + 1 if arr.size else 0
