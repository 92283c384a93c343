"""Reproductions of the paper's experiments (``python -m tripletsearch reproduce <what>``).

Each function writes a CSV and a PNG into ``out_dir``, prints a table and returns the
numbers it printed.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from . import datasets
from .embedding import Embedding
from .model_selection import grid_search_cv

__all__ = [
    "reproduce_embedding",
    "reproduce_discrete",
    "reproduce_continuous",
    "reproduce_users",
    "reproduce_theory",
    "reproduce_collect",
    "spearman",
    "PAPER_FIGURE5_MUSIC",
]

# Best 10-fold accuracies on Musical Artists (the paper's Figure 5 and appendix).
PAPER_FIGURE5_MUSIC = {"t-ste": 0.860, "ckl": 0.839, "probit": 0.856, "gamma-ckl": 0.865}

PAPER_DIMS = (2, 5, 10, 15, 20, 30, 40, 50, 80, 90)

# Per model, the settings swept at every dimension (a focused version of the paper's
# sweep; the optimizer is full-batch L-BFGS, so lr and batch size do not apply).
FIGURE5_GRID = {
    "gamma-ckl": {"gamma": [3.0, 5.0, 7.0]},
    "t-ste": {"l2": [0.0, 0.01]},
    "ckl": {"l2": [0.0, 0.01]},
    "probit": {"sigma": [0.1], "l2": [0.4, 1.0]},
}


def spearman(a: Any, b: Any) -> float:
    """Spearman rank correlation (average ranks for ties)."""

    def ranks(x):
        x = np.asarray(x, dtype=float)
        order = np.argsort(x, kind="mergesort")
        r = np.empty(len(x))
        r[order] = np.arange(len(x), dtype=float)
        # average the ranks of ties
        _, inv, counts = np.unique(x, return_inverse=True, return_counts=True)
        sums = np.bincount(inv, weights=r)
        return sums[inv] / counts[inv]

    ra, rb = ranks(a), ranks(b)
    return float(np.corrcoef(ra, rb)[0, 1])


def _pyplot() -> Any:
    """matplotlib.pyplot on the Agg backend, or None (with a note) when not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover
        print("matplotlib is not installed: no plot (pip install matplotlib)")
        return None
    return plt


