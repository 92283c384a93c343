"""The user study in simulation: gamma-CKLSearch against GaussSearch.

``reproduce discrete``.
"""

from __future__ import annotations

import math
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from ..embedding import Embedding
from ._plots import pyplot

PAPER_STUDY = {"gamma-ckl": (18.83, 1.257), "gauss": (22.08, 1.658)}  # humans, 4-item queries


def _standardize(X):
    """Center, then scale to the spread of the uniform cube [-1, 1]^d.

    The mean per-coordinate standard deviation becomes that of the cube (1/sqrt(3)):
    GaussSearch's sigma = 0.1 then means the same.
    """
    X = X - X.mean(axis=0)
    return X * ((1.0 / math.sqrt(3.0)) / X.std(axis=0).mean())


def _plot_discrete(results, path, max_queries):
    plt = pyplot()
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
    from ..discrete import simulate_discrete

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
                # each method its own opening, as in the paper (a study's people get "uniform")
                opening="random",
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
    from ..datasets import load_music

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
