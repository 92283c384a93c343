"""Simulated collects for the checks on people: how often they flag an honest person, and
how often they catch a script (DESIGN.md, "a check on people has two error rates"), through
the HTTP API; and how long the server takes to reply with each kind of screen.

A collect is served in process (the app through Starlette's TestClient: every answer an
HTTP request, a SQLite file, a simulated clock for the server's time per screen). First
``warmup`` honest people (gamma 3, 5 % lapses) take part, as a collect under way; then the
measured people, in a random order: honest people (gamma-CKL from a truth, with lapses) and
the scripts of a farm (:class:`tripletsearch.people.CollectPerson`), each at a human pace
but ``fast``: ``random`` picks at random; ``first`` always picks the first candidate;
``reader`` answers right every check it can recognise (the head among the candidates, a
query shown before), knows the gold rows (the file leaked) and skips a third of the rest,
picking the others at random; ``geometry`` answers from a fixed fake geometry (the nearest
candidate in random points, the same for every such script); ``fast`` picks at random at
100 ms a screen. Each answers 60 screens; the refitter's round
(:func:`~tripletsearch.serve.collect.refitter.refit_once`: the samplers' fits and buffers,
the agreement scores) runs after each; at the end the dashboard's flags are read, with the
rule of each, and the wall time of each reply by the kind of screen it brought.

Two catalogues: 60 of the demo's colours (every sixteenth; people perceive CIELAB, the
collect fits d = 3) and 40 items in d = 2 (the pictures' stand-ins: standard normal
points). ``python bench/collect_checks.py`` prints the table; ``bench/test_bench_checks.py``
runs it under pytest; ``tests/serve/collect/test_check_rates.py`` runs a smaller one.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
import textwrap
import time
import types
import warnings
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from tripletsearch.people import CollectPerson
from tripletsearch.serve import create_app
from tripletsearch.serve.catalogue.demo import demo_catalogue
from tripletsearch.serve.collect import agreement, load_collect, quality
from tripletsearch.serve.collect.dashboard import collect_dashboard
from tripletsearch.serve.collect.refitter import refit_once
from tripletsearch.serve.collect.screens import BUFFER_KINDS
from tripletsearch.serve.config import ServeConfig
from tripletsearch.serve.store import Store
from tripletsearch.serve.store import sessions as _sessions

SCREENS = 60
WARMUP = 30  # honest people before the measured ones: a collect under way
SCRIPTS = ("random", "first", "reader", "geometry", "fast")
READER_SKIPS = 1 / 3  # the reader's share of skips of the screens it cannot read
CATALOGUES = ("colours", "points")
# the screens a collect asks (``--trial``): its file's keys
TRIALS = {
    "triplet": "n_choices = 2",
    "8-rank-2": "n_choices = 8\npicks = 2",
    "odd-one-out": 'trial = "odd-one-out"',
}
COLLECT = """
title = "Which looks more alike?"
catalogue = "items"
samplers = ["active", "random"]
test_share = 0.1
{trial}
dim = {dim}
max_queries = {screens}
burn_in = 20
attention = [10, 45]
repeats = [30, 55]
gold = {gold}
seed = {seed}
"""


def truth(catalogue: str, seed: int) -> tuple[np.ndarray, list[str], int]:
    """What people perceive, the items' hex colours and the collect's dimension."""
    if catalogue == "colours":
        demo = demo_catalogue()
        assert demo.hex is not None and demo.embedding is not None
        pick = np.arange(0, demo.n_items, 16)
        return np.asarray(demo.embedding)[pick], [demo.hex[i] for i in pick], 3
    rng = np.random.default_rng([seed, 40])
    rgb = rng.integers(0, 256, size=(40, 3))
    return rng.normal(size=(40, 2)), [f"#{r:02x}{g:02x}{b:02x}" for r, g, b in rgb], 2


def gold_pool(
    X: np.ndarray, rng: np.random.Generator, size: int = 16, trial: str = "triplet"
) -> list[list[int]]:
    """``size`` clear known answers of the trial's form.

    A head and k candidates: ``[head, nearest, the others]``, the nearest at most half as
    far as the next (a triplet: the closer item at most half the farther's distance);
    odd-one-out: ``[a, b, odd]``, the pair at most half as far apart as the odd one from
    the nearer of them.
    """
    k = {"triplet": 2, "8-rank-2": 8}.get(trial)
    out: list[list[int]] = []
    while len(out) < size:
        if k is None:
            items = [int(v) for v in rng.choice(len(X), 3, replace=False)]
            d = {(i, j): np.linalg.norm(X[i] - X[j]) for i in items for j in items if i < j}
            (a, b), near = min(d.items(), key=lambda kv: kv[1])
            o = next(i for i in items if i not in (a, b))
            if near <= 0.5 * min(np.linalg.norm(X[a] - X[o]), np.linalg.norm(X[b] - X[o])):
                out.append([a, b, o])
            continue
        h, *cands = (int(v) for v in rng.choice(len(X), k + 1, replace=False))
        dist = np.array([np.linalg.norm(X[c] - X[h]) for c in cands])
        order = np.argsort(dist, kind="stable")
        if dist[order[0]] <= 0.5 * dist[order[1]]:
            first = cands[int(order[0])]
            out.append([h, first, *(c for c in cands if c != first)])
    return out


class _Clock:
    """The simulated time the store reads (the server's time per screen)."""

    def __init__(self) -> None:
        self.now = 1e9

    def time(self) -> float:
        return self.now


@contextlib.contextmanager
def _simulated_time(clock: _Clock) -> Any:
    real = _sessions.time
    _sessions.time = types.SimpleNamespace(time=clock.time)  # type: ignore[assignment]
    try:
        yield
    finally:
        _sessions.time = real


def _person(
    kind: str, X: np.ndarray, fake: np.ndarray, gold: list, honest: dict, rng: Any, odd: bool
):
    """A measured person of ``kind`` (an honest one, or a script of :data:`SCRIPTS`)."""
    seed = np.random.default_rng(rng.integers(2**63))
    if kind == "person":
        return CollectPerson("person", X, rng=seed, **honest)
    if kind == "geometry":
        return CollectPerson("person", fake, gamma=None, lapse=0.0, rng=seed)
    if kind == "reader":  # the leaked gold rows: (head, candidates) -> the answer
        if odd:  # [a, b, odd]: no head
            known = {(-1, frozenset(row)): row[2] for row in gold}
        else:  # [head, first pick, the others]
            known = {(row[0], frozenset(row[1:])): row[1] for row in gold}
        return CollectPerson("reader", rng=seed, known=known, skip=READER_SKIPS)
    return CollectPerson(kind, rng=seed)


def _take_part(c: Any, person: Any, clock: _Clock, times: list | None) -> str:
    """One participant's whole part through the HTTP API; their id. ``times``: (ms, screen)
    of each reply that brought a screen, appended."""
    r = c.post("/api/participants", json={"consent": True}).json()
    h, base = {"Authorization": "Bearer " + r["token"]}, f"/api/participants/{r['id']}"
    reply = c.post(f"{base}/next", json={}, headers=h).json()
    while not reply["done"]:
        body = person.answer(reply["screen"])
        clock.now += person.seconds_
        t0 = time.perf_counter()
        got = c.post(f"{base}/answer", json=body, headers=h)
        took = 1e3 * (time.perf_counter() - t0)
        assert got.status_code == 200, got.text
        reply = got.json()
        if times is not None and not reply["done"]:
            times.append((took, reply["screen"]["number"]))
    return str(r["id"])


def _write(
    root: Path, catalogue: str, seed: int, screens: int, rng: Any, trial: str = "triplet"
) -> tuple:
    X, hexes, dim = truth(catalogue, seed)
    folder = root / "items"
    folder.mkdir(parents=True)
    rows = ["name,hex"] + [f"item {i},{h}" for i, h in enumerate(hexes)]
    (folder / "items.csv").write_text("\n".join(rows) + "\n")
    gold = gold_pool(X, rng, trial=trial)
    text = COLLECT.format(dim=dim, screens=screens, gold=gold, seed=seed, trial=TRIALS[trial])
    (root / "collect.toml").write_text(textwrap.dedent(text))
    return X, gold, load_collect(root / "collect.toml")


def run_collect(
    catalogue: str,
    honest: dict,
    n_honest: int,
    n_scripts: int,
    seed: int,
    root: Path,
    screens: int = SCREENS,
    warmup: int = WARMUP,
    by_answers: bool = True,
    refit_every: int = 1,
    trial: str = "triplet",
) -> list[dict]:
    """One simulated collect; per measured participant: kind, flagged, rules, agreement...

    ``honest``: the measured honest people's ``gamma`` and ``lapse``; ``n_scripts`` of each
    script. Each record has ``times``: the ms of the server's replies, by the kind of screen
    each brought. ``by_answers``: also the agreement rule on the first m answers.
    ``refit_every``: the refitter's round after so many people (1: after each).
    ``trial``: the collect's screens (:data:`TRIALS`).
    """
    from starlette.testclient import TestClient

    rng = np.random.default_rng([seed, 7])
    X, gold, cfg = _write(root, catalogue, seed, screens, rng, trial)
    odd = trial == "odd-one-out"
    fake = np.random.default_rng([seed, 11]).normal(size=X.shape)  # the farm's geometry
    db = f"sqlite:///{root / 'c.sqlite'}"
    kinds = ["person"] * n_honest + [k for k in SCRIPTS for _ in range(n_scripts)]
    kinds = [kinds[int(i)] for i in rng.permutation(len(kinds))]
    clock, store, who, times = _Clock(), Store(db), {}, {}
    app = create_app(cfg.catalogue, db, collect=cfg, config=ServeConfig(admin_token="owner"))
    with _simulated_time(clock), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with TestClient(app) as c:
            for i in range(warmup):
                _take_part(c, CollectPerson("person", X, rng=rng.integers(2**63)), clock, None)
                if (i + 1) % refit_every == 0:
                    refit_once(store, cfg, buffer=80)
            for i, kind in enumerate(kinds):
                mine: list = []
                who_ = _person(kind, X, fake, gold, honest, rng, odd)
                pid = _take_part(c, who_, clock, mine)
                who[pid], times[pid] = kind, mine
                if (i + 1) % refit_every == 0:
                    refit_once(store, cfg, buffer=80)
            agreement.refresh_agreement(store, cfg, force=True)
            board = collect_dashboard(store, cfg)
    kinds_of = _screen_kinds(store, who)
    out = []
    for p in board["participants"]:
        if p["id"] not in who:
            continue
        by_kind: dict[str, list[float]] = defaultdict(list)
        for ms, number in times[p["id"]]:
            by_kind[kinds_of[p["id"]].get(number, "?")].append(ms)
        out.append(
            {
                "id": p["id"], "kind": who[p["id"]], "sampler": p["sampler"],
                "flagged": p["flagged"], "rules": [f["rule"] for f in p["flags"]],
                "agreement": p["agreement"], "answers": p["answers"],
                "clear_repeats": p["clear_repeats"], "times": dict(by_kind),
            }
        )  # fmt: skip
    out_by_m = _agreement_by_answers(store, cfg, who) if by_answers else {}
    store.dispose()
    return [{**rec, "by_answers": out_by_m.get(rec["id"], {})} for rec in out]


def _screen_kinds(store: Store, who: dict) -> dict[str, dict[int, str]]:
    """Per participant of ``who``: the kind of each of their screens, by number."""
    answered = store.all_answers()
    out: dict[str, dict[int, str]] = {}
    for s in store.iter_sessions():
        if s.participant in who:
            h = answered.get(s.id, [])
            out[str(s.participant)] = {int(r["number"]): r["query"]["kind"] for r in h}
    return out


def _agreement_by_answers(
    store: Store, cfg: Any, who: dict, steps: tuple[int, ...] = (10, 20, 30, 40, 50)
) -> dict[str, dict[int, bool]]:
    """Per participant: would the agreement test flag their first m counted answers?

    The folds' embeddings are those of the full run (the same ids, the same others); only
    the judged answers are cut.
    """
    answered = store.all_answers()
    everyone = [s for s in store.iter_sessions() if s.participant is not None]
    sessions = {s.participant: s for s in everyone if s.participant in who}
    # trained as the refitter trains (everyone not flagged by another rule, the warm-up's
    # people too, two passes)
    pool = [(s.id, h) for s in everyone for h in [answered.get(s.id, [])]]
    pool = [(i, h) for i, h in pool if not quality.checks(h)["flagged"]]
    out: dict[str, dict[int, bool]] = defaultdict(dict)
    for m in steps:
        judged = []
        for s in sessions.values():
            h, kept, n = answered.get(s.id, []), [], 0
            for rec in h:
                kept.append(rec)
                n += rec["query"].get("kind") in (*quality.EXPORT_KINDS, "gold")
                if n >= m:
                    break
            judged.append((s.id, kept))  # everyone: the agreement rule alone
        n_items, dim = cfg.catalogue.n_items, cfg.dim
        got = agreement.agreement_scores(pool, n_items, dim, cfg.seed, judged=judged)
        for pid, s in sessions.items():
            rec = got.get(s.id)
            if rec is not None and rec["p_value"] is not None:
                out[pid][m] = rec["p_value"] > quality.AGREEMENT_LEVEL
    return out


HONEST = {
    "gamma 3, lapse 0.05": {"gamma": 3.0, "lapse": 0.05},
    "gamma 1.5, lapse 0.1": {"gamma": 1.5, "lapse": 0.1},
}


def simulate(
    seeds: int = 3,
    n_honest: int = 24,
    n_scripts: int = 4,
    catalogues: tuple = CATALOGUES,
    refit_every: int = 1,
    trial: str = "triplet",
    honest_kinds: tuple = tuple(HONEST),
    first_seed: int = 0,
) -> dict[str, Any]:
    """Every collect: per catalogue, honest kind and seed. The table's counts."""
    people: list[dict] = []
    t0 = time.time()
    for catalogue in catalogues:
        for label in honest_kinds:
            honest = HONEST[label]
            for seed in range(first_seed, first_seed + seeds):
                with tempfile.TemporaryDirectory() as tmp:
                    got = run_collect(
                        catalogue, honest, n_honest, n_scripts, seed, Path(tmp),
                        refit_every=refit_every, trial=trial,
                    )  # fmt: skip
                for rec in got:
                    kind = label if rec["kind"] == "person" else rec["kind"]
                    people.append({**rec, "kind": kind, "catalogue": catalogue})
                took = time.time() - t0
                print(f"{catalogue}, {label}, seed {seed}: {took:.0f} s", file=sys.stderr)
    return {"people": people, "seconds": round(time.time() - t0, 1)}


def table(people: list[dict]) -> list[dict]:
    """Flag rates per kind of person (and per catalogue), with counts and rules."""
    rows = []
    kinds = [*HONEST, *SCRIPTS]
    for kind in kinds:
        for catalogue in (*CATALOGUES, "both"):
            mine = [
                p for p in people if p["kind"] == kind and catalogue in (p["catalogue"], "both")
            ]
            if not mine:
                continue
            flagged = sum(p["flagged"] for p in mine)
            rules = Counter(r for p in mine for r in p["rules"])
            by_m = {}
            for m in (10, 20, 30, 40, 50):
                judged = [p["by_answers"][m] for p in mine if m in p["by_answers"]]
                by_m[m] = f"{sum(judged)}/{len(judged)}" if judged else "-"
            rows.append(
                {
                    "people": kind,
                    "catalogue": catalogue,
                    "flagged": f"{flagged}/{len(mine)}",
                    "rate": round(flagged / len(mine), 3),
                    "rules": dict(rules),
                    "agreement flags at m answers": by_m,
                }
            )
    return rows


def reply_times(people: list[dict]) -> dict[str, dict[str, float]]:
    """Per kind of screen: the median ms of the replies that brought it, their count, and
    that median over the adaptive screens' (a sampler's buffer: random, active, arr; the
    timing side channel: within 20 %)."""
    pooled: dict[str, list[float]] = defaultdict(list)
    for p in people:
        for kind, ms in p["times"].items():
            pooled[kind] += ms
            if kind in BUFFER_KINDS:
                pooled["adaptive"] += ms
    med = {k: float(np.median(v)) for k, v in pooled.items()}
    base = med.get("adaptive")
    return {
        k: {"median_ms": round(m, 2), "n": len(pooled[k]),
            "over_adaptive": None if not base else round(m / base, 3)}
        for k, m in sorted(med.items())
    }  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--honest", type=int, default=24)
    ap.add_argument("--scripts", type=int, default=4)
    ap.add_argument("--catalogues", nargs="+", default=list(CATALOGUES), choices=CATALOGUES)
    ap.add_argument("--refit-every", type=int, default=1)
    ap.add_argument("--trial", default="triplet", choices=list(TRIALS))
    ap.add_argument("--honest-kinds", nargs="+", default=list(HONEST), choices=list(HONEST))
    ap.add_argument("--first-seed", type=int, default=0)
    args = ap.parse_args()
    res = simulate(
        args.seeds, args.honest, args.scripts, tuple(args.catalogues), args.refit_every,
        args.trial, tuple(args.honest_kinds), args.first_seed,
    )  # fmt: skip
    for row in table(res["people"]):
        print(json.dumps(row))
    print(json.dumps(reply_times(res["people"])))
    print(f"{res['seconds']} s")


if __name__ == "__main__":
    main()
