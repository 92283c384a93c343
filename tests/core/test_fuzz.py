"""Property-based fuzzing of the public API (hypothesis): any shape, dtype, extreme value,
tampered state or call order gives a clean result or a TypeError / ValueError naming its
argument, never a crash, a hang or NaN. Runs derandomized (the same examples every run);
CI runs it under AddressSanitizer + UBSan too."""

import json
import math
import os
import string

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

import tripletsearch as ts  # noqa: E402

# CI: 60 fixed examples per test; TRIPLETSEARCH_FUZZ=5000 explores 5000 fresh ones.
_EXPLORE = int(os.environ.get("TRIPLETSEARCH_FUZZ", "0"))
FUZZ = settings(max_examples=_EXPLORE or 60, deadline=None, derandomize=not _EXPLORE)

ARGUMENTS = (
    "X:", "triplets:", "queries:", "heads:", "candidates:", "n_jobs:", "gamma:", "mu:",
    "alpha:", "sigma:", "random_state:", "state:", "dim:", "lr:", "batch_size:",
    "max_epochs:", "tol:", "l2:", "n_items:", "init:", "model:", "optimizer:", "learn_gamma:",
    "choice:", "item:", "index:", "k:", "dim:", "bounds:", "lapse:", "delta:", "stage_cap:",
    "n_particles:", "method:", "selection:", "r:", "n_choices:", "targets:", "max_queries:",
    "oracle:", "oracle_X:", "n_runs:", "max_stages:", "oracle_gamma:", "oracle_lapse:",
    "a_is_closer:", "p:", "d:", "n_samples:",
)  # fmt: skip


def named(exc):
    """The error names the offending argument(s): "name: ..." or "name, name: ..."."""
    head = str(exc).split(":", 1)[0]
    assert all(f"{n}:" in ARGUMENTS for n in head.split(", ")), f"{type(exc).__name__}: {exc}"


finite = st.floats(min_value=-1e308, max_value=1e308, allow_nan=False, width=64)
anything = st.floats(allow_nan=True, allow_infinity=True, width=64)
embeddings = hnp.arrays(
    np.float64,
    hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=6),
    elements=st.one_of(finite, anything, st.sampled_from([0.0, 1e-310, -1e300, 1e200])),
)
index_arrays = st.one_of(
    hnp.arrays(
        st.sampled_from([np.int8, np.int32, np.int64, np.uint16, np.uint64]),
        hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=5),
        elements=st.integers(0, 8),
    ),
    hnp.arrays(np.int64, (4, 3), elements=st.integers(-3, 12)),
    hnp.arrays(np.float64, (2, 3), elements=st.floats(0, 5)),
    st.lists(st.lists(st.integers(-2, 9), min_size=3, max_size=3), max_size=4),
)
oracles = st.sampled_from(
    [
        ts.GammaCKL(3.0),
        ts.GammaCKL(25.5),
        ts.CKL(),
        ts.CKL(0.3),
        ts.TSTE(),
        ts.STE(),
        ts.Probit(0.2),
    ]
)


@FUZZ
@given(X=embeddings, T=index_arrays, oracle=oracles, jobs=st.sampled_from([None, 1, 2, -1]))
def test_oracle_kernels(X, T, oracle, jobs):
    for method in ("prob", "log_prob", "log_likelihood", "grad"):
        try:
            out = getattr(oracle, method)(X, T, n_jobs=jobs)
        except (TypeError, ValueError) as exc:
            named(exc)
            continue
        out = np.asarray(out)
        assert not np.isnan(out).any(), method
        if method == "prob":
            assert ((out >= 0) & (out <= 1)).all()
        if method == "grad":
            assert np.isfinite(out).all() and out.shape == np.shape(X)


@FUZZ
@given(
    X=hnp.arrays(np.float64, (6, 2), elements=finite),
    heads=st.lists(st.integers(-1, 7), max_size=4),
    k=st.integers(0, 4),
    oracle=oracles,
)
def test_choice_prob(X, heads, k, oracle):
    if not hasattr(oracle, "choice_prob"):
        return
    cands = np.arange(len(heads) * k).reshape(len(heads), k) % 7
    try:
        P = oracle.choice_prob(X, heads, cands)
    except (TypeError, ValueError) as exc:
        named(exc)
        return
    assert not np.isnan(P).any()
    if len(P) and k:
        np.testing.assert_allclose(P.sum(1), 1.0, rtol=1e-9)


