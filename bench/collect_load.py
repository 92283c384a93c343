"""Load test of the collect mode: the real server (``tripletsearch serve --collect``, uvicorn,
SQLite, its refitter process) and N simulated participants (async httpx) answering triplet
queries after exponential think times, arriving over a window, each enrolling again when
their ``max_queries`` are done.

Reports p50 / p99 latency per answer and per enrolment, answers per second, the embedding
versions the refitter stored during the run (a refit running throughout), and checks that
the database holds exactly the answers the clients saw acknowledged, once each. With
``--kill-at S`` the whole server (workers and refitter) is killed with SIGKILL S seconds in
and restarted on the same database; the clients retry until it answers.

    python bench/collect_load.py --people 200 --think 3 --arrivals 5 --seconds 300
    python bench/collect_load.py --people 200 --seconds 120 --kill-at 60
    python -m pytest bench/test_bench_collect_serve.py     # recorded by pytest-benchmark
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import numpy as np
from serve_load import _SSL, _free_port, _MemorySampler, stop, wait_up

from tripletsearch.people import CollectPerson
from tripletsearch.serve.collect import load_collect
from tripletsearch.serve.service.memory import format_size
from tripletsearch.serve.store import Store

COLLECT = """
title = "Which colours look alike?"
catalogue = "items"
samplers = ["active", "random"]
test_share = 0.1
n_choices = {k}
picks = {picks}
dim = 2
max_queries = {max_queries}
burn_in = 10
attention = [5, 50]
repeats = [30]
platform = "prolific"
require_platform_id = true

[completion.finished]
code = "LOADDONE"

