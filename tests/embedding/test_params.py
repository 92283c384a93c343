"""Parameters declared once (``_parameter_constraints``) and checked in one place: each kind
of bad value gets the error that names the argument, the declarations agree with the native
core's own checks at their boundaries, and EmbeddingCV reuses Embedding's declarations."""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np
import pytest

import tripletsearch as ts
from tripletsearch import _core
from tripletsearch._params import (
    Interval,
    InvalidParameterError,
    SequenceOf,
    StrOptions,
    check_param,
    validate_params,
)
from tripletsearch.continuous import ContinuousSettings
from tripletsearch.discrete import DiscreteSettings

POSITIVE = Interval(Real, 0, None, closed="neither")


# ------------------------------------------------------------------ the forms


@pytest.mark.parametrize(
    "value,forms,exc,match",
    [
        (2.5, [Interval(Integral, 1, None, closed="left")], TypeError, "x: expected an integer"),
        (True, [Interval(Integral, 1, None, closed="left")], TypeError, "got bool"),
        (0, [Interval(Integral, 1, None, closed="left")], ValueError, "x: must be >= 1, got 0"),
        (2**64, [Interval(Integral, 1, None, closed="left")], ValueError, "64-bit"),
        ("1", [POSITIVE], TypeError, "x: expected a real number, got str"),
        (0.0, [POSITIVE], ValueError, r"x: must be > 0, got 0.0"),
        (math.nan, [POSITIVE], ValueError, "x: must be finite, got nan"),
        (-math.inf, [Interval(Real, None, 0, closed="right")], ValueError, "must be finite"),
        (1.0, [Interval(Real, 0, 1, closed="left")], ValueError, r"x: must lie in \[0, 1\), got"),
        (0.5, [Interval(Real, 0.5, 1, closed="neither")], ValueError, r"lie in \(0.5, 1\)"),
        (1.5, [Interval(Real, None, 1, closed="right")], ValueError, "x: must be <= 1"),
        ("bfs", [StrOptions({"a", "b"})], ValueError, r"x: expected one of \['a', 'b'\]"),
        (3, [StrOptions({"a", "b"})], TypeError, r"expected one of \['a', 'b'\], got int"),
        ([1.0, -2.0], [SequenceOf(POSITIVE)], ValueError, "x: entry 1 must be > 0, got -2.0"),
        (["a"], [SequenceOf(POSITIVE)], TypeError, "x: expected a sequence of real numbers"),
        ([], [SequenceOf(POSITIVE)], ValueError, "x: expected at least one value"),
        ([[1.0]], [SequenceOf(POSITIVE)], ValueError, "x: expected a 1-d sequence"),
        (3.0, [SequenceOf(POSITIVE), None], TypeError, "a sequence of real numbers or None"),
        ("yes", ["boolean"], TypeError, "x: expected a bool, got str"),
        (-1, ["random_state"], ValueError, "x: seed must be >= 0"),
        ("7", ["random_state"], TypeError, "x: expected None, an int or a numpy Generator"),
        ([1], ["dict", None], TypeError, "x: expected a dict or None, got list"),
        (-1, ["verbose"], ValueError, "x: must be >= 0"),
    ],
)
def test_each_kind_of_bad_value_names_the_argument(value, forms, exc, match):
    with pytest.raises(exc, match=match):
        check_param(value, "x", forms)


def test_a_string_that_is_no_option_where_numbers_are_accepted_is_both_errors():
    with pytest.raises(InvalidParameterError, match="x: expected a real number or 'auto'") as e:
        check_param("fast", "x", [POSITIVE, StrOptions({"auto"})])
    assert isinstance(e.value, TypeError) and isinstance(e.value, ValueError)
    # the public entry points with a number-or-"auto" argument
    X = np.random.default_rng(0).uniform(-1, 1, size=(30, 2))
    T = ts.GammaCKL(3.0).sample(X, [[0, 1, 2], [3, 4, 5]], random_state=0)
    for call in (
        lambda: ts.Embedding(gamma="best").fit(T),
        lambda: ts.DiscreteSearch(X, gamma="fast"),
        lambda: ts.DiscreteSearch(X, lapse="Auto"),
        lambda: ts.simulate_discrete(X, lapse="x", n_runs=2),
        lambda: ts.ContinuousSearch(2, "fast"),
        lambda: ts.simulate_continuous(2, 3.0, lapse="x", n_runs=2, max_queries=2),
    ):
        with pytest.raises(InvalidParameterError, match="expected a real number or 'auto'"):
            call()