params = st.fixed_dictionaries(
    {},
    optional={
        "model": st.sampled_from(["gamma-ckl", "ckl", "t-ste", "ste", "probit", "tsne", 3]),
        "dim": st.one_of(st.integers(-1, 3), st.just(2.5)),
        "optimizer": st.sampled_from(["lbfgs", "adam", "sgd", "newton"]),
        "lr": st.one_of(st.none(), st.floats(-1, 1e8), st.just(float("nan"))),
        "batch_size": st.one_of(st.none(), st.integers(-1, 50)),
        "max_epochs": st.integers(0, 5),
        "tol": st.floats(-1, 1),
        "l2": st.floats(-1, 10),
        "gamma": st.floats(-1, 300),
        "learn_gamma": st.booleans(),
        "init": st.sampled_from([None, "random", "lift", "bogus"]),
    },
)


@FUZZ
@given(T=index_arrays, kw=params)
def test_embedding_fit(T, kw):
    try:
        emb = ts.Embedding(random_state=0, **kw).fit(T)
    except (TypeError, ValueError) as exc:
        named(exc)
        return
    except ts.DivergenceError:
        return
    assert np.isfinite(emb.embedding_).all()
    assert 0.0 <= emb.score(T) <= 1.0 or math.isnan(emb.score(T))


ACTIONS = st.lists(
    st.sampled_from(
        ["ask", "tell", "tell-other", "tell-none", "tell-bad", "found", "replay", "posterior"]
    ),
    max_size=25,
)


@FUZZ
@given(
    actions=ACTIONS,
    method=st.sampled_from(["gamma-ckl", "gauss", "random"]),
    k=st.integers(2, 4),
    seed=st.integers(0, 3),
)
def test_discrete_session_call_orders(actions, method, k, seed):
    X = np.random.default_rng(seed).uniform(-1, 1, size=(12, 2))
    s = ts.DiscreteSearch(X, method=method, n_choices=k, random_state=seed)
    for a in actions:
        try:
            if a == "ask":
                s.ask()
            elif a.startswith("tell"):
                q = s.to_dict()["pending"]  # the screen asked, or None
                choice = {
                    "tell": None if q is None else int(q[0]),
                    "tell-other": 11,
                    "tell-none": None,
                    "tell-bad": "1",
                }[a]
                s.tell(choice)
            elif a == "found":
                q = s.to_dict()["pending"]
                s.found(0 if q is None else int(q[-1]))
            elif a == "replay":
                state = json.loads(json.dumps(s.to_dict()))
                again = ts.DiscreteSearch.from_dict(state, X)
                np.testing.assert_array_equal(again.posterior, s.posterior)
            else:
                p = s.posterior
                assert p.sum() == pytest.approx(1.0) or s.done or p.sum() == 0.0
        except RuntimeError as exc:  # the protocol: ask first, nothing after done
            assert any(m in str(exc) for m in ("before ask", "done")), str(exc)
        except (TypeError, ValueError) as exc:
            named(exc)
    assert s.n_queries == len(s.history)


json_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(string.printable, max_size=5),
    st.lists(st.integers(-3, 40), max_size=4),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


@FUZZ
@given(key=st.sampled_from(list(ts.DiscreteSearch(np.eye(3)).to_dict())), value=json_values)
def test_tampered_discrete_state(key, value):
    X = np.random.default_rng(0).uniform(-1, 1, size=(20, 2))
    s = ts.DiscreteSearch(X, random_state=1)
    for _ in range(3):
        s.tell(int(s.ask()[0]))
    state = {**s.to_dict(), key: value}
    try:
        ts.DiscreteSearch.from_dict(state, X)
    except (TypeError, ValueError) as exc:
        named(exc)


