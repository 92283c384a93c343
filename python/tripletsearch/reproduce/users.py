"""Searches that adapt to the person (gamma="auto") against gamma fixed at 3.

``reproduce users``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np

from ._plots import median_ci, pyplot

USER_GAMMAS = (1.0, 1.5, 2.0, 3.0, 4.5, 6.0, 9.0)
LOST_ERROR = 0.1  # a continuous run is lost when its error at the last query exceeds this


def _continuous_users(d, gammas, searchers, runs, max_q, lapse, seed, n_jobs):
    from ..continuous import simulate_continuous
    from ..oracles import GammaCKL

    rows = []
    for g in gammas:
        for name, kw in searchers.items():
            sim = simulate_continuous(
                d,
                kw["gamma"],
                lapse=kw["lapse"],
                oracle=GammaCKL(g),
                oracle_lapse=lapse,
                n_runs=runs,
                max_queries=max_q,
                random_state=seed,
                n_jobs=n_jobs,
            )
            assert sim.errors is not None  # max_queries is given
            e = sim.errors[:, -1]
            lo, hi = median_ci(e)
            rows.append(
                {
                    "family": "continuous",
                    "d": d,
                    "user_gamma": g,
                    "user_lapse": lapse,
                    "searcher": name,
                    "runs": runs,
                    "median_error": float(np.median(e)),
                    "ci_low": float(lo),
                    "ci_high": float(hi),
                    "lost": float(np.mean(e > LOST_ERROR)),
                }
            )
    return rows


def _database_users(gammas, n, d, n_runs, seed, n_jobs):
    from ..discrete import simulate_discrete
    from ..oracles import GammaCKL

    X = np.random.default_rng(seed).uniform(-1.0, 1.0, size=(n, d))
    rows = []
    for g in gammas:
        for name, gamma in (("told", g), ("fixed 3", 3.0), ("auto", "auto")):
            sim = simulate_discrete(
                X,
                gamma=gamma,
                oracle=GammaCKL(g),
                n_runs=n_runs,
                random_state=seed,
                n_jobs=n_jobs,
                # each method its own opening, as in the paper (a study's people get "uniform")
                opening="random",
            )
            rows.append(
                {
                    "family": "database",
                    "d": d,
                    "user_gamma": g,
                    "user_lapse": 0.0,
                    "searcher": name,
                    "runs": n_runs,
                    "mean_queries": sim.mean,
                    "se_queries": sim.stderr,
                    "found": float(np.mean(sim.found)),
                }
            )
    return rows


def _plot_users(rows, path):
    plt = pyplot()
    if plt is None:
        return None
    fig, axes = plt.subplots(1, 4, figsize=(17, 4.2))
    style = {"fixed 3": ("C3", "s"), "auto": ("C0", "o"), "told": ("0.4", "^")}
    cont = [r for r in rows if r["family"] == "continuous"]
    for ax, d in zip(axes[:2], sorted({r["d"] for r in cont})):
        for name, (col, mk) in style.items():
            mine = [r for r in cont if r["d"] == d and r["searcher"] == name]
            if not mine:
                continue
            g = [r["user_gamma"] for r in mine]
            m = np.maximum([r["median_error"] for r in mine], 1e-17)
            lo = np.maximum([r["ci_low"] for r in mine], 1e-17)
            hi = np.maximum([r["ci_high"] for r in mine], 1e-17)
            ax.errorbar(g, m, yerr=[m - lo, hi - m], color=col, marker=mk, label=name, capsize=3)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.axvline(3.0, color="0.8", lw=1, zorder=0)
        ax.set_title(f"continuous, d = {d}: median error at the last query")
        ax.set_xlabel("the user's gamma")
        ax.set_xticks(USER_GAMMAS, [f"{g:g}" for g in USER_GAMMAS])
        ax.legend()
    ax = axes[2]
    for d, ls in zip(sorted({r["d"] for r in cont}), ("-", "--")):
        for name, (col, mk) in style.items():
            mine = [r for r in cont if r["d"] == d and r["searcher"] == name]
            if mine:
                ax.plot(
                    [r["user_gamma"] for r in mine],
                    [100 * r["lost"] for r in mine],
                    color=col,
                    marker=mk,
                    ls=ls,
                    label=f"{name}, d = {d}",
                )
    ax.set_xscale("log")
    ax.set_title(f"continuous: runs lost (error > {LOST_ERROR}), %")
    ax.set_xlabel("the user's gamma")
    ax.set_xticks(USER_GAMMAS, [f"{g:g}" for g in USER_GAMMAS])
    ax.legend(fontsize=8)
    ax = axes[3]
    db = [r for r in rows if r["family"] == "database"]
    for name, (col, mk) in style.items():
        mine = [r for r in db if r["searcher"] == name]
        ax.errorbar(
            [r["user_gamma"] for r in mine],
            [r["mean_queries"] for r in mine],
            yerr=[r["se_queries"] for r in mine],
            color=col,
            marker=mk,
            label=name,
            capsize=3,
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    ax.yaxis.set_major_formatter(ScalarFormatter())
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_yticks([10, 20, 40, 60])
    ax.set_title(f"database (n = 1000, d = {db[0]['d'] if db else 5}): queries to find")
    ax.set_xlabel("the user's gamma")
    ax.set_xticks(USER_GAMMAS, [f"{g:g}" for g in USER_GAMMAS])
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def reproduce_users(
    out_dir: str | os.PathLike[str] = "reproduce-out",
    *,
    quick: bool = False,
    n_jobs: int | None = None,
    random_state: int = 0,
) -> list:
    """Searches that adapt to the person, for users of gamma 1 to 9.

    The continuous search (d = 2 and 5, 200 queries, targets uniform in [-1, 1]^d) with a
    searcher that assumes gamma = 3 against one with gamma="auto" and lapse="auto" (median
    error at the last query with its 95 % band, runs lost), and the database search
    (n = 1000 items uniform in [-1, 1]^5, pairs) told the user's gamma, assuming 3, or "auto"
    (mean queries to find). Writes ``users.csv`` and ``users.png``.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    runs, max_q, targets = (30, 120, 300) if quick else (100, 200, 1000)
    searchers = {
        "fixed 3": {"gamma": 3.0, "lapse": 0.0},
        "auto": {"gamma": "auto", "lapse": "auto"},
    }
    t0 = time.perf_counter()
    rows = []
    for d in (2, 5):
        rows += _continuous_users(d, USER_GAMMAS, searchers, runs, max_q, 0.0, random_state, n_jobs)
    rows += _database_users(USER_GAMMAS, 1000, 5, targets, random_state, n_jobs)
    elapsed = time.perf_counter() - t0
    keys = sorted({k for r in rows for k in r})
    with open(out / "users.csv", "w") as f:
        f.write(",".join(keys) + "\n")
        for r in rows:
            f.write(",".join(str(r.get(k, "")) for k in keys) + "\n")
    png = _plot_users(rows, out / "users.png")
    print(f"\nSearches that adapt to the person ({elapsed:.0f} s)")
    print(f"continuous search, {runs} runs, {max_q} queries: median error (runs lost)")
    head = "".join(f"{g:>19g}" for g in USER_GAMMAS)
    for d in (2, 5):
        print(f"d = {d}, user gamma {head}")
        for name in searchers:
            mine = {
                r["user_gamma"]: r
                for r in rows
                if r.get("d") == d and r["family"] == "continuous" and r["searcher"] == name
            }
            cells = "".join(
                f"{mine[g]['median_error']:>12.1e} ({100 * mine[g]['lost']:3.0f}%)"
                for g in USER_GAMMAS
            )
            print(f"  {name:<17}{cells}")
    print(f"database search, {targets} targets: mean queries to find")
    print(f"  user gamma     {''.join(f'{g:>9g}' for g in USER_GAMMAS)}")
    for name in ("told", "fixed 3", "auto"):
        mine = {
            r["user_gamma"]: r for r in rows if r["family"] == "database" and r["searcher"] == name
        }
        cells = "".join(f"{mine[g]['mean_queries']:9.2f}" for g in USER_GAMMAS)
        print(f"  {name:<15}{cells}")
    print(f"\nwrote {out / 'users.csv'}" + (f", {png}" if png else ""))
    return rows
