"""How a :class:`~tripletsearch.TripletSampler` chooses its queries: one class per method.

Every method implements :class:`QueryMethod` (``ask_one``, ``told``, ``installed``, its
state) and is registered in :data:`METHODS` under its name; the sampler looks the name up
once and never branches on it. The adaptive methods score candidate pairs with the native
kernels of ``collect/information.hpp`` (:class:`HeadScorer`, in ``_scorer``).
"""

from __future__ import annotations

import functools
import math
from typing import Any, ClassVar, Protocol

import numpy as np

from .._validation import derived_seed
from ..embedding import Embedding
from ._active_screens import ask_odd, ask_rank, odd_views, screen_log_weights
from ._scorer import HeadScorer
from ._screens import ScreenKind

__all__ = ["QueryMethod", "RandomQueries", "AdaptiveRoundRobin", "ActiveQueries", "METHODS"]


class SamplerView(Protocol):
    """What a method reads of its :class:`~tripletsearch.TripletSampler`: public, read-only.

    A protocol (this module imports no sampler: the sampler imports the methods).
    """

    @property
    def n_items(self) -> int: ...
    @property
    def dim(self) -> int: ...
    @property
    def screen(self) -> ScreenKind: ...
    @property
    def n_answers_(self) -> int: ...
    @property
    def embedding_(self) -> Embedding | None: ...
    @property
    def rng(self) -> np.random.Generator: ...
    @property
    def seed(self) -> int: ...
    @property
    def told_rows(self) -> np.ndarray: ...
    @property
    def n_installs_(self) -> int: ...
    @property
    def n_threads(self) -> int: ...


# purposes of the seeds derived from the sampler's (derived_seed(seed, purpose, ...))
PARTICLES_SEED = 2


def random_triple(rng: np.random.Generator, n: int) -> tuple[int, int, int]:
    """(h, a, b): three distinct items of range(n), uniform over ordered triples."""
    h = int(rng.integers(n))
    a = int(rng.integers(n - 1))
    a += a >= h
    lo, hi = min(h, a), max(h, a)
    b = int(rng.integers(n - 2))
    b += b >= lo
    b += b >= hi
    return h, a, b


def random_triples(rng: np.random.Generator, n: int, m: int) -> np.ndarray:
    """Draw m rows (h, a, b) of three distinct items of range(n), uniform over ordered triples."""
    h = rng.integers(n, size=m)
    a = rng.integers(n - 1, size=m)
    a += a >= h
    lo, hi = np.minimum(h, a), np.maximum(h, a)
    b = rng.integers(n - 2, size=m)
    b += b >= lo
    b += b >= hi
    return np.stack([h, a, b], axis=1).astype(np.int64)


def others(rng: np.random.Generator, n: int, exclude: int, k: int) -> np.ndarray:
    """Draw k distinct items of range(n) other than ``exclude``, in random order."""
    pick = rng.choice(n - 1, size=k, replace=False)
    return pick + (pick >= exclude)


def extend_query(rng: np.random.Generator, n: int, query: list[int], k: int) -> np.ndarray:
    """``query`` (a head and some candidates) completed with random other items to k candidates."""
    head, chosen = query[0], list(dict.fromkeys(query[1:]))[:k]
    if len(chosen) < k:
        free = np.setdiff1d(np.arange(n), [head, *chosen])
        chosen += [int(i) for i in rng.permutation(free)[: k - len(chosen)]]
    return np.array([head, *chosen], dtype=np.int64)


def scorer_of(sampler: SamplerView, lapse: float) -> HeadScorer:
    """The scorer of the sampler's installed embedding."""
    emb = sampler.embedding_
    assert emb is not None
    X = np.ascontiguousarray(emb.embedding_, dtype=np.float64)
    return HeadScorer(emb.oracle_.spec(sampler.dim), X, lapse, sampler.n_threads)


