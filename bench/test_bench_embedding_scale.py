"""Large triplet sets: 10M and 100M int32 memory-mapped rows, and the row path's speed.

Fits (gamma-CKL, d = 10, gamma fixed at the generating 5) run in a fresh process each, on
rows memory-mapped from an int32 ``.npy`` file (``np.load(path, mmap_mode="r")``): the
time, L-BFGS iterations, and the growth of the process's RSS high-water mark (VmHWM) during the fit
as a multiple of the file's size (the pages of the mapped file count once they are read).
The gradient's row path at fixed m = 1e6 over n = 1e2 ... 1e5 items (ns per triplet on 1
and 2 threads). The memory floor beside it: bench/native/row_floor.cpp, the
same reads and read-modify-writes per row without the exp, log and divisions, compiled with
the system's C++ compiler (skipped without one). The last test prints the table.

    python -m pytest bench/test_bench_embedding_scale.py -s
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import tripletsearch as ts
from tripletsearch.embedding import valid_rows

SCALE: dict[str, dict] = {}
ROWS: dict[tuple[int, int], float] = {}
FLOOR: dict[int, float] = {}

_FIT = r"""
import json, sys, time
import numpy as np
import tripletsearch as ts

def high_water():  # VmHWM: the peak resident set, file-backed pages of the mapping included
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmHWM:"))

path, n = sys.argv[1], int(sys.argv[2])
rows = np.load(path, mmap_mode="r")
before = high_water()
t0 = time.perf_counter()
est = ts.Embedding(dim=10, gamma=5.0, random_state=0).fit(rows, n_items=n)
elapsed = time.perf_counter() - t0
after = high_water()
print(json.dumps({"time": elapsed, "epochs": est.n_epochs_, "growth": after - before,
                  "bytes": rows.nbytes, "status": est.status_}))
"""


def _write_rows(path, n, m, seed):
    """m gamma-CKL answers (gamma 5) over n items uniform in a 10-d Gaussian, as int32 .npy."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 10))
    out = np.lib.format.open_memmap(path, mode="w+", dtype=np.int32, shape=(m, 3))
    oracle, step, done = ts.GammaCKL(5.0), 5_000_000, 0
    while done < m:
        Q = rng.integers(0, n, size=(int(1.2 * step), 3))
        Q = Q[valid_rows(Q)][: min(step, m - done)]
        out[done : done + len(Q)] = oracle.sample(X, Q, random_state=rng)
        done += len(Q)
    out.flush()
    del out


@pytest.mark.parametrize(
    "m, n", [(10_000_000, 10_000), (100_000_000, 100_000)], ids=["10M", "100M"]
)
def test_fit_memory_mapped(benchmark, tmp_path_factory, m, n):
    benchmark.group = "fit from memory-mapped int32 rows"
    path = tmp_path_factory.mktemp("rows") / f"rows_{m}.npy"
    _write_rows(path, n, m, seed=1)

    def run():
        out = subprocess.run(
            [sys.executable, "-c", _FIT, str(path), str(n)], capture_output=True, text=True
        )
        assert out.returncode == 0, out.stderr[-2000:]
        return json.loads(out.stdout.strip().splitlines()[-1])

    r = benchmark.pedantic(run, rounds=1, iterations=1)
    SCALE[f"{m // 1_000_000}M rows, {n:,} items"] = r
    benchmark.extra_info.update(r)
    path.unlink()


@pytest.mark.parametrize("n", [100, 1000, 10_000, 100_000])
@pytest.mark.parametrize("threads", [1, 2])
def test_row_path(benchmark, n, threads):
    benchmark.group = "gradient row path, m = 1e6, d = 10 (ns per triplet)"
    rng = np.random.default_rng(n)
    X = rng.normal(size=(n, 10))
    T = rng.integers(0, n, size=(1_000_000, 3))
    T = np.ascontiguousarray(T[valid_rows(T)])
    o = ts.GammaCKL(4.5)  # a non-integer gamma: the exp and log path
    if n <= 100:
        pytest.skip("n^2 <= m / 4: the pairwise path, not the row path")
    o.grad(X, T, n_jobs=threads)
    best = min(_timed(lambda: o.grad(X, T, n_jobs=threads)) for _ in range(5))
    ROWS[(n, threads)] = best / len(T) * 1e9
    benchmark.extra_info["ns_per_triplet"] = round(ROWS[(n, threads)], 2)
    benchmark.pedantic(lambda: o.grad(X, T, n_jobs=threads), rounds=1, iterations=1)


@pytest.fixture(scope="module")
def row_floor(tmp_path_factory):
    cxx = shutil.which("c++") or shutil.which("g++")
    if cxx is None:
        pytest.skip("no C++ compiler for bench/native/row_floor.cpp")
    exe = tmp_path_factory.mktemp("floor") / "row_floor"
    src = Path(__file__).parent / "native" / "row_floor.cpp"
    subprocess.run([cxx, "-O3", "-mavx2", "-mfma", str(src), "-o", str(exe)], check=True)
    return exe


@pytest.mark.parametrize("n", [1000, 10_000, 100_000])
def test_row_path_memory_floor(row_floor, n):
    """One thread: the row path's memory traffic alone (no exp, log or division)."""
    out = subprocess.run([str(row_floor), str(n), "1000000", "5"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    FLOOR[n] = float(out.stdout.split()[0])


def _timed(f):
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


def test_table(capsys):
    if not SCALE and not ROWS:
        pytest.skip("run the whole file")
    lines = ["", "Fits from memory-mapped int32 rows (gamma-CKL, d = 10, gamma 5, 2 threads):"]
    for label, r in SCALE.items():
        lines.append(
            f"  {label}: {r['time']:.1f} s, {r['epochs']} iterations ({r['status']}), RSS "
            f"growth {r['growth'] / 2**20:.0f} MB = {r['growth'] / r['bytes']:.2f}x the "
            f"{r['bytes'] / 2**20:.0f} MB of rows"
        )
    if ROWS:
        lines.append("Gradient row path, m = 1e6, d = 10, gamma 4.5: ns per triplet")
        for n in sorted({k[0] for k in ROWS}):
            one, two = ROWS.get((n, 1)), ROWS.get((n, 2))
            text = f"  n = {n:>7,}: 1 thread {one:6.1f}" if one else f"  n = {n:>7,}:"
            if two:
                text += f", 2 threads {two:6.1f} ({one / two:.2f}x)" if one else f" {two:.1f}"
            if n in FLOOR:
                text += f"; memory floor (no math, 1 thread) {FLOOR[n]:.1f}"
            lines.append(text)
    with capsys.disabled():
        print("\n".join(lines))
