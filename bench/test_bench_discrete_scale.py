"""Database search at catalogue scale, and queries-to-find in few dimensions.

Latency per answer (ask + tell, default settings: gamma="auto", selection "auto"), as
passes of the store: the median over queries 1-30 divided by ``X.max()`` on the same float32
array in the same process (one thread, NumPy). n = 1e6 and 1e7 items in d = 10, 1e5 in
d = 512, each in a fresh process, on 1 and 2 threads; and with ``gamma=3.0`` (no user
hypotheses: one weight per item) at d = 10 on 2 threads. Queries-to-find (n = 1000 items
uniform in [-1, 1]^d, pairs, gamma-CKL users with gamma = 3, every item the target once on
two databases): d = 2 and d = 5, and in d = 5 users who click at random 10 % of the time,
unmodelled, modelled and inferred. The information per query in d = 5: the realized
log2(n) / mean queries against the expected information (Shannon, bits) of the asked pairs
under the posterior (a pick between two items carries at most 1 bit). The last test prints
the tables.

    python -m pytest bench/test_bench_discrete_scale.py -s
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest

import tripletsearch as ts

PASSES: dict[tuple[int, int, int], dict] = {}
FIXED: dict[int, dict] = {}  # gamma=3.0 (no user hypotheses), d = 10, 2 threads
QUALITY: dict[str, tuple[float, float, float]] = {}
BITS: dict[str, float] = {}

_LATENCY = r"""
import json, sys, time
import numpy as np
import tripletsearch as ts

n, d, threads = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
gamma = "auto" if sys.argv[4] == "auto" else float(sys.argv[4])
X = np.random.default_rng(n + d).standard_normal((n, d), dtype=np.float32)
base = min((lambda t0: (X.max(), time.perf_counter() - t0)[1])(time.perf_counter())
           for _ in range(7))
