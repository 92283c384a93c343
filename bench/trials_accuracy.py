"""Accuracy of screens past the triplet (issue 51, item 4), on simulated people.

People perceive ``n`` standard normal points in ``d`` dimensions and answer by gamma-CKL
(gamma 3) with a 5 % lapse (per pick of a ranked screen); every fit is
:func:`~tripletsearch.collect.default_fitter`'s (gamma-CKL, gamma chosen by the fit), scored
on held-out random triplets answered by the same people (:func:`simulate_collection`).
Conditions, each over the same seeds:

- ``triplets``: random triplet screens (the mark: their accuracy at 3,000 screens);
- ``rank-active`` / ``rank-random``: 8-rank-2 screens, active or random, fitted as ranked
  choices (their own likelihood), and ``rank-random-cut``: the same random answers fitted
  as the triplets they imply; ``rank-active-lapse`` / ``rank-random-lapse``: the same
  screens fitted by the ranked likelihood with the people's 5 % lapse per pick in the model
  (``Embedding(lapse=0.05)``); ``rank-active-cut``: the active screens measured by a fit
  of the triplets they imply (as ``rank-random-cut``);
- ``odd-random``: random odd-one-out trials (and ``odd-random-cut``), ``odd-active``
  active ones.

Run ``python bench/trials_accuracy.py --seeds 4`` (``--n 300 --dim 5`` for the larger
problem; ``--n-init 6`` for every fit from six starts, ``Embedding(n_init=6)``); it
prints the curves (mean and standard error over the seeds per budget) and the
comparisons: screens to reach the mark, active against random grids, grids against
triplets at equal items viewed (a screen of k candidates views k + 1 items), ranked
likelihood against cut triplets (paired per seed), odd-one-out per trial against triplets.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from typing import Any

import numpy as np

from tripletsearch import Embedding, GammaCKL
from tripletsearch.collect import simulate_collection

GAMMA, LAPSE, MARK = 3.0, 0.05, 3000
TRIPLET_BUDGETS = (500, 1000, 1500, 2000, 3000)
RANK_BUDGETS = (250, 375, 500, 700, 1000)
ODD_BUDGETS = (500, 1000, 2000, 3000)


def conditions(scale: float = 1.0) -> dict[str, dict[str, Any]]:
    """Each condition's simulate_collection arguments (budgets scaled for smoke runs)."""

    def b(budgets: tuple[int, ...]) -> list[int]:
        return sorted({max(1, round(v * scale)) for v in budgets})

    rank = dict(trial="rank", n_choices=8, picks=2)
    lapsed = dict(rank, lapse_model=LAPSE)
    return {
        "triplets": dict(method="random", n_answers=b(TRIPLET_BUDGETS)),
        "rank-active": dict(method="active", n_answers=b(RANK_BUDGETS), **rank),
        "rank-random": dict(method="random", n_answers=b(RANK_BUDGETS), **rank),
        "rank-random-cut": dict(
            method="random", n_answers=b(RANK_BUDGETS), fit_as="triplets", **rank
        ),
        "rank-active-lapse": dict(method="active", n_answers=b(RANK_BUDGETS), **lapsed),
        "rank-random-lapse": dict(method="random", n_answers=b(RANK_BUDGETS), **lapsed),
        "rank-active-cut": dict(
            method="active", n_answers=b(RANK_BUDGETS), fit_as="triplets", **rank
        ),
        "odd-random": dict(method="random", n_answers=b(ODD_BUDGETS), trial="odd-one-out"),
        "odd-active": dict(method="active", n_answers=b(ODD_BUDGETS), trial="odd-one-out"),
        "odd-random-cut": dict(
            method="random", n_answers=b(ODD_BUDGETS), trial="odd-one-out", fit_as="triplets"
        ),
    }