def test_values_are_normalized():
    assert check_param(np.int32(3), "x", [Interval(Integral, 1, None, closed="left")]) == 3
    assert type(check_param(2, "x", [POSITIVE])) is float
    options = StrOptions({"gamma-ckl"}, aliases={"gammackl": "gamma-ckl"}, ignore_case=True)
    assert check_param("GammaCKL", "model", [options]) == "gamma-ckl"
    assert check_param(np.array([2, 1]), "x", [SequenceOf(POSITIVE)]) == [2.0, 1.0]
    assert check_param(None, "x", [POSITIVE, None]) is None
    assert validate_params(
        {"a": 1, "b": "auto", "c": "ignored"},
        {"a": [POSITIVE], "b": [POSITIVE, StrOptions({"auto"})]},
    ) == {"a": 1.0, "b": "auto"}


# ------------------------------------------------------------------ the estimators


def test_embedding_checks_its_parameters_at_fit_not_at_construction():
    T = ts.GammaCKL(3.0).sample(np.eye(6), [[0, 1, 2], [3, 4, 5], [1, 2, 3]], random_state=0)
    emb = ts.Embedding(dim=0)  # scikit-learn's convention: __init__ stores
    assert emb.get_params()["dim"] == 0
    with pytest.raises(ValueError, match="dim: must be >= 1, got 0"):
        emb.fit(T)
    emb.set_params(dim=2, gamma=3.0, max_epochs=5)
    assert emb.fit(T).embedding_.shape == (6, 2)
    # every parameter is checked, whatever the model uses
    with pytest.raises(ValueError, match="gamma: must be > 0"):
        ts.Embedding("ckl", gamma=-1.0).fit(T)
    with pytest.raises(ValueError, match=r"init: expected one of \['auto', 'lift', 'random'\]"):
        ts.Embedding(init="pca").fit(T)
    with pytest.raises(TypeError, match="n_jobs: expected an integer or None, got float"):
        ts.Embedding(n_jobs=1.5).fit(T)


def test_embedding_cv_reuses_embeddings_declarations():
    own, est = ts.EmbeddingCV._parameter_constraints, ts.Embedding._parameter_constraints
    assert own["model"] is est["model"] and own["random_state"] is est["random_state"]
    assert own["dims"][0].of is est["dim"][0] and own["l2s"][0].of is est["l2"][0]
    assert own["gammas"][0].of is est["gamma"][0]
    assert set(own) <= set(ts.EmbeddingCV._param_names())
    assert set(est) == set(ts.Embedding._param_names())


def test_search_settings_check_their_values():
    with pytest.raises(ValueError, match=r"n_choices: must lie in \[2, 64\], got 65"):
        DiscreteSettings(n_choices=65)
    with pytest.raises(ValueError, match="method: expected one of"):
        DiscreteSettings(method="bfs")
    with pytest.raises(ValueError, match=r"lapse: must lie in \[0, 0.5\)"):
        ContinuousSettings(2, 3.0, lapse=0.5)
    with pytest.raises(ValueError, match="n_particles: must be >= 16"):
        ContinuousSettings(2, 3.0, n_particles=8)
    with pytest.raises(ValueError, match=r"delta: must lie in \(0, 0.5\)"):
        ContinuousSettings(2, 3.0, delta=0.7)
    with pytest.raises(TypeError, match="bounds: expected"):
        ContinuousSettings(2, 3.0, bounds="ab")


# ------------------------------------------------------------------ one limit, two checks