t0 = time.perf_counter()
s = ts.DiscreteSearch(X, random_state=0, n_jobs=threads, gamma=gamma)
setup = time.perf_counter() - t0
target = X[n // 3].astype(np.float64)
oracle, rng, times = ts.GammaCKL(3.0), np.random.default_rng(1), []
for _ in range(30):
    t0 = time.perf_counter()
    shown = s.ask()
    t1 = time.perf_counter()
    p = oracle.choice_prob(np.vstack([target, X[shown]]).astype(np.float64), [0], [[1, 2]])[0]
    choice = int(shown[int(rng.random() >= p[0])])
    t2 = time.perf_counter()
    s.tell(choice)
    times.append((t1 - t0) + (time.perf_counter() - t2))
print(json.dumps({"median": float(np.median(times)), "xmax": base, "setup": setup,
                  "selection": s.selection}))
"""


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    "n, d", [(1_000_000, 10), (10_000_000, 10), (100_000, 512)], ids=["1e6x10", "1e7x10", "1e5x512"]
)
def test_passes_per_answer(benchmark, n, d, threads):
    benchmark.group = "ask + tell as passes of the store"
    r = benchmark.pedantic(lambda: _latency(n, d, threads, "auto"), rounds=1, iterations=1)
    PASSES[(n, d, threads)] = r
    benchmark.extra_info.update(r, passes=r["median"] / r["xmax"])


def _latency(n, d, threads, gamma):
    out = subprocess.run(
        [sys.executable, "-c", _LATENCY, str(n), str(d), str(threads), gamma],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("n", [1_000_000, 10_000_000], ids=["1e6x10", "1e7x10"])
def test_passes_per_answer_fixed_gamma(benchmark, n):
    """gamma=3.0: the posterior without user hypotheses (one weight per item)."""
    benchmark.group = "ask + tell as passes of the store"
    FIXED[n] = r = benchmark.pedantic(lambda: _latency(n, 10, 2, "3.0"), rounds=1, iterations=1)
    benchmark.extra_info.update(r, passes=r["median"] / r["xmax"])


def _databases(d):
    return [np.random.default_rng(1000 * d + s).uniform(-1, 1, size=(1000, d)) for s in (7, 8)]


def _queries(d, **kw):
    q = [
        ts.simulate_discrete(X, random_state=s, **kw).n_queries for s, X in enumerate(_databases(d))
    ]
    q = np.concatenate(q).astype(float)
    return float(np.median(q)), float(q.mean()), float(q.std() / math.sqrt(len(q)))


@pytest.mark.parametrize("d", [2, 5])
def test_queries_to_find(benchmark, d):
    benchmark.group = "queries to find, n = 1000, pairs, gamma 3"
    QUALITY[f"d = {d}"] = benchmark.pedantic(lambda: _queries(d), rounds=1, iterations=1)


@pytest.mark.parametrize(
    "label, kw",
    [
        ("d = 5, 10 % lapses, unmodelled", dict(oracle_lapse=0.1)),
        ("d = 5, 10 % lapses, modelled (lapse=0.1)", dict(oracle_lapse=0.1, lapse=0.1)),
        ('d = 5, 10 % lapses, inferred (lapse="auto")', dict(oracle_lapse=0.1, lapse="auto")),
    ],
)
def test_queries_with_lapses(benchmark, label, kw):
    benchmark.group = "queries to find, n = 1000, pairs, gamma 3"
    QUALITY[label] = benchmark.pedantic(lambda: _queries(5, **kw), rounds=1, iterations=1)


def _pair_information(post, X, a, b, half_gamma):
    """Shannon information (bits) of a pair's outcome about the target: shown as a or b,
    or the user picks a or b (gamma-CKL)."""
    Da = np.maximum(((X - X[a]) ** 2).sum(1), 1e-300)
    Db = np.maximum(((X - X[b]) ** 2).sum(1), 1e-300)
    pa = 0.5 * (1.0 - np.tanh(0.5 * half_gamma * (np.log(Da) - np.log(Db))))  # P(pick a | t)
    out = post.copy()
    out[[a, b]] = 0.0
    probs = np.array([post[a], post[b], (out * pa).sum(), (out * (1 - pa)).sum()])
    probs = probs[probs > 0]
    h_y = -(probs * np.log2(probs)).sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        h = -(pa * np.log2(pa) + (1 - pa) * np.log2(1 - pa))
    return h_y - (out * np.nan_to_num(h)).sum()


def test_information_per_query(benchmark):
    benchmark.group = "queries to find, n = 1000, pairs, gamma 3"
    X = _databases(5)[0]
    oracle, rng = ts.GammaCKL(3.0), np.random.default_rng(3)

    def run():
        info, counts = [], []
        for t in rng.choice(len(X), size=100, replace=False):
            s = ts.DiscreteSearch(X, gamma=3.0, random_state=int(t))
            while not s.done and s.n_queries < 200:
                a, b = (int(i) for i in s.ask())
                info.append(_pair_information(s.posterior, X, a, b, 1.5))
                if t in (a, b):
                    s.tell(int(t))
                    break
                p = oracle.choice_prob(X, [t], [[a, b]])[0]
                s.tell(a if rng.random() < p[0] else b)
            counts.append(s.n_queries)
        return float(np.mean(info)), float(np.mean(counts))

    expected, mean_q = benchmark.pedantic(run, rounds=1, iterations=1)
    BITS.update(expected=expected, realized=math.log2(len(X)) / mean_q, mean=mean_q)


def test_table(capsys):
    if not (PASSES or QUALITY):
        pytest.skip("run the whole file")
    lines = ["", "ask + tell, default settings: median over queries 1-30, in passes of X.max()"]
    for n, d in sorted({k[:2] for k in PASSES}):
        text = f"  n = {n:.0e}, d = {d:>3}:"
        for th in (1, 2):
            r = PASSES.get((n, d, th))
            if r:
                text += (
                    f"  {th} thread{'s' if th > 1 else ''} {r['median'] * 1e3:7.1f} ms ="
                    f" {r['median'] / r['xmax']:5.1f} passes"
                )
        r1, r2 = PASSES.get((n, d, 1)), PASSES.get((n, d, 2))
        if r1 and r2:
            text += f"  ({r1['median'] / r2['median']:.2f}x; X.max {r2['xmax'] * 1e3:.1f} ms)"
        lines.append(text)
    for n, r in sorted(FIXED.items()):
        lines.append(
            f"  n = {n:.0e}, d =  10, gamma=3.0 (no user hypotheses), 2 threads:"
            f" {r['median'] * 1e3:.1f} ms = {r['median'] / r['xmax']:.1f} passes"
        )
    if QUALITY:
        lines.append("Queries to find (n = 1000, pairs, gamma-CKL users, gamma 3): median / mean")
        for label, (med, mean, se) in QUALITY.items():
            lines.append(f"  {label:<46} {med:5.1f} / {mean:5.2f} +- {se:.2f}")
    if BITS:
        lines.append(
            f"Information per query, d = 5 (100 searches, mean {BITS['mean']:.2f} queries): "
            f"realized log2(1000) / mean queries = {BITS['realized']:.3f} bits; the asked "
            f"pairs' expected information {BITS['expected']:.3f} bits; a pick of two: <= 1 bit"
        )
    with capsys.disabled():
        print("\n".join(lines))
