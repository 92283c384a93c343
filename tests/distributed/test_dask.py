"""Simulations and cross-validation on a real Dask cluster (``distributed.LocalCluster``
with two worker processes): bitwise the results of a local run, whatever the chunking,
the order or a worker killed mid-run; and the chunking itself without Dask."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest
from serve.helpers import wait_until

import tripletsearch as ts
from tripletsearch import _core, _distributed, continuous, discrete, model_selection

# servers, clusters, worker processes: run once, not again under the sanitizers (.ci/run)
pytestmark = pytest.mark.once

X = np.random.default_rng(0).uniform(-1, 1, size=(300, 3))


def _triplets():
    rng = np.random.default_rng(1)
    Y = rng.normal(size=(40, 2))
    Q = rng.integers(0, 40, size=(1500, 3))
    return ts.GammaCKL(5.0).sample(Y, Q[ts.embedding.valid_rows(Q)], random_state=2)


def _same_continuous(a, b):
    for name in ("errors", "stage_errors", "stage_queries", "depths", "n_queries", "targets"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert [(r.center.tolist(), r.edge, r.depth) for r in a.regions] == [
        (r.center.tolist(), r.edge, r.depth) for r in b.regions
    ]


def _scores(result):
    return [(r["accuracy"], r["nll"], r["epochs"]) for r in result.rows]


# ---------------------------------------------------------------- without Dask


def test_import_does_not_import_dask():
    code = (
        "import sys, numpy as np, tripletsearch as ts\n"
        "ts.simulate_discrete(np.eye(5), n_runs=3, random_state=0)\n"
        "ts.simulate_continuous(2, 3.0, n_runs=2, max_queries=3, random_state=0)\n"
        "import tripletsearch.model_selection\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_chunk_bounds_cover_the_range_in_order():
    for n in (1, 7, 100):
        for count in (1, 3, 8, 200):
            b = _distributed.chunk_bounds(n, count)
            assert b[0][0] == 0 and b[-1][1] == n
            assert all(x[1] == y[0] for x, y in zip(b, b[1:]))
            sizes = [hi - lo for lo, hi in b]
            assert min(sizes) >= 1 and max(sizes) - min(sizes) <= 1


def _discrete_chunks_in_processes(order):
    """The study of test_chunks_in_other_processes, run as chunks in worker processes."""
    sim = ts.simulate_discrete(X, n_runs=60, random_state=4)  # the targets and their seed
    rng = np.random.default_rng(4)
    T = rng.integers(0, len(X), size=60)
    settings = discrete.DiscreteSettings(gamma=3.0).resolve(len(X))
    shared = dict(
        X=X,
        oracle_X=None,
        oracle=ts.GammaCKL(3.0),
        config=settings.to_native(),  # pickled to the other processes as it is
        seed=ts._validation.seed_from(rng),
        n_jobs=1,
    )
    bounds = _distributed.chunk_bounds(len(T), 7)
    with ProcessPoolExecutor(2) as pool:
        futures = {
            k: pool.submit(
                discrete._simulate._simulate_chunk,
                T[a:b],
                _core.DiscreteSimOptions(max_queries=200, first_run=a),
                **shared,
            )
            for k, (a, b) in ((k, bounds[k]) for k in order)
        }
        parts = [futures[k].result() for k in range(len(bounds))]
    nq = np.concatenate([p.n_queries for p in parts])
    return sim, nq, np.concatenate([p.found for p in parts])


def test_chunks_in_other_processes_in_any_order_equal_one_call():
    sim, nq, found = _discrete_chunks_in_processes(order=[6, 2, 0, 5, 1, 3, 4])
    np.testing.assert_array_equal(nq, sim.n_queries)
    np.testing.assert_array_equal(found, sim.found)
    whole = ts.simulate_continuous(2, 3.0, n_runs=9, max_queries=30, random_state=5)
    config = continuous.ContinuousSettings(2, 3.0).to_native()
    parts = [
        continuous._simulate._simulate_chunk(
            _core.ContinuousSimOptions(n_runs=b - a, max_queries=30, first_run=a),
            config=config,
            seed=ts._validation.seed_from(5),
            n_jobs=1,
        )
        for a, b in reversed(_distributed.chunk_bounds(9, 4))
    ][::-1]
    np.testing.assert_array_equal(np.concatenate([p.errors for p in parts]), whole.errors)


NATIVE_CONFIGS = [
    _core.SearchConfig(method=_core.SearchMethod.Gauss, sigma=0.3, n_choices=3),
    _core.SearchConfig(gamma_auto=True, lapse_auto=True, selection=_core.Selection.InfoGain),
    _core.ContinuousConfig(dim=3, low=[0.0, -1.0, 2.0], high=[1.0, 1.0, 5.0], n_particles=64),
    _core.ContinuousConfig(
        dim=2,
        method=_core.ContinuousMethod.HypothesisTest,
        cells_per_axis=25,
        n_obs=41,
        tau=30,
    ),
    _core.DiscreteSimOptions(max_queries=17, oracle_lapse=0.25, first_run=1000),
    _core.ContinuousSimOptions(
        n_runs=3, max_stages=4, oracle=_core.OracleSpec(_core.ModelKind.GammaCKL, 1.5)
    ),
    _core.OracleSpec(_core.ModelKind.TSTE, 2.5),
    _core.TrainOptions(optimizer=_core.Optimizer.Adam, lr=0.01, batch_size=64, l2=1e-3),
]


@pytest.mark.parametrize("config", NATIVE_CONFIGS, ids=lambda c: type(c).__name__)
def test_native_configs_pickle_to_an_equal_value(config):
    import pickle

    back = pickle.loads(pickle.dumps(config))
    assert type(back) is type(config) and back == config
    assert not back != config
    # a different value compares unequal; another type is not equal either
    other = NATIVE_CONFIGS[(NATIVE_CONFIGS.index(config) + 2) % len(NATIVE_CONFIGS)]
    assert config != other and config != "config"
    # a state is rebuilt through the constructor's checks
    with pytest.raises(ValueError, match="malformed state"):
        type(config).__new__(type(config)).__setstate__(())


def test_the_two_kernel_paths_agree_on_simulations():
    """AVX2/FMA and the portable kernels round differently (the kernels agree to 1e-9), so
    records are bitwise equal only on one kind of machine; across paths the searches'
    decisions agree unless a near-tie resolves differently."""
    before = _core.simd_isa()
    if before != "avx2":
        pytest.skip("this CPU runs the portable kernels only")
    try:
        runs = {}
        for isa in ("portable", "avx2"):
            assert _core.set_simd_isa(isa)
            runs[isa] = (
                ts.simulate_discrete(X, n_runs=200, random_state=6).n_queries,
                ts.simulate_continuous(3, 3.0, n_runs=20, max_queries=60, random_state=6).errors,
            )
    finally:
        _core.set_simd_isa(before)
    (dp, cp), (da, ca) = runs["portable"], runs["avx2"]
    assert np.mean(dp == da) >= 0.95
    assert abs(dp.mean() - da.mean()) < 1.0
    np.testing.assert_allclose(ca[:, :10], cp[:, :10], rtol=1e-6)


def test_bad_client():
    with pytest.raises(TypeError, match="client: expected a dask.distributed.Client"):
        ts.simulate_discrete(X, n_runs=2, client="tcp://127.0.0.1:8786")
    with pytest.raises(TypeError, match="client: expected"):
        ts.simulate_continuous(2, 3.0, n_runs=2, max_queries=2, client=object())
    with pytest.raises(TypeError, match="client: expected"):
        model_selection.grid_search_cv(ts.Embedding(), {}, _triplets(), client=1)


# ---------------------------------------------------------------- on a LocalCluster

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client():
    with _distributed.local_cluster(2, quiet=True) as cluster, distributed.Client(cluster) as c:
        yield c


def test_simulate_discrete_on_the_cluster_equals_local(client):
    kw = dict(n_runs=80, gamma="auto", lapse="auto", oracle=ts.GammaCKL(2.0), random_state=7)
    local = ts.simulate_discrete(X, **kw)
    remote = ts.simulate_discrete(X, client=client, **kw)
    np.testing.assert_array_equal(remote.targets, local.targets)
    np.testing.assert_array_equal(remote.n_queries, local.n_queries)
    np.testing.assert_array_equal(remote.found, local.found)
    # explicit targets, a perceived embedding and lapses travel too
    kw = dict(targets=np.arange(0, 300, 7), oracle_X=X + 0.01, oracle_lapse=0.1, random_state=8)
    a = ts.simulate_discrete(X, **kw)
    b = ts.simulate_discrete(X, client=client, verbose=True, **kw)
    np.testing.assert_array_equal(a.n_queries, b.n_queries)
    # bad input fails before anything is submitted, naming the argument
    with pytest.raises(ValueError, match="targets"):
        ts.simulate_discrete(X, targets=[0, 300], client=client)
    with pytest.raises(ValueError, match="max_queries: must be >= 1"):
        ts.simulate_discrete(X, n_runs=2, max_queries=0, client=client)
    with pytest.raises(ValueError, match="oracle_lapse: must lie in"):
        ts.simulate_discrete(X, n_runs=2, oracle_lapse=1.5, client=client)
    with pytest.raises(ValueError, match="oracle_X: expected 300 rows"):
        ts.simulate_discrete(X, n_runs=2, oracle_X=X[:10], client=client)


def test_simulate_continuous_on_the_cluster_equals_local(client):
    for kw in (
        dict(n_runs=30, max_queries=60, lapse="auto", oracle=ts.GammaCKL(4.0)),
        dict(n_runs=6, max_stages=3, method="posterior", n_particles=256),
    ):
        local = ts.simulate_continuous(2, 3.0, random_state=9, **kw)
        remote = ts.simulate_continuous(2, 3.0, random_state=9, client=client, **kw)
        _same_continuous(local, remote)


def test_grid_search_cv_on_the_cluster_equals_local(client):
    T = _triplets()
    grid = {"dim": [1, 2], "gamma": [3.0, 6.0]}
    # no seed of its own: each fit draws from (random_state, its index)
    est = ts.Embedding(max_epochs=50)
    local = model_selection.grid_search_cv(est, grid, T, cv=3, random_state=3, n_jobs=2)
    remote = model_selection.grid_search_cv(est, grid, T, cv=3, random_state=3, client=client)
    assert _scores(remote) == _scores(local)
    # joblib's dask backend runs the same fits
    import joblib

    with joblib.parallel_config(backend="dask"):
        via_joblib = model_selection.grid_search_cv(est, grid, T, cv=3, random_state=3, n_jobs=2)
    assert _scores(via_joblib) == _scores(local)
    cv = model_selection.cross_validate(est, T, cv=3, random_state=3, client=client)
    assert (
        cv["accuracy"] == model_selection.cross_validate(est, T, cv=3, random_state=3)["accuracy"]
    )


def test_embedding_cv_on_the_cluster_equals_local(client):
    T = _triplets()
    kw = dict(dims=[1, 2], gammas=[3.0, 6.0], cv=3, params={"max_epochs": 50}, random_state=4)
    local = ts.EmbeddingCV(**kw, n_jobs=2).fit(T)
    remote = ts.EmbeddingCV(**kw, client=client).fit(T)
    assert _scores(remote.cv_results_) == _scores(local.cv_results_)
    assert np.array_equal(remote.embedding_, local.embedding_)


def test_simulate_collection_on_the_cluster_equals_local(client):
    Y = X[:60, :2]
    for kw in (
        dict(method="random", n_runs=5, budget=300, n_answers=[100, 300]),
        dict(method="active", n_runs=3, budget=250, rate=50.0, oracle_lapse=0.1),
    ):
        kw.update(oracle=ts.GammaCKL(3.0), test_size=400, random_state=12)
        local = ts.simulate_collection(Y, n_jobs=1, **kw)
        remote = ts.simulate_collection(Y, client=client, verbose=True, **kw)
        for name in ("n_answers", "accuracy", "seconds", "truth_accuracy", "agreement", "n_refits"):
            np.testing.assert_array_equal(getattr(remote, name), getattr(local, name), err_msg=name)
        assert remote.rate == local.rate
    # bad input fails before anything is submitted, naming the argument
    with pytest.raises(ValueError, match="test_size: must be >= 1"):
        ts.simulate_collection(
            Y, oracle=ts.GammaCKL(3.0), method="random", budget=10, n_runs=2, test_size=0,
            client=client,
        )  # fmt: skip


def test_workers_killed_mid_run_still_give_the_exact_result():
    # 8 chunks of one search each (2 single-thread workers): seconds of work, the kill
    # lands while chunks run (asserted below, or the test would prove nothing)
    kw = dict(n_runs=8, max_queries=200, random_state=11)
    local = ts.simulate_continuous(3, 3.0, **kw)
    with _distributed.local_cluster(2, quiet=True) as cluster, distributed.Client(cluster) as c:
        pids = set(c.run(os.getpid).values())
        out = {}
        runner = threading.Thread(
            target=lambda: out.setdefault("sim", ts.simulate_continuous(3, 3.0, client=c, **kw))
        )
        runner.start()
        # once chunks are running and a worker holds a result, kill the workers outright
        wait_until(lambda: any(c.processing().values()), message="chunks running")
        wait_until(lambda: any(c.has_what().values()), message="a result held by a worker")
        assert runner.is_alive()  # the results are not all gathered: the kill is mid-run
        for victim in pids:  # every worker: the data they held must be recomputed too
            os.kill(victim, signal.SIGKILL)
        runner.join(timeout=300)
        assert not runner.is_alive()
        assert not pids & set(c.run(os.getpid).values())  # the workers did die
    _same_continuous(out["sim"], local)


def test_reproduce_on_a_local_cluster_writes_the_local_numbers(tmp_path):
    def run(*extra):
        out = tmp_path / ("cluster" if extra else "local")
        cmd = [sys.executable, "-m", "tripletsearch", "reproduce", "discrete", "--quick"]
        done = subprocess.run(
            [*cmd, "--out", str(out), *extra], capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0, done.stderr[-3000:]
        return (out / "discrete_study.csv").read_text()

    assert run("--workers", "2") == run()
    # refused before anything runs (in this process: the command line's own main)
    from tripletsearch.cli import main

    with pytest.raises(SystemExit, match="not for 'reproduce theory'"):
        main(["reproduce", "theory", "--workers", "2"])
    with pytest.raises(SystemExit, match="--workers: must be >= 1"):
        main(["reproduce", "discrete", "--workers", "0"])