[completion.withdrawn]
code = "LOADSTOP"
"""

#: the share of participants who open their link again after their 5th answer (another
#: browser): the server resumes them with a new token, which they go on with
REOPEN = 0.1


def colour_catalogue(root: Path, n: int, seed: int = 0) -> np.ndarray:
    """A folder of ``n`` named colours without an embedding (learned from the answers);
    their RGB values (n, 3), what the simulated people see."""
    root.mkdir(parents=True, exist_ok=True)
    rgb = np.random.default_rng(seed).integers(0, 256, size=(n, 3))
    rows = [f"colour {i},#{r:02x}{g:02x}{b:02x}" for i, (r, g, b) in enumerate(rgb)]
    (root / "items.csv").write_text("name,hex\n" + "\n".join(rows) + "\n")
    return rgb


@dataclass
class _Tally:
    deadline: float
    think: float
    arrivals: float
    colours: np.ndarray  # the catalogue's RGB values
    latencies: list[float] = field(default_factory=list)
    enrols: list[float] = field(default_factory=list)
    acked: dict[tuple[str, int], Any] = field(default_factory=dict)
    retries: int = 0
    errors: int = 0
    participants: int = 0
    reopened: int = 0
    platform_ids: set[str] = field(default_factory=set)
    answers_at_restart: int | None = None  # answers acknowledged when the restart was up


async def _post(client: httpx.AsyncClient, tally: _Tally, url: str, **kw: Any) -> Any:
    """POST until the server answers (it may be restarting); None past the deadline."""
    while time.monotonic() < tally.deadline + 30:
        try:
            return await client.post(url, **kw)
        except httpx.HTTPError:
            tally.retries += 1
            await asyncio.sleep(0.25)
    return None


async def _participant(
    client: httpx.AsyncClient, rng: np.random.Generator, tally: _Tally
) -> bool | None:
    """One participant from consent to debrief; False on an error, None when the run ends.

    A person whose think time passes the deadline stops there: no new participant after
    it (a burst of enrolments at the end would be load of the client's making).
    """
    pid = rng.bytes(12).hex()  # Prolific's form: 24 hexadecimal digits
    link = {"PROLIFIC_PID": pid, "STUDY_ID": "S", "SESSION_ID": "X"}
    enrolment = {"consent": True, "platform": link}
    t0 = time.perf_counter()
    r = await _post(client, tally, "/api/participants", json=enrolment)
    if r is None or r.status_code != 201:
        tally.errors += r is not None
        return False
    tally.enrols.append(1e3 * (time.perf_counter() - t0))
    tally.participants += 1
    tally.platform_ids.add(link["PROLIFIC_PID"])
    p = r.json()
    reopen = rng.random() < REOPEN
    # a person who looks: the candidate nearest the head in RGB, at random one time in ten
    person = CollectPerson(
        "person", tally.colours, gamma=None, lapse=0.1, rng=rng, seconds=1.0, spread=0.0
    )
    base = f"/api/participants/{p['id']}"
    headers = {"Authorization": f"Bearer {p['token']}"}
    r = await _post(client, tally, f"{base}/next", json={}, headers=headers)
    reply = None if r is None or r.status_code != 200 else r.json()
    while reply is not None and not reply["done"] and time.monotonic() < tally.deadline:
        wait = rng.exponential(tally.think)
        if time.monotonic() + wait > tally.deadline:  # the run ends while they think
            return None
        await asyncio.sleep(wait)
        q = reply["screen"]
        body = person.answer(q)  # (its response_ms: 1000)
        t0 = time.perf_counter()
        r = await _post(client, tally, f"{base}/answer", json=body, headers=headers)
        if r is None or r.status_code != 200:
            tally.errors += r is not None
            return False
        tally.latencies.append(1e3 * (time.perf_counter() - t0))
        tally.acked[(p["id"], q["number"])] = _picked(body["choice"], body.get("picks"))
        reply = r.json()
        if reopen and len([k for k in tally.acked if k[0] == p["id"]]) == 5:
            reopen = False  # the link again, in another browser: the same participant
            t0 = time.perf_counter()
            r = await _post(client, tally, "/api/participants", json=enrolment)
            if r is None or r.status_code != 201 or r.json()["id"] != p["id"]:
                tally.errors += 1
                return False
            tally.enrols.append(1e3 * (time.perf_counter() - t0))
            tally.reopened += 1
            headers = {"Authorization": f"Bearer {r.json()['token']}"}
            r = await _post(client, tally, f"{base}/next", json={}, headers=headers)
            if r is None or r.status_code != 200:
                tally.errors += r is not None
                return False
            reply = r.json()
    return True


async def _person(base: str, rng: np.random.Generator, tally: _Tally) -> None:
    await asyncio.sleep(rng.uniform(0.0, tally.arrivals))
    limits = httpx.Limits(keepalive_expiry=min(4.0, 0.5 * tally.think + 0.5))
    async with httpx.AsyncClient(base_url=base, timeout=60.0, verify=_SSL, limits=limits) as client:
        while time.monotonic() < tally.deadline:
            went = await _participant(client, rng, tally)
            if went is None:
                return
            if not went:
                await asyncio.sleep(1.0)


def _start(url: str, port: int, collect_file: Path, workers: int) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "tripletsearch", "serve", "--collect", str(collect_file)]
        + ["--port", str(port), "--workers", str(workers), "--database", url]
        + ["--log-level", "warning", "--sessions-per-minute", "0", "--enrolments-per-minute", "0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env={**os.environ, "TRIPLETSEARCH_ADMIN_TOKEN": "load"},
    )


def run_collect_load(
    people: int = 200,
    seconds: float = 300.0,
    think: float = 3.0,
    arrivals: float = 5.0,
    *,
    items: int = 1000,
    k: int = 2,
    picks: int = 1,
    max_queries: int = 100,
    workers: int = 2,
    kill_at: float | None = None,
    settle: int = 0,
    seed: int = 0,
) -> dict[str, Any]:
    """Run the load (see the module docstring); a JSON-ready summary.

    ``settle`` (with ``kill_at``): the run goes on past ``seconds`` (60 s more at most) until
    ``settle`` answers were acknowledged after the restart and the refitter stored an
    embedding version after it (two at least): a smoke that waits on what it asserts, not
    on a loaded machine's pace.
    """
    tmp = Path(tempfile.mkdtemp(prefix="ts-collect-load-"))
    colours = colour_catalogue(tmp / "items", items, seed)
    collect_file = tmp / "collect.toml"
    collect_file.write_text(COLLECT.format(k=k, picks=picks, max_queries=max_queries))
    url, port = f"sqlite:///{tmp / 'sessions.sqlite'}", _free_port()
    base = f"http://127.0.0.1:{port}"
    proc = _start(url, port, collect_file, workers)
    restarts: list[float] = []
    try:
        started = wait_up(base, proc)
        sampler = _MemorySampler(proc.pid)
        sampler.start()
        t_run = time.monotonic()
        tally = _Tally(t_run + seconds, think, arrivals, colours)

        async def drive() -> None:
            rngs = np.random.default_rng(seed).spawn(people)
            work = asyncio.gather(*(_person(base, r, tally) for r in rngs))
            if kill_at is not None:
                await asyncio.sleep(kill_at)
                nonlocal proc
                deadline = tally.deadline
                if settle:  # held off while the restart runs: its answers are the point
                    tally.deadline += 60.0
                stop(proc, signal.SIGKILL)  # workers and refitter, mid-answer
                t0 = time.monotonic()
                versions = await asyncio.to_thread(_versions, url, collect_file)
                proc = await asyncio.to_thread(_start, url, port, collect_file, workers)
                await asyncio.to_thread(wait_up, base, proc)
                restarts.append(round(time.monotonic() - t0, 2))
                tally.answers_at_restart = len(tally.latencies)
                if settle:
                    await _settle(tally, url, collect_file, settle, max(2, versions + 1))
                    tally.deadline = max(deadline, time.monotonic())
            await work

        asyncio.run(drive())
        seconds = time.monotonic() - t_run  # (settling may have run longer)
        sampler.stop.set()
        sampler.join()
    finally:
        stop(proc)
    return _summary(url, collect_file, tally, started, restarts, sampler, seconds, people)


def _versions(url: str, collect_file: Path) -> int:
    store = Store(url)
    try:
        return len(store.embedding_versions(load_collect(collect_file).fingerprint))
    finally:
        store.dispose()


async def _settle(tally: _Tally, url: str, collect_file: Path, answers: int, versions: int) -> None:
    """Wait (until the deadline, held off) for ``answers`` acknowledged since the restart
    and ``versions`` embedding versions stored."""
    assert tally.answers_at_restart is not None
    while time.monotonic() < tally.deadline:
        done = len(tally.latencies) - tally.answers_at_restart >= answers
        if done and await asyncio.to_thread(_versions, url, collect_file) >= versions:
            return
        await asyncio.sleep(0.5)


def _summary(
    url: str,
    collect_file: Path,
    tally: _Tally,
    started: float,
    restarts: list[float],
    sampler: Any,
    seconds: float,
    people: int,
) -> dict[str, Any]:
    """What the clients measured against what the database holds."""
    store = Store(url)
    ids = [row.platform_id for row in store.iter_participants()]
    by_pid = {}
    for s in store.iter_sessions():
        by_pid[s.id] = s.participant
    recorded: dict[tuple[str, int], Any] = {}
    doubled = 0
    for sid, hist in store.all_answers().items():
        for h in hist:
            key = (by_pid[sid], h["number"])
            doubled += key in recorded
            recorded[key] = _picked(h["choice"], h["picks"])
    fp = load_collect(collect_file).fingerprint
    versions = store.embedding_versions(fp)
    store.dispose()
    lat, enr = np.asarray(tally.latencies), np.asarray(tally.enrols)

    def q(a: np.ndarray, p: float) -> float | None:
        return None if len(a) == 0 else round(float(np.percentile(a, p)), 1)

    return {
        "people": people,
        "seconds": round(seconds, 1),
        "answers": len(lat),
        "answers_per_s": round(len(lat) / seconds, 1),
        "answer_ms": {"p50": q(lat, 50), "p99": q(lat, 99), "max": q(lat, 100)},
        "enrol_ms": {"p50": q(enr, 50), "p99": q(enr, 99)},
        "participants": tally.participants,
        "reopened": tally.reopened,
        # one participant per platform id: the database's rows against the ids enrolled
        "one_per_id": len(ids) == len(set(ids)) == len(tally.platform_ids),
        "errors": tally.errors,
        "retries": tally.retries,
        "restart_s": restarts,
        "answers_after_restart": None
        if tally.answers_at_restart is None
        else len(lat) - tally.answers_at_restart,
        "startup_s": round(started, 1),
        "embedding_versions": len(versions),
        "refit_rows": [v["n_rows"] for v in versions],
        "db_answers": len(recorded),
        "lost": sum(1 for key, c in tally.acked.items() if recorded.get(key, "none") != c),
        "doubled": doubled,
        "peak_pss_total": format_size(sampler.peak_total),
    }


def _picked(choice: Any, picks: Any) -> tuple:
    """An answer as compared: its choice and its picks in order (none: one pick)."""
    return choice, None if picks is None else tuple(int(p) for p in picks)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--people", type=int, default=200)
    p.add_argument("--seconds", type=float, default=300.0)
    p.add_argument("--think", type=float, default=3.0, help="mean think time (s)")
    p.add_argument("--arrivals", type=float, default=5.0, help="people arrive over this (s)")
    p.add_argument("--items", type=int, default=1000)
    p.add_argument("--k", type=int, default=2, help="candidates per query")
    p.add_argument("--picks", type=int, default=1, help="ranked picks per query")
    p.add_argument(
        "--against-triplets",
        action="store_true",
        help="first the same load with triplet queries: the answer p99s' ratio in one run",
    )
    p.add_argument("--max-queries", type=int, default=100)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--kill-at", type=float, help="kill -9 the server this many seconds in")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    opts = dict(items=a.items, max_queries=a.max_queries, workers=a.workers, seed=a.seed)
    runs = [(2, 1)] if a.against_triplets else []
    out = {}
    for k, picks in [*runs, (a.k, a.picks)]:
        res = run_collect_load(
            a.people, a.seconds, a.think, a.arrivals, k=k, picks=picks, kill_at=a.kill_at,
            **opts,
        )  # fmt: skip
        out[f"{k}-rank-{picks}"] = res
        print(json.dumps({f"{k}-rank-{picks}": res}, indent=2), flush=True)
    if a.against_triplets:
        base, this = (r["answer_ms"]["p99"] for r in out.values())
        print(json.dumps({"answer_p99_ratio": round(this / base, 3) if base else None}))
    return 0 if all(r["lost"] == r["doubled"] == 0 for r in out.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
