"""TripletSampler: the ask/tell protocol, the refit policy, warm starts, embeddings fitted
elsewhere, the state round trip, reproducibility and thread invariance."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sampler_helpers import in_step

import tripletsearch as ts
from tripletsearch import TripletSampler
from tripletsearch.collect import METHODS
from tripletsearch.embedding import valid_rows
from tripletsearch.people import TripletPeople

METHOD_NAMES = sorted(METHODS)


def test_public_name_and_methods():
    assert ts.TripletSampler is TripletSampler
    assert "TripletSampler" in ts.__all__
    assert set(METHODS) == {"random", "arr", "active"}
    assert TripletSampler(10, 2).method == "active"


@pytest.mark.parametrize("method", METHOD_NAMES)
@pytest.mark.parametrize("k", [None, 2, 3, 5])
def test_ask_shapes_and_valid_queries(method, k):
    n = 15
    p = TripletPeople.random(n, 2)
    s = TripletSampler(n, 2, method=method, random_state=3, n_jobs=1)
    p.run(s, 60, n=5)  # through the burn-ins and a few fits
    for _ in range(3):
        Q = s.ask(7, k=k)
        width = (2 if k is None else k) + 1
        assert Q.dtype == np.int64 and Q.shape == (7, width)
        assert Q.min() >= 0 and Q.max() < n
        assert all(len(set(row)) == width for row in Q.tolist())  # a head and distinct items
        if width == 3:
            s.tell(p.answer(Q))
    assert s.embedding_ is not None and s.embedding_.embedding_.shape == (n, 2)


def test_a_k_way_answer_gives_k_minus_1_rows():
    p = TripletPeople.random(12, 2)
    s = TripletSampler(12, 2, method="random", refit=None, random_state=0)
    (q,) = s.ask(1, k=4)
    D = ((p.X[q[1:]] - p.X[q[0]]) ** 2).sum(axis=1)
    c = q[1:][np.argmin(D)]
    rows = [[q[0], c, o] for o in q[1:] if o != c]
    s.tell(rows)
    assert s.n_answers_ == 3
    np.testing.assert_array_equal(s.answers_, rows)


def test_answers_are_kept_in_order_and_copied():
    p = TripletPeople.random(10, 2)
    s = TripletSampler(10, 2, method="random", refit=None, random_state=0)
    rows = p.answer(s.ask(100))
    s.tell(rows[:30])
    assert s.tell(rows[30:]) is None
    assert s.n_answers_ == 100
    got = s.answers_
    np.testing.assert_array_equal(got, rows)
    got[:] = 0
    np.testing.assert_array_equal(s.answers_, rows)
    s.tell(np.empty((0, 3), dtype=np.int64))
    assert s.n_answers_ == 100


# ---------------------------------------------------------------------- the refit policy
def test_refit_auto_after_50_answers_then_every_10_percent():
    p = TripletPeople.random(30, 2)
    s = TripletSampler(30, 2, method="random", random_state=1, n_jobs=1)
    rows = p.answer(np.concatenate([s.ask(100) for _ in range(15)]))
    s.tell(rows[:49])
    assert s.embedding_ is None and not s.refit_due_
    s.tell(rows[49:50])
    first = s.embedding_
    assert first is not None and s._n_fitted == 50 and not s.refit_due_
    s.tell(rows[50:99])
    assert s.embedding_ is first  # 49 more: not yet
    s.tell(rows[99:100])
    assert s.embedding_ is not first and s._n_fitted == 100
    # beyond 500 answers, 10 % of them: 1000 -> 1100
    s.tell(rows[100:1000])
    at_1000 = s.embedding_
    assert s._n_fitted == 1000
    s.tell(rows[1000:1099])
    assert s.embedding_ is at_1000
    s.tell(rows[1099:1100])
    assert s.embedding_ is not at_1000 and s._n_fitted == 1100


def test_refit_none_never_fits_but_reports_when_due():
    p = TripletPeople.random(20, 2)
    s = TripletSampler(20, 2, method="random", refit=None, random_state=2, n_jobs=1)
    s.tell(p.answer(s.ask(120)))
    assert s.embedding_ is None and s.refit_due_
    emb = s.refit()
    assert s.embedding_ is emb and not s.refit_due_
    np.testing.assert_array_equal(emb.n_items_, 20)


def test_active_fits_only_after_its_burn_in():
    p = TripletPeople.random(40, 2)
    s = TripletSampler(40, 2, method="active", random_state=3, n_jobs=1)
    burn_in = s._method.burn_in
    assert burn_in > 50
    p.run(s, burn_in - 1)
    assert s.embedding_ is None and not s.refit_due_
    p.run(s, 1)
    assert s.embedding_ is not None and s._n_fitted == burn_in


def test_refit_warm_starts_from_the_installed_embedding():
    # a refit after a few more answers stays where the last fit was; a cold fit of the same
    # answers lands anywhere (rotation, reflection)
    p = TripletPeople.random(40, 2, seed=4)
    s = TripletSampler(40, 2, method="random", refit=None, random_state=5, n_jobs=1)
    s.tell(p.answer(s.ask(1500)))
    before = s.refit().embedding_.copy()
    s.tell(p.answer(s.ask(60)))
    after = s.refit().embedding_
    cold = (
        ts.Embedding("gamma-ckl", 2, n_items=40, random_state=99, n_jobs=1)
        .fit(s.answers_)
        .embedding_
    )
    spread = np.linalg.norm(before - before.mean(axis=0), axis=1).mean()
    warm_move = np.linalg.norm(after - before, axis=1).mean()
    cold_move = np.linalg.norm(cold - before, axis=1).mean()
    assert warm_move < 0.15 * spread < cold_move


def test_fit_embedding_does_not_install_and_set_embedding_does():
    p = TripletPeople.random(25, 2)
    s = TripletSampler(25, 2, method="random", refit=None, random_state=6, n_jobs=1)
    s.tell(p.answer(s.ask(200)))
    emb = s.fit_embedding()
    assert s.embedding_ is None and emb.embedding_.shape == (25, 2)
    s.tell(p.answer(s.ask(30)))  # answers arrive while the fit runs elsewhere
    s.set_embedding(emb)
    assert s.embedding_ is emb
    assert s._n_fitted == 200  # what it was fitted on, not the 230 told
    # the same fit as refit() gives: the seed depends on the answers only
    s2 = TripletSampler(25, 2, method="random", refit=None, random_state=6, n_jobs=1)
    s2.tell(s.answers_[:200])
    np.testing.assert_array_equal(s2.refit().embedding_, emb.embedding_)


def test_set_embedding_of_an_embedding_fitted_elsewhere():
    p = TripletPeople.random(25, 2)
    s = TripletSampler(25, 2, method="active", refit=None, random_state=7, n_jobs=1)
    s.tell(p.answer(s.ask(400)))
    other = ts.Embedding("t-ste", 2, n_items=25, random_state=0, n_jobs=1).fit(s.answers_)
    s.set_embedding(other)
    assert s.embedding_ is other and s._n_fitted == 400 and not s.refit_due_
    Q = s.ask(20)  # scored with the installed t-STE embedding
    assert Q.shape == (20, 3)


# ---------------------------------------------------------------------- the state
@pytest.mark.parametrize("method", METHOD_NAMES)
@pytest.mark.parametrize("steps", [5, 400])
def test_state_round_trip_continues_identically(method, steps):
    p = TripletPeople.random(20, 2, seed=8)
    s = TripletSampler(20, 2, method=method, random_state=9, n_jobs=1)
    p.run(s, steps)
    state = json.loads(json.dumps(s.to_dict()))  # JSON-safe
    t = TripletSampler.from_dict(state, n_jobs=1)
    assert (t.n_answers_, t.method, t.model, t.gamma) == (s.n_answers_, method, "gamma-ckl", "auto")
    if s.embedding_ is not None:
        np.testing.assert_array_equal(t.embedding_.embedding_, s.embedding_.embedding_)
        assert t.embedding_.gamma_ == s.embedding_.gamma_
    # the same answers from here on: the same queries, refits included
    in_step(s, t, p, 200)
    assert s.embedding_ is not None
    np.testing.assert_array_equal(t.embedding_.embedding_, s.embedding_.embedding_)
    assert t.to_dict() == s.to_dict()


def test_state_of_a_fresh_sampler_and_its_parameters():
    s = TripletSampler(12, 3, method="arr", model="t-ste", gamma=2.0, refit=None, random_state=1)
    t = TripletSampler.from_dict(s.to_dict())
    assert (t.n_items, t.dim, t.method, t.model, t.gamma, t.refit_policy) == (
        12,
        3,
        "arr",
        "t-ste",
        2.0,
        None,
    )
    np.testing.assert_array_equal(t.ask(10), s.ask(10))


# ---------------------------------------------------------------------- reproducibility
@pytest.mark.parametrize("method", METHOD_NAMES)
def test_same_seed_same_queries_and_threads_do_not_matter(method):
    def run(seed, n_jobs):
        p = TripletPeople.random(40, 2, seed=10)
        s = TripletSampler(40, 2, method=method, random_state=seed, n_jobs=n_jobs)
        return p.run(s, 250), s

    q1, s1 = run(11, 1)
    q2, s2 = run(11, 2)
    np.testing.assert_array_equal(q1, q2)
    np.testing.assert_array_equal(s1.embedding_.embedding_, s2.embedding_.embedding_)
    q3, _ = run(12, 1)
    assert not np.array_equal(q1, q3)


def test_a_generator_random_state_is_used():
    g1, g2 = np.random.default_rng(5), np.random.default_rng(5)
    a = TripletSampler(10, 2, method="random", random_state=g1).ask(20)
    b = TripletSampler(10, 2, method="random", random_state=g2).ask(20)
    np.testing.assert_array_equal(a, b)


@pytest.mark.once  # a statistical run: once, not under the sanitizers (shorter tests reach it)
def test_collected_answers_learn_the_truth():
    # the end of the pipeline: an embedding that predicts fresh answers of the same people
    p = TripletPeople.random(30, 2, gamma=6.0, seed=13)
    s = TripletSampler(30, 2, method="active", random_state=14, n_jobs=1)
    p.run(s, 1200)
    test = np.random.default_rng(15).integers(0, 30, size=(3000, 3))
    test = p.answer(test[valid_rows(test)])
    assert s.embedding_.score(test) > 0.8


def test_the_docstring_example_runs():
    import doctest

    from tripletsearch.collect import _sampler

    assert doctest.testmod(_sampler).failed == 0


def test_signatures_follow_the_vocabulary():
    import inspect

    sig = inspect.signature(TripletSampler)
    assert list(sig.parameters)[:2] == ["n_items", "dim"]
    for name, p in sig.parameters.items():
        if name not in ("n_items", "dim"):
            assert p.kind is inspect.Parameter.KEYWORD_ONLY, name
    assert sig.parameters["random_state"].default is None
    assert inspect.signature(TripletSampler.ask).parameters["k"].kind is (
        inspect.Parameter.KEYWORD_ONLY
    )


@pytest.mark.parametrize("method", METHOD_NAMES)
def test_threads_sharing_a_sampler_take_turns(method):
    # a service's request threads: every answer told is kept once, the state stays whole
    import threading

    n = 30
    s = TripletSampler(n, 2, method=method, random_state=16, n_jobs=1)
    p = TripletPeople.random(n, 2, seed=17)
    p.run(s, s._method.min_answers() + 60)
    start = s.n_answers_
    told: list[np.ndarray] = []
    errors: list[BaseException] = []

    def person(seed):
        q_rng = np.random.default_rng(seed)
        try:
            for _ in range(40):
                q = s.ask()
                rows = ts.GammaCKL(4.0).sample(p.X, q, random_state=q_rng)
                s.tell(rows)
                told.append(rows)
                if seed == 0 and len(told) % 25 == 0:
                    s.to_dict()
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=person, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert s.n_answers_ == start + 160
    got = sorted(map(tuple, s.answers_[start:].tolist()))
    assert got == sorted(map(tuple, np.concatenate(told).tolist()))
    back = TripletSampler.from_dict(s.to_dict())
    np.testing.assert_array_equal(back.ask(5), s.ask(5))


# ---------------------------------------------------------------------- the methods' view
@pytest.mark.parametrize("method", METHOD_NAMES)
def test_a_query_method_reads_the_samplers_public_view(method):
    """The methods draw every random number from ``sampler.rng`` (a draw taken from it
    elsewhere changes the next queries), read the rows told through a read-only view, and
    count installs by ``n_installs_``."""
    a, b = (TripletSampler(20, 2, method=method, random_state=4, n_jobs=1) for _ in range(2))
    for s in (a, b):  # the same people, answering the same queries
        TripletPeople.random(20, 2, seed=3).run(s, 300)
    assert a.told_rows.shape == (300, 3) and not a.told_rows.flags.writeable
    np.testing.assert_array_equal(a.told_rows, a.answers_)
    assert a.n_installs_ == b.n_installs_ and (a.n_installs_ > 0) == (a.embedding_ is not None)
    assert a.seed == b.seed and a.n_threads == 1
    np.testing.assert_array_equal(a.ask(5), b.ask(5))
    b.rng.random()  # one draw of the sampler's stream taken by someone else
    assert not np.array_equal(a.ask(20), b.ask(20))
    installs = a.n_installs_
    a.set_embedding(a.fit_embedding())
    assert a.n_installs_ == installs + 1


def test_the_query_methods_use_no_private_name_of_the_sampler():
    import ast
    from pathlib import Path

    from tripletsearch.collect import _methods

    tree = ast.parse(Path(_methods.__file__).read_text("utf-8"))
    private = [
        f"line {n.lineno}: sampler.{n.attr}"
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute)
        and isinstance(n.value, ast.Name)
        and n.value.id == "sampler"
        and n.attr.startswith("_")
    ]
    assert not private, private
