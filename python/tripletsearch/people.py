"""Simulated people, one class per kind: finding an item, mixing a colour, answering triplets.

The service's tests and load benchmarks, the triplet sampler's tests and benchmarks and
:func:`~tripletsearch.simulate_collection` all ask these people rather than a person of
their own:

* :class:`FindPerson` has a catalogue item in mind and answers a find screen (a dict with
  ``"number"`` and ``"items"``, as the service sends it): a pick among the items shown by
  the gamma-CKL choice model (Luce: ``P(c) ~ ||x_c - x_t||^-gamma``), or the nearest item
  when ``gamma`` is None, and ``found`` when the target is shown;
* :class:`MixPerson` has an sRGB colour in mind and answers a mix screen (two swatches
  ``"points"`` in CIELAB) with the pairwise gamma-CKL probability, accepting the estimate
  after ``accept_after`` answers;
* :class:`TripletPeople` answer triplet queries ``(head, a, b)`` from a ground truth ``X``
  by an oracle's probability, with random answers at a lapse rate;
* :class:`CollectPerson` answers a collect screen (a head and its candidates, as the
  service sends it): a person by gamma-CKL with lapses, or one of the scripts the checks
  must catch (random picks; random picks but the checks it can recognise on the screen
  answered right; answers at 100 ms);
* :class:`StudyPerson` answers a study's find screens: a person by gamma-CKL with lapses,
  or one of the scripts a study's checks must catch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _core
from ._validation import check_random_state, check_X
from .colour import srgb_to_lab
from .oracles import GammaCKL, Oracle
from .outcomes import triplet_agreement

__all__ = ["FindPerson", "MixPerson", "TripletPeople", "CollectPerson", "StudyPerson"]

_ONE_ROW = np.array([[0, 1, 2]], dtype=np.int64)


def _coordinates(items: Any) -> np.ndarray:
    """An embedding: the array itself, or a catalogue's ``embedding``."""
    return np.asarray(getattr(items, "embedding", items), dtype=np.float64)


class FindPerson:
    """Looks for item ``target`` of ``items`` (an embedding, or a catalogue with one).

    ``gamma``: the gamma-CKL power of their picks, or None: always the nearest item shown.
    """

    def __init__(self, items: Any, target: int, gamma: float | None, rng: np.random.Generator):
        self.X, self.target, self.rng = _coordinates(items), int(target), rng
        self.oracle = None if gamma is None else GammaCKL(gamma)

    def answer(self, screen: dict[str, Any]) -> dict[str, Any]:
        """The answer to ``screen``: ``found`` when the target is shown, else a pick."""
        ids = [int(it["id"]) for it in screen["items"]]
        if self.target in ids:
            return {"screen": screen["number"], "choice": ids.index(self.target), "found": True}
        if self.oracle is None:
            d = ((self.X[ids] - self.X[self.target]) ** 2).sum(axis=1)
            return {"screen": screen["number"], "choice": int(np.argmin(d)), "found": False}
        rows = self.X[[self.target, *ids]]  # only the items involved: O(k), not O(n)
        p = self.oracle.choice_prob(rows, [0], [list(range(1, len(ids) + 1))], n_jobs=1)[0]
        c = int(self.rng.choice(len(ids), p=p / p.sum()))
        return {"screen": screen["number"], "choice": c, "found": False}


class MixPerson:
    """Has the sRGB colour ``target_rgb`` in mind; compares swatches by CIELAB distance."""

    def __init__(
        self, target_rgb: Any, gamma: float, rng: np.random.Generator, accept_after: int = 40
    ):
        self.target_lab = srgb_to_lab(np.asarray(target_rgb, dtype=float))
        self.oracle, self.rng, self.accept_after = GammaCKL(gamma), rng, accept_after

    def answer(self, screen: dict[str, Any]) -> dict[str, Any]:
        """The answer to ``screen``: the swatch picked by gamma-CKL, or ``found`` (accept).

        The estimate is accepted from screen number ``accept_after`` on.
        """
        if screen["number"] >= self.accept_after:
            return {"screen": screen["number"], "choice": None, "found": True}
        a, b = (np.asarray(p, dtype=float) for p in screen["points"])
        p_a = self.oracle.prob(np.vstack([self.target_lab, a, b]), [[0, 1, 2]], n_jobs=1)[0]
        return {
            "screen": screen["number"],
            "choice": 0 if self.rng.random() < p_a else 1,
            "found": False,
        }


