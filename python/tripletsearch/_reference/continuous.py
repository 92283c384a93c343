"""NumPy twin of the continuous search.

Twin of ``cpp/include/tripletsearch/continuous/`` and ``simulate/continuous.hpp``: the same
regions, hypothesis-test bookkeeping, particle posterior (grid or uniform initialization,
resample-move), decisions, information-gain queries and random streams, the configuration
given by name (``method``: "hypothesis-test", "posterior", "global").
"""

from __future__ import annotations

import math

import numpy as np

from .choice import (
    GAMMA_GRID,
    LAPSE_GRID,
    PairAnswerModel,
    UserModel,
    gamma_log_prior,
    libm_exp,
)
from .resample import systematic_resample
from .rng import Purpose, Rng, child_seed, stream

__all__ = ["ContinuousSearcher", "simulate"]

_K_DRAWS, _K_EVAL = 12, 256
PROPOSAL_SCALE = 1.0  # particles.hpp's kProposalScale


def _seqsum(x):
    return float(np.cumsum(x)[-1]) if len(x) else 0.0


MOVE_WINDOW = 512  # particles.hpp's kMoveWindow


def _log_likelihood(A, x, m, g=-1, li=-1):
    """Log P(answers A | target x, hypothesis (g, li)), the native running product."""
    d = len(x)
    lp, prod = 0.0, 1.0
    if len(A):
        pa = m.prob(g, li, ((A[:, :d] - x) ** 2).sum(1), ((A[:, d : 2 * d] - x) ** 2).sum(1))
        pr = np.where(A[:, 2 * d] > 0.5, pa, 1.0 - pa)
        for q in range(len(A)):
            prod *= float(pr[q])
            if prod < 1e-250:
                lp += math.log(prod) if prod > 0 else -math.inf
                prod = 1.0
    return lp + (math.log(prod) if prod > 0 else -math.inf)


def _cholesky(S):
    """core/linalg.hpp's cholesky: tiny negative pivots clamped, their column zero.

    Each product is subtracted in turn, ((S - p0) - p1) - ..., as the native loop does:
    S - (p0 + p1 + ...) rounds differently from d = 3 on (and Python's sum() of floats is
    compensated from 3.12 on), and one last bit of L moves every proposal after it.
    """
    d = len(S)
    L = np.zeros((d, d))
    for j in range(d):
        s = float(S[j, j])
        for k in range(j):
            s -= L[j, k] * L[j, k]
        piv = math.sqrt(s) if s > 0 else 0.0
        L[j, j] = piv
        for i in range(j + 1, d):
            t = float(S[i, j])
            for k in range(j):
                t -= L[i, k] * L[j, k]
            L[i, j] = t / piv if piv > 0 else 0.0
    return L


