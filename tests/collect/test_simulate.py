"""simulate_collection: simulated people answer a sampler; one fixed fitter measures."""

from __future__ import annotations

import numpy as np
import pytest

import tripletsearch as ts
from tripletsearch.collect._simulate import (
    DEFAULT_BUDGETS,
    VirtualClock,
    embedding_accuracy,
    random_queries,
    simulate_collection,
)
from tripletsearch.collect._timing import ResponseTimeModel
from tripletsearch.colour import load_xkcd_colours
from tripletsearch.people import TripletPeople

X = np.random.default_rng(0).uniform(-1, 1, size=(40, 2))
SMALL = dict(oracle=ts.GammaCKL(3.0), budget=300, n_runs=2, test_size=500, n_jobs=1)


# ---------------------------------------------------------------------- the pieces


def test_embedding_accuracy_counts_ties_half():
    E = np.array([[0.0], [1.0], [-1.0], [3.0]])
    rows = np.array([[0, 1, 3], [0, 3, 1], [0, 1, 2], [0, 2, 1]])  # right, wrong, tie, tie
    assert embedding_accuracy(E, rows) == pytest.approx((1 + 0 + 0.5 + 0.5) / 4)


def test_random_queries_are_three_distinct_uniform_items():
    Q = random_queries(np.random.default_rng(0), 5, 60_000)
    assert Q.dtype == np.int64 and Q.shape == (60_000, 3)
    assert (Q[:, 0] != Q[:, 1]).all() and (Q[:, 0] != Q[:, 2]).all()
    assert (Q[:, 1] != Q[:, 2]).all()
    # each of the 60 ordered triples of distinct items equally often (chi-square, 59 df)
    counts = np.bincount(Q[:, 0] * 25 + Q[:, 1] * 5 + Q[:, 2], minlength=125)
    counts = counts[counts > 0]
    assert len(counts) == 60
    chi2 = ((counts - 1000.0) ** 2 / 1000.0).sum()
    assert chi2 < 100  # P(chi2_59 > 100) < 0.001


def test_people_answer_by_the_oracle_with_lapses():
    Y = np.array([[0.0], [1.0], [2.0]])
    people = TripletPeople(Y, ts.GammaCKL(3.0), lapse=0.2)
    Q = np.tile([[0, 1, 2]], (40_000, 1))
    u = np.random.default_rng(1).random((40_000, 2))
    A = people.answer(Q, u)
    p = ts.GammaCKL(3.0).prob(Y, [[0, 1, 2]])[0]  # 1 / (1 + 4^-1.5) = 8/9
    expected = 0.2 * 0.5 + 0.8 * p
    share = np.mean(A[:, 1] == 1)
    assert abs(share - expected) < 4 * np.sqrt(expected * (1 - expected) / len(A))
    # the loop's single-row path answers as the batch path does
    np.testing.assert_array_equal(people.answer(Q[:1], u[:1]), A[:1])
    np.testing.assert_array_equal(people.truly_closer(np.array([[0, 1, 2], [0, 2, 1]])), [1, 0])


class _StubSampler:
    """A refit is due every 10 answers; records what the clock installs."""

    def __init__(self):
        self.n_answers_, self.fits, self.installed = 0, 0, []

    @property
    def refit_due_(self):
        return self.n_answers_ % 10 == 0

    def fit_embedding(self):
        self.fits += 1
        return ("fit", self.n_answers_)

    def set_embedding(self, emb):
        self.installed.append((emb, self.n_answers_))


def test_virtual_clock_installs_a_refit_after_its_cost():
    s = _StubSampler()
    clock = VirtualClock(rate=10.0, cost=lambda m, n, d: 0.45, n=5, dim=2)
    for k in range(40):
        clock.before_ask(k, s)
        s.n_answers_ += 1  # the answer told
        clock.after_tell(k, s)
    # fits start at answers 10, 20, 30, 40 (k = 9, 19, ...); 0.45 s = 4.5 answers later the
    # next ask at k = 14 installs it, told 14 answers by then; the one at k = 39 never lands
    assert s.installed == [(("fit", 10), 14), (("fit", 20), 24), (("fit", 30), 34)]
    assert clock.installed == 3 and s.fits == 4


def test_virtual_clock_skips_refits_due_while_one_runs():
    s = _StubSampler()
    clock = VirtualClock(rate=1.0, cost=lambda m, n, d: 25.0, n=5, dim=2)
    for k in range(60):
        clock.before_ask(k, s)
        s.n_answers_ += 1
        clock.after_tell(k, s)
    # starts at k = 9 (lands at 34), then the first due after it: answer 40 (k = 39)
    assert s.installed == [(("fit", 10), 34)]
    assert s.fits == 2