class TripletPeople:
    """People who answer triplet queries from the truth ``X`` by ``oracle``, with lapses.

    Parameters
    ----------
    X : array_like (n, d)
        What the people perceive.
    oracle : Oracle
        Their probability that ``a`` is closer to the head than ``b``.
    lapse : float in [0, 1]
        The share of answers given at random (a fair coin).
    random_state : None, int or numpy.random.Generator
        The draws of :meth:`answer` when it is not given them.
    """

    def __init__(self, X: Any, oracle: Oracle, lapse: float = 0.0, random_state: Any = None):
        self.X = check_X(X)
        if not 0.0 <= float(lapse) <= 1.0:
            raise ValueError(f"lapse: expected a number in [0, 1], got {lapse!r}")
        self.oracle, self.lapse = oracle, float(lapse)
        self.rng = check_random_state(random_state)
        self._spec: _core.OracleSpec | None = None  # made at its first use (spec)

    @classmethod
    def random(cls, n: int, dim: int, gamma: float = 4.0, seed: int = 0) -> TripletPeople:
        """People perceiving ``n`` standard normal points in ``dim`` dimensions.

        The points drawn with ``seed``, the answers by gamma-CKL with ``gamma``, their draws
        seeded ``seed + 1``.
        """
        X = np.random.default_rng(seed).normal(size=(n, dim))
        return cls(X, GammaCKL(gamma), 0.0, np.random.default_rng(seed + 1))

    def answer(self, queries: Any, u: Any = None) -> np.ndarray:
        """The answers to ``queries`` (m, 3): rows ``(head, closer, farther)``.

        ``u`` (m, 2): two uniform draws per row (default: drawn from ``random_state``); a
        lapse when ``u[:, 0] < lapse`` (then a fair coin), else ``a`` is closer when
        ``u[:, 1]`` is under the oracle's probability.
        """
        Q = np.asarray(queries, dtype=np.int64).reshape(-1, 3)
        if u is None:  # without lapses, one draw per row (as Oracle.sample draws)
            draws = self.rng.random((len(Q), 2) if self.lapse else len(Q))
            u = draws if self.lapse else np.column_stack([np.ones(len(Q)), draws])
        u = np.asarray(u, dtype=np.float64).reshape(-1, 2)
        if len(Q) == 1:  # the loops' case: the three items only, no validation of all of X
            p_one = 0.5 if u[0, 0] < self.lapse else self._prob_one(Q[0])
            return Q[:, [0, 2, 1]] if u[0, 1] >= p_one else Q.copy()
        p = np.where(u[:, 0] < self.lapse, 0.5, self.oracle.prob(self.X, Q, n_jobs=1))
        out = Q.copy()
        swap = u[:, 1] >= p
        out[swap, 1], out[swap, 2] = Q[swap, 2], Q[swap, 1]
        return out

    def _prob_one(self, query: np.ndarray) -> float:
        """The oracle's probability that query ``(head, a, b)``'s ``a`` is closer.

        The native kernel called directly (what ``Oracle.prob`` calls once it has checked
        its arrays): the ids come from a sampler and the coordinates were checked once.
        """
        rows = np.ascontiguousarray(self.X[query])
        return float(_core.oracle_prob(self.spec, rows, _ONE_ROW, 1)[0])

    @property
    def spec(self) -> _core.OracleSpec:
        """The oracle as the native kernels take it, for ``X``'s dimension.

        ``oracle.spec(X.shape[1])``, made at its first use and kept.
        """
        if self._spec is None:
            self._spec = self.oracle.spec(self.X.shape[1])
        return self._spec

    def truly_closer(self, rows: Any) -> np.ndarray:
        """Per row: 1 where the closer item is closer to the head in the truth, else 0.

        1/2 at a tie (:func:`~tripletsearch.outcomes.triplet_agreement`).
        """
        return triplet_agreement(self.X, rows)

    def run(self, sampler: Any, steps: int, n: int = 1) -> np.ndarray:
        """``steps`` rounds of ``sampler.ask(n)`` answered and told; the queries asked."""
        asked = []
        for _ in range(steps):
            q = sampler.ask(n)
            asked.append(q)
            sampler.tell(self.answer(q))
        return np.concatenate(asked) if asked else np.empty((0, 3), dtype=np.int64)


