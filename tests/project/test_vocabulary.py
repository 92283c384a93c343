"""One vocabulary (docs/vocabulary.rst): the public API uses the current names, and the
names retired in 0.2.0 still work for one release, with a DeprecationWarning, giving
exactly what the new names give."""

from __future__ import annotations

import inspect
import json
import math
import zipfile
from pathlib import Path

import numpy as np
import pytest

import tripletsearch as ts
from tripletsearch import model_selection, theory, users

RETIRED = {"d", "n_components", "oracle_gamma", "chosen"}

PUBLIC = [
    ts.GammaCKL,
    ts.CKL,
    ts.TSTE,
    ts.Probit,
    ts.Oracle.prob,
    ts.Oracle.sample,
    ts.Embedding,
    ts.Embedding.fit,
    ts.DiscreteSearch,
    ts.DiscreteSearch.observe,
    ts.DiscreteSearch.spawn,
    ts.simulate_discrete,
    ts.ContinuousSearch,
    ts.ContinuousSearch.observe,
    ts.simulate_continuous,
    ts.fit_choice_model,
    users.choice_log_likelihood,
    model_selection.grid_search_cv,
    model_selection.cross_validate,
    *(getattr(theory, name) for name in theory.__all__ if callable(getattr(theory, name))),
]


def test_public_signatures_use_the_current_names():
    for func in PUBLIC:
        params = set(inspect.signature(func).parameters)
        assert not params & RETIRED, (func, params & RETIRED)


def test_dimension_is_dim_and_comes_first_in_theory():
    assert "dim" in inspect.signature(ts.Embedding).parameters
    assert next(iter(inspect.signature(ts.ContinuousSearch).parameters)) == "dim"
    for name in ("p_correct", "p_correct_monte_carlo", "calibrate_gamma", "uncertainty_radius"):
        assert next(iter(inspect.signature(getattr(theory, name)).parameters)) == "dim", name
    # (dim, gamma) as in ContinuousSearch and simulate_continuous
    assert list(inspect.signature(theory.p_correct).parameters)[:2] == ["dim", "gamma"]
    assert list(inspect.signature(theory.hypothesis_test_probs).parameters)[:2] == ["dim", "gamma"]


def test_random_state_defaults_to_none_everywhere():
    for func in PUBLIC:
        param = inspect.signature(func).parameters.get("random_state")
        if param is not None:
            assert param.default is None, func


def test_options_are_keywords_everywhere():
    for func in PUBLIC:
        for p in inspect.signature(func).parameters.values():
            if p.name in ("random_state", "n_jobs", "verbose"):
                assert p.kind is inspect.Parameter.KEYWORD_ONLY, (func, p.name)


def test_theory_d_keyword():
    with pytest.warns(DeprecationWarning, match="'d' was renamed 'dim'"):
        old = theory.p_correct(gamma=4.0, d=2)
    assert old == theory.p_correct(2, 4.0) == pytest.approx(math.pi / 4, rel=1e-14)
    with pytest.warns(DeprecationWarning):
        assert theory.calibrate_gamma(d=3, p=0.8) == theory.calibrate_gamma(3, 0.8)
    with pytest.warns(DeprecationWarning):
        assert theory.uncertainty_radius(d=2) == theory.uncertainty_radius(2)
    with pytest.warns(DeprecationWarning):
        old = theory.p_correct_monte_carlo(gamma=3.0, d=4, n_samples=1000, random_state=1)
    assert old == theory.p_correct_monte_carlo(4, 3.0, 1000, random_state=1)
    with pytest.raises(TypeError, match="'d' and its new name 'dim'"):
        theory.p_correct(gamma=4.0, d=2, dim=2)


def _triplets():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(25, 2))
    Q = rng.integers(0, 25, size=(800, 3))
    return ts.GammaCKL(5.0).sample(X, Q[ts.embedding.valid_rows(Q)], random_state=1)


def test_embedding_n_components(tmp_path):
    T = _triplets()
    with pytest.warns(DeprecationWarning, match="'n_components' was renamed 'dim'"):
        old = ts.Embedding(n_components=3, max_epochs=20, random_state=0)
    new = ts.Embedding(dim=3, max_epochs=20, random_state=0)
    assert old.get_params() == new.get_params()
    np.testing.assert_array_equal(old.fit(T).embedding_, new.fit(T).embedding_)
    with pytest.warns(DeprecationWarning):
        assert new.n_components == 3
    with pytest.warns(DeprecationWarning):
        new.set_params(n_components=2)
    assert new.dim == 2
    with pytest.raises(TypeError, match="give 'dim'"):
        ts.Embedding(n_components=3, dim=3)
    # a file written before the rename loads with its dimension
    new.fit(T).save(tmp_path / "new.npz")
    with np.load(tmp_path / "new.npz") as f:
        arrays = {k: f[k] for k in f.files}
    meta = json.loads(str(arrays["meta"]))
    meta["params"]["n_components"] = meta["params"].pop("dim")
    arrays["meta"] = np.array(json.dumps(meta))
    with open(tmp_path / "old.npz", "wb") as fh:
        np.savez(fh, **arrays)
    assert zipfile.is_zipfile(tmp_path / "old.npz")
    back = ts.Embedding.load(tmp_path / "old.npz")
    assert back.dim == 2
    np.testing.assert_array_equal(back.embedding_, new.embedding_)


