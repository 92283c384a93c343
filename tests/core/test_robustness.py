"""Extreme and hostile inputs: scales, translations, sizes, plans, files, global state."""

import math
import warnings

import numpy as np
import pytest

import tripletsearch as ts
from tripletsearch import model_selection as ms
from tripletsearch._reference.discrete import store_frame

# ------------------------------------------------------------------ database search scales


def session(X, steps=20, **kw):
    s = ts.DiscreteSearch(X, random_state=1, **kw)
    queries = []
    for _ in range(steps):
        q = s.ask()
        queries.append(q.tolist())
        s.tell(int(q[0]))
    return queries, s.posterior


@pytest.mark.parametrize(
    "shift,scale", [(1e6, 1.0), (0.0, 1e30), (2.5e7, 3.0), (-5e100, 1e95), (0.0, 1e-200)]
)
def test_catalogue_far_away_or_at_any_scale_searches_the_same(shift, scale):
    """float32 storage after centring and scaling: the search does not see the units."""
    X = np.random.default_rng(0).uniform(-1, 1, size=(2000, 4))
    base_q, base_p = session(X)
    q, p = session(X * scale + shift)
    assert q == base_q
    np.testing.assert_allclose(p, base_p, rtol=1e-5, atol=1e-12)


def test_gauss_search_sigma_is_in_the_catalogues_units():
    X = np.random.default_rng(1).uniform(-1, 1, size=(1500, 3))
    base_q, _ = session(X, steps=5, method="gauss", sigma=0.1)
    q, _ = session(1e40 * X, steps=5, method="gauss", sigma=1e39)
    assert q == base_q


@pytest.mark.twin
def test_store_frame_is_exact_and_shared_with_the_twin():
    from tripletsearch import _core

    X = np.random.default_rng(2).uniform(-3, 7, size=(300, 2)) * 1e20 + 1e25
    store = _core.ItemStore(X)
    center, scale, stored = store_frame(X)
    np.testing.assert_array_equal(store.center, center)
    assert store.scale == scale and math.frexp(scale)[0] == 0.5  # a power of two
    assert np.abs(stored).max() <= 1.0


def test_items_colliding_in_single_precision_are_reported():
    X = np.random.default_rng(3).uniform(-1, 1, size=(50, 3))
    X[7] = X[3] * (1 + 1e-12)  # distinct in double, one float32 value
    with pytest.raises(ValueError, match=r"X: rows 3 and 7 are identical in single precision"):
        ts.DiscreteSearch(X)
    X[7] = X[3]
    with pytest.raises(ValueError, match=r"X: rows 3 and 7 are identical; duplicate"):
        ts.DiscreteSearch(X)


# ------------------------------------------------------------------ oracles at any scale

X5 = np.random.default_rng(4).normal(size=(6, 3))
T5 = np.array([[0, 1, 2], [3, 4, 0], [1, 2, 3], [5, 0, 4]])


@pytest.mark.parametrize("c", [1e-305, 1e-200, 1e160, 1e300])
@pytest.mark.parametrize("oracle", [ts.GammaCKL(3.0), ts.GammaCKL(2.5), ts.CKL(0.0)])
def test_scale_free_oracles_are_exact_at_any_scale(oracle, c):
    for method in ("prob", "log_prob"):
        np.testing.assert_allclose(
            getattr(oracle, method)(c * X5, T5), getattr(oracle, method)(X5, T5), rtol=1e-12
        )
    assert oracle.log_likelihood(c * X5, T5) == pytest.approx(oracle.log_likelihood(X5, T5))
    np.testing.assert_allclose(
        oracle.choice_prob(c * X5, [0, 1], [[1, 2, 3], [0, 4, 5]]),
        oracle.choice_prob(X5, [0, 1], [[1, 2, 3], [0, 4, 5]]),
        rtol=1e-12,
    )
    if c > 1e-300:  # the gradient scales as 1 / c
        np.testing.assert_allclose(
            oracle.grad(c * X5, T5) * c, oracle.grad(X5, T5), rtol=1e-12, atol=1e-300
        )


