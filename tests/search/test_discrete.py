"""Database search: native == NumPy twin, Bayes updates, statistics, sessions, bad input."""

import json
import math

import numpy as np
import pytest
from scipy import stats

import tripletsearch as ts
from tripletsearch import _core
from tripletsearch._reference.discrete import DiscreteSearcher as RefSearcher
from tripletsearch._reference.discrete import rotated_axes, store_frame, top_eigenpairs
from tripletsearch._reference.discrete import simulate as ref_simulate
from tripletsearch.discrete import METHODS, OPENINGS, SELECTIONS

CONFIGS = [  # (method, selection, n_choices)
    ("gamma-ckl", "weighted", 2),
    ("gamma-ckl", "paper", 2),
    ("gamma-ckl", "nearest", 2),
    ("gamma-ckl", "infogain", 2),
    ("gamma-ckl", "weighted", 4),
    ("gamma-ckl", "infogain", 4),
    ("gamma-ckl", "weighted", 12),
    ("gamma-ckl", "infogain", 12),
    ("gauss", "weighted", 2),
    ("gauss", "weighted", 4),
    ("random", "weighted", 3),
]


def native_config(**kw):
    """The native configuration of the twin's keywords (method and selection by name)."""
    method = kw.pop("method", "gamma-ckl")
    selection = kw.pop("selection", "weighted")
    opening = kw.pop("opening", "uniform")
    return _core.SearchConfig(
        method=getattr(_core.SearchMethod, METHODS[method]),
        selection=getattr(_core.Selection, SELECTIONS[selection]),
        opening=getattr(_core.Opening, OPENINGS[opening]),
        **kw,
    )


def database(n=300, d=3, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, size=(n, d))