def test_virtual_clock_rejects_a_bad_cost():
    s = _StubSampler()
    s.n_answers_ = 10
    with pytest.raises(ValueError, match="refit_cost: returned -1.0"):
        VirtualClock(1.0, lambda m, n, d: -1.0, 5, 2).after_tell(0, s)


# ---------------------------------------------------------------------- simulate_collection


def test_result_shape_budgets_and_stats():
    res = simulate_collection(X, method="random", random_state=0, **{**SMALL, "budget": 1200})
    assert res.method == "random" and res.rate is None and res.test_size == 500
    np.testing.assert_array_equal(res.n_answers, [500, 700, 1000, 1200])
    for name in ("accuracy", "seconds", "truth_accuracy", "agreement", "n_refits"):
        assert getattr(res, name).shape == (2, 4), name
    assert ((res.accuracy > 0.5) & (res.accuracy <= 1)).all()
    assert (np.diff(res.seconds, axis=1) > 0).all()
    assert (np.diff(res.n_refits, axis=1) >= 0).all() and res.n_refits[:, -1].min() >= 1
    # people answering by gamma-CKL 3 in 2-D agree with the truth 70-90 % of the time
    assert ((0.7 < res.agreement) & (res.agreement < 0.9)).all()
    assert tuple(DEFAULT_BUDGETS) == (500, 700, 1000, 1500, 2000, 2500, 3500, 5000, 7000, 10000)


def test_noiseless_people_and_lapses():
    sharp = simulate_collection(X, method="random", oracle_lapse=0.0, random_state=1, **{
        **SMALL, "oracle": ts.GammaCKL(1e6)})  # fmt: skip
    np.testing.assert_allclose(sharp.agreement, 1.0)
    lapse = simulate_collection(X, method="random", oracle_lapse=0.6, random_state=1, **{
        **SMALL, "oracle": ts.GammaCKL(1e6), "budget": 2000, "n_runs": 1})  # fmt: skip
    # a lapse is a fair coin: agreement 1 - 0.6 / 2 = 0.7 (2000 answers: s.e. 0.01)
    assert lapse.agreement[0, -1] == pytest.approx(0.7, abs=0.035)
    # the fit of noiseless answers is more accurate on the truth than on noisy test answers
    assert (sharp.truth_accuracy >= sharp.accuracy - 1e-12).all()


def test_seconds_are_the_response_time_model_of_the_queries_asked():
    flat = ResponseTimeModel(intercept=np.log(2.0), slope=0.0, smearing=1.5)
    res = simulate_collection(X, method="random", response_times=flat, random_state=2, **SMALL)
    np.testing.assert_allclose(res.seconds, np.tile(3.0 * res.n_answers, (2, 1)))
    steep = ResponseTimeModel(intercept=0.0, slope=-3.0, smearing=1.0)
    res = simulate_collection(X, method="random", response_times=steep, random_state=2, **SMALL)
    # each query costs exp(-3 r) with r in [1/2, 1]
    per = res.seconds[:, -1] / res.n_answers[-1]
    assert (np.exp(-3.0) < per).all() and (per < np.exp(-1.5)).all()


@pytest.mark.once  # a statistical run: once, not under the sanitizers (shorter tests reach it)
def test_accuracy_grows_with_answers_on_an_easy_truth():
    res = simulate_collection(
        X, method="random", oracle=ts.GammaCKL(10.0), budget=1500, n_runs=2, test_size=2000,
        n_answers=[100, 1500], random_state=3, n_jobs=1,
    )  # fmt: skip
    assert (res.accuracy[:, 1] > res.accuracy[:, 0] + 0.05).all()
    assert (res.truth_accuracy[:, 1] > 0.9).all()


