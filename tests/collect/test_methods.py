"""The three ways of choosing queries: random's no-repeat rule, ARR's rounds and their best
query per head, active's anchors, burn-in, round robin, best pair and promotion."""

from __future__ import annotations

import math
from collections import Counter
from itertools import combinations

import numpy as np
import pytest

from tripletsearch import TripletSampler
from tripletsearch._reference import collect as ref
from tripletsearch._reference import oracles as ref_oracles
from tripletsearch.collect._methods import QueryMethod
from tripletsearch.people import TripletPeople


def unordered(q):
    h, a, b = (int(v) for v in q)
    return h, min(a, b), max(a, b)


# ---------------------------------------------------------------------- random
@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_random_asks_every_query_once_before_any_twice(n):
    every = {(h, a, b) for h in range(n) for a, b in combinations(range(n), 2) if h not in (a, b)}
    total = n * (n - 1) * (n - 2) // 2
    assert len(every) == total
    s = TripletSampler(n, 2, method="random", refit=None, random_state=n)
    for _ in range(3):  # the pool, used up three times
        block = [unordered(q) for q in s.ask(total)]
        assert set(block) == every  # each query exactly once per pass
    # and asking across a pass boundary: no repeat before the pool is used up
    half = [unordered(q) for q in s.ask(total // 2)]
    assert len(set(half)) == len(half)


def test_random_sides_and_heads_are_uniform():
    n = 6
    s = TripletSampler(n, 2, method="random", refit=None, random_state=1)
    Q = s.ask(6000)
    heads = np.bincount(Q[:, 0], minlength=n) / len(Q)
    assert np.abs(heads - 1 / n).max() < 0.03
    assert 0.47 < np.mean(Q[:, 1] < Q[:, 2]) < 0.53  # left/right at random


def test_random_ignores_answers_and_never_needs_an_embedding():
    s = TripletSampler(8, 2, method="random", refit=None, random_state=2)
    t = TripletSampler(8, 2, method="random", refit=None, random_state=2)
    s.tell([[0, 1, 2]] * 3)
    np.testing.assert_array_equal(s.ask(40), t.ask(40))


# ---------------------------------------------------------------------- arr
def arr_sampler(n=24, seed=3):
    p = TripletPeople.random(n, 2, seed=seed)
    s = TripletSampler(n, 2, method="arr", model="t-ste", refit=None, random_state=seed, n_jobs=1)
    return p, s


def test_arr_burn_in_is_n_random_answers_then_rounds_over_every_head():
    p, s = arr_sampler()
    n = s.n_items
    assert s._method.min_answers() == math.ceil(n / 10)
    p.run(s, n)  # R n = n random answers (no embedding: random whatever the count)
    s.refit()
    assert s._method.batch == []
    for _ in range(3):  # rounds: every head once (4096 random queries reach every head)
        heads = p.run(s, n)[:, 0]
        assert sorted(heads.tolist()) == list(range(n))
        assert len(s._method.batch) == n


def test_arr_keeps_the_most_informative_query_of_each_head():
    p, s = arr_sampler(seed=4)
    p.run(s, s.n_items)
    s.tell(p.answer(s.ask(300)))  # more answers for the posteriors
    emb = s.refit()
    rng = np.random.default_rng()
    rng.bit_generator.state = s._rng.bit_generator.state  # the round's draws, replayed
    Q = s._method.candidates(rng)
    s.ask()  # starts the round
    X, rows = emb.embedding_, s.answers_
    model = ref_oracles.TSTE(emb.oracle_.parameter(2))
    expected = set()
    for h in range(s.n_items):
        cand = Q[Q[:, 0] == h, 1:]
        answers = rows[rows[:, 0] == h, 1:]
        lw = ref.log_weights(model, 0.0, X, X, answers, np.zeros(len(X)))
        F = ref.log_odds(model, X, X, np.arange(len(X)))
        info = ref.pair_information(0.0, F, lw, cand)
        best = cand[info >= info.max() - 1e-12]
        assert len(best) == 1  # no near-tie: the choice is unambiguous
        expected.add((h, *best[0].tolist()))
    assert {tuple(q) for q in s._method.batch} == expected


def test_arr_starts_a_new_round_after_a_new_embedding():
    p, s = arr_sampler(seed=5)
    p.run(s, s.n_items)
    s.refit()
    p.run(s, 5)
    first = [tuple(q) for q in s._method.batch]
    s.refit()
    (q,) = s.ask()
    assert s._method.position == 1 and [tuple(q) for q in s._method.batch] != first
    assert unordered(q) == unordered(s._method.batch[0])


# ---------------------------------------------------------------------- active
def test_active_anchors_and_burn_in_among_them():
    p = TripletPeople.random(60, 3, seed=6)
    s = TripletSampler(60, 3, method="active", random_state=7, n_jobs=1)
    m = s._method
    L0 = min(60, max(20, 4 * 3))
    assert len(m.anchors) == L0 == len(set(m.anchors.tolist()))
    assert m.burn_in == math.ceil(L0 * 3 * math.log2(L0))
    Q = p.run(s, m.burn_in - 1)
    assert np.isin(Q, m.anchors).all()  # heads and candidates
    np.testing.assert_array_equal(m.head_asks, np.bincount(Q[:, 0], minlength=60))
    assert s.embedding_ is None
    p.run(s, 1)
    assert s.embedding_ is not None  # the first fit at the end of the burn-in


def test_active_heads_asked_least_often_first_and_candidates_among_anchors():
    n = 40  # above 1.5 times the 20 anchors: not every item is one
    p = TripletPeople.random(n, 2, seed=8)
    s = TripletSampler(n, 2, method="active", random_state=9, n_jobs=1)
    m = s._method
    p.run(s, m.burn_in)
    anchors = m.anchors.copy()
    counts = np.bincount(s.answers_[:, 0], minlength=n)  # the burn-in's heads: anchors
    assert counts[anchors].sum() == m.burn_in and counts.max() > 1
    s.refit_policy = None  # keep the anchors: no promotion in this test
    heads = []
    for _ in range(4 * n):
        (q,) = s.ask()
        assert counts[q[0]] == counts.min()  # never a head asked more often than another
        counts[q[0]] += 1
        heads.append(int(q[0]))
        assert np.isin(q[1:], anchors).all() and q[0] not in q[1:]
        s.tell(p.answer(q[None]))
    np.testing.assert_array_equal(m.head_asks, counts)
    others = [h for h in heads[: n - len(anchors)]]  # the other items catch up first
    assert sorted(others) == sorted(set(range(n)) - set(anchors.tolist()))
    assert others != sorted(others)  # ties in a shuffled order


def test_active_asks_the_most_informative_candidate():
    n = 40
    p = TripletPeople.random(n, 2, seed=10)
    s = TripletSampler(n, 2, method="active", random_state=11, n_jobs=1)
    s._method.N_CANDIDATES = 30  # fewer than the 190 anchor pairs: near and random ones
    p.run(s, s._method.burn_in + 25)
    m = s._method
    for _ in range(10):
        if m.position >= len(m.order):  # a new tie-breaking order: drawn on the next ask
            p.run(s, 1)
            continue
        h = int(m.order[np.argmin(m.head_asks[m.order])])
        m.prepare(s)  # after a refit: the new embedding's particles and table
        emb = s.embedding_
        X, model = emb.embedding_, ref_oracles.GammaCKL(emb.gamma_)
        rng = np.random.default_rng()
        rng.bit_generator.state = s._rng.bit_generator.state
        answers = s.answers_[s.answers_[:, 0] == h, 1:]
        lw = ref.log_weights(model, m.LAPSE, X, m.particles, answers, np.zeros(m.N_PARTICLES))
        pairs = m.candidates(rng, h, lw)
        assert len(pairs) == 30
        F = ref.log_odds(model, X, m.particles, np.arange(n))
        info = ref.pair_information(m.LAPSE, F, lw, pairs)
        # among the pairs asked of h least often (every query here was answered: the rows)
        asked = Counter(tuple(sorted(r)) for r in s.answers_[s.answers_[:, 0] == h, 1:].tolist())
        times = np.array([asked[tuple(sorted(b))] for b in pairs.tolist()])
        info[times > times.min()] = -np.inf
        (q,) = s.ask()
        assert q[0] == h
        best = {tuple(sorted(b)) for b in pairs[info >= info.max() - 1e-12].tolist()}
        assert best == {tuple(sorted(q[1:].tolist()))}  # (a pair may be drawn twice)
        s.tell(p.answer(q[None]))


def test_active_cached_log_weights_equal_a_rebuild():
    n = 25
    p = TripletPeople.random(n, 2, seed=12)
    s = TripletSampler(n, 2, method="active", refit=None, random_state=13, n_jobs=1)
    p.run(s, s._method.burn_in)
    s.refit()
    p.run(s, 10 * n)  # every head asked (the anchors after the others), cached, told
    m = s._method
    assert len(m.cache) == n
    cached = dict(m.cache)
    m.cache.clear()
    for h in range(n):
        np.testing.assert_array_equal(m.log_weights(s, h), cached[h])  # bitwise


def test_active_promotes_heads_at_the_next_embedding():
    n = 60
    p = TripletPeople.random(n, 1, seed=14)
    s = TripletSampler(n, 1, method="active", refit=None, random_state=15, n_jobs=1)
    m = s._method
    assert len(m.anchors) == 20 and m.PROMOTE_PER_DIM * 1 == 4
    p.run(s, m.burn_in)
    s.refit()
    first = m.anchors.copy()
    p.run(s, 140)  # the 40 others asked three times, then some a fourth (= 4 * dim)
    promoted = np.flatnonzero(m.head_asks >= 4)
    assert 0 < len(np.setdiff1d(promoted, first)) < n - 20
    assert len(m.anchors) == 20  # at the next embedding, not before
    old_particles = m.particles.copy()
    s.refit()
    np.testing.assert_array_equal(m.anchors, np.union1d(first, promoted))
    assert not np.array_equal(m.particles, old_particles)  # drawn again per embedding
    p.run(s, 4 * n)
    s.refit()
    assert m.anchors.tolist() == list(range(n))


def test_active_particles_follow_the_anchors():
    p = TripletPeople.random(50, 2, seed=16)
    s = TripletSampler(50, 2, method="active", random_state=17, n_jobs=1)
    p.run(s, s._method.burn_in)
    m = s._method
    A = s.embedding_.embedding_[m.anchors]
    assert m.particles.shape == (m.N_PARTICLES, 2)
    np.testing.assert_allclose(m.particles.mean(axis=0), A.mean(axis=0), atol=0.3 * A.std())
    np.testing.assert_allclose(np.cov(m.particles.T), np.cov(A.T), rtol=0.35, atol=0.05)


def test_active_takes_every_item_as_an_anchor_when_there_are_few():
    for n, dim, L0 in ((30, 2, 30), (12, 1, 12), (31, 2, 20), (100, 3, 20), (200, 10, 40)):
        m = TripletSampler(n, dim, method="active", random_state=0, n_jobs=1)._method
        assert len(m.anchors) == L0, (n, dim)
        assert m.burn_in == math.ceil(L0 * dim * math.log2(L0))


def test_active_asks_a_head_the_pairs_it_asked_least_often():
    n = 12  # every item an anchor: every pair of the others is a candidate (55 a head)
    p = TripletPeople.random(n, 2, seed=20)
    s = TripletSampler(n, 2, method="active", random_state=21, n_jobs=1)
    p.run(s, s._method.burn_in)
    asked = Counter((int(h), tuple(sorted((int(a), int(b))))) for h, a, b in s.answers_)
    every = {h: list(combinations([i for i in range(n) if i != h], 2)) for h in range(n)}
    spread = []
    for _ in range(60 * n):  # five asks of every pair of a head, more than the burn-in's
        (q,) = s.ask()
        h, pair = int(q[0]), tuple(sorted(int(v) for v in q[1:]))
        least = min(asked[(h, e)] for e in every[h])
        assert asked[(h, pair)] == least, (h, pair)  # never one asked more than another
        asked[(h, pair)] += 1
        s.tell(p.answer(q[None]))
        spread.append(max(asked[(h, e)] for e in every[h]) - least)
    assert max(spread[-n:]) <= max(spread[:n])  # the counts even out, never spread


def test_active_pair_asks_survive_a_saved_state_and_a_state_of_0_2():
    n = 25
    p = TripletPeople.random(n, 2, seed=22)
    s = TripletSampler(n, 2, method="active", random_state=23, n_jobs=1)
    p.run(s, s._method.burn_in + 40)
    state = s.to_dict()
    again = TripletSampler.from_dict(state, n_jobs=1)
    assert again._method.pair_asks == s._method.pair_asks
    for _ in range(30):  # the same queries from here on
        (q,) = s.ask()
        np.testing.assert_array_equal(again.ask()[0], q)
        rows = p.answer(q[None])
        s.tell(rows)
        again.tell(rows)
    old = {**state, "method_state": dict(state["method_state"])}
    del old["method_state"]["pair_asks"]  # saved before the pairs were counted
    restored = TripletSampler.from_dict(old, n_jobs=1)._method.pair_asks
    answered = Counter(
        (int(h), min(int(c), int(f)) * n + max(int(c), int(f))) for h, c, f in state["answers"]
    )
    assert {(h, k): t for h, d in restored.items() for k, t in d.items()} == dict(answered)
    bad = {**state, "method_state": {**state["method_state"], "pair_asks": [[0, -1, 1]]}}
    with pytest.raises(ValueError, match="state: malformed"):
        TripletSampler.from_dict(bad)


def test_methods_share_one_interface():
    for name in ("random", "arr", "active"):
        s = TripletSampler(10, 2, method=name)
        assert isinstance(s._method, QueryMethod) and s._method.name == name


def test_arr_rounds_are_the_same_with_per_head_tables():
    # beyond MAX_TABLE entries each head's candidates get their own table: same numbers
    runs = []
    for max_table in (None, 0):
        p, s = arr_sampler(seed=6)
        if max_table is not None:
            s._method.MAX_TABLE = max_table
        p.run(s, s.n_items + 40)
        s.refit()
        runs.append(p.run(s, 2 * s.n_items))
    np.testing.assert_array_equal(runs[0], runs[1])