def _refused(build, value):
    """Whether ``build(value)`` raises ValueError."""
    try:
        build(value)
    except ValueError:
        return True
    return False


def _train(**kw):
    return _core.TrainOptions(optimizer=_core.Optimizer.Adam, **kw)


def _spec(kind):
    return lambda v: _core.OracleSpec(getattr(_core.ModelKind, kind), v)


# (declared constraint, the native check of the same value, values on both sides of its
# bounds); batch_size is not here: None is the core's 0 (full batch)
AGREEMENT = [
    (ts.Embedding._parameter_constraints["lr"], lambda v: _train(lr=v), [0.0, 1e-300]),
    (ts.Embedding._parameter_constraints["tol"], lambda v: _train(tol=v), [-1e-300, 0.0]),
    (ts.Embedding._parameter_constraints["l2"], lambda v: _train(l2=v), [-1e-300, 0.0]),
    (ts.Embedding._parameter_constraints["max_epochs"], lambda v: _train(max_epochs=v), [0, 1]),
    (ts.Embedding._parameter_constraints["gamma"], _spec("GammaCKL"), [0.0, 1e-300, math.inf]),
    (ts.Embedding._parameter_constraints["mu"], _spec("CKL"), [-1e-300, 0.0]),
    (ts.Embedding._parameter_constraints["alpha"], _spec("TSTE"), [0.0, 1e-300]),
    (ts.Embedding._parameter_constraints["sigma"], _spec("Probit"), [0.0, 1e-300]),
    (
        DiscreteSettings._parameter_constraints["n_choices"],
        lambda v: _core.SearchConfig(n_choices=v),
        [1, 2, 64, 65],
    ),
    (
        DiscreteSettings._parameter_constraints["lapse"],
        lambda v: _core.SearchConfig(lapse=v),
        [-1e-300, 0.0, 0.999, 1.0],
    ),
    (DiscreteSettings._parameter_constraints["r"], lambda v: _core.SearchConfig(r=v), [0.0, 1e-9]),
    (
        DiscreteSettings._parameter_constraints["sigma"],
        lambda v: _core.SearchConfig(sigma=v),
        [0.0, 1e-9],
    ),
    (
        ContinuousSettings._parameter_constraints["alpha"],
        lambda v: _core.ContinuousConfig(alpha=v),
        [0.5, 0.5000001, 0.9999999, 1.0],
    ),
    (
        ContinuousSettings._parameter_constraints["lapse"],
        lambda v: _core.ContinuousConfig(lapse=v),
        [-1e-300, 0.0, 0.4999999, 0.5],
    ),
    (
        ContinuousSettings._parameter_constraints["n_particles"],
        lambda v: _core.ContinuousConfig(n_particles=v),
        [15, 16],
    ),
    (
        ContinuousSettings._parameter_constraints["gamma"],
        lambda v: _core.ContinuousConfig(gamma=v),
        [0.0, 1e-9],
    ),
]


@pytest.mark.parametrize(
    "forms,native,values",
    AGREEMENT,
    ids=[
        "Embedding.lr",
        "Embedding.tol",
        "Embedding.l2",
        "Embedding.max_epochs",
        "Embedding.gamma",
        "Embedding.mu",
        "Embedding.alpha",
        "Embedding.sigma",
        "DiscreteSettings.n_choices",
        "DiscreteSettings.lapse",
        "DiscreteSettings.r",
        "DiscreteSettings.sigma",
        "ContinuousSettings.alpha",
        "ContinuousSettings.lapse",
        "ContinuousSettings.n_particles",
        "ContinuousSettings.gamma",
    ],
)
def test_declared_ranges_agree_with_the_cores(forms, native, values):
    """A value the declaration refuses the core refuses too, and the other way round: the
    limit is the same in both languages (the core checks for direct _core calls)."""

    def declared(v):
        return check_param(v, "x", forms)

    refused = [_refused(declared, v) for v in values]
    assert refused == [_refused(native, v) for v in values], values
    assert any(refused) and not all(refused)
