"""Load test of the search service: the real server (``tripletsearch serve``, uvicorn,
2 workers, SQLite) and N concurrent simulated people (async httpx) doing whole colour
searches, each answering after a think time drawn from an exponential with mean 1 s.

Reports p50 / p99 latency per answer, answers per second, and checks that the database
holds exactly the answers the clients sent and saw confirmed (none lost, none doubled).

    python bench/serve_load.py --people 200 --seconds 60
    python -m pytest bench/test_bench_serve.py     # the same, recorded by pytest-benchmark
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
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from tripletsearch.serve.catalogue import demo_catalogue
from tripletsearch.serve.people import FindPerson, MixPerson
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
    latencies: list[float] = field(default_factory=list)
    sent: dict[tuple[str, int], tuple[Any, bool]] = field(default_factory=dict)
    errors: int = 0
    searches: int = 0
    in_window: int = 0


async def _person(base: str, rng: np.random.Generator, cat: Any, tally: _Tally) -> None:
    """Whole searches back to back until the deadline: find (4 swatches) or mix (40
    answers), at random. Each person has their own client (one connection, kept alive), as
    each person has their own browser."""
    async with httpx.AsyncClient(base_url=base, timeout=30.0, verify=_SSL) as client:
        while time.monotonic() < tally.deadline:
            await _search(client, rng, cat, tally)


async def _search(
    client: httpx.AsyncClient, rng: np.random.Generator, cat: Any, tally: _Tally
) -> None:
    """One search, until it is done or the deadline passes."""
    mode = "find" if rng.random() < 0.5 else "mix"
    body: dict[str, Any] = {"mode": mode, "n_choices": 4} if mode == "find" else {"mode": mode}
    r = await client.post("/api/sessions", json=body)
    if r.status_code != 201:
        tally.errors += 1
        return
    s = r.json()
    person: Any = (
        FindPerson(cat, int(rng.integers(cat.n_items)), 3.0, rng)
        if mode == "find"
        else MixPerson(rng.uniform(size=3), 3.0, rng, accept_after=40)
    )
    screen, headers = s["screen"], {"Authorization": f"Bearer {s['token']}"}
    while True:
        await asyncio.sleep(rng.exponential(tally.think))
        body = person.answer(screen)
        t0 = time.perf_counter()
        r = await client.post(f"/api/sessions/{s['id']}/answer", json=body, headers=headers)
        tally.latencies.append(1e3 * (time.perf_counter() - t0))
        tally.in_window += time.monotonic() <= tally.deadline
        if r.status_code != 200:
            tally.errors += 1
            return
        tally.sent[(s["id"], body["screen"])] = (body["choice"], body["found"])
        reply = r.json()
        if reply["done"]:
            tally.searches += 1
            return
        if time.monotonic() >= tally.deadline:
            return
        screen = reply["screen"]


async def _drive(base: str, people: int, seconds: float, think: float, seed: int) -> _Tally:
    cat = demo_catalogue()
    tally = _Tally(deadline=time.monotonic() + seconds, think=think)
    rngs = np.random.default_rng(seed).spawn(people)
    await asyncio.gather(*(_person(base, r, cat, tally) for r in rngs))
    return tally


def run_load(
    people: int = 200,
    seconds: float = 60.0,
    think: float = 1.0,
    workers: int = 2,
    seed: int = 0,
    database: str | None = None,
) -> LoadResult:
    """Start the server, run the people, stop it, check the database."""
    tmp = tempfile.mkdtemp(prefix="ts-load-")
    url = database or f"sqlite:///{Path(tmp) / 'sessions.sqlite'}"
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "tripletsearch", "serve", "--demo", "colours", "--port", str(port)]
        + ["--workers", str(workers), "--database", url, "--log-level", "warning"]
        # every simulated person comes from 127.0.0.1: no per-address limit
        + ["--sessions-per-minute", "0", "--enrolments-per-minute", "0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env={**os.environ, "OMP_NUM_THREADS": "1", "TRIPLETSEARCH_ADMIN_TOKEN": "load"},
    )
    try:
        t0 = time.monotonic()
        while True:
            try:
                if httpx.get(base + "/api/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() - t0 > 60 or proc.poll() is not None:
                raise RuntimeError("the server did not start")
            time.sleep(0.1)
        out = asyncio.run(_drive(base, people, seconds, think, seed))
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
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
    args = p.parse_args(argv)
    res = run_load(args.people, args.seconds, args.think, args.workers, args.seed, args.database)
    print(json.dumps(res.summary(), indent=2))
    return 0 if res.lost == res.doubled == res.unexpected == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
