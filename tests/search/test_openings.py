"""The uniform opening (issue 40): every method's first screen by one rule from the seed.

The rule: ``n_choices`` distinct items uniformly at random from the session's seed
(``discrete/opening.hpp``, its twin ``_reference.discrete.uniform_opening``), the same for
gamma-CKLSearch, GaussSearch and the random baseline; the methods differ from the second
screen on, each updating its belief with the first answer as it would with any other.
The statistical bounds: chi-square tests at a false-alarm rate of 1e-4 each, on fixed seeds
(they replay).
"""

import json
import math
from collections import Counter
from itertools import combinations, permutations

import numpy as np
import pytest
from scipy import stats

import tripletsearch as ts
from tripletsearch import _core
from tripletsearch._reference.discrete import DiscreteSearcher as RefSearcher
from tripletsearch._reference.discrete import simulate as ref_simulate
from tripletsearch._reference.discrete import uniform_opening
from tripletsearch._validation import seed_from
from tripletsearch.discrete import METHODS, OPENINGS, SELECTIONS, DiscreteSettings
from tripletsearch.discrete._settings import _STATE_VERSION

ALPHA = 1e-4  # each statistical test's false-alarm rate
# (method, selection): every searcher kind, gamma-CKL under each selection rule
KINDS = [
    ("gamma-ckl", "infogain"),
    ("gamma-ckl", "weighted"),
    ("gamma-ckl", "paper"),
    ("gamma-ckl", "nearest"),
    ("gauss", "weighted"),
    ("random", "weighted"),
]
SIZES = [(2, 1, 2), (3, 2, 2), (5, 2, 4), (9, 3, 8), (40, 2, 4), (200, 5, 2), (300, 40, 6)]
# the twin's eigenpairs are exact; the core's beyond 32 dimensions are iterated
TWIN_SIZES = [(n, d, k) for n, d, k in SIZES if d <= 32] + [(300, 8, 6)]


def database(n, d, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, size=(n, d))


def config(method="gamma-ckl", selection="weighted", opening="uniform", **kw):
    return _core.SearchConfig(
        method=getattr(_core.SearchMethod, METHODS[method]),
        selection=getattr(_core.Selection, SELECTIONS[selection]),
        opening=getattr(_core.Opening, OPENINGS[opening]),
        **kw,
    )


def first_screens(X, seeds, k, method="gamma-ckl", selection="weighted", **kw):
    """The native first screens (ordered) of sessions seeded ``seeds``: one prior, copied."""
    proto = _core.DiscreteSearcher(
        _core.ItemStore(X), config(method, selection, n_choices=k, **kw), 0, 1
    )
    return [tuple(proto.copy(int(s)).select().tolist()) for s in seeds]


def chi2_uniform(counts, expected):
    """P-value of a Pearson chi-square test of multinomial ``counts`` against a uniform."""
    counts = np.asarray(counts, dtype=float)
    stat = float(((counts - expected) ** 2 / expected).sum())
    return stats.chi2.sf(stat, len(counts) - 1)


# ---------------------------------------------------------------------- the rule
def test_the_twin_draws_k_distinct_items():
    for n, k in [(2, 2), (3, 2), (5, 4), (64, 64), (1000, 8)]:
        for seed in (0, 1, 2**64 - 1):
            q = uniform_opening(seed, n, k)
            assert len(q) == k and len(set(q.tolist())) == k
            assert q.min() >= 0 and q.max() < n


@pytest.mark.twin
@pytest.mark.parametrize("method,selection", KINDS)
@pytest.mark.parametrize("n,d,k", TWIN_SIZES)
def test_the_first_screen_matches_the_twin(method, selection, n, d, k):
    """Native == twin for every method and size, the opening and the two queries after it
    (the first answer updates each method's belief as any other)."""
    if method != "gamma-ckl" and selection != "weighted":
        pytest.skip("one selection for the other methods")
    X = database(n, d, seed=n + d)
    seeds = (0, 7, 2**63 + 5, 2**64 - 1)
    for seed in seeds:
        cfg = dict(method=method, selection=selection, n_choices=k, gamma=3.0)
        a = _core.DiscreteSearcher(_core.ItemStore(X), config(**cfg), seed, 1)
        b = RefSearcher(X, **cfg, seed=seed)
        assert a.select().tolist() == uniform_opening(seed, n, k).tolist()
        for step in range(3 if n > 2 * k else 1):
            q = a.select()
            assert q.tolist() == b.select().tolist(), (seed, step)
            pick = int(seed % len(q))
            a.update(q, pick)
            b.update(q, pick)
            if a.n_unshown > 0:
                np.testing.assert_allclose(a.posterior(), b.posterior(), rtol=1e-10, atol=1e-300)


