"""NumPy twin of the database search (``cpp/include/tripletsearch/discrete/``).

Same interface as ``tripletsearch._core.DiscreteSearcher`` (``select``, ``update``,
``posterior``, ``mean``, ``cov``, ``n_unshown``, ``n_queries``), the configuration given by
name (``method``: "gamma-ckl", "gauss", "random"; ``selection``: "weighted", "paper",
"nearest", "infogain"), and the same algorithm: posterior weights and moments, eigen-
directions (``numpy.linalg.eigh`` with the native sign convention), proto-queries, the
selection rules, GaussSearch's ADF update and SampleMirror, and the random baseline, with
the native random streams (:mod:`.rng`). Coordinates are rounded to single precision, as
the native store keeps them, and the posterior weights to single precision after every
update, scaled to sum to 2^64 and flushed to zero below float's smallest normal number, as
a native session keeps them (``discrete/weights.hpp``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from .choice import (
    GAMMA_GRID,
    LAPSE_GRID,
    TINY,
    choice_likelihood,
    choice_probs,
    gamma_log_prior,
    gamma_power,
    grid_power,
    relative_weights,
)
from .oracles import normal_tail
from .resample import systematic_resample
from .rng import Purpose, child_seed, stream

__all__ = [
    "store_frame",
    "top_eigenpairs",
    "uniform_opening",
    "miss_marginal",
    "DiscreteSearcher",
    "simulate",
]

_RADII = (0.25, 0.5, 0.75, 1.0, 1.5)
_SAMPLES = 128
_TOP_ITEMS = 4
_RULES = {"weighted": 0, "paper": 1, "nearest": 2}
WEIGHT_TOTAL = 2.0**64  # the weights' sum after a pass without likelihood
_WEIGHT_FLOOR = float(np.finfo(np.float32).tiny)


def stored_weights(w: Any) -> np.ndarray:
    """Weights as a native session stores them: single precision, 0 below float's normals."""
    w = np.asarray(w, dtype=np.float64)
    return np.where(w >= _WEIGHT_FLOOR, w, 0.0).astype(np.float32).astype(np.float64)


def store_frame(X: Any) -> tuple[np.ndarray, float, np.ndarray]:
    """The item store's frame: (center, scale, the store's coordinates).

    Each coordinate centred on the midpoint of its range, all divided by the smallest power of
    two at least the largest half-range, then rounded to single precision
    (``discrete/item_store.hpp``).
    """
    X = np.asarray(X, dtype=np.float64)
    lo, hi = X.min(axis=0), X.max(axis=0)
    center = 0.5 * lo + 0.5 * hi
    half = float(np.max(0.5 * hi - 0.5 * lo))
    scale = math.ldexp(1.0, math.frexp(half)[1]) if half > 0 else 1.0
    stored = ((X - center) * (1.0 / scale)).astype(np.float32).astype(np.float64)
    return center, scale, stored


def top_eigenpairs(C, count):
    """Largest eigenpairs, each vector's largest-magnitude entry made positive."""
    vals, vecs = np.linalg.eigh(C)
    order = np.argsort(-vals, kind="stable")[:count]
    out = []
    for e in order:
        v = vecs[:, e].copy()
        big = int(np.argmax(np.abs(v)))
        if v[big] < 0:
            v = -v
        out.append((max(vals[e], 0.0), v))
    return out


_OPENING_AXES = 8  # the opening turns the top max(count, 8) axes (at most d)
_UNIFORM_OPENING_STREAM = 1  # stream (seed, Opening, 1); 0 is the rotation's
OPENINGS = ("principal", "random", "uniform")


def uniform_opening(seed, n, k):
    """The first screen every method shares (``discrete/opening.hpp``): k distinct of n items.

    From stream (seed, Opening, 1): item c is the r-th item, in index order, of those not
    drawn yet, r = below(n - c); in the order drawn.
    """
    rng = stream(seed, Purpose.Opening, _UNIFORM_OPENING_STREAM)
    rest = list(range(n))
    q = []
    for c in range(k):
        q.append(rest.pop(rng.below(n - c)))
    return np.array(q, dtype=np.int64)