class CollectPerson:
    """Answers collect screens (``{"number", "head", "candidates"}``, items with ``"id"``).

    Ranked screens (``"picks": r``) get r picks in order, odd-one-out screens (``"head"``
    None, three candidates) the odd one.

    A screen may name its number ``"screen"``, as the collect routes' ``"query"`` does.

    Parameters
    ----------
    kind : {"person", "random", "reader", "fast", "first"}
        ``"person"``: picks by gamma-CKL from the truth ``X`` (``P(c) ~ ||x_c -
        x_head||^-gamma``; the nearest candidate when ``gamma`` is None, the first of
        equals), at random at rate ``lapse``. The scripts: ``"random"`` picks
        uniformly; ``"reader"`` reads the screen: the head when it is among the candidates
        (an attention check), the same item as before when the head and candidates were
        shown before (a repeat), the known answer when it has one (``known``), else it skips
        at rate ``skip`` and picks uniformly; ``"fast"`` picks as ``"random"`` and answers
        at 100 ms; ``"first"`` always picks the first candidate. (A script answering from a
        fixed fake geometry is a ``"person"`` given that geometry as ``X``.)
    X : array_like (n, d) or None
        What a ``"person"`` perceives.
    gamma : float or None
        A person's gamma-CKL power; None: the nearest candidate.
    lapse : float
        A person's share of random answers.
    rng : numpy.random.Generator
        Its draws.
    seconds : float
        The median time per screen (log-normal), but ``"fast"``'s 0.1 s.
    spread : float
        The sigma of that log-normal's logarithm; 0: every screen takes ``seconds``.
    known : dict, optional
        A ``"reader"``'s known answers (leaked gold rows): ``{(head, frozenset(candidates)):
        item}``.
    skip : float
        A ``"reader"``'s share of skips (``choice`` None) of the screens it cannot read.

    :meth:`answer` gives the answer's body (with the ``response_ms`` the page would
    measure); :attr:`seconds_` is the time it took. :meth:`pick` is the choice alone.
    """

    KINDS = ("person", "random", "reader", "fast", "first")

    def __init__(
        self,
        kind: str,
        X: Any = None,
        gamma: float | None = 3.0,
        lapse: float = 0.05,
        rng: Any = None,
        seconds: float = 2.0,
        spread: float = 0.4,
        known: dict | None = None,
        skip: float = 0.0,
    ):
        if kind not in self.KINDS:
            raise ValueError(f"kind: one of {self.KINDS}, got {kind!r}")
        if kind == "person" and X is None:
            raise ValueError("X: a person needs what they perceive")
        if not 0.0 <= float(lapse) <= 1.0:
            raise ValueError(f"lapse: expected a number in [0, 1], got {lapse!r}")
        if not float(spread) >= 0.0:
            raise ValueError(f"spread: expected a number >= 0, got {spread!r}")
        self.kind, self.lapse, self.seconds = kind, float(lapse), float(seconds)
        self.spread = float(spread)
        if not 0.0 <= float(skip) <= 1.0:
            raise ValueError(f"skip: expected a number in [0, 1], got {skip!r}")
        self.known, self.skip = dict(known or {}), float(skip)
        self.X = None if X is None else _coordinates(X)
        self.oracle = None if gamma is None else GammaCKL(gamma)
        self.rng = check_random_state(rng)
        self.picked: dict[tuple[int, frozenset], int] = {}  # what the reader picked
        self.seconds_ = 0.0

    def _pick(self, head: int, ids: list[int]) -> int | None:
        if self.kind == "first":
            return 0
        if self.kind == "reader":
            if head in ids:
                return ids.index(head)
            seen = self.picked.get((head, frozenset(ids)))
            if seen is None:
                seen = self.known.get((head, frozenset(ids)))
            if seen is not None:
                return ids.index(seen)
            if self.skip and self.rng.random() < self.skip:
                return None
        if self.kind != "person" or self.rng.random() < self.lapse:
            return int(self.rng.integers(len(ids)))
        if head in ids:
            return ids.index(head)
        assert self.X is not None
        rows = self.X[[head, *ids]]
        if self.oracle is None:  # the nearest, the first of equals
            return int(np.argmin(((rows[1:] - rows[0]) ** 2).sum(axis=1)))
        p = self.oracle.choice_prob(rows, [0], [list(range(1, len(ids) + 1))], n_jobs=1)[0]
        return int(self.rng.choice(len(ids), p=p / p.sum()))

    def _odd(self, ids: list[int]) -> int | None:
        """The odd one of three items (a position): the one apart from the closest pair."""
        if self.kind == "reader":
            if len(set(ids)) < 3:  # two copies of one item: the other is odd
                return next(i for i, x in enumerate(ids) if ids.count(x) == 1)
            seen = self.picked.get((-1, frozenset(ids)))
            if seen is None:
                seen = self.known.get((-1, frozenset(ids)))
            if seen is not None:
                return ids.index(seen)
            if self.skip and self.rng.random() < self.skip:
                return None
        if self.kind == "first":
            return 0
        if self.kind != "person" or self.rng.random() < self.lapse:
            return int(self.rng.integers(3))
        assert self.X is not None
        rows = self.X[ids]
        # each item's odds of being odd: how alike the other two are (the distance between
        # them to the power -gamma, gamma-CKL's weight; the nearest pair when gamma is None)
        d2 = np.array([np.sum((rows[(i + 1) % 3] - rows[(i + 2) % 3]) ** 2) for i in range(3)])
        if self.oracle is None or not np.all(d2 > 0):
            return int(np.argmin(d2))
        v = -0.5 * self.oracle.gamma * np.log(d2)
        p = np.exp(v - v.max())
        return int(self.rng.choice(3, p=p / p.sum()))

    def pick(self, query: dict[str, Any]) -> int | None:
        """The position of the candidate picked on screen ``query`` (and remembered).

        The first of :meth:`picks`. None: a skip (a ``"reader"`` with ``skip``).
        """
        got = self.picks(query)
        return None if got is None else got[0]

    def picks(self, query: dict[str, Any]) -> list[int] | None:
        """The positions picked on screen ``query``, in order (None: a skip).

        A screen with ``"picks": r`` (ranked picks) gets r: each pick a choice among the
        candidates not picked yet (the scripts: their rule for the first, then uniformly; a
        ``"first"`` script the first r); an odd-one-out screen (``"head"`` None) the odd
        one; any other one pick. What was picked first is remembered (a ``"reader"``
        repeats it).
        """
        ids = [int(c["id"]) for c in query["candidates"]]
        if query.get("head") is None:  # odd-one-out
            odd = self._odd(ids)
            if odd is not None:
                self.picked[(-1, frozenset(ids))] = ids[odd]
            return None if odd is None else [odd]
        head = int(query["head"]["id"])
        first = self._pick(head, ids)
        if first is None:
            return None
        self.picked[(head, frozenset(ids))] = ids[first]
        out = [first]
        for _ in range(int(query.get("picks", 1)) - 1):
            left = [i for i in range(len(ids)) if i not in out]
            if self.kind == "first":
                nxt = left[0]
            elif self.kind == "person":
                at = self._pick(head, [ids[i] for i in left])
                nxt = left[0 if at is None else at]
            else:
                nxt = left[int(self.rng.integers(len(left)))]
            out.append(nxt)
        return out

    def answer(self, query: dict[str, Any]) -> dict[str, Any]:
        """The answer to ``query``: ``{"screen", "choice", "response_ms"}`` (and ``picks``).

        ``picks``: the positions in order, on a screen that asks several.
        """
        picks = self.picks(query)
        if self.kind == "fast":
            self.seconds_ = 0.1
        elif self.spread == 0.0:
            self.seconds_ = self.seconds
        else:
            spread = self.spread * self.rng.standard_normal()
            self.seconds_ = float(self.seconds * np.exp(spread))
        ms = int(round(1e3 * self.seconds_))
        number = query["number"] if "number" in query else query["screen"]
        out = {"screen": number, "choice": None if picks is None else picks[0], "response_ms": ms}
        if picks is not None and int(query.get("picks", 1)) > 1:
            out["picks"] = picks
        return out