@pytest.mark.parametrize("n,d,k", SIZES)
def test_one_seed_opens_every_method_on_one_screen(n, d, k):
    """The same seed, n and k: the same first screen, whatever the method, its selection
    rule, gamma, the lapse rate, r or sigma, and the embedding itself (d, the points)."""
    seeds = list(range(30)) + [2**63 + 11, 2**64 - 1]
    want = [tuple(uniform_opening(s, n, k).tolist()) for s in seeds]
    for method, selection in KINDS:
        assert first_screens(database(n, d), seeds, k, method, selection) == want, method
    other = database(n, d + 1, seed=99)
    assert first_screens(other, seeds, k, "gamma-ckl", "infogain", gamma_auto=True) == want
    assert first_screens(other, seeds, k, "gauss", sigma=0.7) == want
    assert first_screens(other, seeds, k, "gamma-ckl", "weighted", lapse=0.1, r=1.0) == want


def test_the_public_sessions_open_alike():
    """Through DiscreteSearch, its spawn and simulate_discrete's default."""
    X = database(40, 2)
    for seed in (0, 3, 12345):
        screens = {
            m: ts.DiscreteSearch(X, method=m, n_choices=4, random_state=seed).ask().tolist()
            for m in METHODS
        }
        assert len({tuple(v) for v in screens.values()}) == 1, screens
        template = ts.DiscreteSearch(X, method="gauss", n_choices=4, random_state=0)
        assert template.spawn(random_state=seed).ask().tolist() == screens["gauss"]


@pytest.mark.parametrize("n,d,k", [(3, 1, 2), (5, 2, 4), (9, 3, 8), (40, 2, 4), (200, 5, 2)])
def test_items_are_drawn_uniformly(n, d, k):
    """Over 4,000 seeds each item is on the first screen k/n of the time (and first in
    place 1/n of the time): chi-square tests. The counts of items on a screen are
    exchangeable with a fixed sum, so sum (O - E)^2 / (S p (1 - p) n / (n - 1)) is
    chi-square with n - 1 degrees of freedom (S screens, p = k/n)."""
    S = 4000
    seeds = np.random.default_rng(n * 100 + k).integers(0, 2**63, size=S)
    for method in ("gamma-ckl", "gauss"):
        screens = first_screens(database(n, d), seeds, k, method)
        assert all(len(set(q)) == k for q in screens)
        counts = np.bincount([i for q in screens for i in q], minlength=n)
        p = k / n
        if p < 1:
            var = S * p * (1 - p) * n / (n - 1)
            stat = float(((counts - S * p) ** 2).sum() / var)
            assert stats.chi2.sf(stat, n - 1) > ALPHA, counts
        first = np.bincount([q[0] for q in screens], minlength=n)
        assert chi2_uniform(first, S / n) > ALPHA, first


@pytest.mark.parametrize("n,k", [(3, 2), (4, 2), (5, 4), (6, 3), (5, 5)])
def test_every_screen_is_as_likely(n, k):
    """Small catalogues (n = k + 1 among them): every ordered k-tuple of distinct items,
    and every set of k items, equally likely over 6,000 seeds (chi-square)."""
    S = 6000
    screens = first_screens(database(n, 2), range(S), k, "gauss")
    ordered = Counter(screens)
    tuples = list(permutations(range(n), k))
    assert set(ordered) <= set(tuples)
    if len(tuples) <= 400:  # enough draws per cell
        assert chi2_uniform([ordered[t] for t in tuples], S / len(tuples)) > ALPHA
    sets = Counter(tuple(sorted(q)) for q in screens)
    combos = list(combinations(range(n), k))
    if len(combos) > 1:
        assert chi2_uniform([sets[c] for c in combos], S / len(combos)) > ALPHA


def test_identical_first_screens_within_a_person_as_often_as_chance():
    """A person searching several targets with the searches' own seeds: identical first
    screens come no more often than the rule's chance, 1 / C(n, k) per pair of searches
    (40 items, 4 a screen: 1 in 91,390). 200 people of 8 searches each, 5,600 pairs: at
    most 3 identical (Poisson mean 0.06, P(>= 4) < 1e-6)."""
    n, k = 40, 4
    X = database(n, 2)
    rng = np.random.default_rng(40)
    same = pairs = 0
    for _ in range(200):
        seeds = rng.integers(0, 2**63, size=8)
        screens = [frozenset(q) for q in first_screens(X, seeds[:4], k, "gamma-ckl")]
        screens += [frozenset(q) for q in first_screens(X, seeds[4:], k, "gauss")]
        for a, b in combinations(screens, 2):
            pairs += 1
            same += a == b
    assert pairs == 5600 and same <= 3
    assert pairs / math.comb(n, k) < 0.1


# ---------------------------------------------------------------------- after the opening
@pytest.mark.parametrize("method", list(METHODS))
def test_the_first_answer_updates_as_any_other(method):
    """After the uniform opening each method goes on as if the same screen and answer had
    been observed by a session of another opening: the same belief, the same next
    screens (the methods differ from the second screen on)."""
    X = database(60, 3)
    for seed in (1, 2, 2**63 + 9):
        a = ts.DiscreteSearch(X, method=method, n_choices=4, gamma=3.0, random_state=seed)
        b = ts.DiscreteSearch(
            X, method=method, n_choices=4, gamma=3.0, opening="principal", random_state=seed
        )
        q = a.ask()
        a.tell(int(q[2]))
        b.observe(q, int(q[2]))
        np.testing.assert_array_equal(a.posterior, b.posterior)
        for _ in range(3):
            nxt = a.ask()
            assert nxt.tolist() == b.ask().tolist()
            a.tell(int(nxt[0]))
            b.tell(int(nxt[0]))