def run(
    n: int = 100,
    dim: int = 3,
    seeds: int = 4,
    *,
    scale: float = 1.0,
    test_size: int = 5000,
    only: list[str] | None = None,
    n_jobs: int | None = 1,
    first_seed: int = 0,
    save: str | None = None,
    n_init: int = 1,
) -> dict[str, Any]:
    """Every condition's accuracy (seeds x budgets) and seconds taken.

    Seed by seed (each a run of its own, ``random_state=seed``), every condition of a seed
    before the next seed; with ``save``, the results so far are written there (JSON) after
    each, so that a long run stopped early keeps what it measured.
    """
    X = np.random.default_rng(12345).normal(size=(n, dim))
    out: dict[str, Any] = {}
    for seed in range(first_seed, first_seed + seeds):
        for name, kw in conditions(scale).items():
            if only and name not in only:
                continue
            t0 = time.perf_counter()
            kw = dict(kw)
            lapse = kw.pop("lapse_model", 0.0)  # the people's lapse in the model, or none
            kw["fitter"] = Embedding("gamma-ckl", dim=dim, gamma="auto", lapse=lapse, n_init=n_init)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = simulate_collection(
                    X,
                    oracle=GammaCKL(GAMMA),
                    oracle_lapse=LAPSE,
                    budget=kw["n_answers"][-1],
                    n_runs=1,
                    test_size=test_size,
                    random_state=seed,
                    n_jobs=n_jobs,
                    **kw,
                )
            r = out.setdefault(name, {"budgets": list(kw["n_answers"]), "accuracy": [],
                                      "truth": [], "seconds": 0.0, "seeds": []})  # fmt: skip
            r["accuracy"].append(res.accuracy[0].tolist())
            r["truth"].append(res.truth_accuracy[0].tolist())
            r["seconds"] += time.perf_counter() - t0
            r["seeds"].append(seed)
            if save:
                with open(save, "w") as f:
                    json.dump(out, f)
    return out