class StudyPerson:
    """Answers a study's find screens (``{"number", "items"}``) looking for ``target``.

    Parameters
    ----------
    kind : {"person", "random", "first", "reader", "fake", "fast"}
        ``"person"``: "this is it" when the target is shown, else a pick by gamma-CKL from
        ``X`` (``P(c) ~ ||x_c - x_t||^-gamma``), at random at rate ``lapse``. The scripts:
        ``"random"`` picks uniformly and never says "this is it"; ``"first"`` always picks
        the first item; ``"reader"`` says "this is it" when the target is shown (an
        attention screen answered right) and picks uniformly otherwise; ``"fake"`` does as
        a person of a fixed fake geometry (its own random points, "this is it" on the
        target); ``"fast"`` picks as ``"random"`` at 100 ms.
    X : array_like (n, d)
        What a ``"person"`` perceives (and the fake geometry's shape).
    target : int
        The item looked for.
    gamma, lapse : float
        A person's gamma-CKL power and share of random answers.
    rng : numpy.random.Generator
        Its draws.
    seconds : float
        The median time per screen (log-normal, sigma 0.4 of its logarithm), but
        ``"fast"``'s 0.1 s; :attr:`seconds_` is the last answer's.
    """

    KINDS = ("person", "random", "first", "reader", "fake", "fast")

    def __init__(
        self,
        kind: str,
        X: Any,
        target: int,
        gamma: float = 3.0,
        lapse: float = 0.05,
        rng: Any = None,
        seconds: float = 2.0,
    ):
        if kind not in self.KINDS:
            raise ValueError(f"kind: one of {self.KINDS}, got {kind!r}")
        if not 0.0 <= float(lapse) <= 1.0:
            raise ValueError(f"lapse: expected a number in [0, 1], got {lapse!r}")
        self.kind, self.target, self.lapse = kind, int(target), float(lapse)
        self.rng = check_random_state(rng)
        X = _coordinates(X)
        self.X = self.rng.normal(size=X.shape) if kind == "fake" else X
        self.oracle = GammaCKL(gamma)
        self.seconds, self.seconds_ = float(seconds), 0.0

    def _choice(self, ids: list[int]) -> tuple[int, bool]:
        shown = self.target in ids
        if self.kind in ("random", "fast"):
            return int(self.rng.integers(len(ids))), False
        if self.kind == "first":
            return 0, False
        if shown:
            return ids.index(self.target), True
        if self.kind == "reader" or self.rng.random() < self.lapse:
            return int(self.rng.integers(len(ids))), False
        if self.kind == "fake":  # the nearest in its own geometry
            return int(np.argmin(((self.X[ids] - self.X[self.target]) ** 2).sum(axis=1))), False
        rows = self.X[[self.target, *ids]]
        p = self.oracle.choice_prob(rows, [0], [list(range(1, len(ids) + 1))], n_jobs=1)[0]
        return int(self.rng.choice(len(ids), p=p / p.sum())), False

    def answer(self, screen: dict[str, Any]) -> dict[str, Any]:
        """The answer's body: ``{"screen", "choice", "found", "response_ms"}``."""
        choice, found = self._choice([int(it["id"]) for it in screen["items"]])
        spread = 0.4 * self.rng.standard_normal()
        self.seconds_ = 0.1 if self.kind == "fast" else float(self.seconds * np.exp(spread))
        ms = int(round(1e3 * self.seconds_))
        return {"screen": screen["number"], "choice": choice, "found": found, "response_ms": ms}