def test_same_seed_same_result_any_threads():
    a = simulate_collection(X, method="random", random_state=5, **SMALL)
    b = simulate_collection(X, method="random", random_state=5, **{**SMALL, "n_jobs": 2})
    c = simulate_collection(X, method="random", random_state=6, **SMALL)
    for name in ("accuracy", "seconds", "truth_accuracy", "agreement", "n_refits"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert not np.array_equal(a.seconds, c.seconds)
    # run i draws from (random_state, i) only: the first of three runs is the first of two
    d = simulate_collection(X, method="random", random_state=5, **{**SMALL, "n_runs": 3})
    np.testing.assert_array_equal(d.accuracy[:2], a.accuracy)


@pytest.mark.parametrize("method", ["arr", "active"])
def test_adaptive_methods_run_synchronously_and_at_a_rate(method):
    kw = {**SMALL, "budget": 400, "n_runs": 1}
    sync = simulate_collection(X, method=method, random_state=7, **kw)
    slow = simulate_collection(
        X, method=method, random_state=7, rate=1.0, refit_cost=lambda m, n, d: 1e9, **kw
    )
    assert sync.n_refits[0, -1] >= 1
    assert slow.n_refits[0, -1] == 0  # a refit that never lands: asks from no embedding
    assert slow.rate == 1.0


def test_a_free_refit_at_any_rate_is_a_synchronous_refit():
    """A refit of zero cost lands before the next ask: the same queries and answers as the
    sampler's own synchronous refits."""
    kw = {**SMALL, "budget": 400, "n_runs": 1}
    sync = simulate_collection(X, method="active", random_state=8, **kw)
    free = simulate_collection(
        X, method="active", random_state=8, rate=100.0, refit_cost=lambda m, n, d: 0.0, **kw
    )
    np.testing.assert_array_equal(sync.accuracy, free.accuracy)
    np.testing.assert_array_equal(sync.n_refits, free.n_refits)


def test_sampler_kw_and_fitter():
    fitter = ts.Embedding("gamma-ckl", dim=1, gamma=3.0)
    res = simulate_collection(
        X, method="random", sampler_kw={"dim": 1, "gamma": 3.0}, fitter=fitter,
        random_state=9, **SMALL,
    )  # fmt: skip
    assert res.accuracy.shape == (2, 1)
    assert fitter.get_params()["n_items"] is None  # the template is not changed


def test_progress_bar(capsys, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_tqdm(name, *args, **kwargs):
        if name.startswith("tqdm"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_tqdm)
    simulate_collection(X, method="random", random_state=0, verbose=True, **SMALL)
    out = capsys.readouterr().out
    assert "simulate_collection: run 1/2" in out and "simulate_collection: run 2/2" in out


@pytest.mark.parametrize(
    "kwargs,error,match",
    [
        ({"X": np.zeros((2, 2))}, ValueError, "X: a query needs 3 items, got 2"),
        ({"X": [[0.0, np.nan]] * 4}, ValueError, "X"),
        ({"oracle": 3.0}, TypeError, "oracle: expected an Oracle"),
        ({"oracle_lapse": 1.0}, ValueError, r"oracle_lapse: must lie in \[0, 1\)"),
        ({"oracle_lapse": "x"}, TypeError, "oracle_lapse: expected a real number"),
        ({"method": "nope"}, ValueError, "method"),
        ({"method": 3}, TypeError, "method: expected a str"),
        ({"budget": 0}, ValueError, "budget: must be >= 1"),
        ({"budget": 1.5}, TypeError, "budget: expected an integer"),
        ({"n_runs": 0}, ValueError, "n_runs: must be >= 1"),
        ({"test_size": 0}, ValueError, "test_size: must be >= 1"),
        ({"rate": 0.0}, ValueError, "rate: must be > 0"),
        ({"rate": np.inf}, ValueError, "rate: must be finite"),
        ({"rate": "fast"}, TypeError, "rate: expected a real number"),
        ({"n_answers": [100, 50, 300]}, ValueError, "n_answers: must increase strictly"),
        ({"n_answers": [100, 200]}, ValueError, "n_answers: must end at the budget 300"),
        ({"n_answers": []}, ValueError, "n_answers: empty"),
        ({"n_answers": "300"}, TypeError, "n_answers: expected a sequence of ints"),
        ({"n_answers": [0, 300]}, ValueError, "n_answers: must be >= 1"),
        ({"sampler_kw": {"refit": None}}, ValueError, r"sampler_kw: \['refit'\] are set by"),
        ({"sampler_kw": [("dim", 2)]}, TypeError, "sampler_kw: expected a dict"),
        ({"sampler_kw": {"model": "nope"}}, ValueError, "model"),
        ({"fitter": "gamma-ckl"}, TypeError, "fitter: expected an Embedding"),
        ({"response_times": 2.0}, TypeError, "response_times: expected a ResponseTimeModel"),
        ({"refit_cost": 1.0}, TypeError, "refit_cost: expected a callable"),
        ({"n_jobs": 0}, ValueError, "n_jobs: must be nonzero"),
        ({"client": "tcp://x"}, TypeError, "client: expected a dask.distributed.Client"),
        ({"random_state": -1}, ValueError, "random_state: seed must be >= 0"),
    ],
)
def test_bad_input(kwargs, error, match):
    args = {"X": X, "method": "random", **SMALL, **kwargs}
    with pytest.raises(error, match=match):
        simulate_collection(**args)


def test_the_colours_truth():
    colours = load_xkcd_colours()
    assert len(colours) == 949 and colours.lab.shape == (949, 3)
    white = colours.names.index("white")
    np.testing.assert_allclose(colours.lab[white], [100.0, 0.0, 0.0], atol=1e-3)
    assert colours.hex[white] == "#ffffff" and "CC0" in colours.description
