"""Continuous search: regions, the lemma's constants, twin equivalence, convergence."""

import json
import math

import numpy as np
import pytest
from scipy import stats

import tripletsearch as ts
from tripletsearch import _core, theory
from tripletsearch._reference import continuous as ref
from tripletsearch.continuous import METHODS, Region

# ------------------------------------------------------------------ regions


def test_region_geometry():
    X = Region(np.array([0.0, 0.0]), 1.0, 3)
    kids = X.children()
    assert len(kids) == 25 and all(k.edge == 0.5 and k.depth == 4 for k in kids)
    offsets = sorted({float(k.center[0]) for k in kids})
    assert offsets == [-0.5, -0.25, 0.0, 0.25, 0.5]
    # every child lies inside the slack S (edge 3/2) and the children cover X
    for k in kids:
        assert np.all(np.abs(k.center) + k.edge / 2 <= 0.75 + 1e-12)
    pts = np.random.default_rng(0).uniform(-0.5, 0.5, size=(200, 2))
    assert all(any(k.contains(p) for k in kids) for p in pts)
    P = X.parent()
    assert P.edge == 4.0 and P.depth == 1 and all(P.contains(k.center) for k in kids)
    assert X.ancestor(2).edge == 16.0 and X.ancestor(2).depth == -1


# ------------------------------------------------------------------ lemma constants


def test_uncertainty_radius_closed_form():
    assert math.isclose(theory.uncertainty_radius(2), 3 + math.sqrt(10))
    with pytest.raises(ValueError, match="dim: the hypothesis-test lemma assumes d > 1"):
        theory.uncertainty_radius(1)


@pytest.mark.parametrize("d,gamma", [(2, 3.0), (3, 5.0), (5, 2.0), (8, 10.0)])
def test_lemma_probabilities_bound_the_regions(d, gamma):
    """Monte-Carlo check of lemma:hyptest: targets in the region (edge 2 at 0) prefer 0 over
    x_q = (1 + d) e at least p_X; targets beyond r_u at most p_F."""
    p_x, p_f = theory.hypothesis_test_probs(d, gamma)
    assert 0.5 < p_f < p_x < 1
    rng = np.random.default_rng(d)
    xq = np.zeros(d)
    xq[0] = 1 + d

    def pref(t):
        D0 = (t**2).sum(1)
        Dq = ((t - xq) ** 2).sum(1)
        return 1 / (1 + (D0 / Dq) ** (gamma / 2))

    inside = rng.uniform(-1, 1, size=(100_000, d))
    inside[:10] = np.sign(rng.normal(size=(10, d)))  # corners
    assert pref(inside).min() >= p_x - 1e-12
    ru = theory.uncertainty_radius(d)
    dirs = rng.normal(size=(100_000, d))
    far = (
        dirs
        / np.linalg.norm(dirs, axis=1)[:, None]
        * (ru + rng.exponential(2.0, size=(100_000, 1)))
    )
    assert pref(far).max() <= p_f + 1e-12


@pytest.mark.parametrize(
    "p_x,p_f,delta", [(0.8, 0.7, 0.01), (0.7981, 0.7667, 1e-4), (0.95, 0.6, 1e-6)]
)
def test_binomial_test_plan_is_valid_and_minimal(p_x, p_f, delta):
    n, tau = theory.binomial_test_plan(p_x, p_f, delta)
    assert stats.binom.cdf(tau - 1, n, p_x) <= delta * (1 + 1e-9)  # false rejection
    assert stats.binom.sf(tau - 1, n, p_f) <= delta * (1 + 1e-9)  # false acceptance
    # no smaller n admits any threshold
    m = n - 1
    taus = np.arange(m + 2)
    ok = (stats.binom.cdf(taus - 1, m, p_x) <= delta) & (stats.binom.sf(taus - 1, m, p_f) <= delta)
    assert not ok.any()


def test_per_test_delta():
    d = theory.per_test_delta(0.05, 5476)
    assert math.isclose((1 - d) ** 5476, 0.95, rel_tol=1e-12)


@pytest.mark.parametrize(
    "n,p,tau",
    [
        (10, 0.3, 4),
        (12698, 0.7981, 9939),
        (12698, 0.7667, 9939),
        (500, 0.999, 499),
        (5, 0.5, 0),
        (5, 0.5, 6),
    ],
)
def test_native_binomial_tail_matches_scipy(n, p, tau):
    assert math.isclose(
        _core.binomial_upper_tail(n, p, tau),
        stats.binom.sf(tau - 1, n, p),
        rel_tol=1e-9,
        abs_tol=1e-300,
    )