@FUZZ
@given(
    key=st.sampled_from(list(ts.ContinuousSearch(2, 3.0).to_dict())),
    value=json_values,
    method=st.sampled_from(["global", "posterior", "hypothesis-test"]),
)
def test_tampered_continuous_state(key, value, method):
    # a state may legitimately ask for millions of particles (slow, not wrong): not here
    hypothesis.assume(key != "n_particles" or not isinstance(value, int) or value < 10**5)
    s = ts.ContinuousSearch(2, 3.0, method=method, n_particles=64, random_state=1)
    for _ in range(3):
        s.ask()
        s.tell(True)
    state = {**s.to_dict(), key: value}
    try:
        ts.ContinuousSearch.from_dict(state)
    except (TypeError, ValueError) as exc:
        named(exc)


@FUZZ
@given(
    dim=st.one_of(st.integers(-1, 4), st.just(16), st.just(2.0)),
    gamma=st.one_of(st.floats(-1, 100), st.just(float("inf"))),
    bounds=st.one_of(
        st.tuples(finite, finite),
        st.just((0, 1)),
        st.just(("a", 1)),
        st.just((1.0,)),
        # a range per axis, of any length (right or wrong)
        st.tuples(st.lists(finite, max_size=5), st.lists(finite, max_size=5)),
    ),
    method=st.sampled_from(["global", "posterior", "hypothesis-test", "x"]),
    alpha=st.floats(0, 1.2),
    lapse=st.floats(-0.1, 0.6),
    answers=st.lists(st.booleans(), max_size=15),
)
def test_continuous_session(dim, gamma, bounds, method, alpha, lapse, answers):
    try:
        s = ts.ContinuousSearch(
            dim, gamma, bounds=bounds, method=method, alpha=alpha, lapse=lapse, n_particles=64
        )
    except (TypeError, ValueError) as exc:
        named(exc)
        return
    for answer in answers:
        a, b = s.ask()
        assert np.isfinite(a).all() and np.isfinite(b).all()
        s.tell(answer)
    assert np.isfinite(s.estimate()).all()
    assert np.isfinite(s.region.edge) and s.region.edge > 0


@FUZZ
@given(
    n_runs=st.integers(-1, 3),
    max_queries=st.one_of(st.none(), st.integers(-1, 6)),
    max_stages=st.one_of(st.none(), st.integers(-1, 3)),
    oracle_gamma=st.one_of(st.none(), st.floats(-1, 50)),
    oracle_lapse=st.floats(-0.5, 1.5),
    method=st.sampled_from(["global", "posterior", "hypothesis-test"]),
)
def test_simulate_continuous(n_runs, max_queries, max_stages, oracle_gamma, oracle_lapse, method):
    try:
        sim = ts.simulate_continuous(
            2,
            3.0,
            n_runs=n_runs,
            max_queries=max_queries,
            max_stages=max_stages,
            method=method,
            oracle=None if oracle_gamma is None else ts.GammaCKL(oracle_gamma),
            oracle_lapse=oracle_lapse,
            n_particles=32,
            random_state=0,
        )
    except (TypeError, ValueError) as exc:
        named(exc)
        return
    assert sim.depths.shape == (n_runs,)
    if sim.errors is not None:
        assert not np.isnan(sim.errors[:, 0]).any()


@FUZZ
@given(
    n_choices=st.integers(1, 5),
    runs=st.one_of(
        st.just({}),
        st.builds(lambda n: {"n_runs": n}, st.integers(-1, 5)),
        st.builds(lambda t: {"targets": t}, st.lists(st.integers(-2, 12), max_size=4)),
    ),
    max_queries=st.integers(-1, 5),
    oracle=st.one_of(oracles, st.just("GammaCKL")),
    oracle_lapse=st.floats(-0.5, 1.5),
    method=st.sampled_from(["gamma-ckl", "gauss", "random"]),
)
def test_simulate_discrete(n_choices, runs, max_queries, oracle, oracle_lapse, method):
    X = np.random.default_rng(1).uniform(-1, 1, size=(10, 2))
    try:
        sim = ts.simulate_discrete(
            X,
            method=method,
            n_choices=n_choices,
            max_queries=max_queries,
            oracle=oracle,
            oracle_lapse=oracle_lapse,
            random_state=0,
            **runs,
        )
    except (TypeError, ValueError) as exc:
        named(exc)
        return
    assert ((sim.n_queries >= 1) & (sim.n_queries <= max_queries)).all()