class Particles:
    """Particles z (P, d) with log-weights.

    With the user inferred, each particle's hypothesis: gamma index hg and lapse index hl
    (-1: fixed).
    """

    def init(self, lo, hi, target_P, rng, m):
        self.lo, self.hi = np.array(lo, float), np.array(hi, float)
        self.olo, self.ohi = self.lo.copy(), self.hi.copy()
        d = len(lo)
        if d <= 3:
            G = max(1, int(math.floor(target_P ** (1.0 / d) + 1e-9)))
            idx = np.arange(G**d)
            cols = [(idx // G**a) % G for a in range(d)]
            self.z = np.column_stack(
                [self.lo[a] + (cols[a] + 0.5) * (self.hi[a] - self.lo[a]) / G for a in range(d)]
            )
        else:
            self.z = np.array(
                [
                    [self.lo[a] + rng.uniform() * (self.hi[a] - self.lo[a]) for a in range(d)]
                    for _ in range(target_P)
                ]
            )
        self.lw = np.zeros(len(self.z))
        self.ll = np.zeros(len(self.z))
        P = len(self.z)
        self.hg = np.full(P, -1, dtype=np.int64)
        self.hl = np.full(P, -1, dtype=np.int64)
        if m.inferred:
            cdf = np.cumsum([math.exp(gamma_log_prior(j)) for j in range(len(GAMMA_GRID))])
            for p in range(P):
                if m.gamma_auto:
                    u = rng.uniform() * cdf[-1]
                    j = 0
                    while j + 1 < len(GAMMA_GRID) and cdf[j] <= u:
                        j += 1
                    self.hg[p] = j
                if m.lapse_auto:
                    self.hl[p] = min(len(LAPSE_GRID) - 1, int(rng.uniform() * len(LAPSE_GRID)))

    def hypothesis_marginals(self, w):
        """The weighted posterior of gamma and lapse on their grids."""
        pg = np.zeros(len(GAMMA_GRID))
        pl = np.zeros(len(LAPSE_GRID))
        for p in range(self.P):
            if self.hg[p] >= 0:
                pg[self.hg[p]] += w[p]
            if self.hl[p] >= 0:
                pl[self.hl[p]] += w[p]
        return pg, pl

    @property
    def P(self):
        return len(self.z)

    def observe(self, a, b, a_closer, m):
        Da, Db = ((self.z - a) ** 2).sum(1), ((self.z - b) ** 2).sum(1)
        inc = m.log_prob_of(self.hg, self.hl, Da, Db, a_closer)
        self.lw = self.lw + inc
        self.ll = self.ll + inc

    def weights(self):
        mx = np.max(self.lw)
        w = np.where(np.isfinite(self.lw), libm_exp(self.lw - mx), 0.0)  # std::exp's rounding
        s = _seqsum(w)  # sequential sums: the native order, so ties break alike
        w = w / s if s > 0 else np.full(self.P, 1.0 / self.P)
        return w, 1.0 / _seqsum(w * w)

    def mean(self, w):
        return np.cumsum(w[:, None] * self.z, axis=0)[-1]

    def quantiles(self, w, a, qs):
        """Smallest coordinate (in (value, index) order) whose cumulative weight reaches q."""
        order = np.lexsort((np.arange(self.P), self.z[:, a]))
        cum = np.cumsum(w[order])
        vals = self.z[order, a]
        out = []
        for q in qs:
            k = int(np.searchsorted(cum, q - 1e-9, side="left"))  # the native tolerance
            out.append(vals[min(k, self.P - 1)])
        return out

    def median(self, w):
        med, spread = np.empty(self.z.shape[1]), 0.0
        for a in range(self.z.shape[1]):
            q25, q50, q75 = self.quantiles(w, a, (0.25, 0.5, 0.75))
            med[a] = q50
            spread = max(spread, q75 - q25)
        return med, spread

    def focus(self, eps):
        w, _ = self.weights()
        for a in range(self.z.shape[1]):
            qlo, qhi = self.quantiles(w, a, (eps, 1.0 - eps))
            margin = 0.5 * (qhi - qlo)
            self.lo[a] = max(self.olo[a], qlo - margin)
            self.hi[a] = min(self.ohi[a], qhi + margin)
        out = np.any((self.z < self.lo) | (self.z > self.hi), axis=1)
        self.lw = np.where(out, -np.inf, self.lw)

    def resample_move(self, answers, m, stream_seed, sweeps):
        """Resample, then move each particle.

        Per particle: `sweeps` moves of z (even sweeps: the particles' covariance factor times
        PROPOSAL_SCALE / sqrt(d); odd: half the IQR per axis), then with the user inferred one
        move of the hypothesis: gamma or the lapse rate to a neighbouring grid value.
        """
        w, _ = self.weights()
        d = self.z.shape[1]
        mu = self.mean(w)
        S = np.zeros((d, d))
        for p in range(self.P):
            if w[p] == 0.0:
                continue
            for a in range(d):
                for b in range(a + 1):
                    S[a, b] += w[p] * (self.z[p, a] - mu[a]) * (self.z[p, b] - mu[b])
        for a in range(d):
            S[:a, a] = S[a, :a]
            fl = 1e-15 * (self.hi[a] - self.lo[a])
            S[a, a] = max(S[a, a], fl * fl)
        L = _cholesky(S) * (PROPOSAL_SCALE / math.sqrt(d))
        step = np.empty(d)
        for a in range(d):
            q25, q75 = self.quantiles(w, a, (0.25, 0.75))
            step[a] = max(0.5 * (q75 - q25) / 1.349, 1e-15 * (self.hi[a] - self.lo[a]))
        idx = systematic_resample(w, 1.0, self.P, Rng(stream_seed, self.P).uniform())
        self.z = self.z[idx].copy()
        self.ll = self.ll[idx].copy()
        self.hg, self.hl = self.hg[idx].copy(), self.hl[idx].copy()
        self.lw = np.zeros(self.P)
        A = np.array(answers).reshape(-1, 2 * d + 1) if len(answers) else np.zeros((0, 2 * d + 1))
        A = A[max(0, len(A) - MOVE_WINDOW) :]  # the moves weigh the last MOVE_WINDOW answers
        windowed = len(answers) > MOVE_WINDOW * (2 * d + 1)
        for p in range(self.P):
            rng = Rng(stream_seed, p)
            g0, l0 = int(self.hg[p]), int(self.hl[p])
            cur = _log_likelihood(A, self.z[p], m, g0, l0) if windowed else self.ll[p]
            for s in range(sweeps):
                eps = np.array([rng.normal() for _ in range(d)])
                prop = self.z[p] + (step * eps if s & 1 else _lower_times(L, eps))
                u = rng.uniform()
                if np.any(prop < self.lo) or np.any(prop > self.hi):
                    continue
                lp = _log_likelihood(A, prop, m, g0, l0)
                if u < math.exp(min(lp - cur, 700.0)):
                    self.z[p] = prop
                    cur = lp
            if m.inferred:
                g1, l1 = g0, l0
                # one move: gamma or the lapse rate (both inferred: probability 1/2 each)
                move_gamma = m.gamma_auto and (not m.lapse_auto or rng.uniform() < 0.5)
                direction = -1 if rng.uniform() < 0.5 else 1
                if move_gamma:
                    g1 += direction
                else:
                    l1 += direction
                u = rng.uniform()
                ok_g = not m.gamma_auto or 0 <= g1 < len(GAMMA_GRID)
                ok_l = not m.lapse_auto or 0 <= l1 < len(LAPSE_GRID)
                if ok_g and ok_l:
                    lp = _log_likelihood(A, self.z[p], m, g1, l1)
                    prior = gamma_log_prior(g1) - gamma_log_prior(g0) if m.gamma_auto else 0.0
                    if u < math.exp(min(lp - cur + prior, 700.0)):
                        self.hg[p], self.hl[p] = g1, l1
                        cur = lp
            if not windowed:
                self.ll[p] = cur


def _lower_times(L, eps):
    """L eps for lower-triangular L, each row summed in order (the native loop)."""
    out = np.empty(len(eps))
    for a in range(len(eps)):
        s = 0.0
        for b in range(a + 1):
            s += L[a, b] * eps[b]
        out[a] = s
    return out


def resolved_particles(method, dim, particles):
    """The particle count of a configuration (``continuous/config.hpp``)."""
    if particles > 0:
        return particles
    if method == "posterior":
        return 4096 if dim >= 4 else 2048
    return 1024 if method == "global" else 0


class ContinuousSearcher:
    """The interface of ``tripletsearch._core.ContinuousSearcher``.

    The configuration's fields as keywords (``continuous/config.hpp``).
    """

    def __init__(
        self,
        *,
        dim=2,
        gamma=3.0,
        low=-1.0,
        high=1.0,
        method="global",
        alpha=0.8,
        lapse=0.0,
        stage_cap=0,
        particles=0,
        mh_sweeps=2,
        resample_ess=0.5,
        cells_per_axis=0,
        n_obs=0,
        tau=0,
        gamma_auto=False,
        lapse_auto=False,
        seed=0,
    ):
        d = dim
        # the unit frame: x = origin + scale x' (scale: the largest half-width), Omega the
        # box [-r, r] inside the bounding cube [-1, 1]^d where the regions start
        low = np.broadcast_to(np.asarray(low, dtype=float), (d,))
        high = np.broadcast_to(np.asarray(high, dtype=float), (d,))
        self.origin, half = 0.5 * low + 0.5 * high, 0.5 * high - 0.5 * low
        self.scale = float(np.max(half))
        self.d, self.gamma, self.low, self.high = d, gamma, -half / self.scale, half / self.scale
        self.method, self.alpha, self.lapse = method, alpha, lapse
        self.stage_cap = stage_cap if stage_cap > 0 else 30 * d
        self.n_particles = resolved_particles(method, d, particles)
        self.N, self.n_obs, self.tau, self.seed = cells_per_axis, n_obs, tau, seed
        self.mh_sweeps, self.resample_ess = mh_sweeps, resample_ess
        self.anchor, self.anchor_spread = None, 0.0
        self.model = UserModel(gamma, lapse, gamma_auto, lapse_auto)
        self.center = np.zeros(d)
        self.edge, self.depth = 2.0, 0
        self.n_queries = self.n_stages = self.stage_queries = 0
        self.pending = False
        if method == "hypothesis-test":
            self.n_cells = cells_per_axis**d
            self._begin_hyptest()
        else:
            self.n_cells = 0
            self._begin_particles()

    # ------------------------------------------------------------------ common
    def estimate(self):
        """The point estimate in the input frame."""
        return self.origin + self.scale * self.estimate_unit()

    def ask(self):
        """The pending query in the input frame."""
        a, b = self.ask_unit()
        return self.origin + self.scale * a, self.origin + self.scale * b

    def user_posterior(self):
        """(gamma grid probabilities, lapse grid probabilities), or None (fixed model)."""
        if self.method == "hypothesis-test" or not self.model.inferred:
            return None
        w, _ = self.parts.weights()
        return self.parts.hypothesis_marginals(w)

    def estimate_unit(self):
        if self.method == "hypothesis-test":
            return self.center.copy()
        w, _ = self.parts.weights()
        med, spread = self.parts.median(w)
        if self.method == "posterior" and self.anchor is not None and self.anchor_spread < spread:
            return self.anchor.copy()
        return med

    def ask_unit(self):
        if not self.pending:
            if self.method == "hypothesis-test":
                self.qa, self.qb = self._cell_query(self.cell)
            else:
                self._select()
            self.pending = True
        return self.qa.copy(), self.qb.copy()

    def observe(self, a, b, a_closer):
        """The answer to a query (a, b) in the input frame asked elsewhere."""
        if self.method == "hypothesis-test":
            raise ValueError("method: the hypothesis test only records its own queries")
        self.qa = (np.asarray(a, float) - self.origin) / self.scale
        self.qb = (np.asarray(b, float) - self.origin) / self.scale
        self.pending = True
        return self.tell(a_closer)

    def tell(self, a_closer):
        if not self.pending:
            raise RuntimeError("tell before ask")
        self.pending = False
        self.n_queries += 1
        self.stage_queries += 1
        if self.method == "hypothesis-test":
            self.wins += int(a_closer)
            self.rep += 1
            if self.rep == self.n_obs:
                self._finish_cell(self.wins >= self.tau)
                self.cell += 1
                if self.cell == self.n_cells:
                    self._decide_hyptest()
                    return True
            return False
        self.answers += list(self.qa) + list(self.qb) + [1.0 if a_closer else 0.0]
        self.parts.observe(self.qa, self.qb, a_closer, self.model)
        w, ess = self.parts.weights()
        if self.method == "posterior":
            if self._decide_posterior(w):
                return True
            if self.stage_queries >= self.stage_cap:
                self._backtrack()
                return True
        if ess < self.resample_ess * self.parts.P:
            stream_seed = child_seed(self.seed, Purpose.ResampleMove, self.n_queries)
            if self.method == "global":
                self.parts.focus(1e-3)
            self.parts.resample_move(self.answers, self.model, stream_seed, self.mh_sweeps)
        if self.method == "global":
            w, _ = self.parts.weights()
            self.center, spread = self.parts.median(w)
            L, depth = 2.0, 0  # the edge of Omega's bounding cube
            while depth < 1000 and L * 2.0 ** -(depth + 1) >= 4.0 * spread:
                depth += 1
            self.depth, self.edge = depth, L * 2.0**-depth
            self.n_stages += 1
        return self.method == "global"

    # ------------------------------------------------------------------ hypothesis test
    def _begin_hyptest(self):
        self.cell = self.rep = self.wins = 0
        self.any = False
        self.box_lo = np.full(self.d, np.iinfo(np.int64).max)
        self.box_hi = np.full(self.d, -1)
        self.stage_queries = 0

    def _cell_index(self, k):
        return np.array([(k // self.N**a) % self.N for a in range(self.d)])

    def _cell_query(self, k):
        rc = 1.5 * self.edge / self.N
        a = self.center - 0.75 * self.edge + (self._cell_index(k) + 0.5) * rc
        b = a.copy()
        b[0] += 0.5 * rc * (1.0 + self.d)
        return a, b

    def _finish_cell(self, accepted):
        if accepted:
            idx = self._cell_index(self.cell)
            self.any = True
            self.box_lo = np.minimum(self.box_lo, idx)
            self.box_hi = np.maximum(self.box_hi, idx)
        self.rep = self.wins = 0

    def _decide_hyptest(self):
        proceed = self.any
        m = np.full(self.d, 2)
        rc = 1.5 / self.N
        for t in range(self.d):
            if not proceed:
                break
            L, H = -0.75 + self.box_lo[t] * rc, -0.75 + (self.box_hi[t] + 1) * rc
            if not (L < 0.5 and H > -0.5):
                proceed = False
                break
            a = max(int(math.ceil(4 * H + 1 - 1e-9)), 0)
            b = min(int(math.floor(4 * L + 3 + 1e-9)), 4)
            if a > b:
                proceed = False
                break
            want = 2 * (L + H) + 2
            best = a
            for c in range(a, b + 1):
                if abs(c - want) < abs(best - want):
                    best = c
            m[t] = best
        if proceed:
            self.center = self.center + (m - 2) * 0.25 * self.edge
            self.edge, self.depth = 0.5 * self.edge, self.depth + 1
        else:
            self.edge, self.depth = 4.0 * self.edge, self.depth - 2
        self.n_stages += 1
        self._begin_hyptest()

    # ------------------------------------------------------------------ particles
    def _begin_particles(self):
        if self.method == "global":
            lo, hi = self.low.copy(), self.high.copy()
        else:
            lo = np.maximum(self.low, self.center - 2 * self.edge)
            hi = np.minimum(self.high, self.center + 2 * self.edge)
            bad = ~(lo < hi)
            lo = np.where(bad, self.center - 2 * self.edge, lo)
            hi = np.where(bad, self.center + 2 * self.edge, hi)
        rng = stream(self.seed, Purpose.ParticleInit, self.n_stages)
        self.parts = Particles()
        self.parts.init(lo, hi, self.n_particles, rng, self.model)
        self.answers = []
        self.stage_queries = 0

    def _backtrack(self):
        self.anchor = None
        self.edge, self.depth = 4.0 * self.edge, self.depth - 2
        self.n_stages += 1
        self._begin_particles()

    def _decide_posterior(self, w):
        e, d = self.edge, self.d
        q = 0.25 * e
        off = np.floor((self.parts.z - (self.center - 2 * e)) / q).astype(np.int64)
        off = np.clip(off, 0, 15)
        keys = np.zeros(len(off), dtype=np.int64)
        for a in range(d - 1, -1, -1):
            keys = keys * 16 + off[:, a]
        cells: dict[int, float] = {}
        for k, wi in sorted((k, wi) for k, wi in zip(keys.tolist(), w.tolist()) if wi != 0.0):
            cells[k] = cells.get(k, 0.0) + wi
        need = self.alpha / 2**d
        heavy = sorted(k for k, v in cells.items() if v >= need)
        # the key of cell (c_0 .. c_{d-1}) + bits (b_0 ..) is key + sum_a b_a 16^a (no carry:
        # c_a + b_a <= 15): a box's cells, and a cell's boxes, by these offsets
        bits = [[(sub >> a) & 1 for a in range(d)] for sub in range(2**d)]
        offset = [sum(b * 16**a for a, b in enumerate(bs)) for bs in bits]
        masses: dict[int, float] = {}  # a box's mass, summed once (boxes share cells)
        best_mass, best_box = -1.0, -1
        for h in heavy:
            cell = [(h // 16**a) % 16 for a in range(d)]
            for corner in range(2**d):
                if not all(0 <= c - b <= 14 for c, b in zip(cell, bits[corner])):
                    continue
                bkey = h - offset[corner]
                if bkey not in masses:
                    mass = 0.0
                    for o in offset:  # in the order of the sub-cells, as the core sums
                        mass += cells.get(bkey + o, 0.0)
                    masses[bkey] = mass
                mass = masses[bkey]
                if mass > best_mass or (mass == best_mass and bkey < best_box):
                    best_mass, best_box = mass, bkey
        if not best_mass > self.alpha:
            return False
        b = np.array([(best_box // 16**a) % 16 for a in range(d)])
        if not np.all((b >= 5) & (b <= 9)):
            self._backtrack()
            return True
        self.anchor, self.anchor_spread = self.parts.median(w)
        self.center = self.center + (b - 7) * 0.25 * e
        self.edge, self.depth = 0.5 * e, self.depth + 1
        for _ in range(8):  # descend while a child holds mass > alpha
            mass, m = self._heaviest_child(w)
            if not mass > self.alpha:
                break
            self.center = self.center + (m - 2) * 0.25 * self.edge
            self.edge, self.depth = 0.5 * self.edge, self.depth + 1
        self.n_stages += 1
        self._begin_particles()
        return True

    def _heaviest_child(self, w):
        q = 0.25 * self.edge
        t = (self.parts.z - self.center) / q
        mlo = np.maximum(0, np.ceil(t + 1.0)).astype(int)
        mhi = np.minimum(4, np.floor(t + 3.0)).astype(int)
        pairs = []
        for p in range(self.parts.P):
            if w[p] == 0.0 or np.any(mhi[p] < mlo[p]):
                continue
            ranges = [range(mlo[p, a], mhi[p, a] + 1) for a in range(self.d)]
            nm = [len(r) for r in ranges]
            for c in range(int(np.prod(nm))):
                rr, key = c, 0
                digits = []
                for a in range(self.d):
                    digits.append(mlo[p, a] + rr % nm[a])
                    rr //= nm[a]
                for a in range(self.d - 1, -1, -1):
                    key = key * 5 + digits[a]
                pairs.append((key, w[p]))
        if not pairs:
            return 0.0, np.full(self.d, 2)
        pairs.sort()
        best, best_key, cur = -1.0, 0, 0.0
        for k, (key, wi) in enumerate(pairs):
            cur += wi
            if k + 1 == len(pairs) or pairs[k + 1][0] != key:
                if cur > best:
                    best, best_key = cur, key
                cur = 0.0
        return best, np.array([(best_key // 5**a) % 5 for a in range(self.d)])

    def _select(self):
        w, _ = self.parts.weights()
        mu = self.parts.mean(w)
        rng = stream(self.seed, Purpose.QueryDraws, self.n_queries)
        cand = systematic_resample(w, 1.0, _K_DRAWS, rng.uniform())
        ev = systematic_resample(w, 1.0, _K_EVAL, rng.uniform())
        mirrors = np.clip(2 * mu - self.parts.z[cand], self.low, self.high)  # inside Omega
        pts = np.vstack([self.parts.z[cand], mirrors])
        pairs = [(i, _K_DRAWS + i) for i in range(_K_DRAWS)]
        pairs += [(i, j) for i in range(_K_DRAWS) for j in range(i + 1, _K_DRAWS)]
        Z = self.parts.z[ev]
        hg, hl = self.parts.hg[ev], self.parts.hl[ev]  # each draw's hypothesis
        D = ((pts[:, None, :] - Z[None, :, :]) ** 2).sum(-1)
        best, arg = -1.0, 0
        for t, (i, j) in enumerate(pairs):
            p = self.model.prob(hg, hl, D[i], D[j])
            var = _seqsum(p * p) / _K_EVAL - (_seqsum(p) / _K_EVAL) ** 2
            if var > best:
                best, arg = var, t
        self.qa, self.qb = pts[pairs[arg][0]].copy(), pts[pairs[arg][1]].copy()
        if np.sum((self.qa - self.qb) ** 2) == 0:  # distinct, inside the box
            step = 1e-9 * self.edge
            self.qb[0] += step if self.qb[0] + step <= self.high[0] else -step


def simulate(runs, max_queries, user_gamma, user_lapse, seed, first_run=0, **config):
    """The native simulator's loop (particle methods, max_queries) in NumPy.

    Returns the errors array (runs, max_queries + 1): runs ``first_run`` to
    ``first_run + runs - 1`` of a study (their streams keyed by that global index).
    ``config``: the searcher's keywords.
    """
    user = PairAnswerModel(user_gamma, user_lapse)
    errors = np.full((runs, max_queries + 1), np.nan)
    for r in range(runs):  # the user in the searcher's unit frame, errors in the input's
        run = first_run + r
        rng = stream(seed, Purpose.SimUser, run)
        s = ContinuousSearcher(**config, seed=child_seed(seed, Purpose.SimContinuousRun, run))
        t = np.array([lo + rng.uniform() * (hi - lo) for lo, hi in zip(s.low, s.high)])
        errors[r, 0] = s.scale * np.linalg.norm(s.estimate_unit() - t)
        while s.n_queries < max_queries:
            a, b = s.ask_unit()
            p = float(user.prob(np.sum((a - t) ** 2), np.sum((b - t) ** 2)))
            s.tell(rng.uniform() < p)
            errors[r, s.n_queries] = s.scale * np.linalg.norm(s.estimate_unit() - t)
    return errors