def _plot_figure5(best_rows, path, title, cv):
    plt = _pyplot()
    if plt is None:
        return None
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for model in FIGURE5_GRID:
        rows = sorted((r for r in best_rows if r["model"] == model), key=lambda r: r["dim"])
        if not rows:
            continue
        d = [r["dim"] for r in rows]
        acc = np.array([r["accuracy"] for r in rows])
        se = np.array([r["accuracy_se"] for r in rows])
        line = ax.plot(d, 100 * acc, marker="o", label=model)[0]
        ax.fill_between(d, 100 * (acc - se), 100 * (acc + se), color=line.get_color(), alpha=0.2)
        if model in PAPER_FIGURE5_MUSIC:
            ax.axhline(100 * PAPER_FIGURE5_MUSIC[model], color=line.get_color(), ls=":", lw=1)
    ax.set_xscale("log")
    ax.set_xticks(sorted({r["dim"] for r in best_rows}))
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("embedding dimension d")
    ax.set_ylabel(f"{cv}-fold held-out accuracy (%)")
    ax.set_title(title)
    ax.legend(title="dotted: paper's best", fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return path


def _print_figure5(
    best: dict[str, dict[str, Any]],
    best_per_d: list[dict[str, Any]],
    param_names: list[str],
    dims: Sequence[int],
    cv: int,
    n_settings: int,
    elapsed: float,
) -> None:
    print(
        f"\nFigure 5, Musical Artists: best {cv}-fold accuracy per model "
        f"({n_settings} settings, {elapsed:.0f} s)"
    )
    print(f"{'model':<10} {'ours':>14} {'paper':>7} {'diff':>6}   best setting")
    for m, r in best.items():
        setting = ", ".join(f"{k}={r[k]}" for k in param_names if k != "model" and r[k] is not None)
        paper = PAPER_FIGURE5_MUSIC[m]
        print(
            f"{m:<10} {100 * r['accuracy']:6.2f} +- {100 * r['accuracy_se']:4.2f} "
            f"{100 * paper:7.1f} {100 * (r['accuracy'] - paper):+6.2f}   {setting}"
        )
    print("\nbest accuracy (%) per dimension:")
    print(f"{'d':>4} " + " ".join(f"{m:>10}" for m in FIGURE5_GRID))
    for d in dims:
        cells = []
        for m in FIGURE5_GRID:
            r = next(r for r in best_per_d if r["model"] == m and r["dim"] == d)
            cells.append(f"{100 * r['accuracy']:10.2f}")
        print(f"{d:>4} " + " ".join(cells))


def _alien_eggs_1d(out: Path) -> list:
    """1-D gamma-CKL embeddings of the alien eggs vs their ground truth (alien_eggs_1d.csv)."""
    eggs = []
    for n in (300, 30):
        ds = datasets.load_alien_eggs(n)
        emb = Embedding("gamma-ckl", dim=1, gamma=3.0, random_state=0).fit(ds.triplets)
        rho = spearman(emb.embedding_[:, 0], ds.truth)
        eggs.append({"n_items": n, "triplets": len(ds.triplets), "spearman": abs(rho)})
    with open(out / "alien_eggs_1d.csv", "w") as f:
        f.write("n_items,triplets,abs_spearman\n")
        for e in eggs:
            f.write(f"{e['n_items']},{e['triplets']},{e['spearman']:.4f}\n")
    print("\nAlien eggs, 1-D gamma-CKL embedding (gamma = 3) vs the 1-D ground truth:")
    for e in eggs:
        print(
            f"  n = {e['n_items']:3d} ({e['triplets']:,} triplets): |Spearman rho| = "
            f"{e['spearman']:.3f}"
        )
    return eggs


def reproduce_embedding(
    out_dir: str | os.PathLike[str] = "reproduce-out",
    *,
    quick: bool = False,
    n_jobs: int | None = None,
    verbose: bool = True,
    client: Any = None,
) -> dict:
    """Figure 5 on Musical Artists, and 1-D gamma-CKL embeddings of the alien-eggs sets.

    Figure 5: 10-fold CV accuracy per model and dimension, best setting per (model, d). The
    alien-eggs embeddings are compared against their ground truth.

    Parameters
    ----------
    out_dir : path
        Receives ``figure5_music.csv`` (every setting), ``figure5_music_best.csv``,
        ``figure5_music.png`` and ``alien_eggs_1d.csv``.
    quick : bool
        Dimensions 2, 10, 50 and 5 folds (about ten times faster).
    n_jobs : int or None
        Parallel fits.
    verbose : bool
        A progress bar.
    client : dask.distributed.Client, optional
        Run the fits on this Dask cluster (the same numbers as a local run).

    Returns
    -------
    dict
        ``best`` (model -> best row), ``best_per_d`` (rows), ``alien_eggs`` (rows).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    data = datasets.load_music()
    dims = (2, 10, 50) if quick else PAPER_DIMS
    cv = 5 if quick else 10
    grid = [
        {"model": [model], "dim": list(dims), **{k: list(v) for k, v in g.items()}}
        for model, g in FIGURE5_GRID.items()
    ]
    t0 = time.perf_counter()
    result = grid_search_cv(
        Embedding(random_state=0),
        grid,
        data.triplets,
        cv=cv,
        n_items=data.n_items,
        random_state=0,
        n_jobs=n_jobs,
        client=client,
        verbose=verbose,
    )
    elapsed = time.perf_counter() - t0
    result.to_csv(out / "figure5_music.csv")
    best_per_d = result.best("accuracy", group_by=("model", "dim"))
    from .model_selection import GridResult

    GridResult(best_per_d, result.param_names).to_csv(out / "figure5_music_best.csv")
    best = {
        m: max((r for r in best_per_d if r["model"] == m), key=lambda r: r["accuracy"])
        for m in FIGURE5_GRID
    }
    png = _plot_figure5(
        best_per_d,
        out / "figure5_music.png",
        f"Musical Artists ({len(data.triplets):,} triplets, n = {data.n_items}), {cv}-fold CV",
        cv,
    )

    _print_figure5(best, best_per_d, result.param_names, dims, cv, len(result.rows), elapsed)
    eggs = _alien_eggs_1d(out)
    print(
        f"\nwrote {out / 'figure5_music.csv'}, {out / 'figure5_music_best.csv'}, "
        f"{out / 'alien_eggs_1d.csv'}" + (f", {png}" if png else "")
    )
    return {"best": best, "best_per_d": best_per_d, "alien_eggs": eggs, "elapsed": elapsed}


# ---------------------------------------------------------------------- database search

PAPER_STUDY = {"gamma-ckl": (18.83, 1.257), "gauss": (22.08, 1.658)}  # humans, 4-item queries


def _standardize(X):
    """Center, then scale to the spread of the uniform cube [-1, 1]^d.

    The mean per-coordinate standard deviation becomes that of the cube (1/sqrt(3)):
    GaussSearch's sigma = 0.1 then means the same.
    """
    X = X - X.mean(axis=0)
    return X * ((1.0 / math.sqrt(3.0)) / X.std(axis=0).mean())


def _plot_discrete(results, path, max_queries):
    plt = _pyplot()
    if plt is None:
        return None
    names = sorted({r["embedding"] for r in results})
    fig, axes = plt.subplots(1, len(names), figsize=(5.2 * len(names), 4.0), sharey=True)
    axes = np.atleast_1d(axes)
    styles = {"gamma-ckl": "-", "gauss": "--", "random": ":"}
    for ax, name in zip(axes, names):
        for r in (r for r in results if r["embedding"] == name):
            q = np.sort(r["n_queries"][r["found"]])
            frac = np.arange(1, len(q) + 1) / len(r["n_queries"])
            ax.step(
                q,
                frac,
                where="post",
                ls=styles[r["method"]],
                color="C0" if r["n_choices"] == 2 else "C3",
                label=f"{r['method']}, {r['n_choices']} shown",
            )
        ax.set_xscale("log")
        ax.set_xlim(1, max_queries)
        ax.set_xlabel("queries until the target is shown")
        ax.set_title(name, fontsize=10)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("fraction of searches done (CDF)")
    axes[-1].legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return path


def _study(
    name: str,
    X: np.ndarray,
    targets: np.ndarray,
    max_queries: int,
    random_state: Any,
    n_jobs: int | None,
    client: Any = None,
) -> list:
    """One embedding of the study: every method, pairs and 4-item queries."""
    from .discrete import simulate_discrete

    results = []
    for k in (2, 4):
        for method in ("gamma-ckl", "gauss", "random"):
            sim = simulate_discrete(
                X,
                method=method,
                n_choices=k,
                gamma=3.0,
                r=2.0,
                sigma=0.1,
                targets=targets,
                max_queries=max_queries,
                random_state=random_state,
                n_jobs=n_jobs,
                client=client,
            )
            results.append(
                {
                    "embedding": name,
                    "method": method,
                    "n_choices": k,
                    "n_queries": sim.n_queries,
                    "found": sim.found,
                    "mean": sim.mean,
                    "stderr": sim.stderr,
                    "median": sim.median,
                    "found_rate": float(sim.found.mean()),
                }
            )
    return results


def _write_discrete_csv(results: list[dict[str, Any]], path: Path) -> None:
    with open(path, "w") as f:
        f.write("embedding,method,n_choices,targets,mean,stderr,median,found_rate\n")
        for r in results:
            f.write(
                f'"{r["embedding"]}",{r["method"]},{r["n_choices"]},{len(r["n_queries"])},'
                f"{r['mean']:.3f},{r['stderr']:.3f},{r['median']:g},{r['found_rate']:.4f}\n"
            )


def _print_discrete(
    results: list[dict[str, Any]], names: list[str], max_queries: int, elapsed: float
) -> None:
    print(f"\nDatabase search in simulation (gamma = 3, r = 2, sigma = 0.1; {elapsed:.1f} s)")
    print(f"queries until the target is shown: mean +- s.e. (median), found within {max_queries}")
    for name in names:
        print(f"\n  {name}")
        print(f"  {'method':<10} {'pairs':>24} {'4 shown':>24}")
        for method in ("gamma-ckl", "gauss", "random"):
            cells = []
            for k in (2, 4):
                r = next(
                    r
                    for r in results
                    if r["embedding"] == name and r["method"] == method and r["n_choices"] == k
                )
                cells.append(
                    f"{r['mean']:6.2f} +- {r['stderr']:4.2f} ({r['median']:g}) "
                    f"{100 * r['found_rate']:3.0f}%"
                )
            print(f"  {method:<10} {cells[0]:>24} {cells[1]:>24}")
    print(
        "\n  the paper's humans (n = 513 actors, 4 shown): gamma-CKLSearch "
        f"{PAPER_STUDY['gamma-ckl'][0]} +- {PAPER_STUDY['gamma-ckl'][1]}, GaussSearch "
        f"{PAPER_STUDY['gauss'][0]} +- {PAPER_STUDY['gauss'][1]}"
    )


def reproduce_discrete(
    out_dir: str | os.PathLike[str] = "reproduce-out",
    *,
    quick: bool = False,
    n_jobs: int | None = None,
    random_state: Any = 0,
    client: Any = None,
) -> list:
    """The user study in simulation: gamma-CKLSearch vs GaussSearch vs random.

    n = 513 synthetic items uniform in [-1, 1]^5, and the 412 Musical Artists embedded in
    d = 5 by gamma-CKL from their human triplets; the paper's settings gamma = 3, r = 2,
    sigma = 0.1; simulated users answer by gamma-CKL (gamma = 3) on the same embedding;
    pairs and 4-item queries; every item once as the target (quick: 150 targets).
    Writes ``discrete_study.csv`` and ``discrete_study.png`` (CDF of queries-to-find).
    """
    from .datasets import load_music

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(random_state)
    synth = rng.uniform(-1.0, 1.0, size=(513, 5))
    music = load_music()
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        emb = Embedding("gamma-ckl", dim=5, gamma=3.0, random_state=0).fit(music.triplets)
    used = np.unique(music.triplets)
    learned = _standardize(emb.embedding_[used])
    embeddings = {
        "synthetic, n = 513, uniform in [-1, 1]^5": synth,
        f"Musical Artists, n = {len(used)}, learned gamma-CKL d = 5": learned,
    }
    max_queries = 300
    results = []
    t0 = time.perf_counter()
    for name, X in embeddings.items():
        targets = rng.choice(len(X), size=150, replace=False) if quick else np.arange(len(X))
        results += _study(name, X, targets, max_queries, random_state, n_jobs, client)
    elapsed = time.perf_counter() - t0
    _write_discrete_csv(results, out / "discrete_study.csv")
    png = _plot_discrete(results, out / "discrete_study.png", max_queries)
    _print_discrete(results, list(embeddings), max_queries, elapsed)
    print(f"\nwrote {out / 'discrete_study.csv'}" + (f", {png}" if png else ""))
    return results


# ---------------------------------------------------------------------- continuous search

FIGURE4_CONSTELLATIONS = ((3.0, 1), (3.0, 2), (5.0, 2), (3.0, 3), (6.0, 3), (10.0, 5))


def _median_ci(values, level=0.95):
    """Distribution-free confidence interval of the median.

    Order statistics k and n + 1 - k with k the largest index such that
    P(Binomial(n, 1/2) < k) <= (1 - level)/2.
    """
    from math import comb

    v = np.sort(values)
    n = len(v)
    cdf, k = 0.0, 0
    while k < n:
        p = comb(n, k) / 2.0**n
        if cdf + p > (1 - level) / 2:
            break
        cdf += p
        k += 1
    k = max(k, 1)
    return v[k - 1], v[n - k]


def _figure4_row(gamma: float, d: int, errors: np.ndarray, max_q: int) -> dict:
    """Median distance^d with its 95% band and the fitted rate of one constellation."""
    dist_d = errors**d
    med = np.median(dist_d, axis=0)
    band = np.array([_median_ci(dist_d[:, m]) for m in range(max_q + 1)])
    m = np.arange(max_q + 1)
    fit = (m >= 10) & (med > 1e-12**d)  # before the floating-point floor
    slope = np.polyfit(m[fit], np.log(med[fit]), 1)[0]  # log distance^d per query
    per_halving = math.log(2.0) / (-slope / d) if slope < 0 else math.inf
    return {
        "gamma": gamma,
        "d": d,
        "median": med,
        "band": band,
        "slope": slope,
        "per_halving": per_halving,
        "final_median_error": float(np.median(errors[:, -1])),
    }


def _plot_figure4(rows, path, max_q, method, runs):
    plt = _pyplot()
    if plt is None:
        return None
    fig, ax = plt.subplots(figsize=(7.0, 4.6))
    m = np.arange(max_q + 1)
    for k, r in enumerate(rows):
        label = (
            f"gamma={r['gamma']:g}, d={r['d']}: {r['per_halving']:.1f} queries per halving "
            f"(bound {r['d']})"
        )
        # distances at the floating-point floor (exactly 0) are not drawn
        ax.plot(m, np.where(r["median"] > 0, r["median"], np.nan), color=f"C{k}", label=label)
        lo_band = np.where(r["band"][:, 0] > 0, r["band"][:, 0], np.nan)
        hi_band = np.where(r["band"][:, 1] > 0, r["band"][:, 1], np.nan)
        ax.fill_between(m, lo_band, hi_band, color=f"C{k}", alpha=0.2)
    ax.set_yscale("log")
    ax.set_xlabel("queries")
    ax.set_ylabel("distance to target ^ d (median, 95% CI)")
    ax.set_title(f"Continuous search ({method}), {runs} runs per constellation")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return path


def reproduce_continuous(
    out_dir: str | os.PathLike[str] = "reproduce-out",
    *,
    quick: bool = False,
    method: str = "global",
    n_jobs: int | None = None,
    random_state: Any = 0,
    client: Any = None,
) -> list:
    """Figure 4: the distance^d of the point estimate to the target vs queries.

    Median and 95% confidence band over 50 runs per (gamma, d), targets uniform in
    [-1, 1]^d, simulated gamma-CKL users; the fitted exponential rate and the queries per
    halving of the distance next to the noiseless bound (d queries: d bits per halving).
    Writes ``figure4_continuous.csv`` and ``figure4_continuous.png``.
    """
    from .continuous import simulate_continuous

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    runs = 20 if quick else 50
    max_q = 120 if quick else 200
    rows = []
    t0 = time.perf_counter()
    for gamma, d in FIGURE4_CONSTELLATIONS:
        sim = simulate_continuous(
            d,
            gamma,
            n_runs=runs,
            max_queries=max_q,
            method=method,
            random_state=random_state,
            n_jobs=n_jobs,
            client=client,
        )
        assert sim.errors is not None  # recorded: max_queries is given
        rows.append(_figure4_row(gamma, d, sim.errors, max_q))
    elapsed = time.perf_counter() - t0
    with open(out / "figure4_continuous.csv", "w") as f:
        f.write("gamma,d,query,median_distance_pow_d,ci_low,ci_high\n")
        for r in rows:
            for q in range(max_q + 1):
                f.write(
                    f"{r['gamma']},{r['d']},{q},{r['median'][q]:.6e},{r['band'][q, 0]:.6e},"
                    f"{r['band'][q, 1]:.6e}\n"
                )
    png = _plot_figure4(rows, out / "figure4_continuous.png", max_q, method, runs)
    print(
        f"\nFigure 4, continuous search ({method}, {runs} runs, {elapsed:.0f} s): "
        "exponential convergence"
    )
    print(
        f"{'gamma':>6} {'d':>3} {'rate/query':>11} {'queries per halving':>20} "
        f"{'noiseless bound':>16} {'median error at ' + str(max_q):>22}"
    )
    for r in rows:
        print(
            f"{r['gamma']:6g} {r['d']:3d} {r['slope']:11.3f} {r['per_halving']:20.2f} "
            f"{r['d']:16d} {r['final_median_error']:22.2e}"
        )
    print(f"\nwrote {out / 'figure4_continuous.csv'}" + (f", {png}" if png else ""))
    return rows


# ---------------------------------------------------------------------- searches that adapt

USER_GAMMAS = (1.0, 1.5, 2.0, 3.0, 4.5, 6.0, 9.0)
LOST_ERROR = 0.1  # a continuous run is lost when its error at the last query exceeds this


def _continuous_users(d, gammas, searchers, runs, max_q, lapse, seed, n_jobs):
    from .continuous import simulate_continuous
    from .oracles import GammaCKL

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
            lo, hi = _median_ci(e)
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
    from .discrete import simulate_discrete
    from .oracles import GammaCKL

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
    plt = _pyplot()
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


# ---------------------------------------------------------------------- theory (Appendix)

THEORY_REFERENCES = ((10, 5.0), (20, 4.0))  # the appendix's (d_hat, gamma_hat)


def _ball(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    """N points uniform in the unit d-ball: a Gaussian direction, radius U^(1/d)."""
    z = rng.normal(size=(n, d))
    z /= np.linalg.norm(z, axis=1, keepdims=True)
    return z * rng.uniform(size=(n, 1)) ** (1.0 / d)


def _oriented_triplets(rng: np.random.Generator, X: np.ndarray, m: int, centre: bool) -> np.ndarray:
    """M random triplets as (head, closer, farther): an answer in the row's order is correct.

    ``centre``: the head is the last row of X (the ball's centre, the theorem's target) and
    the two others are distinct items among the rest; else three distinct items.
    """
    n = len(X) - 1 if centre else len(X)
    T = np.empty((m, 3), dtype=np.int64)
    if centre:
        T[:, 0] = n
        T[:, 1] = rng.integers(0, n, m)
        T[:, 2] = (T[:, 1] + rng.integers(1, n, m)) % n
    else:
        T[:, 0] = rng.integers(0, n, m)
        T[:, 1] = (T[:, 0] + rng.integers(1, n, m)) % n
        third = rng.integers(0, n - 2, m)  # among the n - 2 others
        lo, hi = np.minimum(T[:, 0], T[:, 1]), np.maximum(T[:, 0], T[:, 1])
        third += third >= lo
        third += third >= hi
        T[:, 2] = third
    d1 = ((X[T[:, 1]] - X[T[:, 0]]) ** 2).sum(axis=1)
    d2 = ((X[T[:, 2]] - X[T[:, 0]]) ** 2).sum(axis=1)
    swap = d2 < d1
    T[swap, 1], T[swap, 2] = T[swap, 2], T[swap, 1].copy()
    return T


def _empirical_p(X: np.ndarray, T: np.ndarray, gamma: float, n_jobs: int | None) -> float:
    """The average probability that gamma-CKL answers the triplets of T correctly."""
    from .oracles import GammaCKL

    return float(np.mean(GammaCKL(gamma).prob(X, T, n_jobs=n_jobs)))


THEORY_SETTINGS = {
    "centre": "target at the centre (the theorem's setting)",
    "random": "target a random item",
}


def reproduce_theory(
    out_dir: str | os.PathLike[str] = "reproduce-out",
    *,
    quick: bool = False,
    n_jobs: int | None = None,
    random_state: int = 0,
    n_items: int = 1000,
    n_triplets: int = 10_000,
) -> list:
    """The appendix's gamma-d experiment (the figure beside Theorem 2.1).

    For each reference (d_hat, gamma_hat) in {(10, 5), (20, 4)}: ``n_items`` points
    uniform in the unit d_hat-ball, ``n_triplets`` random queries, and p_hat, the average
    probability that gamma-CKL answers them correctly; then, for each d >= d_hat, new
    points and queries in d dimensions and the gamma of a grid (step 0.05) whose average
    is closest to p_hat (the paper's procedure). Done in the theorem's setting (the target
    at the ball's centre) and with the target a random item. The figure draws these gammas
    beside the exact line gamma = k(p) d of Theorem 2.1 through the reference (k =
    gamma_hat / d_hat: p_Q depends on gamma / d only). Writes ``theory.csv`` and
    ``theory.png``.
    """
    from . import theory

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(random_state)
    step = 10 if quick else 5
    grid_step = 0.05
    t0 = time.perf_counter()
    rows: list[dict[str, Any]] = []

    def points(d: int, centre: bool) -> np.ndarray:  # the items, then the centre (a target)
        X = _ball(rng, n_items, d)
        return np.vstack([X, np.zeros((1, d))]) if centre else X

    for d_hat, g_hat in THEORY_REFERENCES:
        k = g_hat / d_hat  # the exact line: p_Q(k d, d) = p_Q(gamma_hat, d_hat)
        for setting in THEORY_SETTINGS:
            centre = setting == "centre"
            X = points(d_hat, centre)
            p_hat = _empirical_p(X, _oriented_triplets(rng, X, n_triplets, centre), g_hat, n_jobs)
            for d in range(d_hat, 4 * d_hat + 1, step):
                X = points(d, centre)
                T = _oriented_triplets(rng, X, n_triplets, centre)
                grid = np.arange(grid_step, 3.0 * k * d + grid_step, grid_step)
                gaps = np.array([abs(_empirical_p(X, T, g, n_jobs) - p_hat) for g in grid])
                best = int(np.argmin(gaps))
                rows.append(
                    {
                        "setting": setting,
                        "d_hat": d_hat,
                        "gamma_hat": g_hat,
                        "p_hat": p_hat,
                        "p_exact": theory.p_correct(d_hat, g_hat),
                        "d": d,
                        "gamma": float(grid[best]),
                        "gap": float(gaps[best]),
                        "line": k * d,
                    }
                )
    elapsed = time.perf_counter() - t0
    keys = list(rows[0])
    with open(out / "theory.csv", "w") as f:
        f.write(",".join(keys) + "\n")
        for r in rows:
            f.write(",".join(r[k] if isinstance(r[k], str) else f"{r[k]:.6g}" for k in keys))
            f.write("\n")
    png = _plot_theory(rows, out / "theory.png", n_items, n_triplets)
    print(f"\nThe gamma-d law (Theorem 2.1; N = {n_items}, |T| = {n_triplets}, {elapsed:.0f} s)")
    for d_hat, g_hat in THEORY_REFERENCES:
        print(
            f"reference (d, gamma) = ({d_hat}, {g_hat:g}); exact line gamma = {g_hat / d_hat:g} d"
        )
        for setting, label in THEORY_SETTINGS.items():
            mine = [r for r in rows if r["d_hat"] == d_hat and r["setting"] == setting]
            slope, icpt = np.polyfit([r["d"] for r in mine], [r["gamma"] for r in mine], 1)
            print(
                f"  {label}: p_hat = {mine[0]['p_hat']:.4f}, fit gamma = {slope:.3f} d {icpt:+.2f}"
            )
            print("    d     " + "".join(f"{r['d']:>7d}" for r in mine))
            print("    gamma " + "".join(f"{r['gamma']:>7.2f}" for r in mine))
        print(f"  (the exact p_Q at the reference: {mine[0]['p_exact']:.4f})")
    print(f"\nwrote {out / 'theory.csv'}" + (f", {png}" if png else ""))
    return rows


def _plot_theory(
    rows: list[dict[str, Any]], path: Path, n_items: int, n_triplets: int
) -> Path | None:
    plt = _pyplot()
    if plt is None:
        return None
    fig, axes = plt.subplots(1, len(THEORY_REFERENCES), figsize=(11, 4.4))
    for ax, (d_hat, g_hat) in zip(axes, THEORY_REFERENCES):
        mine = [r for r in rows if r["d_hat"] == d_hat]
        d = sorted({r["d"] for r in mine})
        ax.plot(d, [g_hat / d_hat * x for x in d], color="0.3", lw=1.5, label="k(p) d, Theorem 2.1")
        for (setting, label), (col, mk) in zip(THEORY_SETTINGS.items(), (("C0", "o"), ("C1", "s"))):
            pts = [r for r in mine if r["setting"] == setting]
            ax.plot([r["d"] for r in pts], [r["gamma"] for r in pts], mk, color=col, label=label)
        ax.set_title(f"reference d = {d_hat}, gamma = {g_hat:g}")
        ax.set_xlabel("d")
        ax.set_ylabel("gamma of the same accuracy (grid search)")
        ax.legend(fontsize=8, title=f"N = {n_items}, |T| = {n_triplets:,}", title_fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


# ---------------------------------------------------------------------- collecting triplets

COLLECT_METHODS = ("random", "arr", "active")


def collect_settings(quick: bool) -> dict[str, Any]:
    """Sizes of ``reproduce collect`` (``quick``: a few minutes on 2 cores).

    ``runs``, ``budget``, ``test_size``: the simulated colours; ``reference``: the budget
    whose random accuracy the others must reach; ``replay_runs``, ``replay_budget``: the
    NEXT replays; ``fits``: fitter seeds per budget of the as-collected curves;
    ``next_grid``, ``salmon_grid``: their budgets.
    """
    if quick:
        return {
            "runs": 3, "budget": 5000, "test_size": 2000, "reference": 5000,
            "replay_runs": 3, "replay_budget": 2000, "fits": 1,
            "next_grid": [500, 1000, 2000, 3900], "salmon_grid": [500, 1000, 2000, 4000, 7400],
        }  # fmt: skip
    return {
        "runs": 10, "budget": 10_000, "test_size": 5000, "reference": 5000,
        "replay_runs": 10, "replay_budget": 4000, "fits": 3,
        "next_grid": [500, 700, 1000, 1500, 2000, 2500, 3000, 3500, 3900],
        "salmon_grid": [500, 700, 1000, 1500, 2000, 2500, 3500, 5000, 7000, 7400],
    }  # fmt: skip


def _collect_simulated(
    settings: dict[str, Any], random_state: Any, n_jobs: int | None, client: Any, verbose: bool
) -> dict[str, Any]:
    """The xkcd colours in CIELAB, people answering by gamma-CKL (gamma 3, 5 % lapses)."""
    from .collect import simulate_collection
    from .colour import load_xkcd_colours
    from .oracles import GammaCKL

    X = load_xkcd_colours().lab
    return {
        method: simulate_collection(
            X,
            oracle=GammaCKL(3.0),
            oracle_lapse=0.05,
            method=method,
            budget=settings["budget"],
            n_runs=settings["runs"],
            test_size=settings["test_size"],
            random_state=random_state,
            client=client,
            n_jobs=n_jobs,
            verbose=verbose,
        )
        for method in COLLECT_METHODS
    }


def _collect_replayed(
    settings: dict[str, Any], random_state: Any, n_jobs: int | None, verbose: bool
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """NEXT's 30 eggs replayed through each method and as collected; salmon's 300."""
    from .collect._replay import as_collected, next_eggs, replay_collection, salmon_eggs

    eggs = next_eggs()
    replayed = {
        m: replay_collection(
            eggs,
            method=m,
            budget=settings["replay_budget"],
            n_runs=settings["replay_runs"],
            random_state=random_state,
            n_jobs=n_jobs,
            verbose=verbose,
        )
        for m in COLLECT_METHODS
    }
    grid = [b for b in (500, 1000, 1500, 2000, 2500, 3000, 3500) if b < 3900] + [3900]
    kw = {"n_runs": settings["fits"], "random_state": random_state, "n_jobs": n_jobs}
    next_labels = ("RandomSampling", "CrowdKernel", "STE", "UncertaintySampling")
    collected = {s: as_collected(eggs, s, n_answers=grid, **kw) for s in next_labels}
    salmon = salmon_eggs()
    grid = [500, 1000, 2000, 3000, 4000, 5000, 6000, 7000, 7400]
    salmon_collected = {
        s: as_collected(salmon, s, n_answers=grid, **kw) for s in ("Random", "Uncertainty")
    }
    return replayed, collected, salmon_collected


def _collect_rows(groups: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for data, results in groups.items():
        for method, r in results.items():
            for b, n in enumerate(r.n_answers):
                rows.append(
                    {
                        "data": data,
                        "method": method,
                        "runs": r.n_runs,
                        "n_answers": int(n),
                        "accuracy": r.mean()[b],
                        "accuracy_se": np.nan_to_num(r.stderr())[b],
                        "seconds": r.mean("seconds")[b],
                        "truth_accuracy": r.mean("truth_accuracy")[b],
                        "agreement": r.mean("agreement")[b],
                    }
                )
    return rows


def _plot_collect(groups: dict[str, dict[str, Any]], path: Path) -> Path | None:
    plt = _pyplot()
    if plt is None:
        return None
    fig, axes = plt.subplots(1, 4, figsize=(20, 4.4))
    panels = [
        (axes[0], "colours", "answers", "949 xkcd colours (CIELAB), gamma-CKL people"),
        (axes[1], "colours", "seconds", "the same, against people's time"),
        (axes[2], "NEXT replay", "answers", "NEXT 30 eggs replayed (dashed: as collected)"),
        (axes[3], "salmon as collected", "answers", "salmon 300 eggs, as collected"),
    ]
    for ax, data, against, title in panels:
        for r in groups[data].values():
            r.plot(ax, against=against)
        ax.set_title(title, fontsize=10)
        ax.grid(alpha=0.3)
    for r in groups["NEXT as collected"].values():
        r.plot(axes[2], ls="--", label=f"{r.method} (as collected)")
    for ax in axes:
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _collect_summary(sim: dict[str, Any], reference: int, n_items: int) -> dict[str, Any]:
    """The issue's readings: answers to match random at ``reference``, active vs arr."""
    from .collect import answers_to_match, at_least_as_accurate

    target = sim["random"].accuracy_at(reference)
    out: dict[str, Any] = {"reference": reference, "random_accuracy": target}
    for m in ("arr", "active"):
        out[f"{m}_answers"] = answers_to_match(sim[m], sim["random"], reference)
    budgets, ok = at_least_as_accurate(sim["active"], sim["arr"], start=2 * n_items)
    out["active_vs_arr_from"] = 2 * n_items
    out["active_vs_arr"] = dict(zip(budgets.tolist(), ok.tolist()))
    return out


def _print_collect(
    groups: dict[str, dict[str, Any]], summary: dict[str, Any], timing: list
) -> None:
    from .collect._results import format_table

    for data, results in groups.items():
        print(f"\n{data}: held-out accuracy (%), mean +- s.e.")
        print(format_table(results))
    print("\ncolours: people's seconds, mean +- s.e.")
    print(format_table(groups["colours"], "seconds"))
    ref = summary["reference"]
    print(
        f"\nrandom reaches {100 * summary['random_accuracy']:.2f} % with {ref} answers; "
        f"arr needs {summary['arr_answers']:.0f}, active {summary['active_answers']:.0f} "
        f"(target: active <= {ref // 2})"
    )
    bad = [b for b, ok in summary["active_vs_arr"].items() if not ok]
    print(
        f"active at least as accurate as arr (one s.e.) from {summary['active_vs_arr_from']} "
        f"answers on: {'yes' if not bad else 'no, at ' + str(bad)}"
    )
    print("\nresponse times by sampler (agreement with the truth, median seconds)")
    for r in timing:
        print(
            f"  {r['data']:<8} {r['sampler']:<20} {r['answers']:6d} answers  agree "
            f"{r['agreement']:.3f}  median {r['median_seconds']:.2f} s (model "
            f"{r['model_median_seconds']:.2f} s)"
        )


def reproduce_collect(
    out_dir: str | os.PathLike[str] = "reproduce-out",
    *,
    quick: bool = False,
    n_jobs: int | None = None,
    random_state: Any = 0,
    client: Any = None,
    verbose: bool = True,
    settings: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Collecting triplets: held-out accuracy against answers for random, arr and active.

    On a simulated truth (the 949 xkcd colours in CIELAB, people answering by gamma-CKL
    with gamma 3 and 5 % lapses; also against the people's seconds, from the response-time
    model fitted to NEXT's egg answers) and on real answers (NEXT's 30 eggs replayed
    through each method; what the recorded samplers' answers gave, NEXT's and salmon's 300
    eggs). Writes ``collect.csv`` and ``collect.png``.

    ``settings`` overrides the sizes of :func:`collect_settings` (``quick`` picks them:
    the full run takes about an hour on 2 cores, ``quick`` a few minutes).

    Returns
    -------
    dict
        ``simulated``, ``replayed``, ``collected``, ``salmon`` (method -> CollectionResult),
        ``summary`` (the comparisons) and ``timing`` (response times by sampler).
    """
    from .collect._timing import response_times_by_sampler

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    settings = {**collect_settings(quick), **(settings or {})}
    t0 = time.perf_counter()
    sim = _collect_simulated(settings, random_state, n_jobs, client, verbose)
    replayed, collected, salmon = _collect_replayed(settings, random_state, n_jobs, verbose)
    groups = {
        "colours": sim,
        "NEXT replay": replayed,
        "NEXT as collected": collected,
        "salmon as collected": salmon,
    }
    timing = [
        {"data": f"n = {n}", **row}
        for n in (30, 300)
        for row in response_times_by_sampler(datasets.load_alien_eggs(n))
    ]
    summary = _collect_summary(sim, settings["reference"], 949)
    rows = _collect_rows(groups)
    keys = list(rows[0])
    with open(out / "collect.csv", "w") as f:
        f.write(",".join(keys) + "\n")
        for r in rows:
            f.write(
                ",".join(str(r[k]) if isinstance(r[k], (str, int)) else f"{r[k]:.6g}" for k in keys)
            )
            f.write("\n")
    png = _plot_collect(groups, out / "collect.png")
    print(f"\nCollecting triplets ({time.perf_counter() - t0:.0f} s)")
    _print_collect(groups, summary, timing)
    print(f"\nwrote {out / 'collect.csv'}" + (f", {png}" if png else ""))
    return {
        "simulated": sim,
        "replayed": replayed,
        "collected": collected,
        "salmon": salmon,
        "summary": summary,
        "timing": timing,
    }


def collect_truths(random_state: Any = 0) -> dict[str, np.ndarray]:
    """The simulated truths: the 949 xkcd colours in CIELAB, 300 points in [-1, 1]^5."""
    from .colour import load_xkcd_colours

    rng = np.random.default_rng(random_state)
    return {
        "colours": load_xkcd_colours().lab,
        "300 points, d = 5": rng.uniform(-1.0, 1.0, size=(300, 5)),
    }


def _comparison_checks(results: dict, truth: str, rate: Any, n_items: int, reference: int) -> dict:
    """The issue's targets for one truth and rate.

    Answers to reach random's accuracy at ``reference`` (active: <= 1/2 of them
    synchronously, <= 2/3 at a rate), and active at least as accurate as arr within one
    standard error from twice arr's burn-in (n random answers) on.
    """
    from .collect import answers_to_match, at_least_as_accurate

    random = results[(truth, None, "random")]
    row: dict[str, Any] = {"truth": truth, "rate": rate, "reference": reference}
    row["random_accuracy"] = random.accuracy_at(reference)
    for m in ("arr", "active"):
        if (truth, rate, m) in results:
            row[f"{m}_answers"] = answers_to_match(results[(truth, rate, m)], random, reference)
    if (truth, rate, "active") in results and (truth, rate, "arr") in results:
        budgets, ok = at_least_as_accurate(
            results[(truth, rate, "active")], results[(truth, rate, "arr")], start=2 * n_items
        )
        row["active_vs_arr"] = bool(ok.all())
        row["active_behind_arr_at"] = budgets[~ok].tolist()
    limit = 0.5 if rate is None else 2.0 / 3.0
    row["target_answers"] = limit * reference
    row["active_target"] = bool(row.get("active_answers", np.nan) <= limit * reference)
    return row


def collect_comparison(
    truths: dict[str, np.ndarray],
    *,
    methods: Sequence[str] = COLLECT_METHODS,
    rates: Sequence[float | None] = (None,),
    n_runs: int = 10,
    budget: int = 10_000,
    test_size: int = 5000,
    reference: int = 5000,
    n_answers: Sequence[int] | None = None,
    random_state: Any = 0,
    n_jobs: int | None = None,
    client: Any = None,
    verbose: bool = False,
) -> dict[str, Any]:
    """The issue's comparison of methods, and its targets read off the curves.

    Methods x truths x rates, people answering by gamma-CKL (gamma 3, 5 % lapses).

    ``"random"`` runs once per truth (rate None): it never uses the embedding, so its
    queries and curve do not depend on the rate.

    Returns
    -------
    dict
        ``results`` ((truth, rate, method) -> CollectionResult), ``checks`` (one dict per
        truth and rate, see :func:`_comparison_checks`) and ``table`` (printable text).
    """
    from .collect import simulate_collection
    from .oracles import GammaCKL

    results = {}
    for truth, X in truths.items():
        for rate in rates:
            for method in methods:
                if method == "random" and rate is not None:
                    continue
                results[(truth, rate, method)] = simulate_collection(
                    X,
                    oracle=GammaCKL(3.0),
                    oracle_lapse=0.05,
                    method=method,
                    budget=budget,
                    n_runs=n_runs,
                    test_size=test_size,
                    rate=rate,
                    n_answers=n_answers,
                    random_state=random_state,
                    n_jobs=n_jobs,
                    client=client,
                    verbose=verbose,
                )
    checks = [
        _comparison_checks(results, truth, rate, len(X), reference)
        for truth, X in truths.items()
        for rate in rates
    ]
    return {"results": results, "checks": checks, "table": _comparison_table(results, checks)}


def _comparison_table(results: dict, checks: list[dict[str, Any]]) -> str:
    from .collect._results import format_table

    lines = []
    for c in checks:
        truth, rate = c["truth"], c["rate"]
        label = "synchronous refits" if rate is None else f"{rate:g} answers/s"
        mine = {m: r for (t, q, m), r in results.items() if t == truth and q in (None, rate)}
        mine = {
            m: r for m, r in mine.items() if m == "random" or results.get((truth, rate, m)) is r
        }
        lines += [f"\n{truth}, {label}: held-out accuracy (%), mean +- s.e.", format_table(mine)]
        lines.append(
            f"random at {c['reference']}: {100 * c['random_accuracy']:.2f} %; answers to "
            f"reach it: arr {c.get('arr_answers', np.nan):.0f}, active "
            f"{c.get('active_answers', np.nan):.0f}"
            f" (target <= {c['target_answers']:.0f}: {'met' if c['active_target'] else 'NOT met'})"
        )
        if "active_vs_arr" in c:
            behind = c["active_behind_arr_at"]
            lines.append(
                "active at least as accurate as arr (one s.e.) from twice arr's burn-in on: "
                + ("yes" if c["active_vs_arr"] else f"no, behind at {behind}")
            )
    return "\n".join(lines)