# ------------------------------------------------------------------ native == twin

# the larger dimensions once, not again under the sanitizers: there the twin's NumPy work,
# on the sanitizer's allocator, took most of the time (4 s for posterior in 5 dimensions);
# dimensions 1 and 2 of both methods reach the same native code
TWIN = [
    ("global", 2),
    ("posterior", 2),
    pytest.param("posterior", 3, marks=pytest.mark.once),
    pytest.param("global", 4, marks=pytest.mark.once),
    pytest.param("posterior", 5, marks=pytest.mark.once),
    ("global", 1),
]


def native_config(**kw):
    """The native configuration of the twin's keywords (method by public name; the twin's
    ``particles`` is the core's ``n_particles``)."""
    if "particles" in kw:
        kw["n_particles"] = kw.pop("particles")
    return _core.ContinuousConfig(
        **{**kw, "method": getattr(_core.ContinuousMethod, METHODS[kw["method"]])}
    )


def native_simulation(
    n_runs, max_queries, oracle_gamma, oracle_lapse, seed, threads, first_run=0, **config
):
    options = _core.ContinuousSimOptions(
        n_runs=n_runs,
        max_queries=max_queries,
        oracle=ts.GammaCKL(oracle_gamma).spec(config["dim"]),
        oracle_lapse=oracle_lapse,
        first_run=first_run,
    )
    return _core.simulate_continuous(native_config(**config), options, seed, threads).errors


@pytest.mark.twin
@pytest.mark.parametrize("method,d", TWIN)
def test_simulation_matches_numpy_twin(method, d):
    config = dict(dim=d, method=method, alpha=0.7, stage_cap=30, particles=96)
    nat = native_simulation(3, 25, 3.0, 0.0, 11, 2, **config)
    twin = ref.simulate(3, 25, 3.0, 0.0, 11, **config)
    np.testing.assert_allclose(nat, twin, rtol=1e-9, atol=1e-13)


@pytest.mark.twin
def test_a_chunk_of_a_study_matches_the_twin():
    # runs 5 and 6 of a study, as a Dask chunk runs them: streams keyed by the global index
    config = dict(dim=2, method="global", alpha=0.7, stage_cap=30, particles=96)
    nat = native_simulation(2, 20, 3.0, 0.05, 21, 1, first_run=5, **config)
    np.testing.assert_allclose(
        nat, ref.simulate(2, 20, 3.0, 0.05, 21, first_run=5, **config), rtol=1e-9, atol=1e-13
    )
    whole = native_simulation(7, 20, 3.0, 0.05, 21, 2, **config)
    np.testing.assert_array_equal(nat, whole[5:])


@pytest.mark.twin
def test_simulation_with_lapse_matches_twin():
    config = dict(dim=2, method="global", alpha=0.7, lapse=0.1, stage_cap=30, particles=96)
    nat = native_simulation(2, 25, 2.0, 0.1, 5, 1, **config)
    np.testing.assert_allclose(
        nat, ref.simulate(2, 25, 2.0, 0.1, 5, **config), rtol=1e-9, atol=1e-13
    )


BOX_LOW, BOX_HIGH = [0.0, -50.0, 10.0], [100.0, 50.0, 30.0]  # a box, not a cube


@pytest.mark.twin
@pytest.mark.parametrize("method", ["global", "posterior"])
def test_box_simulation_matches_numpy_twin(method):
    config = dict(
        dim=3, method=method, low=BOX_LOW, high=BOX_HIGH, alpha=0.7, stage_cap=30, particles=96
    )
    nat = native_simulation(3, 25, 3.0, 0.0, 17, 2, **config)
    twin = ref.simulate(3, 25, 3.0, 0.0, 17, **config)
    np.testing.assert_allclose(nat, twin, rtol=1e-9, atol=1e-12)


