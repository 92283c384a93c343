"""Load test of the search service: the real server (``tripletsearch serve``, uvicorn,
SQLite) and N concurrent simulated people (async httpx) doing whole searches, each answering
after a think time drawn from an exponential distribution, arriving over a window.

The demo colours (find and mix searches, at random) or a catalogue of random float32 items
(``--catalogue 1000000x10``; find searches by gamma-CKL people). Reports p50 / p99 latency
per answer and per new session, answers per second, the server processes' peak memory
(PSS, sampled twice a second) against ``--memory``, and checks that the database holds
exactly the answers the clients sent and saw confirmed (none lost, none doubled).

    python bench/serve_load.py --people 200 --seconds 60
    python bench/serve_load.py --catalogue 1000000x10 --workers 1 --memory 8GB \
        --think 10 --arrivals 10 --seconds 600 [--gamma auto]
    python -m pytest bench/test_bench_serve.py     # recorded by pytest-benchmark
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from tripletsearch.people import FindPerson, MixPerson
from tripletsearch.serve.catalogue import Catalogue, demo_catalogue, load_catalogue
from tripletsearch.serve.service.memory import format_size, process_memory
from tripletsearch.serve.store import Store

_SSL = ssl.create_default_context()  # one for all clients (each would load the CA store)


@dataclass
class LoadResult:
    people: int
    seconds: float
    answers: int
    searches: int
    latencies_ms: np.ndarray
    errors: int
    db_answers: int
    lost: int
    doubled: int
    unexpected: int
    workers: int
    create_ms: np.ndarray = field(default_factory=lambda: np.zeros(0))
    memory: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def p50(self) -> float:
        return float(np.percentile(self.latencies_ms, 50))

    @property
    def p99(self) -> float:
        return float(np.percentile(self.latencies_ms, 99))

    @property
    def rate(self) -> float:
        """Answers per second while all the people were searching."""
        return self.extra["in_window"] / self.seconds

    def summary(self) -> dict[str, Any]:
        return {
            "people": self.people,
            "workers": self.workers,
            "seconds": round(self.seconds, 1),
            "searches_finished": self.searches,
            "answers": self.answers,
            "answers_per_s": round(self.rate, 1),
            "p50_ms": round(self.p50, 2),
            "p90_ms": round(float(np.percentile(self.latencies_ms, 90)), 2),
            "p99_ms": round(self.p99, 2),
            "max_ms": round(float(self.latencies_ms.max()), 2),
            "http_errors": self.errors,
            "db_answers": self.db_answers,
            "lost": self.lost,
            "doubled": self.doubled,
            "unexpected_in_db": self.unexpected,
            "sessions_created": int(len(self.create_ms)),
            "create_p50_ms": round(float(np.percentile(self.create_ms, 50)), 2)
            if len(self.create_ms)
            else None,
            "create_p99_ms": round(float(np.percentile(self.create_ms, 99)), 2)
            if len(self.create_ms)
            else None,
            **self.memory,
            **{k: v for k, v in self.extra.items() if k != "in_window"},
        }


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class _Tally:
    """What the simulated people share: the clock and what they measured and sent."""

    deadline: float
    think: float
    arrivals: float = 0.0
    latencies: list[float] = field(default_factory=list)
    creates: list[float] = field(default_factory=list)
    sent: dict[tuple[str, int], tuple[Any, bool]] = field(default_factory=dict)
    errors: int = 0
    searches: int = 0
    in_window: int = 0


async def _person(base: str, rng: np.random.Generator, cat: Any, tally: _Tally) -> None:
    """Whole searches back to back until the deadline: find (4 items) or, over colours, mix
    (40 answers), at random. Each person has their own client, as each person has their own
    browser; with think times of seconds the connection closes between answers (as a
    browser's does after its keep-alive), so an answer may reach any worker."""
    await asyncio.sleep(rng.uniform(0.0, tally.arrivals))
    limits = httpx.Limits(keepalive_expiry=min(4.0, 0.5 * tally.think + 0.5))
    async with httpx.AsyncClient(base_url=base, timeout=60.0, verify=_SSL, limits=limits) as client:
        while time.monotonic() < tally.deadline:
            if not await _search(client, rng, cat, tally):
                return


async def _search(
    client: httpx.AsyncClient, rng: np.random.Generator, cat: Any, tally: _Tally
) -> bool:
    """One search, until it is done or the deadline passes; False when the person stops.

    A person whose think time passes the deadline stops there: no new search after it (a
    burst of new sessions at the end would be load of the client's making).
    """
    mode = "find" if not cat.has_colours or rng.random() < 0.5 else "mix"
    body: dict[str, Any] = {"mode": mode, "n_choices": 4} if mode == "find" else {"mode": mode}
    t0 = time.perf_counter()
    r = await client.post("/api/sessions", json=body)
    tally.creates.append(1e3 * (time.perf_counter() - t0))
    if r.status_code != 201:
        tally.errors += 1
        return True
    s = r.json()
    person: Any = (
        FindPerson(cat, int(rng.integers(cat.n_items)), 3.0, rng)
        if mode == "find"
        else MixPerson(rng.uniform(size=3), 3.0, rng, accept_after=40)
    )
    screen, headers = s["screen"], {"Authorization": f"Bearer {s['token']}"}
    while True:
        wait = rng.exponential(tally.think)
        if time.monotonic() + wait > tally.deadline:  # the run ends while they think
            return False
        await asyncio.sleep(wait)
        body = person.answer(screen)
        t0 = time.perf_counter()
        r = await client.post(f"/api/sessions/{s['id']}/answer", json=body, headers=headers)
        tally.latencies.append(1e3 * (time.perf_counter() - t0))
        tally.in_window += time.monotonic() <= tally.deadline
        if r.status_code != 200:
            tally.errors += 1
            return True
        tally.sent[(s["id"], body["screen"])] = (body["choice"], body["found"])
        reply = r.json()
        if reply["done"]:
            tally.searches += 1
            return True
        if time.monotonic() >= tally.deadline:
            return False
        screen = reply["screen"]


async def _drive(
    base: str, cat: Catalogue, people: int, seconds: float, think: float, arrivals: float, seed: int
) -> _Tally:
    tally = _Tally(deadline=time.monotonic() + seconds, think=think, arrivals=arrivals)
    rngs = np.random.default_rng(seed).spawn(people)
    await asyncio.gather(*(_person(base, r, cat, tally) for r in rngs))
    return tally


def random_catalogue(n: int, d: int, seed: int = 0) -> Path:
    """A folder of ``n`` random float32 items in ``d`` dimensions (cached in the temp dir)."""
    root = Path(tempfile.gettempdir()) / "ts-bench-catalogues" / f"n{n}-d{d}-s{seed}"
    if not (root / "items.csv").exists():
        root.mkdir(parents=True, exist_ok=True)
        rng = np.random.default_rng(seed)
        np.save(root / "embedding.npy", rng.standard_normal((n, d), dtype=np.float32))
        tmp = root / "items.csv.tmp"
        tmp.write_text("name\n" + "\n".join(f"item {i}" for i in range(n)) + "\n")
        tmp.replace(root / "items.csv")
    return root


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants (Linux)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            with open(f"/proc/{p}/task/{p}/children") as f:
                todo += [int(c) for c in f.read().split()]
        except OSError:
            pass
    return out


class _MemorySampler(threading.Thread):
    """The server's processes' PSS twice a second: the peak of each and of their sum."""

    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid, self.stop, self.peak, self.peak_total = pid, threading.Event(), {}, 0

    def run(self) -> None:
        while not self.stop.wait(0.5):
            sizes = {p: process_memory(p) for p in _tree(self.pid)}
            for p, v in sizes.items():
                self.peak[p] = max(self.peak.get(p, 0), v)
            self.peak_total = max(self.peak_total, sum(sizes.values()))


def wait_up(base: str, proc: subprocess.Popen, limit: float = 600.0) -> float:
    """Wait until the server at ``base`` answers its health check; the seconds it took."""
    t0 = time.monotonic()
    while True:
        try:
            if httpx.get(base + "/api/health", timeout=1).status_code == 200:
                return time.monotonic() - t0
        except httpx.HTTPError:
            pass
        if time.monotonic() - t0 > limit or proc.poll() is not None:
            raise RuntimeError("the server did not start")
        time.sleep(0.1)


def stop(proc: subprocess.Popen, sig: int = signal.SIGTERM) -> None:
    """Stop the server's process group with ``sig`` (SIGKILL after 20 s)."""
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        return
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def run_load(
    people: int = 200,
    seconds: float = 60.0,
    think: float = 1.0,
    workers: int = 2,
    seed: int = 0,
    database: str | None = None,
    *,
    catalogue: str | None = None,
    gamma: str = "3",
    memory: str | None = None,
    arrivals: float = 0.0,
) -> LoadResult:
    """Start the server, run the people, stop it, check the database.

    ``catalogue``: None (the demo colours), ``"NxD"`` (random float32 items) or a folder.
    """
    tmp = tempfile.mkdtemp(prefix="ts-load-")
    url = database or f"sqlite:///{Path(tmp) / 'sessions.sqlite'}"
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    if catalogue is None:
        source, cat = ["--demo", "colours"], demo_catalogue()
    else:
        if "x" in catalogue and not Path(catalogue).exists():
            n, d = (int(float(v)) for v in catalogue.split("x"))
            folder = random_catalogue(n, d)
        else:
            folder = Path(catalogue)
        source, cat = ["--catalogue", str(folder)], load_catalogue(folder)
    extra_args = ["--gamma", gamma] + ([] if memory is None else ["--memory", memory])
    proc = subprocess.Popen(
        [sys.executable, "-m", "tripletsearch", "serve", *source, "--port", str(port)]
        + ["--workers", str(workers), "--database", url, "--log-level", "warning"]
        # every simulated person comes from 127.0.0.1: no per-address limit
        + ["--sessions-per-minute", "0", "--enrolments-per-minute", "0", *extra_args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env={**os.environ, "TRIPLETSEARCH_ADMIN_TOKEN": "load"},
    )
    try:
        started = wait_up(base, proc)
        owner = {"Authorization": "Bearer load"}  # the worker's pid and memory: the owner's
        health = httpx.get(base + "/api/health", headers=owner, timeout=10).json()["worker"]
        sampler = _MemorySampler(proc.pid)
        sampler.start()
        out = asyncio.run(_drive(base, cat, people, seconds, think, arrivals, seed))
        sampler.stop.set()
        sampler.join()
        end = httpx.get(base + "/api/health", headers=owner, timeout=30).json()["worker"]
    finally:
        stop(proc)
    # the database against what the clients saw confirmed
    store = Store(url)
    recorded: dict[tuple[str, int], tuple[Any, bool]] = {}
    doubled = 0
    for sid, hist in store.all_answers().items():
        for h in hist:
            key = (sid, h["number"])
            doubled += key in recorded
            recorded[key] = (h["choice"], h["found"])
    store.dispose()
    sent = out.sent
    lost = sum(1 for k, v in sent.items() if recorded.get(k) != v)
    unexpected = sum(1 for k in recorded if k not in sent)
    return LoadResult(
        people=people,
        seconds=seconds,
        answers=len(out.latencies),
        searches=out.searches,
        latencies_ms=np.asarray(out.latencies),
        errors=out.errors,
        db_answers=len(recorded),
        lost=lost,
        doubled=doubled,
        unexpected=unexpected,
        workers=workers,
        create_ms=np.asarray(out.creates),
        memory={
            "catalogue": f"{cat.n_items}x{cat.dim}",
            "gamma": gamma,
            "memory_option": memory,
            "budget_per_worker": None
            if health["budget"] is None
            else format_size(health["budget"]),
            "baseline_per_worker": None
            if health["baseline"] is None
            else format_size(health["baseline"]),
            "peak_pss_per_process": sorted(format_size(v) for v in sampler.peak.values()),
            "peak_pss_max_worker_bytes": max(
                (v for p, v in sampler.peak.items() if p != proc.pid or workers == 1), default=0
            ),
            "peak_pss_total": format_size(sampler.peak_total),
            "startup_s": round(started, 1),
            "evictions": end["evictions"],
            "rebuilds": end["rebuilds"],
        },
        extra={"in_window": out.in_window},
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--people", type=int, default=200)
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--think", type=float, default=1.0, help="mean think time (s)")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--database", help="SQLAlchemy URL (default: a fresh SQLite file)")
    p.add_argument("--catalogue", help="NxD (random float32 items) or a catalogue folder")
    p.add_argument("--gamma", default="3", help="the server's --gamma (a number or auto)")
    p.add_argument("--memory", help="the server's --memory per worker (default: its own)")
    p.add_argument("--arrivals", type=float, default=0.0, help="people arrive over this (s)")
    args = p.parse_args(argv)
    res = run_load(
        args.people,
        args.seconds,
        args.think,
        args.workers,
        args.seed,
        args.database,
        catalogue=args.catalogue,
        gamma=args.gamma,
        memory=args.memory,
        arrivals=args.arrivals,
    )
    print(json.dumps(res.summary(), indent=2))
    return 0 if res.lost == res.doubled == res.unexpected == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
