"""Bad input to TripletSampler: an error naming the argument, and the sampler unharmed (it
continues exactly as a twin sampler that never saw the bad call)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sampler_helpers import in_step

import tripletsearch as ts
from tripletsearch import TripletSampler
from tripletsearch.people import TripletPeople


@pytest.fixture(params=["random", "arr", "active"])
def pair(request):
    """Two identical samplers past their burn-in, the people answering them."""
    p = TripletPeople.random(20, 2, seed=1)
    made = []
    for _ in range(2):
        s = TripletSampler(20, 2, method=request.param, random_state=2, n_jobs=1)
        made.append(s)
    p2 = TripletPeople.random(20, 2, seed=1)
    steps = made[0]._method.min_answers() + 30
    p.run(made[0], steps)
    p2.run(made[1], steps)
    return made[0], made[1], p


def unharmed(s, twin, p):
    assert s.to_dict() == twin.to_dict()
    in_step(s, twin, p, 20)


BAD_ROWS = [
    ("out of range", [[0, 1, 20]], ValueError, r"rows: index 20 at position \(0, 2\)"),
    ("negative", [[0, -1, 2]], ValueError, "rows: index -1"),
    ("head is the closer", [[3, 3, 4]], ValueError, "rows: row 0 .* names an item twice"),
    ("head is the farther", [[3, 4, 3]], ValueError, "rows: row 0"),
    ("the same candidate twice", [[3, 4, 4]], ValueError, "rows: row 0"),
    ("last row bad", [[0, 1, 2], [1, 2, 3], [5, 6, 5]], ValueError, "rows: row 2"),
    ("floats", [[0.0, 1.0, 2.0]], TypeError, "rows: expected an integer array"),
    ("bools", np.ones((2, 3), dtype=bool), TypeError, "rows: expected an integer array"),
    ("two columns", [[0, 1]], ValueError, "rows: expected 3 columns"),
    ("one row as 1-d", [0, 1, 2], ValueError, "rows: expected a 2-d array"),
    ("strings", [["a", "b", "c"]], TypeError, "rows"),
    ("ragged", [[0, 1, 2], [0, 1]], TypeError, "rows"),
]


@pytest.mark.parametrize(
    "rows, error, match", [b[1:] for b in BAD_ROWS], ids=[b[0] for b in BAD_ROWS]
)
def test_bad_rows(pair, rows, error, match):
    s, twin, p = pair
    with pytest.raises(error, match=match):
        s.tell(rows)
    unharmed(s, twin, p)


BAD_PARAMS = [
    ({"n_items": 2}, ValueError, "n_items: must be >= 3"),
    ({"n_items": 0}, ValueError, "n_items"),
    ({"n_items": 10.0}, TypeError, "n_items: expected an integer"),
    ({"dim": 0}, ValueError, "dim: must be >= 1"),
    ({"dim": "2"}, TypeError, "dim"),
    ({"method": "greedy"}, ValueError, "method: expected one of"),
    ({"method": None}, TypeError, "method"),
    ({"model": "probit"}, ValueError, "model: expected one of"),
    ({"model": "tsne"}, ValueError, "model"),
    ({"gamma": 0.0}, ValueError, "gamma"),
    ({"gamma": "fast"}, ValueError, "gamma"),
    ({"refit": "always"}, ValueError, "refit"),
    ({"refit": True}, TypeError, "refit"),
    ({"random_state": -1}, ValueError, "random_state"),
    ({"random_state": "seed"}, TypeError, "random_state"),
    ({"n_jobs": 0}, ValueError, "n_jobs"),
    ({"n_jobs": 1.5}, TypeError, "n_jobs"),
]


@pytest.mark.parametrize("kw, error, match", BAD_PARAMS, ids=[str(b[0]) for b in BAD_PARAMS])
def test_bad_parameters(kw, error, match):
    args = {"n_items": 10, "dim": 2, **kw}
    with pytest.raises(error, match=match):
        TripletSampler(args.pop("n_items"), args.pop("dim"), **args)


def test_model_aliases_and_case():
    assert TripletSampler(5, 2, model="tSTE").model == "t-ste"
    assert TripletSampler(5, 2, model="GammaCKL").model == "gamma-ckl"


BAD_ASKS = [
    ({"n": 0}, ValueError, "n: must be >= 1"),
    ({"n": 2.0}, TypeError, "n: expected an integer"),
    ({"k": 1}, ValueError, "k: must be >= 2"),
    ({"k": 20}, ValueError, r"k: at most n_items - 1 = 19"),
    ({"k": 3.0}, TypeError, "k"),
]


@pytest.mark.parametrize("kw, error, match", BAD_ASKS, ids=[str(b[0]) for b in BAD_ASKS])
def test_bad_ask(pair, kw, error, match):
    s, twin, p = pair
    with pytest.raises(error, match=match):
        s.ask(**kw)
    unharmed(s, twin, p)


def test_bad_embeddings(pair):
    s, twin, p = pair
    fitted = ts.Embedding("gamma-ckl", 2, n_items=20, max_epochs=5, random_state=0).fit(s.answers_)
    three = ts.Embedding("gamma-ckl", 3, n_items=20, max_epochs=5, random_state=0).fit(s.answers_)
    fewer = ts.Embedding("gamma-ckl", 2, n_items=19, max_epochs=5, random_state=0).fit(
        s.answers_[(s.answers_ < 19).all(axis=1)]
    )
    probit = ts.Embedding("probit", 2, n_items=20, max_epochs=5, random_state=0).fit(s.answers_)
    nan = ts.Embedding("gamma-ckl", 2, n_items=20, max_epochs=5, random_state=0).fit(s.answers_)
    nan.embedding_ = np.full((20, 2), np.nan)
    cases = [
        (fitted.embedding_, TypeError, "emb: expected a fitted Embedding, got ndarray"),
        (ts.Embedding("gamma-ckl", 2), ValueError, "emb: not fitted"),
        (three, ValueError, r"emb: expected an embedding of shape \(20, 2\), got \(20, 3\)"),
        (fewer, ValueError, r"emb: expected an embedding of shape \(20, 2\)"),
        (probit, ValueError, "emb: a Probit embedding"),
        (nan, ValueError, "emb: contains NaN"),
    ]
    for emb, error, match in cases:
        with pytest.raises(error, match=match):
            s.set_embedding(emb)
    unharmed(s, twin, p)


def test_refit_without_answers():
    s = TripletSampler(10, 2, random_state=0)
    with pytest.raises(ValueError, match="refit: no answers"):
        s.refit()
    with pytest.raises(ValueError, match="refit: no answers"):
        s.fit_embedding()
    assert s.embedding_ is None and s.n_answers_ == 0


def test_from_dict_of_another_object():
    X = np.random.default_rng(0).normal(size=(30, 2))
    search = ts.DiscreteSearch(X, random_state=0)
    with pytest.raises(ValueError, match="state: not a TripletSampler state"):
        TripletSampler.from_dict(search.to_dict())
    cont = ts.ContinuousSearch(2, 3.0, random_state=0)
    with pytest.raises(ValueError, match="state: not a TripletSampler state"):
        TripletSampler.from_dict(cont.to_dict())
    for other in ([1, 2], "state", None):
        with pytest.raises(TypeError, match="state: expected a dict"):
            TripletSampler.from_dict(other)


def test_from_dict_of_a_damaged_state():
    p = TripletPeople.random(15, 2, seed=3)
    s = TripletSampler(15, 2, method="active", random_state=4, n_jobs=1)
    p.run(s, s._method.burn_in + 10)
    good = json.loads(json.dumps(s.to_dict()))

    def damaged(**change):
        state = json.loads(json.dumps(good))
        for path, value in change.items():
            *keys, last = path.split("__")
            d = state
            for k in keys:
                d = d[k]
            d[last] = value
        return state

    cases = {
        "version": damaged(version=99),
        "answers out of range": damaged(answers=[[0, 1, 15]]),
        "a head among its candidates": damaged(answers=[[0, 0, 1]]),
        "n_items": damaged(n_items=2),
        "method": damaged(method="greedy"),
        "seed": damaged(seed="-5"),
        "embedding shape": damaged(embedding__embedding=[[0.0, 0.0]]),
        "rng": damaged(rng={"state": "x"}),
        "anchors": damaged(method_state__anchors=[99]),
        "particles": damaged(method_state__particles=[[0.0]]),
        "n_fitted": damaged(n_fitted=10**6),
        "missing": {k: v for k, v in good.items() if k != "answers"},
    }
    for name, state in cases.items():
        with pytest.raises(ValueError, match="state: "):
            TripletSampler.from_dict(state)
            pytest.fail(f"{name}: accepted")
    TripletSampler.from_dict(good)  # and the good one still loads
