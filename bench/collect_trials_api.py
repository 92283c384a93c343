"""Screens a collect needs, by trial, through the HTTP API: triplets, 8-rank-2 grids and
odd-one-out, active and random (issue 52, item 6).

A collect is served in process (the app through Starlette's TestClient: every answer an
HTTP request to the participants' routes, a SQLite file) on 60 of the demo's colours
(every sixteenth; people perceive CIELAB, the collect fits d = 3). Honest simulated people
(gamma-CKL 3, 5 % lapses per pick, :class:`tripletsearch.people.CollectPerson`) take part
one after another, 100 screens each, no checks, no burn-in of the participant's own (the
sampler's burn-in stands); the refitter's round
(:func:`~tripletsearch.serve.collect.refitter.refit_once`) runs every ``refit_every``
screens and fills the sampler's buffer with that many queries (fresh ones: the buffer
never holds queries of an old embedding). At each budget of screens the sampler's answers
as the service reads them (:func:`~tripletsearch.serve.collect.quality.sampler_answers`)
are fitted by one fixed fitter (``Embedding("gamma-ckl", 3, gamma="auto")``: the trials by
their own likelihood, triplets as triplets), scored on 5,000 fresh random triplets
answered by the same people.

``mark``: the accuracy random triplet screens reach at 3,000 (mean over the seeds); each
trial's screens to reach it, by linear interpolation of the mean curve between budgets.

    python bench/collect_trials_api.py --seeds 5 --out /tmp/trials_api.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import textwrap
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from collect_checks import truth

from tripletsearch import Embedding, GammaCKL, OddOneOut, RankedChoices
from tripletsearch.outcomes import triplet_agreement
from tripletsearch.people import CollectPerson
from tripletsearch.serve import create_app
from tripletsearch.serve.collect import load_collect
from tripletsearch.serve.collect.quality import counted_sessions, sampler_answers
from tripletsearch.serve.collect.refitter import refit_once
from tripletsearch.serve.store import Store

SCREENS_EACH = 100  # a participant's screens
TEST = 5_000  # held-out random triplets
LAPSE = 0.05
# condition -> (the file's trial keys, budgets in screens)
CONDITIONS = {
    "triplet random": ("n_choices = 2", "random", (1000, 2000, 3000)),
    "triplet active": ("n_choices = 2", "active", (1000, 2000, 3000)),
    "8-rank-2 random": ("n_choices = 8\npicks = 2", "random", (250, 500, 750, 1000, 1500)),
    "8-rank-2 active": ("n_choices = 8\npicks = 2", "active", (250, 500, 750, 1000, 1500)),
    "odd-one-out random": ('trial = "odd-one-out"', "random", (500, 1000, 1500, 2000, 3000)),
    "odd-one-out active": ('trial = "odd-one-out"', "active", (500, 1000, 1500, 2000, 3000)),
}
COLLECT = """
title = "Alike?"
catalogue = "items"
samplers = ["{method}"]
test_share = 0
{trial}
dim = {dim}
max_queries = {screens}
burn_in = 0
seed = {seed}
"""


def _test_set(X: np.ndarray, seed: int) -> np.ndarray:
    """``TEST`` random triplets answered by the people (gamma-CKL 3, lapses), as rows."""
    rng = np.random.default_rng([seed, 5])
    n = len(X)
    q = np.array([rng.choice(n, 3, replace=False) for _ in range(TEST)], dtype=np.int64)
    T = GammaCKL(3.0).sample(X, q, random_state=int(rng.integers(2**31)))
    flip = rng.random(TEST) < LAPSE / 2  # (a lapse picks at random: half of them flip)
    T[flip] = T[flip][:, [0, 2, 1]]
    return T


def _fit(rows: np.ndarray, cfg: Any, n: int, dim: int, seed: int) -> np.ndarray:
    """The fixed fitter on the sampler's answers (trials as themselves)."""
    screen = cfg.screen
    if screen.is_choice:
        data: Any = rows
    elif screen.odd:
        data = OddOneOut(rows, rows[:, 2])
    else:
        data = RankedChoices(rows[:, 0], rows[:, 1:], rows[:, 1 : 1 + screen.r])
    emb = Embedding("gamma-ckl", dim, n_items=n, gamma="auto", random_state=seed, n_jobs=1)
    return np.asarray(emb.fit(data).embedding_)