def test_the_methods_differ_from_the_second_screen_on():
    X = database(200, 2)
    differ = 0
    for seed in range(10):
        s = {m: ts.DiscreteSearch(X, method=m, n_choices=4, random_state=seed) for m in METHODS}
        q = s["gauss"].ask()
        for v in s.values():
            assert v.ask().tolist() == q.tolist()
            v.tell(int(q[0]))
        second = {m: tuple(sorted(v.ask().tolist())) for m, v in s.items()}
        differ += len(set(second.values())) > 1
    assert differ >= 9


@pytest.mark.twin
@pytest.mark.parametrize("method", ["gamma-ckl", "gauss"])
def test_simulations_open_uniformly_like_the_twin(method):
    """simulate_discrete with the uniform opening (its default) == the twin's simulator."""
    X = database(40, 2, seed=5)
    targets = np.arange(12)
    sel = "infogain" if method == "gamma-ckl" else "weighted"
    cfg = dict(method=method, n_choices=4, gamma=3.0, selection=sel)
    sim = ts.simulate_discrete(X, targets=targets, max_queries=30, random_state=3, **cfg)
    seed = seed_from(np.random.default_rng(3))
    nq, found = ref_simulate(X, targets, 30, 3.0, 0.0, seed, opening="uniform", **cfg)
    np.testing.assert_array_equal(sim.n_queries, nq)
    np.testing.assert_array_equal(sim.found, found)


# ---------------------------------------------------------------------- defaults and states
def test_uniform_is_new_sessions_default():
    X = database(40, 2)
    assert DiscreteSettings().opening == "uniform"
    assert DiscreteSettings().resolve(40).to_native().opening == _core.Opening.Uniform
    assert _core.SearchConfig().opening == _core.Opening.Uniform
    assert ts.DiscreteSearch(X).settings.opening == "uniform"
    kw = dict(n_choices=4, gamma=3.0, targets=np.arange(10), max_queries=20, random_state=1)
    default = ts.simulate_discrete(X, **kw)
    uniform = ts.simulate_discrete(X, opening="uniform", **kw)
    np.testing.assert_array_equal(default.n_queries, uniform.n_queries)


@pytest.mark.parametrize("opening", ["random", "principal"])
def test_a_stored_state_keeps_its_opening(opening):
    """A state of version 2 (0.3.0) names its opening: it replays with it (pending screen
    included), and writes it again; new sessions' default does not reach it."""
    X = database(120, 3)
    for method in METHODS:
        old = ts.DiscreteSearch(X, method=method, n_choices=4, opening=opening, random_state=8)
        pending = old.ask()
        state = json.loads(json.dumps({**old.to_dict(), "version": 2}))
        again = ts.DiscreteSearch.from_dict(state, X)
        assert again.settings.opening == opening
        assert again.ask().tolist() == pending.tolist()
        again.tell(int(pending[0]))
        assert (
            again.to_dict()["opening"] == opening and again.to_dict()["version"] == _STATE_VERSION
        )


def test_a_state_without_an_opening_replays_principal():
    X = database(120, 3)
    old = ts.DiscreteSearch(X, n_choices=4, gamma=3.0, opening="principal", random_state=4)
    pending = old.ask()
    state = {k: v for k, v in old.to_dict().items() if k != "opening"}
    state["version"] = 1
    assert ts.DiscreteSearch.from_dict(state, X).ask().tolist() == pending.tolist()


def test_a_uniform_state_round_trips():
    X = database(40, 2)
    s = ts.DiscreteSearch(X, method="gauss", n_choices=4, random_state=5)
    q = s.ask()
    s.tell(int(q[1]))
    pending = s.ask()
    back = ts.DiscreteSearch.from_dict(json.loads(json.dumps(s.to_dict())), X)
    assert back.settings.opening == "uniform" and back.ask().tolist() == pending.tolist()
    assert back.history[0]["shown"] == q.tolist()


def test_a_native_config_pickles_its_opening():
    import pickle

    for o in ("uniform", "random", "principal"):
        c = config(opening=o, n_choices=3)
        assert pickle.loads(pickle.dumps(c)).opening == c.opening


@pytest.mark.parametrize("opening,exc", [("Uniform", ValueError), (2, TypeError)])
def test_bad_opening_names_the_argument(opening, exc):
    with pytest.raises(exc, match="opening"):
        ts.DiscreteSearch(database(50, 2), opening=opening)
    with pytest.raises(exc, match="opening"):
        DiscreteSettings(opening=opening)
    with pytest.raises(ValueError, match="opening"):
        RefSearcher(database(50, 2), opening="rotated")
