"""Ctrl-C stops long native calls promptly with KeyboardInterrupt, and changes nothing."""

import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import tripletsearch as ts

pytestmark = pytest.mark.skipif(os.name != "posix", reason="sends SIGINT")

# (setup, call): each call runs for minutes when not interrupted.
JOBS = {
    "simulate_continuous": ("", "ts.simulate_continuous(5, 3.0, n_runs=5000, max_queries=200)"),
    "simulate_continuous hypothesis-test": (
        "",
        "ts.simulate_continuous(3, 3.0, n_runs=50, max_stages=50, method='hypothesis-test')",
    ),
    "simulate_discrete": (
        "X = np.random.default_rng(0).uniform(-1, 1, (20000, 5))",
        "ts.simulate_discrete(X, n_runs=20000)",
    ),
    "Embedding.fit": (
        "T = np.random.default_rng(0).integers(0, 2000, (2_000_000, 3))",
        "ts.Embedding(dim=10, max_epochs=10**6, tol=0.0).fit(T)",
    ),
    "Embedding.fit, memory-mapped int32 rows": (
        "import tempfile, os; f = os.path.join(tempfile.mkdtemp(), 'rows.npy'); "
        "np.save(f, np.random.default_rng(0).integers(0, 2000, (2_000_000, 3), dtype=np.int32)); "
        "T = np.load(f, mmap_mode='r')",
        "ts.Embedding(dim=10, gamma=3.0, max_epochs=10**6, tol=0.0).fit(T)",
    ),
    "p_correct_monte_carlo": ("", "ts.theory.p_correct_monte_carlo(5, 3.0, 10**12)"),
    "grad": (
        "X = np.random.default_rng(0).normal(size=(10**6, 10)); "
        "T = np.random.default_rng(1).integers(0, 10**6, (3 * 10**7, 3))",
        "[ts.GammaCKL(3.0).grad(X, T) for _ in range(100)]",
    ),
}


@pytest.mark.parametrize("job", list(JOBS))
def test_ctrl_c_interrupts_a_long_native_call(job):
    setup, call = JOBS[job]
    code = f"import numpy as np, tripletsearch as ts\n{setup}\nprint('go', flush=True)\n{call}"
    p = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert p.stdout.readline().strip() == "go"
    time.sleep(0.5)  # inside the native call
    t0 = time.perf_counter()
    p.send_signal(signal.SIGINT)
    try:
        _, err = p.communicate(timeout=60)  # the calls take far longer uninterrupted
    except subprocess.TimeoutExpired:  # pragma: no cover - the failure being tested
        p.kill()
        pytest.fail(f"{job}: Ctrl-C did not stop the call")
    assert err.strip().splitlines()[-1] == "KeyboardInterrupt", err
    print(f"{job}: stopped {time.perf_counter() - t0:.2f} s after Ctrl-C")


def test_interrupted_fit_leaves_the_estimator_as_it_was():
    T = np.random.default_rng(0).integers(0, 300, (400_000, 3))
    T = T[(T[:, 0] != T[:, 1]) & (T[:, 0] != T[:, 2]) & (T[:, 1] != T[:, 2])]
    emb = ts.Embedding(dim=3, max_epochs=3, random_state=0).fit(T)
    before = emb.embedding_.copy(), emb.n_epochs_
    emb.set_params(max_epochs=10**6, tol=0.0)
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            emb.fit(T)
    finally:
        timer.cancel()
    np.testing.assert_array_equal(emb.embedding_, before[0])
    assert emb.n_epochs_ == before[1]