def test_simulate_continuous_oracle_gamma():
    kw = dict(n_runs=3, max_queries=10, random_state=4)
    with pytest.warns(DeprecationWarning, match="oracle=GammaCKL"):
        old = ts.simulate_continuous(2, 3.0, oracle_gamma=1.5, **kw)
    new = ts.simulate_continuous(2, 3.0, oracle=ts.GammaCKL(1.5), **kw)
    np.testing.assert_array_equal(old.errors, new.errors)
    with pytest.warns(DeprecationWarning, match="'queries' was renamed 'n_queries'"):
        np.testing.assert_array_equal(new.queries, new.n_queries)
    with pytest.raises(TypeError, match="give 'oracle'"):
        ts.simulate_continuous(2, 3.0, oracle_gamma=1.5, oracle=ts.GammaCKL(1.5), **kw)
    with pytest.raises(TypeError, match="unexpected keyword argument 'oracle_gama'"):
        ts.simulate_continuous(2, 3.0, oracle_gama=1.5, **kw)
    with pytest.raises(TypeError, match="oracle: the continuous simulator's users"):
        ts.simulate_continuous(2, 3.0, oracle=ts.TSTE(), **kw)


def test_simulate_discrete_int_targets_is_n_runs():
    X = np.random.default_rng(2).uniform(-1, 1, size=(60, 2))
    with pytest.warns(DeprecationWarning, match="'targets=<int>' was renamed 'n_runs'"):
        old = ts.simulate_discrete(X, targets=20, random_state=3)
    new = ts.simulate_discrete(X, n_runs=20, random_state=3)
    np.testing.assert_array_equal(old.targets, new.targets)
    np.testing.assert_array_equal(old.n_queries, new.n_queries)
    with pytest.raises(TypeError, match="not both"):
        ts.simulate_discrete(X, n_runs=2, targets=[0, 1])
    with pytest.raises(ValueError, match="n_runs: must be >= 1"):
        ts.simulate_discrete(X, n_runs=0)


def test_simulate_discrete_oracle_lapse():
    X = np.random.default_rng(5).uniform(-1, 1, size=(400, 3))
    kw = dict(n_runs=400, gamma=6.0, oracle=ts.GammaCKL(6.0), random_state=7, max_queries=400)
    base = ts.simulate_discrete(X, **kw)
    # lapse 0 draws nothing extra: the same searches as without the argument
    np.testing.assert_array_equal(
        ts.simulate_discrete(X, oracle_lapse=0.0, **kw).n_queries, base.n_queries
    )
    # a user who clicks at random half the time misleads an unaware searcher: more queries
    noisy = ts.simulate_discrete(X, oracle_lapse=0.5, **kw)
    diff = noisy.n_queries.astype(float) - base.n_queries
    assert diff.mean() > 3 * diff.std(ddof=1) / math.sqrt(len(diff)), (noisy, base)
    with pytest.raises(ValueError, match="oracle_lapse"):
        ts.simulate_discrete(X, oracle_lapse=1.0, **kw)


def test_fit_choice_model_names():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 2))
    heads = rng.integers(0, 40, 300)
    shown = np.stack([(h + 1 + rng.permutation(39)[:2]) % 40 for h in heads])
    D = ((X[shown] - X[heads][:, None]) ** 2).sum(-1)
    choice = shown[np.arange(len(heads)), np.argmin(D, axis=1)]
    new = users.fit_choice_model(X, heads, shown, choice)
    with pytest.warns(DeprecationWarning, match="'chosen' was renamed 'choice'"):
        old = users.fit_choice_model(X, heads, shown, chosen=choice)
    assert old == new
    with pytest.warns(DeprecationWarning, match="'gamma_ci' was renamed 'gamma_interval'"):
        assert new.gamma_ci == new.gamma_interval
    with pytest.warns(DeprecationWarning, match="'lapse_ci' was renamed 'lapse_interval'"):
        assert new.lapse_ci == new.lapse_interval