def _mean_se(acc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    se = (
        acc.std(axis=0, ddof=1) / np.sqrt(len(acc))
        if len(acc) > 1
        else np.full(acc.shape[1], np.nan)
    )
    return acc.mean(axis=0), se


def screens_to_reach(budgets: list[int], mean: np.ndarray, mark: float) -> float:
    """Screens where the mean curve first reaches ``mark`` (linear between budgets; NaN)."""
    for i, (b, m) in enumerate(zip(budgets, mean)):
        if m >= mark:
            if i == 0:  # at most the first budget
                return float(b)
            b0, m0 = budgets[i - 1], mean[i - 1]
            return float(b0 + (mark - m0) * (b - b0) / (m - m0))
    return float("nan")


def report(res: dict[str, Any], key: str = "accuracy") -> str:
    """The curves and the comparisons as text (``key``: "accuracy" against the people's
    answers to the test queries, "truth" against the truth's order of them)."""
    lines = [f"held-out {key}:"]
    curves, seeds_of = {}, {}
    for name, r in res.items():
        acc = np.asarray(r[key])
        mean, se = _mean_se(acc)
        curves[name] = (r["budgets"], mean, se, acc)
        seeds_of[name] = list(r.get("seeds", range(len(acc))))
        cells = "  ".join(f"{b}: {m:.4f}+-{s:.4f}" for b, m, s in zip(r["budgets"], mean, se))
        lines.append(f"{name:16s} ({len(acc)} seeds, {r['seconds']:.0f} s)  {cells}")
        if "seeds" in r:
            lines[-1] += f"  seeds {r['seeds']}"
    if "triplets" in curves:
        tb, tm, tse, _ = curves["triplets"]
        mark = float(np.interp(min(MARK, tb[-1]), tb, tm))
        lines.append(f"mark: random triplets at {min(MARK, tb[-1])} screens: {mark:.4f}")
        names = ("rank-active", "rank-random", "rank-random-cut", "rank-active-lapse")
        for name in names + ("rank-random-lapse", "rank-active-cut"):
            if name in curves:
                b, m, _, _ = curves[name]
                lines.append(
                    f"screens to reach the mark, {name}: {screens_to_reach(b, m, mark):.0f}"
                )
        if "rank-random" in curves:  # equal items viewed: 9 a grid, 3 a triplet
            b, m, s, _ = curves["rank-random"]
            for gb, gm, gs in zip(b, m, s):
                t = 3 * gb
                if tb[0] <= t <= tb[-1]:
                    lines.append(
                        f"items viewed {9 * gb}: 8-rank-2 random {gm:.4f}+-{gs:.4f} vs "
                        f"triplets {float(np.interp(t, tb, tm)):.4f} ({t} screens)"
                    )
        for name in ("odd-random", "odd-random-cut", "odd-active"):
            if name in curves:
                b, m, s, _ = curves[name]
                common = [(i, bb) for i, bb in enumerate(b) if bb in tb]
                cells = ", ".join(f"{bb}: {m[i]:.4f} vs {tm[tb.index(bb)]:.4f}" for i, bb in common)
                lines.append(f"{name} per trial vs triplets: {cells}")
    for a, c in (("rank-active", "rank-random"), ("rank-random", "rank-random-cut"),
                 ("rank-random-lapse", "rank-random-cut"), ("rank-random-lapse", "rank-random"),
                 ("rank-active-lapse", "rank-active"), ("rank-active-cut", "rank-random-cut"),
                 ("rank-active-cut", "rank-active"),
                 ("odd-random", "odd-random-cut"), ("odd-active", "odd-random")):  # fmt: skip
        if a in curves and c in curves:
            b, _, _, A = curves[a]
            _, _, _, C = curves[c]
            both = sorted(set(seeds_of[a]) & set(seeds_of[c]))  # the seeds both ran
            if not both:
                continue
            d = A[[seeds_of[a].index(x) for x in both]] - C[[seeds_of[c].index(x) for x in both]]
            m, s = _mean_se(d)
            cells = ", ".join(f"{bb}: {mm:+.4f}+-{ss:.4f}" for bb, mm, ss in zip(b, m, s))
            lines.append(f"{a} - {c} (paired by seed, {len(both)} seeds): {cells}")
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=100)
    p.add_argument("--dim", type=int, default=3)
    p.add_argument("--seeds", type=int, default=4)
    p.add_argument("--scale", type=float, default=1.0)
    p.add_argument("--only", nargs="*")
    p.add_argument("--json", help="write the raw results here")
    p.add_argument("--n-jobs", type=int, default=1)
    p.add_argument("--first-seed", type=int, default=0)
    p.add_argument("--n-init", type=int, default=1, help="the fitter's starts (Embedding n_init)")
    p.add_argument(
        "--best-of", type=int, help="active ranked screens: the best of this many (0: greedy)"
    )
    p.add_argument("--report", nargs="*", help="only report these JSON files' results, merged")
    a = p.parse_args()
    if a.report:
        merged: dict[str, Any] = {}
        for path in a.report:
            with open(path) as f:
                for name, r in json.load(f).items():  # seeds of one condition joined
                    if name not in merged:
                        merged[name] = r
                        continue
                    for key in ("accuracy", "truth", "seeds"):
                        merged[name][key] = merged[name][key] + r[key]
                    merged[name]["seconds"] += r["seconds"]
        print(report(merged))
        print(report(merged, "truth"))
        return
    if a.best_of is not None:
        from tripletsearch.collect import _active_screens

        _active_screens.BEST_OF = a.best_of
    res = run(
        a.n, a.dim, a.seeds, scale=a.scale, only=a.only, n_jobs=a.n_jobs,
        first_seed=a.first_seed, save=a.json, n_init=a.n_init,
    )  # fmt: skip
    print(report(res))
    print(report(res, "truth"))


if __name__ == "__main__":
    main()
