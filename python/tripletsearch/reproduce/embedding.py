"""Figure 5 and the 1-D alien eggs (``reproduce embedding``).

Musical Artists: cross-validated accuracy per model and dimension.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .. import datasets
from ..embedding import Embedding
from ..model_selection import grid_search_cv
from ._plots import pyplot

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


def _plot_figure5(best_rows, path, title, cv):
    plt = pyplot()
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
    from ..model_selection import GridResult

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