class HeadIndex:
    """Each head's (closer, farther) answers in the order told, without a scan of all rows.

    Built once per installed embedding (a stable sort of the rows so far by head); a
    head's answers are its slice of them followed by its rows told since: the rows naming
    it as their head, in the order told.
    """

    def __init__(self, rows: np.ndarray, n: int) -> None:
        order = np.argsort(rows[:, 0], kind="stable")
        self.n_rows = len(rows)
        self.by_head = np.ascontiguousarray(rows[order, 1:])
        self.start = np.searchsorted(rows[order, 0], np.arange(n + 1))

    def answers(self, rows: np.ndarray, head: int) -> np.ndarray:
        """The head's answers among ``rows`` (the sampler's rows: those indexed, then more)."""
        mine = self.by_head[self.start[head] : self.start[head + 1]]
        later = rows[self.n_rows :]
        if not len(later):
            return mine
        later = later[later[:, 0] == head, 1:]
        return np.ascontiguousarray(np.concatenate([mine, later])) if len(later) else mine


@functools.lru_cache(maxsize=64)
def upper_pairs(L: int) -> tuple[np.ndarray, np.ndarray]:
    """The index pairs (i < j) of L things, in row order (cached)."""
    i, j = np.triu_indices(L, 1)
    i.flags.writeable = j.flags.writeable = False
    return i, j


@functools.lru_cache(maxsize=64)
def pair_table(L: int) -> np.ndarray:
    """The index pairs (i < j) of L things as rows (P, 2), in row order (cached)."""
    t = np.stack(upper_pairs(L), axis=1)
    t.flags.writeable = False
    return t


def ranked_query(
    rng: np.random.Generator, n: int, head: int, pairs: np.ndarray, info: Any, k: int
) -> np.ndarray:
    """The query of the best pair (first among equals), its sides in random order.

    k > 2: the items of the best pairs in order of information, completed at random.
    """
    if k == 2:
        a, b = (int(v) for v in pairs[int(np.argmax(info))])
        return np.array([head, a, b] if rng.random() < 0.5 else [head, b, a], dtype=np.int64)
    order = np.argsort(-np.asarray(info), kind="stable")
    items = list(dict.fromkeys(int(v) for v in pairs[order].ravel()))[:k]
    return extend_query(rng, n, [head, *(int(i) for i in rng.permutation(items))], k)


class QueryMethod:
    """A way of choosing queries; subclasses set ``name`` and implement ``ask_one``.

    A method keeps its own state; the sampler owns the answers, the embedding and the
    random generator, and calls ``told`` after new answers and ``installed`` after a new
    embedding. What a method reads of its sampler is public and read-only
    (:class:`SamplerView`): ``n_items``, ``dim``, ``screen``, ``n_answers_``,
    ``embedding_``, ``rng`` (every random draw of the queries, in order), ``seed``,
    ``told_rows`` (a view of the rows told), ``n_installs_`` and ``n_threads``.
    """

    name: ClassVar[str] = ""

    def __init__(self, sampler: SamplerView) -> None:
        self.n = sampler.n_items

    def min_answers(self) -> int:
        """The fewest answers worth fitting an embedding to."""
        return 0

    def random_until(self) -> int | None:
        """The answers before the queries stop being random (None: random for ever)."""
        return None

    def ask_one(self, sampler: SamplerView, k: int) -> np.ndarray:  # pragma: no cover
        """One query: a head and k candidates, int64 (k + 1,)."""
        raise NotImplementedError

    def told(self, sampler: SamplerView, rows: np.ndarray) -> None:
        """New answers (already in the sampler's)."""

    def installed(self, sampler: SamplerView) -> None:
        """A new embedding was installed."""

    def state(self) -> dict[str, Any]:
        """The method's JSON-safe state."""
        return {}

    def restore(self, state: dict[str, Any], sampler: SamplerView) -> None:
        """Set the state written by :meth:`state` (checked by the caller's handler)."""