def test_history_records_replay_through_observe():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(50, 2))
    for live, fresh in (
        (ts.DiscreteSearch(X, random_state=1), lambda: ts.DiscreteSearch(X, random_state=1)),
        (
            ts.ContinuousSearch(2, 3.0, random_state=1),
            lambda: ts.ContinuousSearch(2, 3.0, random_state=1),
        ),
    ):
        for _ in range(4):
            shown = live.ask()
            live.tell(int(shown[0]) if isinstance(live, ts.DiscreteSearch) else True)
        replay = fresh()
        for record in live.history:
            params = inspect.signature(replay.observe).parameters
            assert set(record) <= set(params), (record.keys(), params)
            replay.observe(**record)
        assert replay.n_queries == live.n_queries == 4


def test_options_are_keyword_only():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(12, 2))
    Q = rng.integers(0, 12, size=(50, 3))
    Q = Q[ts.embedding.valid_rows(Q)]
    o = ts.GammaCKL(3.0)
    with pytest.warns(DeprecationWarning, match="pass 'random_state' by keyword"):
        old = o.sample(X, Q, 5)
    np.testing.assert_array_equal(old, o.sample(X, Q, random_state=5))
    with pytest.warns(DeprecationWarning, match="pass 'n_jobs' by keyword"):
        np.testing.assert_array_equal(o.grad(X, old, 1), o.grad(X, old, n_jobs=1))
    with pytest.warns(DeprecationWarning, match="pass 'random_state' by keyword"):
        old_folds = model_selection.kfold(20, 4, 3)
    for (a, b), (c, e) in zip(old_folds, model_selection.kfold(20, 4, random_state=3)):
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, e)
    with pytest.raises(TypeError, match="too many positional"):
        o.grad(X, old, 1, 2)
    with pytest.raises(TypeError, match="'n_jobs' twice"):
        o.grad(X, old, 1, n_jobs=1)
    for func in (ts.Oracle.grad, ts.Oracle.sample, model_selection.kfold, ts.DiscreteSearch.spawn):
        kinds = {p.name: p.kind for p in inspect.signature(func).parameters.values()}
        assert all(
            kind is inspect.Parameter.KEYWORD_ONLY
            for name, kind in kinds.items()
            if name in ("n_jobs", "random_state")
        ), func


def test_warnings_name_the_callers_line():
    """A DeprecationWarning attributed to the library is hidden by Python's default filters:
    each one must point at the line that used the old name."""
    X = np.random.default_rng(0).uniform(-1, 1, size=(30, 2))
    calls = [
        lambda: ts.Embedding(n_components=2),
        lambda: ts.Embedding().n_components,
        lambda: ts.Embedding().set_params(n_components=2),
        lambda: theory.p_correct(gamma=2.0, d=2),
        lambda: ts.simulate_continuous(2, 3.0, n_runs=1, max_queries=2, oracle_gamma=2.0),
        lambda: ts.simulate_continuous(2, 3.0, n_runs=1, max_queries=2).queries,
        lambda: ts.simulate_discrete(X, targets=2),
        lambda: ts.DiscreteSearch(X).spawn(0),
        lambda: ts.GammaCKL(2.0).sample(X, [[0, 1, 2]], 0),
        lambda: model_selection.kfold(10, 2, 0),
    ]
    for call in calls:
        with pytest.warns(DeprecationWarning) as record:
            call()
        assert {w.filename for w in record} == {__file__}, [(w.filename, w.lineno) for w in record]


def test_old_spellings_edge_cases():
    # the old default oracle_gamma=None meant the searcher's gamma: still so, silently
    a = ts.simulate_continuous(2, 3.0, n_runs=2, max_queries=5, random_state=1, oracle_gamma=None)
    b = ts.simulate_continuous(2, 3.0, n_runs=2, max_queries=5, random_state=1)
    np.testing.assert_array_equal(a.errors, b.errors)
    # a grid with the old parameter name works (warns) and reports the new one
    T = _triplets()
    with pytest.warns(DeprecationWarning, match="'n_components' was renamed 'dim'"):
        res = model_selection.grid_search_cv(
            ts.Embedding(max_epochs=20, random_state=0),
            {"n_components": [1, 2]},
            T,
            cv=2,
            random_state=0,
        )
    new = model_selection.grid_search_cv(
        ts.Embedding(max_epochs=20, random_state=0), {"dim": [1, 2]}, T, cv=2, random_state=0
    )
    assert [r["dim"] for r in res.rows] == [1, 2]
    assert [r["accuracy"] for r in res.rows] == [r["accuracy"] for r in new.rows]
    rng = np.random.default_rng(3)
    X = rng.normal(size=(20, 2))
    heads, shown = np.array([0, 1]), np.array([[2, 3], [4, 5]])
    with pytest.warns(DeprecationWarning, match="'chosen' was renamed 'choice'"):
        old = users.choice_log_likelihood(X, heads, shown, chosen=[2, 5], gamma=3.0)
    assert old == users.choice_log_likelihood(X, heads, shown, [2, 5], 3.0)