def _sessions_in_step(config, seed, steps, p_a, rng_seed, before=None, after=None):
    """The native session and its twin asked and told the same random answers (True with
    probability p_a): the same queries at every step; `before(a, b)` runs after the asks,
    `after(a, b)` after the tells."""
    a = _core.ContinuousSearcher(native_config(**config), seed, 1)
    b = ref.ContinuousSearcher(**config, seed=seed)
    rng = np.random.default_rng(rng_seed)
    for _ in range(steps):
        (na, nb), (ra, rb) = a.ask(), b.ask()
        np.testing.assert_allclose(na, ra, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(nb, rb, rtol=1e-12, atol=1e-12)
        if before is not None:
            before(a, b)
        ans = bool(rng.random() < p_a)
        assert a.tell(ans) == b.tell(ans)
        if after is not None:
            after(a, b)


@pytest.mark.twin
@pytest.mark.parametrize("method", ["global", "posterior"])
def test_box_session_matches_numpy_twin(method):
    def same_estimate(a, b):
        np.testing.assert_allclose(a.estimate(), b.estimate(), rtol=1e-12, atol=1e-12)

    config = dict(dim=3, method=method, low=BOX_LOW, high=BOX_HIGH, particles=64)
    _sessions_in_step(config, 3, 30, 0.5, 1, before=same_estimate)


@pytest.mark.twin
def test_hypothesis_test_session_matches_twin():
    # a toy plan: 4 cells per axis, 3 repetitions, accept with >= 2 wins
    config = dict(dim=2, method="hypothesis-test", cells_per_axis=4, n_obs=3, tau=2)
    a = _core.ContinuousSearcher(native_config(**config), 9, 1)
    b = ref.ContinuousSearcher(**config, seed=9)
    rng = np.random.default_rng(0)
    for _ in range(200):
        qa, qb = a.ask(), b.ask()
        np.testing.assert_array_equal(qa[0], qb[0])
        np.testing.assert_array_equal(qa[1], qb[1])
        ans = bool(rng.random() < 0.6)
        assert a.tell(ans) == b.tell(ans)
        assert a.depth == b.depth and a.edge == b.edge
        np.testing.assert_array_equal(a.center, b.center)
    assert a.n_stages == 200 // 48


# ------------------------------------------------------------------ behaviour


def test_hypothesis_test_proceeds_towards_the_target():
    r = ts.simulate_continuous(
        2, 3.0, n_runs=12, max_stages=4, method="hypothesis-test", random_state=1
    )
    cells, n_obs, _ = ts.continuous.hypothesis_test_plan(2, 3.0)
    assert np.all(r.stage_queries[:, 1] == cells**2 * n_obs)  # queries counted honestly
    # per-stage error <= 0.05: nearly all runs proceed every time and keep the target
    assert np.mean(r.depths == 4) >= 0.8
    assert r.ancestor_coverage(1) >= 0.9


def test_simulations_reproducible_for_any_thread_count():
    runs = [
        ts.simulate_continuous(
            2, 3.0, n_runs=6, max_queries=40, method="posterior", random_state=3, n_jobs=j
        )
        for j in (1, 2, 3)
    ]
    for r in runs[1:]:
        np.testing.assert_array_equal(r.errors, runs[0].errors)
    hyp = [
        ts.simulate_continuous(
            2, 3.0, n_runs=2, max_stages=2, method="hypothesis-test", random_state=3, n_jobs=j
        )
        for j in (1, 2)
    ]
    np.testing.assert_array_equal(hyp[0].depths, hyp[1].depths)
    np.testing.assert_array_equal(hyp[0].stage_errors, hyp[1].stage_errors)


def _decay_slope(errors, lo, hi):
    """Per-run least-squares slope of log(error) on the query index over [lo, hi]."""
    m = np.arange(lo, hi + 1)
    slopes = []
    for e in errors:
        y = np.log(np.maximum(e[lo : hi + 1], 1e-300))
        slopes.append(np.polyfit(m, y, 1)[0])
    return np.array(slopes)


@pytest.mark.once  # a long statistical run: once, not again under the sanitizers
@pytest.mark.parametrize("method", ["global", "posterior"])
@pytest.mark.parametrize("lapse", [0.0, 0.1])
def test_error_decays_exponentially(method, lapse):
    r = ts.simulate_continuous(
        2,
        3.0,
        n_runs=16,  # (seeds 7-9: the bound below -0.011, the ratio at most 0.047)
        max_queries=100,
        method=method,
        lapse=lapse,
        oracle_lapse=lapse,
        random_state=7,
    )
    s = _decay_slope(r.errors, 10, 100)
    upper = s.mean() + 3 * s.std(ddof=1) / math.sqrt(len(s))  # 3-sigma upper confidence bound
    assert upper < 0
    assert np.median(r.errors[:, 100]) < np.median(r.errors[:, 10]) / 10


@pytest.mark.once  # a long statistical run: once, not again under the sanitizers
def test_ancestor_holds_the_target():
    r = ts.simulate_continuous(
        2, 3.0, n_runs=30, max_queries=80, method="posterior", random_state=11
    )
    assert r.ancestor_coverage(2) >= 0.95
    assert r.ancestor_coverage(2) >= r.ancestor_coverage(0)


# ------------------------------------------------------------------ sessions


def test_session_protocol_and_persistence():
    s = ts.ContinuousSearch(3, 3.0, bounds=(0.0, 10.0), random_state=4)
    a, b = s.ask()
    a2, b2 = s.ask()
    np.testing.assert_array_equal(a, a2)
    assert a.shape == (3,) and np.all((a >= 0) & (a <= 10))
    target = np.array([2.0, 7.0, 5.0])
    oracle = ts.GammaCKL(3.0)
    rng = np.random.default_rng(0)
    for _ in range(30):
        a, b = s.ask()
        p = oracle.prob(np.vstack([target, a, b]), [[0, 1, 2]])[0]
        s.tell(bool(rng.random() < p))
    assert s.n_queries == 30 and len(s.history) == 30
    assert np.linalg.norm(s.estimate() - target) < 1.0
    state = json.loads(json.dumps(s.to_dict()))
    t = ts.ContinuousSearch.from_dict(state)
    np.testing.assert_array_equal(t.estimate(), s.estimate())
    np.testing.assert_array_equal(t.ask()[0], s.ask()[0])
    assert isinstance(s.estimate(k=1), Region)


def _answer(s, target, gamma, rng, n):
    """n gamma-CKL answers about `target` to the session's queries."""
    oracle = ts.GammaCKL(gamma)
    for _ in range(n):
        a, b = s.ask()
        p = oracle.prob(np.vstack([target, a, b]), [[0, 1, 2]])[0]
        s.tell(bool(rng.random() < p))


@pytest.mark.parametrize("method", ["global", "posterior"])
def test_box_queries_stay_inside_and_find_the_target(method):
    low, high = np.array(BOX_LOW), np.array(BOX_HIGH)
    s = ts.ContinuousSearch(3, 3.0, bounds=(low, high), method=method, random_state=2)
    np.testing.assert_array_equal(s.low, low)
    np.testing.assert_array_equal(s.bounds[1], high)
    target = np.array([93.0, -40.0, 11.0])  # near a corner: mirrored queries would leave
    oracle = ts.GammaCKL(3.0)
    rng = np.random.default_rng(5)
    for _ in range(150):
        a, b = s.ask()
        for q in (a, b):
            assert np.all(q >= low) and np.all(q <= high), q
        p = oracle.prob(np.vstack([target, a, b]), [[0, 1, 2]])[0]
        s.tell(bool(rng.random() < p))
    # 150 answers at gamma = 3 narrow a box 100 wide to a few units
    assert np.linalg.norm(s.estimate() - target) < 5.0


def test_box_search_is_affine_invariant():
    # the user model is scale-free: the same seed searching x -> o + c x of a box asks the
    # mapped queries and gets the mapped estimates (an independent closed form)
    low, high = np.array([-1.0, -0.25]), np.array([1.0, 0.75])
    o, c = np.array([300.0, -7.0]), 40.0
    s1 = ts.ContinuousSearch(2, 3.0, bounds=(low, high), random_state=8)
    s2 = ts.ContinuousSearch(2, 3.0, bounds=(o + c * low, o + c * high), random_state=8)
    rng = np.random.default_rng(0)
    for _ in range(40):
        (a1, b1), (a2, b2) = s1.ask(), s2.ask()
        np.testing.assert_allclose(o + c * a1, a2, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(o + c * b1, b2, rtol=1e-9, atol=1e-9)
        ans = bool(rng.random() < 0.5)
        s1.tell(ans)
        s2.tell(ans)
    np.testing.assert_allclose(o + c * s1.estimate(), s2.estimate(), rtol=1e-9, atol=1e-9)


@pytest.mark.once  # a long statistical run: once, not again under the sanitizers
def test_box_simulation_targets_fill_the_box():
    low, high = [0.0, 10.0], [1.0, 10.2]
    r = ts.simulate_continuous(
        2, 3.0, n_runs=200, max_queries=30, bounds=(low, high), random_state=0
    )
    assert np.all(r.targets >= low) and np.all(r.targets <= high)
    # uniform on each axis: the mean within 4 standard errors of the centre
    se = (np.array(high) - np.array(low)) / np.sqrt(12 * 200)
    assert np.all(np.abs(r.targets.mean(0) - 0.5 * (np.array(low) + np.array(high))) < 4 * se)
    assert np.median(r.errors[:, -1]) < 0.1 * np.median(r.errors[:, 0])


def test_box_state_round_trip_and_old_format():
    s = ts.ContinuousSearch(3, 3.0, bounds=(BOX_LOW, BOX_HIGH), random_state=6)
    _answer(s, np.array([50.0, 0.0, 20.0]), 3.0, np.random.default_rng(0), 12)
    state = json.loads(json.dumps(s.to_dict()))
    assert state["bounds"] == [BOX_LOW, BOX_HIGH]
    t = ts.ContinuousSearch.from_dict(state)
    np.testing.assert_array_equal(t.low, s.low)
    np.testing.assert_array_equal(t.estimate(), s.estimate())
    # a cube is saved as two reals, the format of states written before boxes existed
    c = ts.ContinuousSearch(2, 3.0, bounds=(0.0, 5.0), random_state=6)
    _answer(c, np.array([1.0, 4.0]), 3.0, np.random.default_rng(0), 5)
    old = json.loads(json.dumps(c.to_dict()))
    assert old["bounds"] == [0.0, 5.0]
    np.testing.assert_array_equal(ts.ContinuousSearch.from_dict(old).estimate(), c.estimate())


def test_corrupted_state_is_rejected():
    s = ts.ContinuousSearch(2, 3.0, random_state=1)
    for _ in range(3):
        s.ask()
        s.tell(True)
    good = s.to_dict()
    for state, match in [
        ({**good, "version": 7}, "unsupported version"),
        ({**good, "answers": "10x"}, "answers must be a string"),
        ({**good, "answers": "0000"}, "do not replay"),
        ({**good, "method": "dfs"}, "method: expected one of"),
        ({k: v for k, v in good.items() if k != "seed"}, "malformed"),
    ]:
        with pytest.raises(ValueError, match=match):
            ts.ContinuousSearch.from_dict(state)
    with pytest.raises(TypeError, match="state: expected a dict"):
        ts.ContinuousSearch.from_dict("state")


@pytest.mark.parametrize(
    "args,kwargs,exc,match",
    [
        ((0, 3.0), {}, ValueError, "dim: must be >= 1"),
        ((2.5, 3.0), {}, TypeError, "dim: expected an integer"),
        ((2, 0.0), {}, ValueError, "gamma: must be > 0"),
        ((2, 3.0), {"bounds": (1.0, 1.0)}, ValueError, "bounds: need finite low < high"),
        ((2, 3.0), {"bounds": (0.0, float("nan"))}, ValueError, "bounds: need finite"),
        ((2, 3.0), {"bounds": "ab"}, TypeError, "bounds: expected"),
        ((2, 3.0), {"bounds": ([0, 0, 0], [1, 1, 1])}, ValueError, "one .low, high. per dim"),
        ((2, 3.0), {"bounds": ([0, 0], [1, 1, 1])}, ValueError, "different lengths"),
        ((2, 3.0), {"bounds": ([0, 2], [1, 1])}, ValueError, "low < high on axis 1"),
        ((2, 3.0), {"bounds": ([0, 0], [1, np.inf])}, ValueError, "finite low < high on axis"),
        ((2, 3.0), {"bounds": ([[0, 0]], [1, 1])}, ValueError, "shape .dim,."),
        ((2, 3.0), {"bounds": ([], [1, 1])}, ValueError, "shape .dim,."),
        ((2, 3.0), {"bounds": (["a", "b"], [1, 1])}, TypeError, "real numbers"),
        ((2, 3.0), {"bounds": ([0, 0], [1, 1e-15])}, ValueError, "narrower than 1e-12"),
        ((2, 3.0), {"bounds": ([0, -1e308], [1, 1e308])}, ValueError, "too wide"),
        ((2, 3.0), {"alpha": 0.5}, ValueError, "alpha: must lie in"),
        ((2, 3.0), {"alpha": 1.0}, ValueError, "alpha: must lie in"),
        ((2, 3.0), {"lapse": 0.5}, ValueError, "lapse: must lie in"),
        ((2, 3.0), {"lapse": -0.1}, ValueError, "lapse: must lie in"),
        ((2, 3.0), {"method": "bisect"}, ValueError, "method: expected one of"),
        (
            (1, 3.0),
            {"method": "hypothesis-test"},
            ValueError,
            "dim: the hypothesis-test decider needs dim >= 2",
        ),
        ((16, 3.0), {}, ValueError, "dim: the particle methods support dim <= 15"),
        ((2, "fast"), {}, TypeError, "gamma: expected a real number or 'auto'"),
        ((2, 3.0), {"lapse": "Auto"}, TypeError, "lapse: expected a real number or 'auto'"),
        (
            (2, "auto"),
            {"method": "posterior"},
            ValueError,
            "gamma: 'auto' .* needs method='global'",
        ),
        ((2, 3.0), {"lapse": "auto", "method": "hypothesis-test"}, ValueError, "lapse: 'auto'"),
    ],
)
def test_bad_construction(args, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        ts.ContinuousSearch(*args, **kwargs)


def test_bad_protocol():
    s = ts.ContinuousSearch(2, 3.0, random_state=0)
    with pytest.raises(RuntimeError, match="tell before ask"):
        s.tell(True)
    s.ask()
    with pytest.raises(TypeError, match="a_is_closer: expected a bool"):
        s.tell(1)
    s.tell(False)  # the session still works


def test_simulate_bad_input():
    with pytest.raises(ValueError, match="max_queries, max_stages: give at least one"):
        ts.simulate_continuous(2, 3.0, n_runs=2)
    with pytest.raises(ValueError, match="max_queries: per-query errors are not recorded"):
        ts.simulate_continuous(2, 3.0, n_runs=2, max_queries=10, method="hypothesis-test")
    with pytest.raises(ValueError, match="n_runs: must be >= 1"):
        ts.simulate_continuous(2, 3.0, n_runs=0, max_queries=3)
    with pytest.raises(ValueError, match="oracle_lapse"):
        ts.simulate_continuous(2, 3.0, n_runs=1, max_queries=3, oracle_lapse=1.5)
    assert METHODS["global"] == "Global"


# ------------------------------------------------------------------ observe (replay)


@pytest.mark.parametrize("method", ["global", "posterior"])
def test_observe_replays_to_the_same_search(method):
    live = ts.ContinuousSearch(3, 3.0, bounds=(BOX_LOW, BOX_HIGH), method=method, random_state=2)
    _answer(live, np.array([20.0, 10.0, 25.0]), 3.0, np.random.default_rng(1), 25)
    replay = ts.ContinuousSearch(3, 3.0, bounds=(BOX_LOW, BOX_HIGH), method=method, random_state=2)
    for record in live.history:  # keyed as observe's arguments
        replay.observe(**record)
    np.testing.assert_allclose(replay.estimate(), live.estimate(), rtol=1e-12, atol=1e-9)
    for u, v in zip(replay.ask(), live.ask()):
        np.testing.assert_allclose(u, v, rtol=1e-12, atol=1e-9)
    state = json.loads(json.dumps(replay.to_dict()))
    assert len(state["queries"]) == 25
    back = ts.ContinuousSearch.from_dict(state)
    np.testing.assert_array_equal(back.estimate(), replay.estimate())


@pytest.mark.twin
def test_observe_matches_the_twin_for_foreign_queries():
    config = dict(dim=2, method="global", low=[0.0, 0.0], high=[4.0, 2.0], particles=64)
    a = _core.ContinuousSearcher(native_config(**config), 7, 1)
    b = ref.ContinuousSearcher(**config, seed=7)
    rng = np.random.default_rng(2)
    for _ in range(20):  # queries from elsewhere: uniform points of the box
        qa, qb = rng.uniform([0, 0], [4, 2]), rng.uniform([0, 0], [4, 2])
        ans = bool(rng.random() < 0.5)
        assert a.observe(qa, qb, ans) == b.observe(qa, qb, ans)
        np.testing.assert_allclose(a.estimate(), b.estimate(), rtol=1e-12, atol=1e-12)


def test_observe_bad_input():
    s = ts.ContinuousSearch(2, 3.0, random_state=0)
    for args, exc, match in [
        (([0, 0, 0], [1, 1], True), ValueError, r"a: expected shape \(2,\)"),
        (([0, 0], [1, np.nan], True), ValueError, "b: the point must be finite"),
        ((["x", 0], [1, 1], True), TypeError, "a: expected a point"),
        (([0, 0], [1, 1], 1), TypeError, "a_is_closer: expected a bool"),
    ]:
        with pytest.raises(exc, match=match):
            s.observe(*args)
    assert s.n_queries == 0
    h = ts.ContinuousSearch(2, 3.0, method="hypothesis-test", random_state=0)
    with pytest.raises(ValueError, match="method: the hypothesis test only records"):
        h.observe([0, 0], [1, 1], True)


# ------------------------------------------------------------------ the inferred user


from tripletsearch._reference import choice as ref_choice  # noqa: E402


@pytest.mark.twin
def test_grid_powers_are_the_closed_form_powers():
    s = np.concatenate([np.geomspace(1e-300, 1.0, 200), [0.0, 0.5, 1.0]])
    for j, g in enumerate(ref_choice.GAMMA_GRID):
        with np.errstate(under="ignore"):
            want = s ** (g / 2)
        np.testing.assert_allclose(ref_choice.grid_power(j, s), want, rtol=1e-13, atol=1e-320)


@pytest.mark.twin
def test_gamma_prior_native_twin_and_closed_form():
    grid = np.array(_core.GAMMA_GRID)
    np.testing.assert_array_equal(grid, ref_choice.GAMMA_GRID)
    np.testing.assert_array_equal(_core.LAPSE_GRID, ref_choice.LAPSE_GRID)
    native = np.array([_core.gamma_log_prior(j) for j in range(len(grid))])
    twin = np.array([ref_choice.gamma_log_prior(j) for j in range(len(grid))])
    np.testing.assert_allclose(native, twin, rtol=1e-14)
    # the prior density: 1/gamma on [0.5, 4], (4/gamma)^2 / gamma beyond; each value the
    # integral over its cell (borders at geometric midpoints), by quadrature
    borders = np.concatenate([[0.5], np.sqrt(grid[:-1] * grid[1:]), [32.0]])

    def mass(lo, hi):
        x = np.geomspace(lo, hi, 20001)
        f = np.where(x > 4.0, (4.0 / x) ** 2, 1.0) / x
        return (np.trapezoid if hasattr(np, "trapezoid") else np.trapz)(f, x)  # noqa: NPY201 (NumPy < 2)

    want = np.array([mass(borders[j], borders[j + 1]) for j in range(len(grid))])
    np.testing.assert_allclose(np.exp(native) / np.exp(native).sum(), want / want.sum(), rtol=1e-6)
    with pytest.raises(ValueError, match="j: must lie in"):
        _core.gamma_log_prior(13)


AUTO_TWIN = [(2, True, True), (2, True, False), (3, False, True)]


@pytest.mark.twin
@pytest.mark.parametrize("d,g_auto,l_auto", AUTO_TWIN)
def test_auto_simulation_matches_numpy_twin(d, g_auto, l_auto):
    config = dict(
        dim=d, method="global", lapse=0.05, particles=96, gamma_auto=g_auto, lapse_auto=l_auto
    )
    nat = native_simulation(2, 25, 1.5, 0.1, 13, 2, **config)
    twin = ref.simulate(2, 25, 1.5, 0.1, 13, **config)
    np.testing.assert_allclose(nat, twin, rtol=1e-9, atol=1e-13)


@pytest.mark.twin
def test_auto_session_matches_twin_and_its_user_posterior():
    def same_user_posterior(a, b):
        for x, y in zip(a.user_posterior(), b.user_posterior()):
            np.testing.assert_allclose(x, y, rtol=1e-10, atol=1e-14)

    config = dict(dim=2, method="global", particles=64, gamma_auto=True, lapse_auto=True)
    _sessions_in_step(config, 5, 40, 0.6, 3, after=same_user_posterior)
    assert (
        _core.ContinuousSearcher(native_config(dim=2, method="global"), 5, 1).user_posterior()
        is None
    )


def _auto_session(target, gamma, lapse, n, seed):
    s = ts.ContinuousSearch(len(target), "auto", lapse="auto", random_state=seed)
    oracle = ts.GammaCKL(gamma)
    rng = np.random.default_rng(seed)
    for _ in range(n):
        a, b = s.ask()
        p = oracle.prob(np.vstack([target, a, b]), [[0, 1, 2]])[0]
        p = 0.5 * lapse + (1 - lapse) * p
        s.tell(bool(rng.random() < p))
    return s


@pytest.mark.once  # a statistical run; the twin tests above reach its code
def test_auto_estimates_the_users_gamma():
    # sharp and noisy users: after 150 answers each interval holds the user's gamma, and
    # the sharper user gets the larger estimate
    target = np.array([0.3, -0.55])
    est = {}
    for gamma in (1.5, 6.0):
        s = _auto_session(target, gamma, 0.0, 150, seed=2)
        lo, hi = s.gamma_interval_
        assert lo <= gamma <= hi, (gamma, lo, hi)
        assert lo <= s.gamma_ <= hi
        est[gamma] = s.gamma_
        assert np.linalg.norm(s.estimate() - target) < 1e-2
        grid, probs = s.user_posterior()["gamma"]
        np.testing.assert_allclose(probs.sum(), 1.0)
        assert s.gamma == "auto" and s.lapse == "auto"
    assert est[1.5] < est[6.0]


@pytest.mark.once  # a long statistical run: once, not again under the sanitizers
def test_auto_estimates_the_lapse_rate():
    # within one search the lapse rate is weakly identified (gamma absorbs noise too): the
    # posterior mean, averaged over three searches each, separates lapse 0 from 0.2
    target = np.array([-0.2, 0.7])
    means = {}
    for lapse in (0.0, 0.2):
        m = []
        for seed in range(3):
            s = _auto_session(target, 3.0, lapse, 150, seed=seed)
            grid, probs = s.user_posterior()["lapse"]
            m.append(float(probs @ grid))
            lo, hi = s.lapse_interval_
            assert lo <= lapse <= hi
        means[lapse] = np.mean(m)
    assert means[0.2] > means[0.0] + 0.03


def test_fixed_model_reports_itself():
    s = ts.ContinuousSearch(2, 2.5, lapse=0.1, random_state=0)
    assert s.gamma_ == 2.5 and s.gamma_interval_ == (2.5, 2.5)
    assert s.lapse_ == 0.1 and s.lapse_interval_ == (0.1, 0.1)
    assert "gamma_" not in s.to_dict()


def test_auto_state_round_trip():
    s = _auto_session(np.array([0.1, 0.2, 0.3]), 2.0, 0.05, 40, seed=1)
    state = json.loads(json.dumps(s.to_dict()))
    assert state["gamma"] == "auto" and state["lapse"] == "auto"
    assert state["gamma_"] == s.gamma_ and state["gamma_interval_"] == list(s.gamma_interval_)
    t = ts.ContinuousSearch.from_dict(state)
    np.testing.assert_array_equal(t.estimate(), s.estimate())
    assert t.gamma_interval_ == s.gamma_interval_ and t.lapse_ == s.lapse_
    np.testing.assert_array_equal(t.ask()[0], s.ask()[0])


def test_auto_simulation_is_reproducible_for_any_thread_count():
    runs = [
        ts.simulate_continuous(
            3,
            "auto",
            lapse="auto",
            oracle=ts.GammaCKL(2.0),
            n_runs=4,
            max_queries=30,
            random_state=5,
            n_jobs=j,
        )
        for j in (1, 2)
    ]
    np.testing.assert_array_equal(runs[0].errors, runs[1].errors)
    with pytest.raises(ValueError, match="oracle: give the simulated users. model"):
        ts.simulate_continuous(2, "auto", n_runs=1, max_queries=1)


@pytest.mark.once  # a long statistical run: once, not again under the sanitizers
def test_auto_beats_an_overconfident_searcher_on_a_noisy_user():
    # a user with gamma 1.5 in d = 3, a searcher that assumes 6: runs are lost; "auto" is
    # not (the finding at d = 5 with gamma 3, here small enough for a test: 10 runs
    # lose 7 or 8 with the fixed gamma, at most 1 with "auto" (seeds 21-23); the same
    # searcher twice fails the test)
    kw = dict(n_runs=10, max_queries=150, oracle=ts.GammaCKL(1.5), random_state=21)
    fixed = ts.simulate_continuous(3, 6.0, **kw).errors[:, -1]
    auto = ts.simulate_continuous(3, "auto", lapse="auto", **kw).errors[:, -1]
    assert np.mean(auto > 0.1) < np.mean(fixed > 0.1)
    assert np.median(auto) < np.median(fixed)