@pytest.mark.twin
@pytest.mark.parametrize("d", [1, 3, 6])
@pytest.mark.parametrize("method,selection,k", CONFIGS)
def test_native_matches_numpy_twin(method, selection, k, d):
    X = database(250, d, seed=d)
    gamma = 2.5 if method == "gamma-ckl" and selection == "weighted" else 3.0
    config = dict(method=method, gamma=gamma, r=2.0, sigma=0.1, n_choices=k, selection=selection)
    a = _core.DiscreteSearcher(_core.ItemStore(X), native_config(**config), 987654321, 1)
    b = RefSearcher(X, **config, seed=987654321)
    rng = np.random.default_rng(1)
    for _ in range(10):
        qa, qb = a.select(), b.select()
        assert qa.tolist() == qb.tolist()
        choice = int(rng.integers(-1, len(qa)))  # -1: a skipped query
        a.update(qa, choice)
        b.update(qb, choice)
        np.testing.assert_allclose(a.posterior(), b.posterior(), rtol=1e-9, atol=1e-15)
        np.testing.assert_allclose(a.mean, b.mean, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(a.cov, b.cov, rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("gamma", [3.0, "auto"])
def test_most_probable_items_across_chunks(gamma):
    """Each pass keeps the most probable items per chunk and merges them in chunk order.
    Items sorted along the first axis make the chunks slabs of space: answers about a target
    put the most probable items in a few chunks, and copies of them in a later chunk tie
    with them (the lower index wins). Against NumPy's stable sort of the posterior."""
    X = database(5000, 2, seed=11)  # 79 blocks of 64 items: 16 chunks of 4-5 blocks
    X = X[np.argsort(X[:, 0])]
    X[4000:4040] = X[2300:2340]
    target = X[2320]
    config = native_config(gamma=3.0, n_choices=2, gamma_auto=gamma == "auto")
    s = _core.DiscreteSearcher(_core.ItemStore(X), config, 5, 2)  # copies: no duplicate check
    ties, chunks = 0, set()
    for step in range(16):
        shown = s.select()
        skipped = step == 5  # a skipped query: the pass without a likelihood keeps them too
        s.update(shown, -1 if skipped else int(np.argmin(((X[shown] - target) ** 2).sum(1))))
        p = s.posterior()
        order = np.argsort(-p, kind="stable")
        for m in (1, 2, 8, 20):  # 20: beyond what the pass keeps
            expect = order[:m][p[order[:m]] > 0]
            assert s.most_probable(m).tolist() == expect.tolist(), (step, m)
        top = set(order[:8].tolist())
        ties += sum(1 for j in range(40) if {2300 + j, 4000 + j} <= top)  # original and copy
        chunks |= {int(i) // 320 for i in order[:8]}
    assert ties > 0 and len(chunks) >= 3  # the test saw ties and several chunks
    for bad in (0, len(X) + 1):
        with pytest.raises(ValueError, match="m: must lie in"):
            s.most_probable(bad)


def float_state_rtol(answers):
    """The posterior's relative error from a session's single-precision weights
    (``discrete/weights.hpp``): each pass over the store (two at construction, one per
    answer) rounds every weight once (2^-24), the sum over user hypotheses once more; an
    item's probability is its weight over their sum, so twice that."""
    return 2 * (answers + 3) * 2.0**-24


@pytest.mark.twin
def test_gammackl_posterior_is_the_bayes_posterior():
    """Independent check: prior uniform, likelihood = GammaCKL.choice_prob of the answers."""
    X = database(200, 2, seed=5)
    center, scale, stored = store_frame(X)  # the store's positions (centred, scaled, float32)
    Xs = center + scale * stored
    s = ts.DiscreteSearch(X, gamma=3.0, n_choices=3, random_state=0)
    oracle = ts.GammaCKL(3.0)
    logpost = np.zeros(len(X))
    for step in range(6):
        q = s.ask()
        choice = int(q[step % len(q)])
        s.tell(choice)
        heads = np.arange(len(X))
        p = oracle.choice_prob(Xs, heads, np.tile(q, (len(X), 1)))[:, list(q).index(choice)]
        logpost += np.log(np.maximum(p, 1e-300))
        logpost[q] = -np.inf
    expect = np.exp(logpost - logpost.max())
    expect /= expect.sum()
    np.testing.assert_allclose(s.posterior, expect, rtol=float_state_rtol(6), atol=1e-14)
    assert math.isclose(s.posterior.sum(), 1.0, rel_tol=1e-12)


@pytest.mark.twin
def test_gauss_adf_update_matches_monte_carlo_moments():
    """The moment-matched update equals the moments of prior x probit likelihood."""
    X = database(400, 2, seed=6)
    s = _core.DiscreteSearcher(_core.ItemStore(X), native_config(method="gauss", sigma=0.3), 1, 1)
    mu0, S0 = s.mean, s.cov
    q = s.select()
    s.update(q, 0)
    center, scale, stored = store_frame(X)
    Xs = center + scale * stored  # the items as the search sees them, in X's units
    rng = np.random.default_rng(0)
    Z = rng.multivariate_normal(mu0, S0, size=400_000)
    lik = ts.Probit(0.3).prob(
        np.vstack([Xs[q], Z]),
        np.column_stack([2 + np.arange(len(Z)), np.zeros(len(Z), int), np.ones(len(Z), int)]),
    )
    w = lik / lik.sum()
    mc_mean = w @ Z
    mc_cov = (Z - mc_mean).T @ ((Z - mc_mean) * w[:, None])
    np.testing.assert_allclose(s.mean, mc_mean, atol=5e-3)
    np.testing.assert_allclose(s.cov, mc_cov, atol=5e-3)


def test_simulation_is_reproducible_for_any_thread_count():
    X = database(400, 3, seed=7)
    runs = [ts.simulate_discrete(X, n_runs=60, random_state=3, n_jobs=j) for j in (1, 2, 3)]
    for r in runs[1:]:
        assert np.array_equal(r.n_queries, runs[0].n_queries)
        assert np.array_equal(r.found, runs[0].found)


@pytest.mark.twin
@pytest.mark.parametrize(
    "selection,k,lapse", [("infogain", 2, 0.0), ("weighted", 3, 0.2), ("infogain", 2, 0.3)]
)
def test_simulation_chunk_matches_the_twin(selection, k, lapse):
    """Searches 4..9 of a study (a chunk, as a Dask worker runs it), simulated users with a
    lapse rate: the native simulator and the NumPy twin's loop agree search for search."""
    from tripletsearch.discrete._simulate import _simulate_chunk

    X = database(80, 2, seed=12)
    T = np.array([3, 17, 40, 41, 66, 79])
    settings = ts.discrete.DiscreteSettings(gamma=3.0, n_choices=k, selection=selection)
    nat = _simulate_chunk(
        T,
        _core.DiscreteSimOptions(max_queries=60, oracle_lapse=lapse, first_run=4),
        X=X,
        oracle_X=None,
        oracle=ts.GammaCKL(3.0),
        config=settings.to_native(),
        seed=99,
        n_jobs=1,
    )
    twin = ref_simulate(
        X, T, 60, 3.0, lapse, 99, first_run=4, gamma=3.0, n_choices=k, selection=selection
    )
    np.testing.assert_array_equal(nat.n_queries, twin[0])
    np.testing.assert_array_equal(nat.found, twin[1])


def test_session_passes_identical_for_any_thread_count():
    X = database(4000, 4, seed=8)  # large enough for the parallel passes
    picks = []
    for jobs in (1, 2):
        s = ts.DiscreteSearch(X, random_state=11, n_jobs=jobs)
        seq = []
        for _ in range(5):
            q = s.ask()
            seq.append(q.tolist())
            s.tell(int(q[0]))
        picks.append((seq, s.posterior))
    assert picks[0][0] == picks[1][0]
    assert np.array_equal(picks[0][1], picks[1][1])


def test_simulated_searches_find_targets_and_beat_random():
    X = database(500, 2, seed=9)
    ours = ts.simulate_discrete(X, n_runs=150, random_state=1)
    rand = ts.simulate_discrete(X, method="random", n_runs=150, random_state=1)
    assert ours.found.all()
    # random: the target appears in query m with probability 2/(n - 2(m-1)): mean ~ n/4
    assert rand.mean > 3 * ours.mean
    assert stats.mannwhitneyu(ours.n_queries, rand.n_queries, alternative="less").pvalue < 1e-10
    # a perfect oracle (gamma huge) cannot make it worse
    sharp = ts.simulate_discrete(X, n_runs=150, random_state=1, oracle=ts.GammaCKL(50.0))
    assert sharp.mean <= ours.mean + 3 * ours.stderr


def test_literal_paper_rule_favours_improbable_items():
    X = database(500, 2, seed=10)
    weighted = ts.simulate_discrete(
        X, selection="weighted", n_runs=100, random_state=2, max_queries=60
    )
    paper = ts.simulate_discrete(X, selection="paper", n_runs=100, random_state=2, max_queries=60)
    assert weighted.found.mean() > 0.95
    assert paper.found.mean() < weighted.found.mean() - 0.3


def test_misspecified_user_positions_are_supported():
    X = database(300, 2, seed=12)
    noisy = X + np.random.default_rng(0).normal(scale=0.05, size=X.shape)
    r = ts.simulate_discrete(X, oracle_X=noisy, n_runs=50, random_state=0, max_queries=150)
    assert r.found.mean() > 0.8
    probit = ts.simulate_discrete(
        X, oracle=ts.Probit(0.1), method="gauss", n_runs=50, random_state=0
    )
    assert probit.found.mean() > 0.8


# ------------------------------------------------------------------ session protocol


def test_session_protocol():
    X = database(50, 2)
    s = ts.DiscreteSearch(X, n_choices=4, random_state=0)
    q = s.ask()
    assert len(q) == 4 and len(set(q.tolist())) == 4
    assert s.ask().tolist() == q.tolist()  # the same query until answered
    s.tell(int(q[2]))
    assert s.n_queries == 1 and np.all(s.posterior[q] == 0)
    q2 = s.ask()
    assert not set(q.tolist()) & set(q2.tolist())  # shown items are never shown again
    s.tell(None)  # skip
    assert s.n_queries == 2 and s.history[1]["item"] is None
    q3 = s.ask()
    s.found(int(q3[1]))
    assert s.done and s.target == int(q3[1]) and s.n_queries == 3
    top = s.top(5)
    assert len(top) == 5 and s.posterior[top[0]] == s.posterior.max()


def test_session_exhausts_all_items():
    X = database(7, 2)
    s = ts.DiscreteSearch(X, random_state=0)
    seen = []
    while not s.done:
        q = s.ask()
        if len(q) == 0:
            break
        seen += q.tolist()
        s.tell(int(q[0]))
    assert sorted(seen) == list(range(7)) and s.done
    with pytest.raises(RuntimeError, match="done"):
        s.ask()


@pytest.mark.parametrize("method", ["gamma-ckl", "gauss", "random"])
def test_to_dict_from_dict_round_trip(method):
    X = database(120, 3)
    s = ts.DiscreteSearch(X, method=method, n_choices=2, random_state=5)
    for _ in range(4):
        q = s.ask()
        s.tell(int(q[1]))
    pending = s.ask()
    state = json.loads(json.dumps(s.to_dict()))  # JSON-safe
    t = ts.DiscreteSearch.from_dict(state, X)
    assert t.ask().tolist() == pending.tolist()
    np.testing.assert_array_equal(t.posterior, s.posterior)
    s.tell(int(pending[0]))
    t.tell(int(pending[0]))
    assert s.ask().tolist() == t.ask().tolist()


def test_corrupted_state_is_rejected():
    X = database(60, 2)
    s = ts.DiscreteSearch(X, random_state=1)
    q = s.ask()
    s.tell(int(q[0]))
    good = s.to_dict()
    bad_cases = [
        ({**good, "version": 99}, "unsupported version"),
        ({**good, "fingerprint": "0" * 32}, "not the database"),
        ({**good, "history": [{"shown": [0, 1], "item": 0, "found": False}]}, "does not replay"),
        ({**good, "history": "nope"}, "history must be a list"),
        ({**good, "history": [{"shown": q.tolist()}]}, "malformed"),
        (
            {**good, "history": [{"shown": q.tolist(), "choice": 999, "found": False}]},
            "was not shown",
        ),
        ({**good, "done": True}, "'done' does not match"),
        ({**good, "method": "magic"}, "method: expected one of"),
        ({k: v for k, v in good.items() if k != "seed"}, "malformed"),
    ]
    for state, match in bad_cases:
        with pytest.raises(ValueError, match=match):
            ts.DiscreteSearch.from_dict(state, X)
    with pytest.raises(ValueError, match="not the database"):
        ts.DiscreteSearch.from_dict(good, X + 1.0)
    with pytest.raises(TypeError, match="state: expected a dict"):
        ts.DiscreteSearch.from_dict([1, 2], X)


# ------------------------------------------------------------------ bad input


def test_bad_answers_leave_the_session_unharmed():
    X = database(40, 2)
    s = ts.DiscreteSearch(X, random_state=0)
    with pytest.raises(RuntimeError, match="tell before ask"):
        s.tell(0)
    with pytest.raises(RuntimeError, match="found before ask"):
        s.found(0)
    q = s.ask()
    other = next(i for i in range(40) if i not in q)
    with pytest.raises(ValueError, match=f"item: item {other} was not shown"):
        s.tell(other)
    with pytest.raises(TypeError, match="item: expected an item index"):
        s.tell(1.5)
    with pytest.raises(TypeError, match="item: expected an item index"):
        s.found(None)
    with pytest.raises(ValueError, match="item: item"):
        s.found(other)
    assert s.ask().tolist() == q.tolist() and s.n_queries == 0  # unharmed
    s.found(int(q[0]))
    with pytest.raises(RuntimeError, match="tell after the search is done"):
        s.tell(int(q[0]))


@pytest.mark.parametrize(
    "X,kwargs,exc,match",
    [
        (np.array([[0.0, np.nan], [1.0, 2.0], [3, 4]]), {}, ValueError, "X: contains NaN"),
        (
            np.zeros((3, 2)) + np.arange(3)[:, None],
            {"n_choices": 4},
            ValueError,
            "X: 3 items cannot fill",
        ),
        (
            np.array([[0.0, 1.0], [2.0, 3.0], [0.0, 1.0]]),
            {},
            ValueError,
            "X: rows 0 and 2 are identical",
        ),
        (database(10), {"method": "bfs"}, ValueError, "method: expected one of"),
        (database(10), {"selection": "best"}, ValueError, "selection: expected one of"),
        (database(10), {"gamma": 0.0}, ValueError, "gamma: must be > 0"),
        (database(10), {"r": -1.0}, ValueError, "r: must be > 0"),
        (database(10), {"sigma": 0.0}, ValueError, "sigma: must be > 0"),
        (database(10), {"n_choices": 1}, ValueError, r"n_choices: must lie in \[2, 64\], got 1"),
        (database(100), {"n_choices": 65}, ValueError, r"n_choices: must lie in \[2, 64\], got 65"),
        (database(10), {"n_choices": 2.0}, TypeError, "n_choices: expected an integer"),
        (database(10), {"random_state": "x"}, TypeError, "random_state"),
    ],
)
def test_bad_construction(X, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        ts.DiscreteSearch(X, **kwargs)


def test_simulate_bad_input():
    X = database(30, 2)
    with pytest.raises(ValueError, match="oracle: the Probit oracle answers pairs only"):
        ts.simulate_discrete(X, oracle=ts.Probit(0.1), n_choices=4)
    with pytest.raises(ValueError, match="oracle_X: expected 30 rows"):
        ts.simulate_discrete(X, oracle_X=database(20, 2))
    with pytest.raises(ValueError, match="targets: index 30"):
        ts.simulate_discrete(X, targets=[0, 30])
    with pytest.raises(ValueError, match="max_queries: must be >= 1"):
        ts.simulate_discrete(X, max_queries=0)
    with pytest.raises(TypeError, match="oracle: expected a tripletsearch oracle"):
        ts.simulate_discrete(X, oracle="gamma")


# ------------------------------------------------------------------ high dimensions


@pytest.mark.parametrize("d,rtol", [(5, 1e-12), (40, 1e-5), (200, 1e-5)])
def test_principal_axes_match_numpy(d, rtol):
    """Jacobi up to 32 dimensions, subspace iteration beyond: the top eigenpairs of eigh."""
    rng = np.random.default_rng(d)
    Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    C = (Q * (1.0 / np.arange(1, d + 1) ** 1.5)) @ Q.T
    values, vectors = _core.principal_axes(C, 3)
    w, W = np.linalg.eigh(C)
    np.testing.assert_allclose(values, w[::-1][:3], rtol=rtol)
    for i in range(3):
        assert abs(vectors[i] @ W[:, -1 - i]) == pytest.approx(1.0, abs=rtol)
        assert vectors[i][np.argmax(np.abs(vectors[i]))] > 0  # the sign convention


@pytest.mark.twin
@pytest.mark.parametrize("d,tol", [(3, 1e-12), (12, 1e-12), (48, 1e-5)])
def test_principal_axes_match_the_twin(d, tol):
    """The twin's eigenpairs (eigh, the same sign convention) and the native ones agree:
    Jacobi to rounding up to 32 dimensions, subspace iteration to its tolerance beyond."""
    rng = np.random.default_rng(100 + d)
    Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    C = (Q * (1.0 / np.arange(1, d + 1) ** 1.5)) @ Q.T
    values, vectors = _core.principal_axes(C, 3)
    twin = top_eigenpairs(C, 3)
    np.testing.assert_allclose(values, [v for v, _ in twin], rtol=tol)
    for i, (_, v) in enumerate(twin):
        np.testing.assert_allclose(vectors[i], v, atol=10 * tol)


@pytest.mark.twin
def test_high_dimensional_posterior_matches_the_twin():
    """Beyond 32 dimensions the pass keeps the mean only and the covariance is an operator:
    driven by the same queries, posterior, mean and (on request) covariance match the twin."""
    X = np.random.default_rng(9).normal(size=(600, 40)) * np.linspace(2.0, 0.2, 40)
    a = _core.DiscreteSearcher(_core.ItemStore(X), native_config(), 5, 2)
    b = RefSearcher(X, selection="weighted", seed=5)
    rng = np.random.default_rng(0)
    for _ in range(6):
        q = a.select()
        choice = int(rng.integers(len(q)))
        a.update(q, choice)
        b.update(q, choice)
        np.testing.assert_allclose(a.posterior(), b.posterior(), rtol=1e-9, atol=1e-15)
        np.testing.assert_allclose(a.mean, b.mean, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(a.cov, b.cov, rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("d", [3, 40, 200])
def test_axis_form_scan_equals_the_plain_scan_and_numpy(d):
    """The pre-test on projections (protos on principal axes) keeps the exact result: the
    same candidates as the scan over all distances, and as NumPy's ranking."""
    rng = np.random.default_rng(d)
    n = 2000
    X = rng.normal(size=(n, d)) * np.exp(-np.arange(d) / 8.0)
    store = _core.ItemStore(X)
    Xs = ((X - store.center) / store.scale).astype(np.float32).astype(np.float64)
    center = Xs[:50].mean(0) + 0.01 * rng.normal(size=d)
    V, _ = np.linalg.qr(rng.normal(size=(d, 3)))
    V = V.T.copy()
    axis = np.repeat(np.arange(3), 10)
    steps = np.tile(np.array([-1.5, -1, -0.5, -0.25, -0.1, 0.1, 0.25, 0.5, 1, 1.5]), 3)
    protos = center + steps[:, None] * V[axis]
    Xs[:6] = protos[[0, 4, 11, 15, 22, 29]] + 1e-7  # items at protos: distances near 0
    X[:6] = Xs[:6] * store.scale + store.center
    store = _core.ItemStore(X)
    Xs = ((X - store.center) / store.scale).astype(np.float32).astype(np.float64)
    w = rng.random(n) ** 3
    w[rng.random(n) < 0.2] = 0.0
    for rule in (0, 1, 2):
        plain = _core.scan_candidates(store, protos, 4, w, rule)
        axes = _core.scan_candidates(
            store, protos, 4, w, rule, center=center, vectors=V, axis=axis, steps=steps
        )
        np.testing.assert_array_equal(axes, plain)
        for c, z in enumerate(protos):  # NumPy: lowest score, ties by index
            D = ((Xs - z) ** 2).sum(1)
            with np.errstate(divide="ignore"):
                score = [np.where(w > 0, D / np.where(w > 0, w, 1), np.inf), w * np.sqrt(D), D][
                    rule
                ]
            ok = np.nonzero(np.isfinite(score))[0]
            expect = ok[np.lexsort((ok, score[ok]))][:4]
            assert plain[c].tolist() == expect.tolist()


def test_scan_candidates_rejects_bad_axis_forms():
    store = _core.ItemStore(np.random.default_rng(0).normal(size=(100, 4)))
    protos, w = np.zeros((2, 4)), np.ones(100)
    form = dict(center=np.zeros(4), vectors=np.eye(4)[:2], axis=np.array([0, 1]), steps=np.ones(2))
    for key, bad, match in [
        ("axis", np.array([0, 2]), "axis: index 2"),
        ("axis", np.array([0]), "axis, steps"),
        ("steps", np.ones(3), "axis, steps"),
        ("center", np.zeros(3), "center, vectors"),
        ("vectors", np.eye(3)[:2], "center, vectors"),
    ]:
        with pytest.raises(ValueError, match=match):
            _core.scan_candidates(store, protos, 2, w, 0, **{**form, key: bad})
    with pytest.raises(ValueError, match="center: needs"):
        _core.scan_candidates(store, protos, 2, w, 0, center=np.zeros(4))
    with pytest.raises(ValueError, match="rule"):
        _core.scan_candidates(store, protos, 2, w, 3)
    with pytest.raises(TypeError):  # no store: an error, not a crash
        _core.scan_candidates(None, protos, 2, w, 0)
    with pytest.raises(TypeError):
        _core.DiscreteSearcher(None, native_config(), 1, 1)


@pytest.mark.twin
def test_high_dimensional_axes_follow_the_posterior():
    """Beyond 32 dimensions each answer's pass takes one subspace step: the axes the next
    query uses stay close to the twin's exact eigenpairs of the posterior covariance."""
    d = 48
    X = np.random.default_rng(12).normal(size=(3000, d)) * 0.8 ** np.arange(d)
    config = dict(method="gamma-ckl", gamma=3.0, selection="infogain")
    a = _core.DiscreteSearcher(_core.ItemStore(X), native_config(**config), 5, 2)
    b = RefSearcher(X, **config, seed=5)
    rng = np.random.default_rng(1)
    for step in range(8):
        values, vectors = a.principal_axes(3)
        w, W = np.linalg.eigh(b.cov)
        np.testing.assert_allclose(values, w[::-1][:3], rtol=2e-3)
        for i in range(3):
            assert abs(vectors[i] @ W[:, -1 - i]) > 0.999, (step, i)
        q = a.select()
        choice = int(rng.integers(len(q)))
        a.update(q, choice)
        b.update(q, choice)


@pytest.mark.once  # a statistical run; the twin tests reach its code at every size
def test_high_dimensional_search_finds_targets():
    d = 64
    X = np.random.default_rng(10).normal(size=(1000, d)) / np.sqrt(np.arange(1, d + 1))
    ours = ts.simulate_discrete(X, n_runs=100, gamma=3.0 * d / 5, random_state=2)
    rand = ts.simulate_discrete(X, n_runs=100, method="random", random_state=2)
    assert ours.found.all() and ours.median <= 20 < rand.median


# ------------------------------------------------------------------ large catalogues


_PEAK = """
import tracemalloc, numpy as np, tripletsearch as ts
X32 = np.random.default_rng(0).normal(size=(100_000, 32)).astype(np.float32)
tracemalloc.start()
s = ts.DiscreteSearch(X32, gamma=3.0, random_state=1, n_jobs=2)
s.tell(int(s.ask()[0]))
state = s.to_dict()
print(tracemalloc.get_traced_memory()[1] / X32.nbytes)
"""


def test_float32_catalogue_is_read_as_it_is():
    """A float32 catalogue searches as its float64 twin does, without a float64 copy in
    validation, the store or the state's fingerprint (traced by tracemalloc in a fresh
    process: other tests' threads stay out of the count)."""
    import hashlib
    import subprocess
    import sys

    from tripletsearch.discrete._items import _fingerprint

    out = subprocess.run([sys.executable, "-c", _PEAK], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert float(out.stdout.split()[-1]) < 0.25  # a float64 copy would be 2x
    X32 = np.random.default_rng(0).normal(size=(20_000, 8)).astype(np.float32)
    s32 = ts.DiscreteSearch(X32, gamma=3.0, random_state=1, n_jobs=2)
    s64 = ts.DiscreteSearch(X32.astype(np.float64), gamma=3.0, random_state=1, n_jobs=2)
    for _ in range(3):
        q = s32.ask()
        assert q.tolist() == s64.ask().tolist()
        s32.tell(int(q[0]))
        s64.tell(int(q[0]))
    np.testing.assert_array_equal(s32.posterior, s64.posterior)
    # the fingerprint streams blocks of float64 bytes: the whole array's digest
    whole = hashlib.sha256(X32.astype(np.float64).tobytes()).hexdigest()[:32]
    state = s32.to_dict()
    assert state["fingerprint"] == _fingerprint(X32) == whole
    back = ts.DiscreteSearch.from_dict(json.loads(json.dumps(state)), X32)
    np.testing.assert_array_equal(back.posterior, s32.posterior)


def test_float32_catalogue_with_nan_in_a_later_block_is_rejected():
    X = np.zeros((70_000, 3), dtype=np.float32)
    X[:, 0] = np.arange(70_000)
    X[69_999, 2] = np.nan
    with pytest.raises(ValueError, match="X: contains NaN or inf"):
        ts.DiscreteSearch(X)


# ------------------------------------------------------------------ observe (replay)


def test_observe_replays_to_the_same_posterior():
    X = np.random.default_rng(3).normal(size=(300, 3))
    live = ts.DiscreteSearch(X, n_choices=4, random_state=5)
    rng = np.random.default_rng(0)
    for step in range(6):
        shown = live.ask()
        live.tell(None if step == 2 else int(shown[rng.integers(len(shown))]))
    # another process (or version) replays the screens as shown
    replay = ts.DiscreteSearch(X, n_choices=4, random_state=5)
    for record in live.history:  # keyed as observe's arguments
        replay.observe(**record)
    np.testing.assert_array_equal(replay.posterior, live.posterior)
    np.testing.assert_array_equal(replay.ask(), live.ask())
    assert replay.n_queries == live.n_queries == 6
    # observed states restore by observing, including a pending query as it was shown
    state = json.loads(json.dumps(replay.to_dict()))
    assert state["observed"] is True
    back = ts.DiscreteSearch.from_dict(state, X)
    np.testing.assert_array_equal(back.posterior, live.posterior)
    np.testing.assert_array_equal(back.ask(), live.ask())


def test_observe_found_ends_and_rules_out_shown_items():
    X = np.random.default_rng(4).normal(size=(50, 2))
    s = ts.DiscreteSearch(X, n_choices=3, random_state=1)
    s.observe([4, 9, 17], 9)
    p = s.posterior
    assert p[[4, 9, 17]].tolist() == [0.0, 0.0, 0.0] and math.isclose(p.sum(), 1.0)
    s.observe([1, 2], 2, found=True)
    assert s.done and s.target == 2 and s.n_queries == 2
    back = ts.DiscreteSearch.from_dict(json.loads(json.dumps(s.to_dict())), X)
    assert back.done and back.target == 2


@pytest.mark.parametrize(
    "shown,item,found,exc,match",
    [
        ([0, 0], 0, False, ValueError, "shown: items must be distinct"),
        ([0, 1, 2, 3], 0, False, ValueError, "shown: expected 1 to 3 items"),
        ([], None, False, ValueError, "shown: expected 1 to 3 items"),
        ([0, 99], 0, False, ValueError, "shown: index 99"),
        ([0.5, 1], 0, False, TypeError, "shown: expected an integer array"),
        ([0, 1], 5, False, ValueError, "item: item 5 was not shown"),
        ([0, 1], True, False, TypeError, "item: expected an item index"),
        ([0, 1], None, True, ValueError, "item: found=True needs"),
        ([0, 1], 0, "yes", TypeError, "found: expected a bool"),
    ],
)
def test_observe_bad_input_leaves_the_session_unharmed(shown, item, found, exc, match):
    X = np.random.default_rng(4).normal(size=(50, 2))
    s = ts.DiscreteSearch(X, n_choices=3, random_state=1)
    before = s.posterior
    with pytest.raises(exc, match=match):
        s.observe(shown, item, found)
    np.testing.assert_array_equal(s.posterior, before)
    assert s.n_queries == 0


@pytest.mark.parametrize(
    "d,kwargs",
    [
        (3, {}),
        (3, dict(gamma="auto", lapse="auto", selection="infogain")),
        (3, dict(method="gauss")),
        (3, dict(method="random")),
        (40, dict(gamma="auto")),  # beyond 32 dimensions: the subspace block is copied too
    ],
)
def test_spawn_is_a_fresh_session_over_the_same_store(d, kwargs):
    """A spawn copies a prior computed once: the same queries and posterior as a new session."""
    X = np.random.default_rng(6).normal(size=(200, d))
    base = ts.DiscreteSearch(X, n_choices=4, random_state=1, **kwargs)
    base.tell(int(base.ask()[0]))
    child = base.spawn(random_state=9)
    sibling = base.spawn(random_state=10)  # a sibling's answers stay its own
    sibling.tell(int(sibling.ask()[-1]))
    fresh = ts.DiscreteSearch(X, n_choices=4, random_state=9, **kwargs)
    assert child.n_queries == 0 and base.n_queries == 1
    for _ in range(5):
        q = child.ask()
        np.testing.assert_array_equal(q, fresh.ask())
        child.tell(int(q[1]))
        fresh.tell(int(q[1]))
    np.testing.assert_array_equal(child.posterior, fresh.posterior)
    assert base.n_queries == 1  # the parent is untouched


def test_state_bytes_are_single_precision_weights_and_a_bit_per_item():
    """A session keeps 4 bytes per item (and per item and user hypothesis), a bit per item
    for the items shown, and O(d^2) beside: what a server's memory budget counts."""
    n, d = 10_000, 4
    X = np.random.default_rng(0).normal(size=(n, d))
    padded = -(-n // 64) * 64
    fixed = ts.DiscreteSearch(X, gamma=3.0, n_choices=4, random_state=0)
    assert 4 * padded + n / 8 <= fixed.state_bytes <= 4 * padded + n / 8 + 4096
    auto = ts.DiscreteSearch(X, gamma="auto", n_choices=4, random_state=0)
    stride = -(-padded // 512) * 512 + 72  # hypotheses.hpp: no 4K aliasing between them
    lo = 4 * padded + 4 * len(_core.GAMMA_GRID) * stride + n / 8
    assert lo <= auto.state_bytes <= lo + 4096


@pytest.mark.twin
def test_weights_below_float_normals_are_flushed_as_the_twin_does():
    """Long sessions drive most weights below float's smallest normal number: they become 0
    (never denormals), the twin flushes the same items, and the posterior stays a
    distribution that matches it."""
    X = database(2000, 2, seed=12)
    cfg = dict(gamma=60.0, n_choices=4, selection="weighted")
    a = _core.DiscreteSearcher(_core.ItemStore(X), native_config(**cfg), 5, 1)
    b = RefSearcher(X, **cfg, seed=5)
    target = X[17]
    answers = 0
    for _ in range(60):
        qa, qb = a.select(), b.select()
        assert qa.tolist() == qb.tolist()
        d = ((X[qa] - target) ** 2).sum(1)
        a.update(qa, int(np.argmin(d)))
        b.update(qb, int(np.argmin(d)))
        answers += 1
    pa, pb = a.posterior(), b.posterior()
    unshown = ~b.shown
    flushed = unshown & (pa == 0)
    assert flushed.sum() > 100  # the floor was reached by many items
    np.testing.assert_array_equal(pa == 0, pb == 0)
    np.testing.assert_allclose(pa, pb, rtol=float_state_rtol(answers), atol=0)
    assert math.isclose(pa.sum(), 1.0, rel_tol=1e-12) and np.all(np.isfinite(pa))


# ------------------------------------------------------------------ the inferred user

USER_CONFIGS = [
    dict(gamma_auto=True, n_choices=2, selection="infogain"),
    dict(gamma_auto=True, lapse_auto=True, n_choices=3, selection="infogain"),
    dict(gamma_auto=True, lapse_auto=True, n_choices=2, selection="weighted"),
    dict(lapse=0.1, n_choices=2, selection="infogain"),
    dict(lapse_auto=True, gamma=2.0, n_choices=4, selection="weighted"),
]


@pytest.mark.twin
@pytest.mark.parametrize("config", USER_CONFIGS)
def test_user_hypotheses_match_numpy_twin(config):
    X = database(200, 3, seed=4)
    a = _core.DiscreteSearcher(_core.ItemStore(X), native_config(**config), 31, 1)
    b = RefSearcher(X, **config, seed=31)
    rng = np.random.default_rng(2)
    for _ in range(10):
        qa, qb = a.select(), b.select()
        assert qa.tolist() == qb.tolist()
        choice = int(rng.integers(-1, len(qa)))
        a.update(qa, choice)
        b.update(qb, choice)
        np.testing.assert_allclose(a.posterior(), b.posterior(), rtol=1e-9, atol=1e-15)
        np.testing.assert_allclose(a.mean, b.mean, rtol=1e-9, atol=1e-12)
        ua, ub = a.user_posterior(), b.user_posterior()
        assert (ua is None) == (ub is None)
        if ua is not None:
            for x, y in zip(ua, ub):
                np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-15)


@pytest.mark.twin
def test_hypothesis_posterior_is_the_bayes_posterior():
    """Independent check: the joint posterior over (item, gamma) from the oracle's choice
    probabilities, prior x likelihood, marginalized both ways."""
    from tripletsearch._reference.choice import GAMMA_GRID, gamma_log_prior

    X = database(150, 2, seed=8)
    center, scale, stored = store_frame(X)
    Xs = center + scale * stored
    s = ts.DiscreteSearch(X, gamma="auto", n_choices=3, random_state=1)
    prior = np.array([math.exp(gamma_log_prior(j)) for j in range(len(GAMMA_GRID))])
    logpost = np.log(prior / prior.sum())[:, None] + np.zeros((len(GAMMA_GRID), len(X)))
    for step in range(6):
        q = s.ask()
        choice = int(q[(2 * step) % len(q)])
        s.tell(choice)
        for j, g in enumerate(GAMMA_GRID):
            p = ts.GammaCKL(g).choice_prob(Xs, np.arange(len(X)), np.tile(q, (len(X), 1)))
            logpost[j] += np.log(np.maximum(p[:, list(q).index(choice)], 1e-300))
        logpost[:, q] = -np.inf
    joint = np.exp(logpost - logpost.max())
    joint /= joint.sum()
    np.testing.assert_allclose(s.posterior, joint.sum(0), rtol=float_state_rtol(6), atol=1e-12)
    grid, probs = s.user_posterior()["gamma"]
    np.testing.assert_allclose(probs, joint.sum(1), rtol=float_state_rtol(6), atol=1e-12)
    med, (lo, hi) = s.gamma_, s.gamma_interval_
    cdf = np.cumsum(joint.sum(1))
    assert med == GAMMA_GRID[np.searchsorted(cdf, 0.5 - 1e-12)]
    assert lo == GAMMA_GRID[np.searchsorted(cdf, 0.025 - 1e-12)]
    assert hi == GAMMA_GRID[np.searchsorted(cdf, 0.975 - 1e-12)]


@pytest.mark.twin
def test_lapse_model_is_the_mixture():
    X = database(120, 2, seed=9)
    center, scale, stored = store_frame(X)
    Xs = center + scale * stored
    s = ts.DiscreteSearch(X, gamma=2.0, lapse=0.2, n_choices=2, random_state=3)
    logpost = np.zeros(len(X))
    for step in range(5):
        q = s.ask()
        choice = int(q[step % 2])
        s.tell(choice)
        p = ts.GammaCKL(2.0).choice_prob(Xs, np.arange(len(X)), np.tile(q, (len(X), 1)))
        logpost += np.log(0.1 + 0.8 * p[:, list(q).index(choice)])
        logpost[q] = -np.inf
    post = np.exp(logpost - logpost.max())
    np.testing.assert_allclose(s.posterior, post / post.sum(), rtol=float_state_rtol(5), atol=1e-12)
    assert s.lapse == 0.2 and s.lapse_ == 0.2 and s.user_posterior()["lapse"][1].tolist() == [1]


def test_auto_estimates_the_users_gamma_in_the_database():
    X = database(2000, 3, seed=2)
    est = {}
    for gamma in (1.5, 8.0):
        oracle = ts.GammaCKL(gamma)
        probs = np.zeros(13)
        for t in range(12):  # the gamma posterior of twelve searches, pooled
            rng = np.random.default_rng(t)
            target = int(rng.integers(len(X)))
            s = ts.DiscreteSearch(X, gamma="auto", n_choices=4, random_state=t)
            for _ in range(40):
                shown = s.ask()
                if target in shown:
                    break
                p = oracle.choice_prob(X, [target], [shown])[0]
                s.tell(int(shown[rng.choice(len(shown), p=p / p.sum())]))
            probs += s.user_posterior()["gamma"][1]
        grid = s.user_posterior()["gamma"][0]
        est[gamma] = float(np.exp(probs @ np.log(grid) / probs.sum()))
    # searches end in a few dozen answers: the posterior moves from the prior (geometric
    # mean 1.9) towards the user's gamma, in order
    assert est[1.5] < 2.0 < est[8.0], est
    assert est[8.0] > 1.5 * est[1.5]


def test_auto_is_reproducible_for_any_thread_count_and_persists():
    X = database(3000, 4, seed=6)
    kw = dict(gamma="auto", lapse="auto", oracle=ts.GammaCKL(2.0), n_runs=6, random_state=2)
    r1 = ts.simulate_discrete(X, n_jobs=1, **kw)
    r2 = ts.simulate_discrete(X, n_jobs=2, **kw)
    np.testing.assert_array_equal(r1.n_queries, r2.n_queries)
    s = ts.DiscreteSearch(X, gamma="auto", lapse="auto", random_state=4)
    for _ in range(5):
        s.tell(int(s.ask()[1]))
    state = json.loads(json.dumps(s.to_dict()))
    assert state["gamma"] == "auto" and state["gamma_"] == s.gamma_
    t = ts.DiscreteSearch.from_dict(state, X)
    np.testing.assert_array_equal(t.posterior, s.posterior)
    assert t.gamma_interval_ == s.gamma_interval_
    # a state written before the lapse rate existed has none: it means lapse 0
    plain = ts.DiscreteSearch(X, gamma="auto", random_state=4)
    for _ in range(5):
        plain.tell(int(plain.ask()[1]))
    old = {k: v for k, v in plain.to_dict().items() if k != "lapse"}
    again = ts.DiscreteSearch.from_dict(old, X)
    assert again.lapse == 0.0
    np.testing.assert_array_equal(again.posterior, plain.posterior)


@pytest.mark.parametrize(
    "kwargs,exc,match",
    [
        (dict(gamma="fast"), TypeError, "gamma: expected a real number or 'auto'"),
        (dict(lapse=1.0), ValueError, "lapse: must lie in"),
        (dict(lapse="Auto"), TypeError, "lapse: expected a real number or 'auto'"),
    ],
)
def test_bad_user_model(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        ts.DiscreteSearch(database(50, 2), **kwargs)


def test_auto_is_gamma_ckl_only():
    # GaussSearch and the random baseline have no gamma: "auto" (the default) is unused
    g = ts.DiscreteSearch(database(50, 2), method="gauss", lapse="auto", random_state=0)
    assert g.user_posterior()["gamma"][0].tolist() == [3.0] and g.lapse == 0.0
    with pytest.raises(ValueError, match="gamma: 'auto' .* gamma-ckl option"):
        native_config(method="gauss", gamma_auto=True)


def test_simulate_auto_needs_the_user():
    with pytest.raises(ValueError, match="oracle: give the simulated user"):
        ts.simulate_discrete(database(50, 2), gamma="auto", n_runs=2)


# ---------------------------------------------------------------------- openings
def first_screens(X, seeds, **kw):
    return [tuple(sorted(ts.DiscreteSearch(X, random_state=s, **kw).ask().tolist())) for s in seeds]


@pytest.mark.parametrize("opening", ["uniform", "random"])
@pytest.mark.parametrize("k", [2, 4])
@pytest.mark.parametrize("method", ["gamma-ckl", "gauss"])
def test_sessions_open_on_their_own_screens(method, k, opening):
    """Each session's seed draws its opening ("uniform"), or turns it (gamma-CKL) or draws it
    (GaussSearch) ("random"): over 20 seeds at least 18 distinct first screens, on 1,000
    uniform points in d = 5."""
    X = np.random.default_rng(11).uniform(size=(1000, 5))
    screens = first_screens(X, range(20), method=method, n_choices=k, gamma=3.0, opening=opening)
    assert len(set(screens)) >= 18, screens


def test_the_principal_opening_is_every_sessions():
    X = np.random.default_rng(11).uniform(size=(1000, 5))
    screens = first_screens(X, range(20), n_choices=4, gamma=3.0, opening="principal")
    assert len(set(screens)) <= 5  # what made a blind study's methods tell apart
    spawned = ts.DiscreteSearch(X, n_choices=4, gamma=3.0, random_state=0)
    again = [tuple(sorted(spawned.spawn(random_state=s).ask().tolist())) for s in range(6)]
    assert again == first_screens(X, range(6), n_choices=4, gamma=3.0)  # spawn = new session


@pytest.mark.twin
@pytest.mark.parametrize("k,selection", [(2, "infogain"), (4, "infogain"), (3, "weighted")])
@pytest.mark.parametrize("d", [1, 2, 5])
def test_the_opening_rotation_matches_the_twin(k, selection, d):
    X = database(200, d, seed=d)
    for seed in (1, 2**63 + 5, 77):
        cfg = dict(n_choices=k, selection=selection, opening="random")
        a = _core.DiscreteSearcher(_core.ItemStore(X), native_config(**cfg), seed, 1)
        b = RefSearcher(X, **cfg, seed=seed)
        for _ in range(3):  # the opening turned, the next queries on the principal axes
            q = a.select()
            assert q.tolist() == b.select().tolist()
            a.update(q, 0)
            b.update(q, 0)


def test_a_rotation_keeps_the_axes_orthonormal_and_the_variance():
    rng = np.random.default_rng(3)
    A = rng.normal(size=(6, 6))
    C = A @ A.T
    eig = top_eigenpairs(C, 4)
    turned = rotated_axes(eig, 99)
    V = np.array([v for _, v in turned])
    np.testing.assert_allclose(V @ V.T, np.eye(4), atol=1e-12)
    # the variances along the new axes are the covariance's, and their sum is kept
    for var, v in turned:
        assert var == pytest.approx(float(v @ C @ v), rel=1e-10)
    assert sum(v for v, _ in turned) == pytest.approx(sum(v for v, _ in eig), rel=1e-12)
    assert rotated_axes(eig, 99)[0][0] == turned[0][0]  # seeded


def test_a_state_of_version_1_replays_its_principal_opening():
    X = database(120, 3)
    old = ts.DiscreteSearch(X, n_choices=2, gamma=3.0, opening="principal", random_state=4)
    for _ in range(3):
        old.tell(int(old.ask()[0]))
    pending = old.ask()
    state = {k: v for k, v in old.to_dict().items() if k != "opening"}
    state["version"] = 1  # as 0.2.0 wrote it: no opening, opened on the principal axes
    again = ts.DiscreteSearch.from_dict(json.loads(json.dumps(state)), X)
    assert again.ask().tolist() == pending.tolist() and again.n_queries == 3
    # a new state keeps its opening: new sessions' default, "uniform" (state version 3 on)
    new = ts.DiscreteSearch(X, n_choices=2, gamma=3.0, random_state=4)
    new.tell(int(new.ask()[0]))
    back = ts.DiscreteSearch.from_dict(new.to_dict(), X)
    assert back.to_dict()["opening"] == "uniform" and back.to_dict()["version"] >= 3


@pytest.mark.parametrize(
    "opening,exc", [("rotated", ValueError), (1, TypeError), (None, TypeError)]
)
def test_bad_opening(opening, exc):
    with pytest.raises(exc, match="opening"):
        ts.DiscreteSearch(database(50, 2), opening=opening)
    with pytest.raises(exc, match="opening"):
        ts.simulate_discrete(database(50, 2), opening=opening, n_runs=2)