class RandomQueries(QueryMethod):
    """Uniform queries: every unordered (head, {a, b}) of distinct items equally likely.

    No query is asked twice before all ``n (n - 1) (n - 2) / 2`` have been (rejection
    against the set of asked queries, cleared when it is full); the sides are in random
    order. With ``k > 2`` candidates: a uniform head and k distinct other items (the
    no-repeat rule is for pairs). Never needs an embedding.
    """

    name = "random"

    def __init__(self, sampler: SamplerView) -> None:
        super().__init__(sampler)
        self.asked: set[int] = set()
        self.total = self.n * (self.n - 1) * (self.n - 2) // 2

    def key(self, h: int, a: int, b: int) -> int:
        lo, hi = min(a, b), max(a, b)
        return (h * self.n + lo) * self.n + hi

    def ask_one(self, sampler: SamplerView, k: int) -> np.ndarray:
        rng = sampler.rng
        if sampler.screen.trial == "odd-one-out":  # three items: a random (h, {a, b})
            k = 2
        if k != 2:
            h = int(rng.integers(self.n))
            return np.array([h, *others(rng, self.n, h, k)], dtype=np.int64)
        if len(self.asked) >= self.total:
            self.asked.clear()
        while True:
            h, a, b = random_triple(rng, self.n)
            key = self.key(h, a, b)
            if key not in self.asked:
                self.asked.add(key)
                return np.array([h, a, b], dtype=np.int64)

    def state(self) -> dict[str, Any]:
        return {"asked": sorted(self.asked)}

    def restore(self, state: dict[str, Any], sampler: SamplerView) -> None:
        asked = [int(v) for v in state["asked"]]
        if any(not 0 <= v < self.n**3 for v in asked):
            raise ValueError("the asked queries are out of range")
        self.asked = set(asked)


class AdaptiveRoundRobin(QueryMethod):
    """salmon's adaptive round robin (ARR), as published (salmon v1.0.3 and HEAD 3e92c9c).

    The first ``R n`` answers (R = 1) answer uniformly random queries. Then rounds: a round
    draws ``max(4096, 20 n)`` uniformly random queries (h, a, b) (sides sorted, duplicates
    dropped), scores each by the information of its answer about h's position -- the
    posterior of h supported on the n items' embedded positions, from all of h's answers
    under the sampler's model (no lapse) -- keeps the best query of each head (n_top = 1),
    and asks them in random order (a round robin over the heads in random order), sides
    in random order. A new round starts when the round's queries are used up or a new
    embedding is installed; without an embedding the queries are random.

    Salmon's configuration is ``TripletSampler(n, 2, method="arr", model="t-ste")``
    (t-STE, alpha = 1, d = 2). Differences, all from running sequentially without a
    server: salmon's posterior is incremental and lags the model by one refit (each answer
    weighed once with the embedding of its arrival), this one is recomputed from the
    current embedding (as NEXT does); salmon's round is whatever one refit's time allows
    (4096 to 2e6 scored queries), this one a fixed count; salmon serves random queries when
    its pool runs out, this one starts a new round. Salmon's score (the expected posterior
    entropy) equals this information up to a constant per head. ``k > 2``: the round's
    pair completed by random items (salmon asks triplets only).
    """

    name = "arr"
    BURN_IN_PER_ITEM = 1  # R
    MIN_ROUND = 4096  # random queries scored per round: max(MIN_ROUND, ROUND_PER_ITEM n)
    ROUND_PER_ITEM = 20
    LAPSE = 0.0
    MAX_TABLE = 4_000_000  # entries (32 MB) of a round's table of every item's log-odds terms

    def __init__(self, sampler: SamplerView) -> None:
        super().__init__(sampler)
        if not sampler.screen.is_triplet:
            raise ValueError(
                f"method: 'arr' asks triplets only (salmon's); trial={sampler.screen.trial!r} "
                "needs method='active' or 'random'"
            )
        self.batch: list[list[int]] = []
        self.position = 0
        self.round_embedding = -1  # the install count the round was scored with

    def min_answers(self) -> int:
        return max(1, math.ceil(self.BURN_IN_PER_ITEM * self.n / 10))

    def random_until(self) -> int | None:
        return self.BURN_IN_PER_ITEM * self.n

    def ask_one(self, sampler: SamplerView, k: int) -> np.ndarray:
        rng = sampler.rng
        if sampler.n_answers_ < self.BURN_IN_PER_ITEM * self.n or sampler.embedding_ is None:
            return extend_query(rng, self.n, list(random_triple(rng, self.n)), k)
        if self.position >= len(self.batch) or self.round_embedding != sampler.n_installs_:
            self.new_round(sampler)
        h, a, b = self.batch[self.position]
        self.position += 1
        query = [h, a, b] if rng.random() < 0.5 else [h, b, a]
        return extend_query(rng, self.n, query, k)

    def candidates(self, rng: np.random.Generator) -> np.ndarray:
        """The round's random queries (h, a, b), a < b, distinct rows, sorted by head."""
        m = max(self.MIN_ROUND, self.ROUND_PER_ITEM * self.n)
        Q = random_triples(rng, self.n, m)
        Q[:, 1:] = np.sort(Q[:, 1:], axis=1)
        return np.unique(Q, axis=0)

    def new_round(self, sampler: SamplerView) -> None:
        """Score a round of random queries; keep the best per head, in random order."""
        rng = sampler.rng
        Q = self.candidates(rng)
        scorer = scorer_of(sampler, self.LAPSE)
        X = scorer.X
        prior = np.zeros(self.n)
        rows = sampler.told_rows
        by_head = HeadIndex(rows, self.n)
        starts = np.searchsorted(Q[:, 0], np.arange(self.n + 1))
        # every item's log-odds terms at once when they fit, else each head's candidates'
        everyone = scorer.table(X, np.arange(self.n)) if self.n**2 <= self.MAX_TABLE else None
        batch = []
        for h in range(self.n):
            cand = Q[starts[h] : starts[h + 1], 1:]
            if not len(cand):
                continue
            mine = by_head.answers(rows, h)
            if everyone is None:
                log_w = scorer.log_weights(X, mine, prior)
                items, pairs = np.unique(cand, return_inverse=True)
                pairs = np.ascontiguousarray(pairs.reshape(-1, 2), dtype=np.int64)
                info = scorer.information(scorer.table(X, items), log_w, pairs)
            else:  # the table's rows are the items: the answers' log-odds from it
                log_w = scorer.table_log_weights(everyone, mine, prior)
                info = scorer.information(everyone, log_w, np.ascontiguousarray(cand))
            batch.append([h, *(int(v) for v in cand[int(np.argmax(info))])])
        self.batch = [batch[i] for i in rng.permutation(len(batch))]
        self.position = 0
        self.round_embedding = sampler.n_installs_

    def state(self) -> dict[str, Any]:
        return {
            "batch": self.batch,
            "position": self.position,
            "round_embedding": self.round_embedding,
        }

    def restore(self, state: dict[str, Any], sampler: SamplerView) -> None:
        batch = np.asarray(state["batch"], dtype=np.int64).reshape(-1, 3)
        if batch.size and (batch.min() < 0 or batch.max() >= self.n):
            raise ValueError("the round's queries are out of range")
        self.batch = batch.tolist()
        self.position = int(state["position"])
        self.round_embedding = int(state["round_embedding"])