# ---------------------------------------------------------------------- the JSON API
# names the service retired in 0.2.0 (docs/vocabulary.rst): items per screen were "k",
# a session's count of answers "queries", the store's count "n_answers", the export's item
# picked "chosen"
RETIRED_JSON = {"k", "queries", "n_answers", "chosen"}


def _keys(value, into):
    """Every key of every JSON object in ``value``, with the keys of its object beside it."""
    if isinstance(value, dict):
        for k, v in value.items():
            into.append((k, set(value)))
            _keys(v, into)
    elif isinstance(value, list):
        for v in value:
            _keys(v, into)
    return into


def _session_replies(c):
    """A find and a mix session through every session endpoint: the replies' JSON."""
    out = [c.get("/api/catalogue", params={"limit": 3}).json(), c.get("/api/health").json()]
    for body in ({"mode": "find", "n_choices": 3}, {"mode": "mix"}):
        s = c.post("/api/sessions", json=body).json()
        url, h = f"/api/sessions/{s['id']}", {"Authorization": "Bearer " + s["token"]}
        first = c.post(url + "/answer", json={"screen": 0, "choice": 1}, headers=h).json()
        undo = c.post(url + "/undo", json={"screen": 1}, headers=h).json()
        last = c.post(url + "/answer", json={"screen": 2, "choice": 0, "found": True}, headers=h)
        out += [s, first, undo, last.json(), c.get(url, headers=h).json()]
    out.append(c.get("/api/admin/export", headers={"Authorization": "Bearer a"}).json())
    return out


def _study_replies(c):
    out = [c.get("/api/study").json()]
    p = c.post("/api/study/participants", json={"consent": True}).json()
    h = {"Authorization": "Bearer " + p["token"]}
    n = c.post(f"/api/study/participants/{p['id']}/next", json={}, headers=h).json()
    url = f"/api/sessions/{n['session']['id']}"
    out += [p, n, c.post(url + "/answer", json={"screen": 0, "choice": 0}, headers=h).json()]
    return out + [c.get(url, headers=h).json()]


def test_the_json_api_uses_the_current_names(tmp_path):
    """The request schema's fields and every key of every reply (sessions, study, catalogue,
    export) are current names; an old name appears only as a documented deprecated reply
    key, beside its new name."""
    pytest.importorskip("starlette")
    import warnings

    from tripletsearch.serve import create_app, demo_catalogue, schema
    from tripletsearch.serve.study import load_study

    with warnings.catch_warnings():  # Starlette 1.x, on import: "install httpx2 instead"
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

    fields = set().union(*schema.FIELDS.values())
    assert not fields & RETIRED_JSON
    assert set(schema.RENAMED_FIELDS) <= RETIRED_JSON
    assert set(schema.RENAMED_FIELDS.values()) <= fields
    assert set(schema.RENAMED_REPLY_KEYS.values()) <= RETIRED_JSON
    old_of = {old: new for new, old in schema.RENAMED_REPLY_KEYS.items()}
    study_file = tmp_path / "study.toml"
    study_file.write_text('catalogue = "colours"\ntargets = 2\nn_choices = 3\nmax_queries = 9\n')
    replies = []
    with TestClient(
        create_app(demo_catalogue(), f"sqlite:///{tmp_path / 'a.db'}", admin_token="a")
    ) as c:
        replies += _session_replies(c)
    study = load_study(study_file)
    with TestClient(
        create_app(study.catalogue, f"sqlite:///{tmp_path / 'b.db'}", study=study)
    ) as c:
        replies += _study_replies(c)
    keys = _keys(replies, [])
    assert {"n_choices", "n_queries", "item", "choice", "screen"} <= {k for k, _ in keys}
    for key, beside in keys:
        if key in RETIRED_JSON:
            assert key in old_of and old_of[key] in beside, (key, beside)
    # the vocabulary page names the API's fields and its retired names
    text = (Path(__file__).resolve().parents[2] / "docs" / "vocabulary.rst").read_text()
    for name in fields | set(schema.RENAMED_FIELDS) | set(schema.RENAMED_REPLY_KEYS.values()):
        assert f"``{name}``" in text, name