def rotated_axes(eig, seed):
    """A session's opening axes: ``eig`` (value, vector pairs) turned by a Haar rotation.

    The rows of an m x m matrix of standard normals from stream (seed, Opening, 0), drawn
    row by row, made orthonormal by modified Gram-Schmidt: axis e becomes
    ``sum_j Q[e, j] v_j`` with variance ``sum_j Q[e, j]^2 lambda_j``.
    """
    m = len(eig)
    if m == 0:
        return eig
    rng = stream(seed, Purpose.Opening, 0)
    Q = [[rng.normal() for _ in range(m)] for _ in range(m)]
    for e in range(m):
        for f in range(e):
            dot = 0.0
            for j in range(m):
                dot += Q[e][j] * Q[f][j]
            for j in range(m):
                Q[e][j] -= dot * Q[f][j]
        norm = 0.0
        for j in range(m):
            norm += Q[e][j] * Q[e][j]
        norm = math.sqrt(norm)
        for j in range(m):
            Q[e][j] /= norm
    d = len(eig[0][1])
    out = []
    for e in range(m):
        var, v = 0.0, np.zeros(d)
        for j in range(m):
            var += Q[e][j] * Q[e][j] * eig[j][0]
            for a in range(d):
                v[a] += Q[e][j] * eig[j][1][a]
        out.append((var, v))
    return out


def _cholesky(S):
    d = S.shape[0]
    L = np.zeros_like(S)
    for j in range(d):
        s = S[j, j] - np.dot(L[j, :j], L[j, :j])
        piv = math.sqrt(s) if s > 0 else 0.0
        L[j, j] = piv
        for i in range(j + 1, d):
            t = S[i, j] - np.dot(L[i, :j], L[j, :j])
            L[i, j] = t / piv if piv > 0 else 0.0
    return L