class ActiveQueries(QueryMethod):
    """tripletsearch's active queries: each head's next pair by its information about the head.

    1. Anchors: ``L0 = min(n, max(MIN_ANCHORS, ANCHORS_PER_DIM * dim))`` items drawn at
       random, every item when ``n <= ALL_ANCHORS * L0`` (a few items: anchoring all of
       them costs a short burn-in); a burn-in of ``ceil(L0 * dim * log2(L0))`` uniformly
       random queries among the anchors only (and until an embedding is installed).
    2. Then the head is the item asked least often as a head so far (the burn-in's asks
       counted: the other items catch up with the anchors first), ties in a shuffled order
       of all items (shuffled again every n asks). The head's possible positions are
       ``N_PARTICLES`` particles drawn once per installed embedding from a Gaussian with
       the mean and covariance of the anchors' embedded positions; their log weights come
       from the head's answers under the fitted model mixed with a lapse ``LAPSE`` (kept
       per head, updated on ``tell``, rebuilt when first needed after a refit, from the
       anchors' log-odds table). Candidates: every pair of anchors when there are at most
       ``N_CANDIDATES``, else ``N_CANDIDATES`` pairs of anchors: every pair of the
       ``N_NEAR`` anchors nearest to the head's weighted particle mean (at most half of
       them, drawn at random when there are more), the rest drawn uniformly. The pair with
       the largest information (the first among equals) among the pairs asked of this
       head least often so far is asked, its sides in random order.
    3. An item becomes an anchor once it has been asked as a head ``PROMOTE_PER_DIM * dim``
       times, at the next installed embedding.

    Few anchors (20, or 4 per dimension above five) and heads asked least often first: on
    300 points in d = 5 (people by gamma-CKL, gamma 3, 5 % lapses) the burn-in ends after
    433 answers, and the other items catch up with the anchors' asks before an anchor is
    asked again; 10 anchors per dimension and a plain round robin over the heads trailed
    random for the first 1,500 answers (a 1,411-answer burn-in). Fewer than 20 anchors
    (12 for the colours in d = 3) left some runs with a poor frame: a wide spread of
    accuracy between runs and a lower mean from 2,000 answers on.

    ``k > 2`` candidates: the items of the best pairs in order of information (each once),
    in random order (not the information of the k-way answer).

    The hedge where evidence is thin, for people's noise: a pair already asked of a head
    waits until every candidate pair was asked of it as often (the model takes a second
    answer to the same query as independent evidence; people who disagree about it
    disagree again), and a few items are all anchors. Replaying the NEXT alien eggs'
    recorded answers (30 items, ``bench/test_bench_replay.py``, 40 seeds), the plain
    information rule reached 78.0 / 79.1 / 80.1 % held-out at 400 / 800 / 1,600 answers
    against random's 80.1 / 82.1 / 83.2 % (it kept asking the pairs it was least sure
    of); with the hedge 80.7 / 82.8 / 83.4 %. A random share of queries (15 or 30 %)
    gained less and costs the simulated people's answers at every budget.
    """

    name = "active"
    MIN_ANCHORS = 20
    ANCHORS_PER_DIM = 4
    N_PARTICLES = 256
    N_CANDIDATES = 600
    N_NEAR = 24
    PROMOTE_PER_DIM = 4
    ALL_ANCHORS = 1.5  # n at most this many times L0: every item an anchor
    # The fitted model already absorbs people's noise (gamma is fitted to their answers: 1.2
    # for gamma-3 people with 5 % lapses); a lapse on top would count it twice. > 0 costs a
    # second logarithm per pair and particle in the scoring.
    LAPSE = 0.0

    def __init__(self, sampler: SamplerView) -> None:
        super().__init__(sampler)
        self.dim = sampler.dim
        L0 = min(self.n, max(self.MIN_ANCHORS, self.ANCHORS_PER_DIM * self.dim))
        if self.n <= self.ALL_ANCHORS * L0:
            L0 = self.n
        self.anchors = np.sort(sampler.rng.choice(self.n, size=L0, replace=False))
        self.screen = sampler.screen
        # the burn-in's triplets in screens that tell as many bits at most
        self.burn_in = self.screen.burn_in(math.ceil(L0 * self.dim * math.log2(L0)))
        if not self.screen.is_triplet:  # a screen shows many candidates: every item one
            self.anchors = np.arange(self.n, dtype=np.int64)
        self.head_asks = np.zeros(self.n, dtype=np.int64)  # asks as a head, burn-in's included
        # head -> {pair key min * n + max: times asked of the head}, burn-in's included
        self.pair_asks: dict[int, dict[int, int]] = {}
        self.order = np.empty(0, dtype=np.int64)  # the tie-breaking order of the heads
        self.position = 0
        self.particles: np.ndarray | None = None
        self.reset_derived()

    def reset_derived(self) -> None:
        """Drop what is computed from the embedding (rebuilt when first needed)."""
        self.cache: dict[int, np.ndarray] = {}  # head -> its particles' log weights
        self.scorer: HeadScorer | None = None
        self.table = np.empty((0, 0))  # the anchors' log-odds terms (anchors x particles)
        self.row_of = np.empty(0, dtype=np.int64)  # item -> its row of the table (-1)
        self.anchor_X = np.empty((0, 0))  # the anchors' embedded positions
        self.answer_index: HeadIndex | None = None  # the answers by head, as of the install
        self.anchor_pairs: np.ndarray | None = None  # the items' pairwise log-odds terms

    def min_answers(self) -> int:
        return self.burn_in

    def random_until(self) -> int | None:
        return self.burn_in

    # ------------------------------------------------------------------ asking
    def ask_one(self, sampler: SamplerView, k: int) -> np.ndarray:
        rng = sampler.rng
        odd = self.screen.trial == "odd-one-out"
        if sampler.embedding_ is None or sampler.n_answers_ < self.burn_in:
            return self.burn_in_query(rng, 2 if odd else k)
        h = self.next_head(rng)
        scorer = self.prepare(sampler)
        if self.screen.trial == "rank":
            chosen = rng.permutation(ask_rank(self, sampler, rng, h))
            return self.asked(extend_query(rng, self.n, [h, *(int(c) for c in chosen)], k))
        if odd:
            trio = np.array([h, *ask_odd(self, sampler, rng, h)], dtype=np.int64)
            self.asked(trio)
            return rng.permutation(trio)
        log_w = self.log_weights(sampler, h)
        pairs = self.candidates(rng, h, log_w)
        info = scorer.information(self.table, log_w, self.row_of[pairs])
        return self.asked(ranked_query(rng, self.n, h, pairs, self.least_asked(h, pairs, info), k))

    def least_asked(self, h: int, pairs: np.ndarray, info: Any) -> Any:
        """``info`` with the pairs asked of ``h`` more often than the least asked at -inf."""
        counts = self.pair_asks.get(h)
        if not counts:
            return info
        keys = np.minimum(pairs[:, 0], pairs[:, 1]) * self.n + np.maximum(pairs[:, 0], pairs[:, 1])
        # the head's asked pairs (few: its asks) sorted, looked up by a binary search
        asked = np.fromiter(counts.keys(), np.int64, len(counts))
        order = np.argsort(asked)
        asked = asked[order]
        at = np.minimum(np.searchsorted(asked, keys), len(asked) - 1)
        told = np.fromiter(counts.values(), np.int64, len(counts))[order]
        times = np.where(asked[at] == keys, told[at], 0)
        fewest = times.min()
        if fewest == times.max():
            return info
        out = np.array(info, dtype=np.float64)
        out[times > fewest] = -np.inf
        return out

    def asked(self, query: np.ndarray) -> np.ndarray:
        """Count ``query``'s candidate pairs as asked of its head; the query."""
        counts = self.pair_asks.setdefault(int(query[0]), {})
        cands = [int(c) for c in query[1:]]
        for i, a in enumerate(cands):
            for b in cands[i + 1 :]:
                key = min(a, b) * self.n + max(a, b)
                counts[key] = counts.get(key, 0) + 1
        return query

    def next_head(self, rng: np.random.Generator) -> int:
        """The item asked least often as a head, the first of them in the shuffled order."""
        if self.position >= len(self.order):
            self.order = rng.permutation(self.n).astype(np.int64)
            self.position = 0
        self.position += 1
        h = int(self.order[int(np.argmin(self.head_asks[self.order]))])
        self.head_asks[h] += 1
        return h

    def burn_in_query(self, rng: np.random.Generator, k: int) -> np.ndarray:
        """A uniformly random query among the anchors (completed at random when too few)."""
        L = len(self.anchors)
        if L < k + 1:
            h = int(self.anchors[rng.integers(L)])
            query = extend_query(rng, self.n, [h, *(int(a) for a in self.anchors if a != h)], k)
        else:
            pos = random_triple(rng, L) if k == 2 else rng.choice(L, size=k + 1, replace=False)
            query = self.anchors[np.asarray(pos)].astype(np.int64)
        self.head_asks[query[0]] += 1
        return self.asked(query)

    def prepare(self, sampler: SamplerView) -> HeadScorer:
        """The scorer and the anchors' table of the installed embedding (built once)."""
        if self.scorer is None:
            if self.particles is None:  # an embedding restored without particles
                self.particles = self.draw_particles(sampler)
            self.scorer = scorer_of(sampler, self.LAPSE)
            self.table = self.scorer.table(self.particles, self.anchors)
            self.row_of = np.full(self.n, -1, dtype=np.int64)
            self.row_of[self.anchors] = np.arange(len(self.anchors))
            self.anchor_X = self.scorer.X[self.anchors]
        return self.scorer

    def log_weights(self, sampler: SamplerView, h: int) -> np.ndarray:
        """The head's particles' log weights (cached)."""
        lw = self.cache.get(h)
        if lw is None:
            assert self.scorer is not None and self.particles is not None
            rows = self.index_rows(sampler)
            if self.answer_index is None:
                self.answer_index = HeadIndex(rows, self.n)
            answers = self.answer_index.answers(rows, h)
            lw = self.answer_log_weights(answers, np.zeros(len(self.particles)))
            self.cache[h] = lw
        return lw

    def head_answers(self, sampler: SamplerView, h: int) -> np.ndarray:
        """The head's answers (its rows but the head), in the order told."""
        rows = self.index_rows(sampler)
        if self.answer_index is None:
            self.answer_index = HeadIndex(rows, self.n)
        return self.answer_index.answers(rows, h)

    def index_rows(self, sampler: SamplerView) -> np.ndarray:
        """The told rows by head: the rows, or each odd-one-out row seen from its 3 items."""
        rows = sampler.told_rows
        return odd_views(rows) if self.screen.trial == "odd-one-out" else rows

    def item_pair_terms(self) -> np.ndarray:
        """The items' pairwise log-odds terms f(D) in the embedding, (n, n) (cached)."""
        if self.anchor_pairs is None:
            assert self.scorer is not None
            self.anchor_pairs = self.scorer.table(self.scorer.X, np.arange(self.n))
        return self.anchor_pairs

    def answer_log_weights(self, answers: np.ndarray, prior: np.ndarray) -> np.ndarray:
        """``prior`` plus the log-probabilities of a head's answers at the particles.

        From the anchors' table when it holds every item named (the usual case: candidates
        are anchors, and anchors stay), else from the embedding.
        """
        assert self.scorer is not None and self.particles is not None
        if not self.screen.is_triplet:
            return screen_log_weights(self, answers, prior)
        rows = self.row_of[answers]
        if (rows >= 0).all():
            return self.scorer.table_log_weights(self.table, rows, prior)
        return self.scorer.log_weights(self.particles, answers, prior)

    def candidates(self, rng: np.random.Generator, h: int, log_w: np.ndarray) -> np.ndarray:
        """Candidate pairs of anchors (other than the head) as item ids, (C, 2)."""
        anchors = self.anchors
        at = int(np.searchsorted(anchors, h))
        skip = at < len(anchors) and anchors[at] == h  # the head is an anchor: not a candidate
        L = len(anchors) - skip
        if L * (L - 1) // 2 <= self.N_CANDIDATES:
            A = np.delete(anchors, at) if skip else anchors
            i, j = upper_pairs(L)
            return np.stack([A[i], A[j]], axis=1)
        assert self.particles is not None
        w = np.exp(log_w - log_w.max())
        diff = self.anchor_X - (w @ self.particles) / w.sum()
        d2 = np.einsum("ij,ij->i", diff, diff)
        if skip:
            d2[at] = np.inf
        k = min(self.N_NEAR, L)
        near = np.sort(np.argpartition(d2, k - 1)[:k])  # then by distance, ties by index
        near = anchors[near[np.argsort(d2[near], kind="stable")]]
        near_pairs = near[pair_table(len(near))]
        half = self.N_CANDIDATES // 2
        if len(near_pairs) > half:
            near_pairs = near_pairs[np.sort(rng.choice(len(near_pairs), size=half, replace=False))]
        out = np.empty((self.N_CANDIDATES, 2), dtype=np.int64)
        out[: len(near_pairs)] = near_pairs
        # the rest: ordered pairs of distinct anchors (but the head), uniform, by one draw
        a, b = np.divmod(rng.integers(L * (L - 1), size=self.N_CANDIDATES - len(near_pairs)), L - 1)
        b += b >= a
        if skip:  # positions among the anchors but the head
            a += a >= at
            b += b >= at
        out[len(near_pairs) :, 0] = anchors[a]
        out[len(near_pairs) :, 1] = anchors[b]
        return out

    # ------------------------------------------------------------------ answers, refits
    def told(self, sampler: SamplerView, rows: np.ndarray) -> None:
        if not self.cache:
            return
        if not self.screen.is_triplet:
            views = odd_views(rows) if self.screen.trial == "odd-one-out" else rows
            for view in views:
                lw = self.cache.get(int(view[0]))
                if lw is not None:
                    self.cache[int(view[0])] = self.answer_log_weights(view[None, 1:], lw)
            return
        for h, c, f in rows:
            lw = self.cache.get(int(h))
            if lw is not None:
                answer = np.array([[c, f]], dtype=np.int64)
                self.cache[int(h)] = self.answer_log_weights(answer, lw)

    def installed(self, sampler: SamplerView) -> None:
        promoted = np.flatnonzero(self.head_asks >= self.PROMOTE_PER_DIM * self.dim)
        if not self.screen.is_triplet:  # a screen shows many candidates: every item one
            promoted = np.arange(self.n)
        self.anchors = np.union1d(self.anchors, promoted).astype(np.int64)
        self.particles = self.draw_particles(sampler)
        self.reset_derived()

    def draw_particles(self, sampler: SamplerView) -> np.ndarray:
        """N_PARTICLES draws from the Gaussian of the anchors' embedded positions.

        Seeded by the sampler's seed and the number of embeddings installed.
        """
        assert sampler.embedding_ is not None
        A = np.asarray(sampler.embedding_.embedding_, dtype=np.float64)[self.anchors]
        mean = A.mean(axis=0)
        cov = np.atleast_2d(np.cov(A, rowvar=False)) if len(A) > 1 else np.zeros((self.dim,) * 2)
        lam, V = np.linalg.eigh(cov)
        rng = np.random.default_rng(derived_seed(sampler.seed, PARTICLES_SEED, sampler.n_installs_))
        z = rng.standard_normal((self.N_PARTICLES, self.dim))
        return np.ascontiguousarray(mean + (z * np.sqrt(np.maximum(lam, 0.0))) @ V.T)

    # ------------------------------------------------------------------ state
    def state(self) -> dict[str, Any]:
        return {
            "anchors": self.anchors.tolist(),
            "head_asks": self.head_asks.tolist(),
            "order": self.order.tolist(),
            "position": self.position,
            "particles": None if self.particles is None else self.particles.tolist(),
            "pair_asks": [
                [h, key, times]
                for h, counts in self.pair_asks.items()
                for key, times in counts.items()
            ],  # fmt: skip
        }

    def restore(self, state: dict[str, Any], sampler: SamplerView) -> None:
        anchors = np.asarray(state["anchors"], dtype=np.int64)
        head_asks = np.asarray(state["head_asks"], dtype=np.int64)
        order = np.asarray(state["order"], dtype=np.int64)
        if (
            anchors.ndim != 1
            or not len(anchors)
            or anchors.min() < 0
            or anchors.max() >= self.n
            or head_asks.shape != (self.n,)
            or (len(order) and sorted(order.tolist()) != list(range(self.n)))
        ):
            raise ValueError("the active method's state is malformed")
        particles = state["particles"]
        if particles is not None:
            particles = np.ascontiguousarray(particles, dtype=np.float64)
            if particles.shape != (self.N_PARTICLES, self.dim):
                raise ValueError("the particles' shape is malformed")
        self.anchors, self.head_asks = np.unique(anchors), head_asks
        self.order, self.position = order, int(state["position"])
        self.particles = particles
        self.pair_asks = {}
        if "pair_asks" in state:
            for h, key, times in state["pair_asks"]:
                if not (0 <= h < self.n and 0 <= key < self.n * self.n and times > 0):
                    raise ValueError("the active method's pair_asks are malformed")
                self.pair_asks.setdefault(int(h), {})[int(key)] = int(times)
        else:  # a state of 0.2: the pairs answered stand for the pairs asked
            for h, c, f in sampler.told_rows.tolist():
                self.asked(np.array([h, c, f]))
        self.reset_derived()


#: method name -> its class (the sampler's registry)
METHODS: dict[str, type[QueryMethod]] = {
    cls.name: cls for cls in (RandomQueries, AdaptiveRoundRobin, ActiveQueries)
}
