"""Ctrl-C stops long native calls promptly with KeyboardInterrupt, and changes nothing.

Python turns SIGINT into KeyboardInterrupt only where it installed its handler at start,
which it does not when it starts with SIGINT ignored (a background job of a
non-interactive shell, as some CI runners start the suite): this process and every child
process here install it themselves."""

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

# the first line of a child that must hear Ctrl-C (its inherited disposition may be "ignore")
HEAR_CTRL_C = "import signal; signal.signal(signal.SIGINT, signal.default_int_handler)"


@pytest.fixture(autouse=True)
def python_hears_ctrl_c():
    """Python's SIGINT handler in this process for the test, the previous one after it."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


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
    code = "\n".join(
        [
            HEAR_CTRL_C,
            "import numpy as np, tripletsearch as ts",
            # the core loaded before "go" (some calls import it lazily: on a loaded machine,
            # under the sanitizers, its loading outlasted the half second, and Ctrl-C landed
            # in the import: ImportError, not the call's KeyboardInterrupt)
            "from tripletsearch import _core",
            setup,
            "print('go', flush=True)",
            call,
        ]
    )
    p = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert p.stdout.readline().strip() == "go"
    time.sleep(0.5)  # the scenario, not a wait: Ctrl-C pressed half a second into the call
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


# ---------------------------------------------------- the windows in which Ctrl-C went unheard
# (core/interrupt.hpp): each test builds a call that sits in one window for many seconds
# when the window is open, and checks that Ctrl-C stops it at once.


def _seconds_to_stop(call, delay):
    """Seconds from a SIGINT sent to this process `delay` s into `call()` to the
    KeyboardInterrupt it raises (the calls below run far longer than `delay`)."""
    sent = []

    def interrupt():
        sent.append(time.perf_counter())
        os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Timer(delay, interrupt)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            call()
    finally:
        timer.cancel()
    return time.perf_counter() - sent[0]


@pytest.mark.skipif(not ts.openmp_enabled(), reason="needs a parallel region")
def test_ctrl_c_heard_while_the_calling_thread_waits_for_its_team():
    # Only the calling thread can ask Python about signals. Here its share of the
    # gradient's statically scheduled chunks (the first half of the rows, which name their
    # head: no distance, no gradient) is done in milliseconds, while the other thread's
    # half (live rows in 3000 dimensions) takes ~20 s: the caller used to wait at the
    # loop's barrier, deaf, until the whole gradient was done.
    n, d, half = 1200, 3000, 2_000_000
    X = np.random.default_rng(0).normal(size=(n, d))
    t = np.random.default_rng(1).integers(0, n, 2 * half).astype(np.int32)
    T = np.stack([t, t, t], axis=1)
    T[half:, 1] = (t[half:] + 1) % n  # live rows: three distinct items
    T[half:, 2] = (t[half:] + 2) % n
    oracle = ts.GammaCKL(3.0)
    assert _seconds_to_stop(lambda: oracle.grad(X, T, n_jobs=2), delay=1.0) < 5.0


def test_ctrl_c_starts_no_further_run():
    # Short runs, many of them: a stopped simulation used to build every remaining run's
    # searcher before that run's first check (here ~30 s after Ctrl-C on two busy cores).
    def call():
        ts.simulate_continuous(5, 3.0, n_runs=100_000, max_queries=2, n_jobs=2)

    assert _seconds_to_stop(call, delay=0.5) < 5.0