class _Hypotheses:
    """The user hypotheses (gamma and lapse grids): one weight per item each.

    Mixed into :class:`DiscreteSearcher` (``discrete/hypotheses.hpp``'s twin).
    """

    w: np.ndarray | None  # the searcher's item weights

    if TYPE_CHECKING:  # the searcher's attributes, for the type checker only

        def __getattr__(self, name: str) -> Any: ...

    def _init_hypotheses(self, keep):
        """Wh = 2^64 prior_h / n on the items kept, w = sum_h wh in order (stored)."""
        prior = np.array(
            [
                math.exp(gamma_log_prior(h // self.nl)) if self.gamma_auto else 1.0
                for h in range(self.nh)
            ]
        )
        t = float(np.cumsum(prior)[-1])
        self.wh = np.array(
            [np.where(keep, stored_weights(WEIGHT_TOTAL * (p / t / self.n)), 0.0) for p in prior]
        )
        self.w = stored_weights(np.cumsum(self.wh, axis=0)[-1])
        self.htotal = np.zeros(self.nh)

    def _update_hypotheses(self, shown, choice, scale):
        """Wh *= P(choice | item, h) * scale (choice < 0: scale only), w = sum_h wh.

        The sums and masses from the double-precision products, then both stored.
        """
        k = len(shown)
        if choice >= 0:
            D = ((self.X[None, :, :] - self.X[shown][:, None, :]) ** 2).sum(-1)
            D = np.maximum(D, TINY)
            dmin = D.min(axis=0)
            pw = np.zeros((k, self.ng, self.n))
            for c in range(k):
                s = np.where(D[c] == dmin, 1.0, dmin * (1.0 / D[c]))  # the closest: 1
                for g in range(self.ng):
                    pw[c, g] = grid_power(g, s) if self.gamma_auto else gamma_power(s, self.gamma)
            den = np.cumsum(pw, axis=0)[-1]
            p = pw[choice] * (1.0 / den)
            for g in range(self.ng):
                for e in range(self.nl):
                    eps = LAPSE_GRID[e] if self.lapse_auto else self.lapse
                    h = g * self.nl + e
                    self.wh[h] = self.wh[h] * ((eps / k + (1.0 - eps) * p[g]) * scale)
        else:
            self.wh = self.wh * scale
        self.w = stored_weights(np.cumsum(self.wh, axis=0)[-1])
        self.htotal = self.wh.sum(axis=1)
        self.wh = stored_weights(self.wh)

    def user_posterior(self):
        """(gamma grid probabilities, lapse grid probabilities), or None."""
        if not (self.gamma_auto or self.lapse_auto):
            return None
        t = self.htotal.sum()
        p = self.htotal / t if t > 0 else np.zeros(self.nh)
        g, lp = np.zeros(len(GAMMA_GRID)), np.zeros(len(LAPSE_GRID))
        for h in range(self.nh):
            if self.gamma_auto:
                g[h // self.nl] += p[h]
            if self.lapse_auto:
                lp[h % self.nl] += p[h]
        return g, lp


class _Guesses:
    """Best guesses (issue 43): the strip of a screen and the evidence of a pass-over.

    Mixed into :class:`DiscreteSearcher` (its state: ``guesses``, ``miss``, ``miss_auto``,
    ``passes``, ``passed``, ``block_passed``, and the searcher's weights and moments).
    """

    if TYPE_CHECKING:  # the searcher's attributes, for the type checker only

        def __getattr__(self, name: str) -> Any: ...

    def _pass_over(self, offered):
        """The strip passed over: each offered item's weight times the miss rate.

        With ``miss_auto`` the factor is ``miss_marginal(c + 1) / miss_marginal(c)``, ``c``
        the item's earlier pass-overs (the miss rate marginalized on its grid).
        """
        assert self.w is not None  # gamma-ckl keeps its weights
        for i in offered:
            i = int(i)
            r = self.miss
            if self.miss_auto:
                c = self.passes.get(i, 0)
                self.passes[i] = c + 1
                r = miss_marginal(c + 1) / miss_marginal(c)
            self.w[i] = stored_weights(self.w[i] * r)
            if self.nh:
                self.wh[:, i] = stored_weights(self.wh[:, i] * r)

    def _hidden(self):
        """The items a screen may not show: the shown, and more for GaussSearch.

        With miss = 0 GaussSearch leaves out the passed-over items too (while enough
        others are left).
        """
        if self.method == "gauss" and self.block_passed:
            blocked = self.shown | self.passed
            if self.n - int(blocked.sum()) >= min(self.k, self.n_unshown):
                return blocked
        return self.shown

    def offer(self, q):
        """The strip of the screen ``q`` that :meth:`select` just gave (the core's ``offer``).

        Up to ``guesses`` items, most probable first, neither on ``q`` nor shown (GaussSearch:
        nor passed over): gamma-CKL's largest weights (ties: lower index), GaussSearch's
        smallest Mahalanobis distances to the belief's mean; the uniform opening's strip
        continues its draw.
        """
        q = [int(i) for i in q]
        m, k = self.guesses, len(q)
        if m == 0 or k == 0:
            return np.empty(0, dtype=np.int64)
        if self.opening == "uniform" and self.n_queries == 0 and not self.shown.any():
            return uniform_opening(self.seed, self.n, min(k + m, self.n))[k:]
        if self.method == "gamma-ckl":
            out = [i for i in self._most_probable(k + m) if i not in q][:m]
            return np.array(out, dtype=np.int64)
        score = self.mahalanobis()
        ok = ~(self.shown | self.passed)
        ok[q] = False
        idx = np.nonzero(ok)[0]
        order = np.lexsort((idx, score[idx]))[:m]
        return idx[order].astype(np.int64)

    def mahalanobis(self):
        """GaussSearch: each item's squared Mahalanobis distance to the belief's mean.

        The core's arithmetic: ``y = L^-1 (x - mean)`` by forward substitution, in order.
        """
        L = _cholesky(self._cov)
        Y = self.X - self._mean
        y = np.zeros((self.n, self.d))
        acc = np.zeros(self.n)
        for a in range(self.d):
            t = Y[:, a].copy()
            for c in range(a):
                t = t - L[a, c] * y[:, c]
            y[:, a] = t / L[a, a] if L[a, a] > 0 else 0.0
            acc = acc + y[:, a] * y[:, a]
        return acc


class DiscreteSearcher(_Hypotheses, _Guesses):
    def __init__(
        self,
        X,
        *,
        method="gamma-ckl",
        gamma=3.0,
        r=2.0,
        sigma=0.1,
        n_choices=2,
        selection="infogain",
        lapse=0.0,
        gamma_auto=False,
        lapse_auto=False,
        opening="uniform",
        guesses=0,
        miss=0.0,
        miss_auto=False,
        seed=0,
    ):
        self.center, self.scale, self.X = store_frame(X)
        self.n, self.d = self.X.shape
        self.method, self.gamma, self.r, self.sigma = method, gamma, r, sigma
        self.k, self.selection, self.seed = n_choices, selection, seed
        if opening not in OPENINGS:
            raise ValueError(f"opening: expected one of {OPENINGS}, got {opening!r}")
        self.opening = opening
        # best guesses: the strip's size, the person's miss rate (or inferred), and what a
        # pass-over leaves: gamma-ckl counts them per item, gauss keeps them out
        if guesses < 0 or guesses + n_choices > self.n:
            raise ValueError(
                f"guesses: {guesses} guesses with {n_choices} a screen, {self.n} items"
            )
        if guesses and method == "random":
            raise ValueError("guesses: the random method offers no guesses")
        self.guesses, self.miss, self.miss_auto = guesses, miss, miss_auto
        self.passes: dict[int, int] = {}
        self.passed = np.zeros(self.n, dtype=bool)
        self.block_passed = guesses > 0 and miss == 0.0 and not miss_auto
        # user hypotheses h = (gamma index, lapse index): one weight per item each
        self.lapse, self.gamma_auto, self.lapse_auto = lapse, gamma_auto, lapse_auto
        self.ng = len(GAMMA_GRID) if gamma_auto else 1
        self.nl = len(LAPSE_GRID) if lapse_auto else 1
        self.nh = 0 if not (gamma_auto or lapse_auto or lapse > 0) else self.ng * self.nl
        self.shown = np.zeros(self.n, dtype=bool)
        self.n_queries = 0
        self.total = 0.0
        self._mean = np.zeros(self.d)
        self._cov = np.zeros((self.d, self.d))
        if method in ("gamma-ckl", "gauss"):
            # the posterior weights: "gamma-ckl" keeps them, "gauss" only starts from them
            self.w: np.ndarray | None = stored_weights(np.full(self.n, WEIGHT_TOTAL / self.n))
            if self.nh:
                self._init_hypotheses(np.ones(self.n, dtype=bool))
            self._moments()  # around 0, then around the mean, the weights renormalised
            if self.nh:
                self._update_hypotheses(np.empty(0, dtype=np.int64), -1, WEIGHT_TOTAL / self.total)
                self._moments()
            else:
                self._moments(WEIGHT_TOTAL / self.total)
            if method == "gauss":
                self.w = None

    # ------------------------------------------------------------------ state
    @property
    def mean(self):
        """The belief's mean in the input's frame."""
        return self.center + self.scale * self._mean

    @property
    def cov(self):
        return self.scale**2 * self._cov

    @property
    def n_unshown(self):
        return int(self.n - self.shown.sum())

    def _moments(self, scale=None):
        assert self.w is not None  # gamma-ckl, or gauss at construction
        if scale is not None and scale != 1.0:
            self.w = stored_weights(self.w * scale)
        W = float(self.w.sum())
        self.total = W
        if not W > 0:
            return
        Y = self.X - self._mean
        m1 = (self.w @ Y) / W
        M = (Y * self.w[:, None]).T @ Y / W
        self._cov = M - np.outer(m1, m1)
        self._mean = self._mean + m1

    # ------------------------------------------------------------------ update

    def update(self, shown, choice, offered=()):
        shown = np.asarray(shown, dtype=np.int64)
        offered = np.asarray(offered, dtype=np.int64)
        self.shown[shown] = True
        self.passed[offered] = True
        if self.method == "gamma-ckl" and self.nh:
            assert self.w is not None  # gamma-ckl keeps its weights
            self.w[shown] = 0.0
            self.wh[:, shown] = 0.0
            self._pass_over(offered)
            scale = WEIGHT_TOTAL / self.total if self.total > 0 else 1.0
            self._update_hypotheses(shown, choice, scale)
            self._moments()
            if not self.total > 0:
                self.passes = {}
                self._init_hypotheses(~self.shown)
                self.total = 0.0
                self._moments()
        elif self.method == "gamma-ckl":
            assert self.w is not None  # gamma-ckl keeps its weights
            self.w[shown] = 0.0
            self._pass_over(offered)
            scale = WEIGHT_TOTAL / self.total if self.total > 0 else 1.0
            if choice >= 0:
                D = ((self.X[None, :, :] - self.X[shown][:, None, :]) ** 2).sum(-1)
                self.w = stored_weights(self.w * (choice_likelihood(D, choice, self.gamma) * scale))
                self._moments()
            else:
                self._moments(scale)
            if not self.total > 0:
                self.passes = {}
                self.w = np.where(self.shown, 0.0, stored_weights(WEIGHT_TOTAL / self.n))
                self.total = 0.0
                self._moments()
        elif self.method == "gauss" and choice >= 0:
            self._update_gauss(shown, choice)
        self.n_queries += 1

    def _update_gauss(self, shown, choice):
        xi = self.X[shown[choice]]
        for j in range(len(shown)):
            if j == choice:
                continue
            xj = self.X[shown[j]]
            u = xi - xj
            s2 = float(u @ u)
            if not s2 > 0:
                continue
            s = math.sqrt(s2)
            u = u / s
            b = (float(xi @ xi) - float(xj @ xj)) / (2.0 * s)
            Su = self._cov @ u
            v = float(u @ Su)
            sd = math.sqrt(v + (self.sigma / self.scale) ** 2)
            z = (float(u @ self._mean) - b) / sd
            lam = float(normal_tail(np.array([z]))[2][0])
            self._mean = self._mean + lam / sd * Su
            self._cov = self._cov - lam * (lam + z) / sd**2 * np.outer(Su, Su)

    # ------------------------------------------------------------------ selection
    def select(self):
        k = min(self.k, self.n_unshown)
        if k == 0:
            return np.empty(0, dtype=np.int64)
        if self.opening == "uniform" and self.n_queries == 0:  # one rule for every method
            return uniform_opening(self.seed, self.n, k)
        if self.method == "random":
            return self._select_random(k)
        if self.method == "gamma-ckl" and self.selection == "infogain":
            return self._select_infogain(k)
        if self.method == "gamma-ckl":
            return self._nearest(self._protos(k, self.r), k, _RULES[self.selection])
        return self._nearest(self._gauss_protos(k), k, _RULES["nearest"])

    def _axes(self, count):
        """The top ``count`` axes; the first query's a random frame of the top ones.

        The opening turns the top ``min(d, max(count, 8))`` axes by the session's rotation
        and keeps the first ``count`` (beyond 32 dimensions: the top ``count``).
        """
        if self.opening == "random" and self.n_queries == 0:
            m = count if self.d > 32 else min(self.d, max(count, _OPENING_AXES))
            return rotated_axes(top_eigenpairs(self._cov, m), self.seed)[:count]
        return top_eigenpairs(self._cov, count)

    def _protos(self, k, r, pairs=None):
        ne = min((k + 1) // 2, self.d)
        eig = self._axes(ne)
        out = np.empty((k, self.d))
        for c in range(k):
            e = (c // 2) % ne
            rnd = 1.0 + (c // 2) // ne
            step = (1.0 if c % 2 == 0 else -1.0) * rnd * r * math.sqrt(eig[e][0])
            out[c] = self._mean + step * eig[e][1]
        return out

    def _scores(self, z, rule):
        D = ((self.X - z) ** 2).sum(1)
        w = self.w if self.method == "gamma-ckl" else np.ones(self.n)
        assert w is not None  # gamma-ckl keeps its weights
        with np.errstate(divide="ignore", invalid="ignore"):
            if rule == 0:
                sc = np.where(w > 0, D / np.where(w > 0, w, 1.0), np.inf)
            elif rule == 1:
                sc = w * np.sqrt(D)
            else:
                sc = D
        return np.where(self._hidden(), np.nan, sc)

    def _ranked(self, z, rule, kb):
        sc = self._scores(z, rule)
        ok = ~np.isnan(sc)
        idx = np.nonzero(ok)[0]
        order = np.lexsort((idx, sc[idx]))[:kb]
        return [int(i) for i in idx[order]]

    def _nearest(self, protos, k, rule):
        q = []
        for c in range(k):
            for i in self._ranked(protos[c], rule, k):
                if i not in q:
                    q.append(i)
                    break
        return np.array(q, dtype=np.int64)

    def _gauss_protos(self, k):
        ne = min((k + 1) // 2, self.d)
        eig = top_eigenpairs(self._cov, ne)
        L = _cholesky(self._cov)
        rng = stream(self.seed, Purpose.SearchQuery, self.n_queries)
        out = np.empty((k, self.d))
        for c in range(0, k, 2):
            g = np.array([rng.normal() for _ in range(self.d)])
            z = self._mean + L @ g
            v = eig[(c // 2) % ne][1]
            proj = float(v @ (z - self._mean))
            out[c] = z
            if c + 1 < k:
                out[c + 1] = z - 2.0 * proj * v
        return out

    def _select_random(self, k):
        rng = stream(self.seed, Purpose.SearchQuery, self.n_queries)
        q: list[int] = []
        free = [i for i in range(self.n) if not self.shown[i]]
        while len(q) < k:
            r = rng.below(self.n_unshown - len(q))
            rest = [i for i in free if i not in q]
            q.append(rest[r])
        return np.array(q, dtype=np.int64)

    def _most_probable(self, m):
        assert self.w is not None  # gamma-ckl only
        idx = np.nonzero(self.w > 0)[0]
        order = np.lexsort((idx, -self.w[idx]))[:m]
        return [int(i) for i in idx[order]]

    def _posterior_sample(self):
        """The draws from the posterior, and with gamma inferred each draw's gamma index.

        The gamma index is drawn from P(h | item) (grid index; else None).
        """
        rng = stream(self.seed, Purpose.PosteriorDraws, self.n_queries)
        u0 = rng.uniform()
        sample = [int(i) for i in systematic_resample(self.w, self.total, _SAMPLES, u0)]
        if not self.gamma_auto:
            return sample, None
        gidx = []
        assert self.w is not None  # gamma-ckl only
        for i in sample:
            target = rng.uniform() * self.w[i]
            cum = np.cumsum(self.wh[:, i])
            above = np.nonzero(cum > target)[0]
            h = int(above[0]) if len(above) else self.nh - 1
            gidx.append(h // self.nl)
        return sample, np.array(gidx)

    def _infogain_tuples(self, k):
        """Steps 1 and 2 of the info-gain rule: candidate items and their tuples."""
        ne = min((5 if self.d <= 32 else 3) if k == 2 else (k + 1) // 2, self.d)
        eig = self._axes(ne)
        if k != 2:
            tuples = []
            for rad in _RADII:
                protos = self._protos(k, rad * self.r)
                t = []
                for c in range(k):
                    for i in self._ranked(protos[c], 0, k):
                        if i not in t:
                            t.append(i)
                            break
                if len(t) == k:
                    tuples.append(t)
            return tuples
        pairs = set()

        def push(i, j):
            if i >= 0 and j >= 0 and i != j:
                pairs.add((min(i, j), max(i, j)))

        best = {}
        for e in range(ne):
            lam, v = eig[e]
            for a, rad in enumerate(_RADII):
                for sgn in (0, 1):
                    step = (1.0 if sgn == 0 else -1.0) * rad * self.r * math.sqrt(lam)
                    ranked = self._ranked(self._mean + step * v, 0, 1)
                    best[(e, a, sgn)] = ranked[0] if ranked else -1
        items = []
        for e in range(ne):
            for a in range(len(_RADII)):
                items += [best[(e, a, 0)], best[(e, a, 1)]]
                for b in range(len(_RADII)):
                    push(best[(e, a, 0)], best[(e, b, 1)])
        prob = self._most_probable(_TOP_ITEMS)
        for a in range(len(prob)):
            for b in range(a + 1, len(prob)):
                push(prob[a], prob[b])
            for c in items:
                push(prob[a], c)
        return [list(p) for p in sorted(pairs)]

    def _infogain_score(self, tup, u, cpos, sample, k):
        """Step 3: the expected Gini information of one tuple."""
        assert self.w is not None  # gamma-ckl only
        pos = [cpos[i] for i in tup]
        pc = np.array([self.w[i] / self.total for i in tup])
        found_sq, mass_in = float(np.sum(pc * pc)), float(np.sum(pc))
        inside = np.isin(sample, tup)
        outside = int((~inside).sum())
        U = u[pos][:, ~inside]
        den = U.sum(axis=0)
        P = np.where(den > 0, U / np.where(den > 0, den, 1.0), 1.0 / k)
        A = P.sum(axis=1)
        cond = float(np.sum(1.0 - (P * P).sum(axis=0)))
        wout = max(0.0, 1.0 - mass_in) / outside if outside > 0 else 0.0
        return 1.0 - found_sq - float(np.sum((A * wout) ** 2)) - wout * cond

    def _select_infogain(self, k):
        tuples = self._infogain_tuples(k)
        if not tuples:
            return self._nearest(self._protos(k, self.r), k, 0)
        if len(tuples) == 1:
            return np.array(tuples[0], dtype=np.int64)
        cands = sorted({i for t in tuples for i in t})
        cpos = {c: p for p, c in enumerate(cands)}
        sample, gidx = self._posterior_sample()
        sample = np.array(sample)
        D = ((self.X[sample][None, :, :] - self.X[np.array(cands)][:, None, :]) ** 2).sum(-1)
        D = np.maximum(D, TINY)
        if gidx is None:
            u = relative_weights(D.min(axis=0), D, self.gamma)  # (nc, S)
        else:  # each draw's own gamma
            u = grid_power(gidx[None, :], D.min(axis=0) * (1.0 / D))
        scores = [self._infogain_score(t, u, cpos, sample, k) for t in tuples]
        return np.array(tuples[int(np.argmax(scores))], dtype=np.int64)

    # ------------------------------------------------------------------ posterior
    def posterior(self):
        if self.method == "gamma-ckl":
            assert self.w is not None  # gamma-ckl keeps its weights
            W = self.w.sum()
            return self.w / W if W > 0 else np.zeros(self.n)
        if self.method == "random":
            m = self.n_unshown
            return np.where(self.shown, 0.0, 1.0 / m if m else 0.0)
        L = _cholesky(self._cov)
        Y = self.X - self._mean
        q = np.empty(self.n)
        for i in range(self.n):
            y = np.zeros(self.d)
            for a in range(self.d):
                t = Y[i, a] - L[a, :a] @ y[:a]
                y[a] = t / L[a, a] if L[a, a] > 0 else 0.0
            q[i] = -0.5 * float(y @ y)
        q = np.where(self.shown, -np.inf, q)
        p = np.where(np.isfinite(q), np.exp(q - q[np.isfinite(q)].max()), 0.0)
        return p / p.sum()


def miss_marginal(c):
    """E[miss^c] over the miss grid (the lapse grid, uniform), products by repetition."""
    s = 0.0
    for mu in LAPSE_GRID:
        p = 1.0
        for _ in range(c):
            p *= mu
        s += p
    return s / len(LAPSE_GRID)


def simulate(
    X, targets, max_queries, user_gamma, user_lapse, seed, first_run=0, user_miss=0.0, **config
):
    """The native database-search simulator's loop in NumPy (``simulate/discrete.hpp``).

    Users answer by gamma-CKL with power ``user_gamma`` at the searcher's own store
    positions (a scale-free user), picking at random among the shown with probability
    ``user_lapse``, and missing the target in the strip of guesses with probability
    ``user_miss`` (a draw only then). Search ``r`` is run ``first_run + r`` of a study: its
    searcher is seeded by ``child_seed(seed, SimDiscreteRun, run)``, its user draws from
    ``stream(seed, SimUser, run)``. ``config``: the searcher's keywords. Returns
    ``(n_queries, found)``, one entry per target.
    """
    n_queries = np.zeros(len(targets), dtype=np.int64)
    found = np.zeros(len(targets), dtype=bool)
    for r, target in enumerate(targets):
        run = first_run + r
        s = DiscreteSearcher(X, **config, seed=child_seed(seed, Purpose.SimDiscreteRun, run))
        rng = stream(seed, Purpose.SimUser, run)
        n_queries[r] = max_queries
        for m in range(max_queries):
            q = s.select()
            if len(q) == 0:
                n_queries[r] = m
                break
            if target in q:
                n_queries[r], found[r] = m + 1, True
                break
            strip = s.offer(q)
            if target in strip and not (user_miss > 0 and rng.uniform() < user_miss):
                n_queries[r], found[r] = m + 1, True
                break
            k = len(q)
            if user_lapse > 0 and rng.uniform() < user_lapse:
                pick = min(int(rng.uniform() * k), k - 1)
            else:  # a Luce choice: the first candidate whose cumulative weight passes u
                p = choice_probs(((s.X[q] - s.X[target]) ** 2).sum(axis=1), user_gamma)
                u, pick = rng.uniform() * float(p.sum()), k - 1
                for a in range(k - 1):
                    if u < p[a]:
                        pick = a
                        break
                    u -= p[a]
            s.update(q, pick, strip)
    return n_queries, found