def run(condition: str, seed: int, refit_every: int, root: Path) -> dict[int, float]:
    """One collect of ``condition``: held-out accuracy at each budget of screens."""
    from starlette.testclient import TestClient

    trial, method, budgets = CONDITIONS[condition]
    X, hexes, dim = truth("colours", seed)
    folder = root / "items"
    folder.mkdir(parents=True)
    rows = ["name,hex"] + [f"item {i},{h}" for i, h in enumerate(hexes)]
    (folder / "items.csv").write_text("\n".join(rows) + "\n")
    text = COLLECT.format(method=method, trial=trial, dim=dim, screens=SCREENS_EACH, seed=seed)
    (root / "collect.toml").write_text(textwrap.dedent(text))
    cfg = load_collect(root / "collect.toml")
    db = f"sqlite:///{root / 'c.sqlite'}"
    store, tests, out = Store(db), _test_set(X, seed), {}
    rng = np.random.default_rng([seed, 3])
    app = create_app(cfg.catalogue, db, collect=cfg)
    done, need = 0, list(budgets)
    with warnings.catch_warnings(), TestClient(app) as c:
        warnings.simplefilter("ignore")
        refit_once(store, cfg, buffer=refit_every, fast_server_ms=0)
        while need:
            person = CollectPerson("person", X, gamma=3.0, lapse=LAPSE, rng=rng.integers(2**63))
            r = c.post("/api/participants", json={"consent": True}).json()
            h, base = {"Authorization": "Bearer " + r["token"]}, f"/api/participants/{r['id']}"
            reply = c.post(f"{base}/next", json={}, headers=h).json()
            while not reply["done"] and need:
                got = c.post(f"{base}/answer", json=person.answer(reply["screen"]), headers=h)
                assert got.status_code == 200, got.text
                reply, done = got.json(), done + 1
                if done % refit_every == 0:
                    refit_once(store, cfg, buffer=refit_every, fast_server_ms=0)
                if done == need[0]:
                    counted = counted_sessions(store, cfg.fingerprint, fast_server_ms=0)
                    width = None if cfg.screen.is_choice else cfg.screen.width
                    told, _ = sampler_answers(counted, method, width)
                    Xf = _fit(told, cfg, cfg.catalogue.n_items, dim, seed)
                    out[need.pop(0)] = float(np.mean(triplet_agreement(Xf, tests)))
    store.dispose()
    return out


def crossing(curve: dict[int, float], mark: float) -> float | None:
    """The screens at which the mean curve reaches ``mark`` (linear between budgets)."""
    pts = sorted(curve.items())
    for (b0, a0), (b1, a1) in zip(pts, pts[1:]):
        if a0 < mark <= a1:
            return b0 + (mark - a0) * (b1 - b0) / (a1 - a0)
    if pts and pts[0][1] >= mark:
        return float(pts[0][0])
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--conditions", nargs="+", default=list(CONDITIONS), choices=CONDITIONS)
    ap.add_argument("--refit-every", type=int, default=25)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    res: dict[str, dict[int, list[float]]] = {}
    t0 = time.time()
    for condition in args.conditions:
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            with tempfile.TemporaryDirectory() as tmp:
                got = run(condition, seed, args.refit_every, Path(tmp))
            for b, acc in got.items():
                res.setdefault(condition, {}).setdefault(b, []).append(acc)
            print(f"{condition}, seed {seed}: {got} ({time.time() - t0:.0f} s)", file=sys.stderr)
    means = {c: {b: float(np.mean(v)) for b, v in curve.items()} for c, curve in res.items()}
    summary: dict[str, Any] = {"raw": res, "mean": means, "seconds": round(time.time() - t0)}
    if "triplet random" in means and 3000 in means["triplet random"]:
        mark = means["triplet random"][3000]
        summary["mark"] = mark
        summary["screens_to_mark"] = {c: crossing(m, mark) for c, m in means.items()}
    print(json.dumps({k: v for k, v in summary.items() if k != "raw"}, indent=1))
    if args.out:
        args.out.write_text(json.dumps(summary))


if __name__ == "__main__":
    main()
