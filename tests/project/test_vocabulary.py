"""One vocabulary (docs/vocabulary.rst): the public API and the native core's binding
keywords use the current names, and the names retired in 0.2.0 still work for one release,
with a DeprecationWarning, giving exactly what the new names give."""

from __future__ import annotations

import ast
import inspect
import json
import math
import re
import zipfile
from pathlib import Path

import numpy as np
import pytest

import tripletsearch as ts
from tripletsearch import _core, model_selection, theory, users
from tripletsearch.serve.config import ServeConfig

# "choice" is a position on a screen (the core, the bindings, the JSON API); the item a
# person picked is "item" in the library
RETIRED = {"d", "n_components", "oracle_gamma", "chosen", "choice", "index"}
# the core's spellings retired in 0.2.0 (binding keywords; the core keeps "choice" for a
# position on the screen)
RETIRED_IN_THE_CORE = {
    "d",
    "n_components",
    "chosen",
    "k",
    "user_lapse",
    "user_gamma",
    "particles",
    "runs",
    "a_closer",
}

PUBLIC = [
    ts.GammaCKL,
    ts.CKL,
    ts.TSTE,
    ts.Probit,
    ts.Oracle.prob,
    ts.Oracle.sample,
    ts.Embedding,
    ts.Embedding.fit,
    ts.embedding.gamma_path,
    ts.discrete.DiscreteSettings,
    ts.continuous.ContinuousSettings,
    ts.DiscreteSearch,
    ts.DiscreteSearch.tell,
    ts.DiscreteSearch.found,
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
    assert new == users.fit_choice_model(X, heads, shown, item=choice)
    with pytest.warns(DeprecationWarning, match="'chosen' was renamed 'item'"):
        old = users.fit_choice_model(X, heads, shown, chosen=choice)
    assert old == new
    with pytest.warns(DeprecationWarning, match="'choice' was renamed 'item'"):
        assert users.fit_choice_model(X, heads, shown, choice=choice) == new
    with pytest.raises(TypeError, match="'choice' and its new name 'item'"):
        users.fit_choice_model(X, heads, shown, choice=choice, item=choice)
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
        lambda: users.fit_choice_model(X, [0, 1], [[2, 3], [4, 5]], choice=[2, 5]),
        lambda: users.choice_log_likelihood(X, [0], [[2, 3]], chosen=[2], gamma=3.0),
        lambda: (lambda s: s.tell(choice=int(s.ask()[0])))(ts.DiscreteSearch(X)),
        lambda: (lambda s: s.found(index=int(s.ask()[0])))(ts.DiscreteSearch(X)),
        lambda: ts.DiscreteSearch(X).observe([0, 1], choice=1),
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
    with pytest.warns(DeprecationWarning, match="'chosen' was renamed 'item'"):
        old = users.choice_log_likelihood(X, heads, shown, chosen=[2, 5], gamma=3.0)
    assert old == users.choice_log_likelihood(X, heads, shown, [2, 5], 3.0)

    with pytest.warns(DeprecationWarning, match="'choice' was renamed 'item'"):
        assert old == users.choice_log_likelihood(X, heads, shown, choice=[2, 5], gamma=3.0)


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
    """A study's participant through the participants' routes: the replies' JSON."""
    out = [c.get("/api/experiment").json()]
    p = c.post("/api/participants", json={"consent": True}).json()
    h = {"Authorization": "Bearer " + p["token"]}
    url = f"/api/participants/{p['id']}"
    n = c.post(url + "/next", json={}, headers=h).json()
    out += [p, n, c.post(url + "/answer", json={"screen": 0, "choice": 0}, headers=h).json()]
    out.append(c.post(url + "/undo", json={"screen": 1}, headers=h).json())
    return out + [c.post(url + "/withdraw", json={}, headers=h).json()]


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
        create_app(
            demo_catalogue(), f"sqlite:///{tmp_path / 'a.db'}", config=ServeConfig(admin_token="a")
        )
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


def test_discrete_search_answers_name_the_item():
    """tell / found / observe take the item picked as ``item`` (``choice=`` and found's
    ``index=`` warn); history records are keyed ``item``, and states whose records say
    ``choice`` (written before 0.2.0) replay to the same session."""
    X = np.random.default_rng(6).uniform(-1, 1, size=(80, 2))
    new, old = ts.DiscreteSearch(X, random_state=2), ts.DiscreteSearch(X, random_state=2)
    for _ in range(4):
        q = new.ask()
        assert old.ask().tolist() == q.tolist()
        new.tell(item=int(q[1]))
        with pytest.warns(DeprecationWarning, match="'choice' was renamed 'item'"):
            old.tell(choice=int(q[1]))
    np.testing.assert_array_equal(new.posterior, old.posterior)
    q = new.ask()
    old.ask()
    new.found(item=int(q[0]))
    with pytest.warns(DeprecationWarning, match="'index' was renamed 'item'"):
        old.found(index=int(q[0]))
    assert new.history == old.history
    assert [set(h) for h in new.history] == [{"shown", "item", "found"}] * 5
    with pytest.raises(TypeError, match="'choice' and its new name 'item'"):
        ts.DiscreteSearch(X).tell(choice=0, item=0)
    # a state written before 0.2.0: records keyed "choice"
    state = new.to_dict()
    legacy = {
        **state,
        "history": [
            {"shown": h["shown"], "choice": h["item"], "found": h["found"]}
            for h in state["history"]
        ],
    }
    again = ts.DiscreteSearch.from_dict(legacy, X)
    assert again.history == new.history and again.target == new.target
    watcher = ts.DiscreteSearch(X, random_state=2)
    with pytest.warns(DeprecationWarning, match="'choice' was renamed 'item'"):
        watcher.observe(state["history"][0]["shown"], choice=state["history"][0]["item"])
    assert watcher.history[0] == new.history[0]
    observed_state = {**watcher.to_dict(), "history": legacy["history"], "done": True}
    observed = ts.DiscreteSearch.from_dict({**observed_state, "pending": None}, X)
    assert observed.history == new.history


# ------------------------------------------------------------------ the native core's keywords

_SIGNATURE = re.compile(r"^\s*(?:\d+\.\s*)?(\w+)\((.*)\)\s*->", re.M)


def _doc_keywords(doc: str) -> set[str]:
    """The parameter names of a pybind11 docstring's signature lines ("f(a: int, *, b=1)")."""
    names = set()
    for match in _SIGNATURE.finditer(doc or ""):
        depth, part = 0, ""
        for ch in match.group(2) + ",":
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
            if ch == "," and depth == 0:
                name = part.split(":")[0].split("=")[0].strip()
                if name and name not in ("self", "*"):
                    names.add(name)
                part = ""
            else:
                part += ch
    return names


def _binding_keywords() -> dict[str, set[str]]:
    """Keywords of every function and class constructor (and method) the extension defines,
    read from the pybind11 signatures."""
    out = {}
    for name in dir(_core):
        obj = getattr(_core, name)
        if name.startswith("_") or not callable(obj):
            continue
        if isinstance(obj, type):
            if hasattr(obj, "__members__"):  # an enum: its value
                continue
            out[name] = _doc_keywords(obj.__init__.__doc__)
            for meth, attr in vars(obj).items():
                if isinstance(attr, staticmethod):  # its function's signature
                    attr = attr.__func__
                if not meth.startswith("_") and callable(attr):
                    out[f"{name}.{meth}"] = _doc_keywords(attr.__doc__)
        else:
            out[name] = _doc_keywords(obj.__doc__)
    return out


def _stub_keywords() -> dict[str, set[str]]:
    """The same, read from the checked-in stub (python/tripletsearch/_core.pyi)."""
    tree = ast.parse((Path(ts.__file__).parent / "_core.pyi").read_text())

    def args(fn: ast.FunctionDef) -> set[str]:
        a = fn.args
        return {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs} - {"self"}

    out = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            out[node.name] = args(node)
        elif isinstance(node, ast.ClassDef) and not any(
            isinstance(n, ast.FunctionDef) and n.name == "__int__" for n in node.body
        ):
            out[node.name] = set()  # no constructor: no keywords
            for fn in node.body:
                if not isinstance(fn, ast.FunctionDef):
                    continue
                if fn.name == "__init__":
                    out[node.name] = out.get(node.name, set()) | args(fn)
                elif not fn.name.startswith("_") and not any(
                    isinstance(d, ast.Name) and d.id == "property" for d in fn.decorator_list
                ):
                    out[f"{node.name}.{fn.name}"] = out.get(f"{node.name}.{fn.name}", set()) | args(
                        fn
                    )
    return out


def test_binding_keywords_use_the_current_vocabulary():
    keywords = _binding_keywords()
    assert {"SearchConfig", "ContinuousConfig", "DiscreteSimOptions", "simulate_discrete"} <= set(
        keywords
    )
    for name, params in keywords.items():
        assert not params & RETIRED_IN_THE_CORE, (name, params & RETIRED_IN_THE_CORE)
    # the shared ideas under their library names
    assert "n_particles" in keywords["ContinuousConfig"]
    assert {"n_runs", "oracle", "oracle_lapse"} <= keywords["ContinuousSimOptions"]
    assert {"max_queries", "oracle_lapse", "first_run", "oracle_miss"} == keywords[
        "DiscreteSimOptions"
    ]
    assert "n_choices" in keywords["SearchConfig"]
    assert "dim" in keywords["p_correct_monte_carlo"]
    assert "a_is_closer" in keywords["ContinuousSearcher.tell"]
    # "choice" in the core is a position on the screen, not an item
    assert keywords["DiscreteSearcher.update"] == {"shown", "choice", "offered"}
    assert {"guesses", "miss", "miss_auto"} <= keywords["SearchConfig"]


def test_the_stub_declares_the_bindings_keywords():
    stub, runtime = _stub_keywords(), _binding_keywords()
    for name, params in runtime.items():
        assert stub.get(name) == params, name