@pytest.mark.parametrize("oracle", [ts.STE(), ts.TSTE(), ts.CKL(0.5), ts.Probit(0.3)])
def test_other_models_refuse_overflowing_distances(oracle):
    with pytest.raises(ValueError, match="X: coordinates up to .* overflow squared distances"):
        oracle.prob(1e160 * X5, T5)
    assert np.all(np.isfinite(oracle.prob(1e-200 * X5, T5)))  # tiny: the documented floor


def test_gradient_that_would_overflow_is_refused():
    with pytest.raises(ValueError, match="the gradient overflows"):
        ts.GammaCKL(3.0).grad(1e-310 * X5, T5)


# ------------------------------------------------------------------ continuous boxes


def test_any_finite_box_runs_the_same_search():
    def queries(bounds, steps=25):
        s = ts.ContinuousSearch(2, 3.0, bounds=bounds, random_state=3)
        lo, hi = bounds
        origin, half = 0.5 * lo + 0.5 * hi, 0.5 * hi - 0.5 * lo
        target = np.array([0.3, -0.6])  # in the unit frame: x = origin + half x'
        out = []
        for _ in range(steps):
            a, b = ((q - origin) / half for q in s.ask())
            out.append((a, b))
            s.tell(bool(np.sum((a - target) ** 2) < np.sum((b - target) ** 2)))
        est = (s.estimate() - origin) / half
        return out, est, s.region.edge / half

    base = queries((-1.0, 1.0))
    for bounds in [(1e6, 1e6 + 2.0), (-1e300, 1e300), (2e-300, 6e-300)]:
        got = queries(bounds)
        for (a, b), (a0, b0) in zip(got[0], base[0]):
            np.testing.assert_allclose(a, a0, rtol=1e-9, atol=1e-9)
            np.testing.assert_allclose(b, b0, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(got[1], base[1], rtol=1e-9, atol=1e-9)
        assert got[2] == pytest.approx(base[2])


def test_simulation_in_a_huge_box_reports_errors_in_its_units():
    a = ts.simulate_continuous(2, 3.0, n_runs=3, max_queries=30, random_state=5)
    b = ts.simulate_continuous(
        2, 3.0, n_runs=3, max_queries=30, bounds=(-1e200, 1e200), random_state=5
    )
    np.testing.assert_allclose(b.errors, 1e200 * a.errors, rtol=1e-12)
    np.testing.assert_allclose(b.targets, 1e200 * a.targets, rtol=1e-12)


@pytest.mark.parametrize(
    "bounds,exc,match",
    [
        ((-1e308, 1e308), ValueError, "bounds: .* too wide"),
        ((0.0, 5e-324), ValueError, "bounds: .* too narrow"),
        (("0", "1"), TypeError, "bounds: expected real"),
        ((0.0, float("inf")), ValueError, "bounds: need finite"),
    ],
)
def test_boxes_beyond_double_precision_are_refused(bounds, exc, match):
    with pytest.raises(exc, match=match):
        ts.ContinuousSearch(2, 3.0, bounds=bounds)


def test_long_global_session_replays_exactly():
    """Beyond the 512-answer window of the moves the session stays reproducible."""
    s = ts.ContinuousSearch(2, 3.0, n_particles=32, random_state=7)
    rng = np.random.default_rng(0)
    for _ in range(600):
        s.ask()
        s.tell(bool(rng.random() < 0.5))
    again = ts.ContinuousSearch.from_dict(s.to_dict())
    np.testing.assert_array_equal(again.estimate(), s.estimate())


# ------------------------------------------------------------------ sizes and plans


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: ts.ContinuousSearch(2, 3.0, n_particles=10**13), "n_particles: needs .* GiB"),
        (lambda: ts.theory.p_correct_monte_carlo(2, 3.0, 10**17), "n_samples, dim: needs"),
        (
            lambda: ts.simulate_continuous(2, 3.0, n_runs=10**9, max_queries=10**6),
            "n_runs, max_queries, max_stages: needs",
        ),
        (lambda: ts.GammaCKL(3.0).prob(X5, T5, n_jobs=2**70), "n_jobs: at most"),
        (lambda: ts.simulate_discrete(X5, targets=[2**63]), "targets: index too large"),
        (lambda: ts.Embedding(max_epochs=2**64).fit(T5), "max_epochs: .* 64-bit"),
        (lambda: ts.Embedding(n_items=10**13).fit(T5), "n_items, dim: needs"),
        (lambda: ts.Embedding(dim=10**12).fit(T5), "n_items, dim: needs"),
        (lambda: ts.simulate_discrete(X5, n_runs=10**13), "n_runs: needs"),
    ],
)
def test_impossible_sizes_are_refused_up_front(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("dim", [6, 40, 64])
def test_hypothesis_test_beyond_its_means_is_refused_at_once(dim):
    with pytest.raises(ValueError, match=r"dim: the hypothesis test tests \d+\^\d+ cells"):
        ts.ContinuousSearch(dim, 3.0, method="hypothesis-test")


def test_binomial_plan_for_indistinguishable_probabilities_is_refused_at_once():
    with pytest.raises(ValueError, match="p_x, p_f: telling 0.6 from 0.5999"):
        ts.theory.binomial_test_plan(0.6, 0.5999, 1e-9)


def test_numpy_scalars_are_numbers_and_strings_are_not():
    assert ts.theory.hypothesis_test_probs(3, np.float32(3.0), lapse=np.float32(0.1))[0] > 0.5
    with pytest.raises(TypeError, match="lapse: expected a real number"):
        ts.theory.hypothesis_test_probs(3, 3.0, lapse="0.1")
    with pytest.raises(TypeError, match="gamma: expected a real number"):
        ts.DiscreteSearch(X5, gamma="3")


# ------------------------------------------------------------------ files, states, globals


def test_csv_without_a_header_keeps_its_first_triplet(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("0,1,2\n3,1,0\n")
    np.testing.assert_array_equal(ts.datasets.load_triplets_csv(p), [[0, 1, 2], [3, 1, 0]])
    with pytest.raises(ValueError, match="columns: .* the file has no header"):
        ts.datasets.load_triplets_csv(p, columns=("head", "closer", "farther"))


def test_tampered_state_values_name_the_state():
    X = np.random.default_rng(5).uniform(-1, 1, size=(30, 2))
    good = ts.DiscreteSearch(X, random_state=0).to_dict()
    with pytest.raises(ValueError, match="state: gamma: must be > 0"):
        ts.DiscreteSearch.from_dict({**good, "gamma": -1.0}, X)
    cgood = ts.ContinuousSearch(2, 3.0).to_dict()
    with pytest.raises(ValueError, match="state: alpha: must lie in"):
        ts.ContinuousSearch.from_dict({**cgood, "alpha": 2.0})


def test_grid_search_leaves_the_warning_filters_alone():
    rng = np.random.default_rng(6)
    T = rng.integers(0, 15, size=(400, 3))  # with rows naming the head: fit would warn
    before = list(warnings.filters)
    with pytest.warns(UserWarning, match="ignoring"):
        ms.grid_search_cv(ts.Embedding(max_epochs=5), {"dim": [1, 2]}, T, cv=3, n_jobs=2)
    assert warnings.filters == before


def test_model_selection_is_an_attribute_of_the_package():
    import tripletsearch

    assert tripletsearch.model_selection.grid_search_cv is ms.grid_search_cv


def test_misaligned_buffers_are_read_as_aligned_copies():
    """Arrays at odd addresses (np.frombuffer with an offset, arrays unpickled from a Dask
    message) reach the core as aligned copies: the same numbers, no misaligned reads (UBSan
    in CI halts on those)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    T = rng.integers(0, 30, size=(200, 3))
    T = T[ts.embedding.valid_rows(T)]

    def odd(a):
        buf = bytearray(a.nbytes + 1)
        out = np.frombuffer(buf, dtype=a.dtype, offset=1, count=a.size).reshape(a.shape)
        out[...] = a
        return out

    Xo, To = odd(X), odd(T)
    assert not Xo.flags.aligned and not To.flags.aligned
    o = ts.GammaCKL(3.0)
    np.testing.assert_array_equal(o.grad(Xo, To), o.grad(X, T))
    # straight into the extension too: the bindings take aligned copies
    from tripletsearch import _core

    spec = o.spec(3)
    np.testing.assert_array_equal(
        _core.oracle_grad(spec, Xo, To, 1), _core.oracle_grad(spec, X, T, 1)
    )
    np.testing.assert_array_equal(
        ts.simulate_discrete(Xo, n_runs=5, random_state=0).n_queries,
        ts.simulate_discrete(X, n_runs=5, random_state=0).n_queries,
    )
