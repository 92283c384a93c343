"""The appendix's gamma-d figure beside Theorem 2.1's exact line (``reproduce theory``)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ._plots import pyplot

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
    from ..oracles import GammaCKL

    return float(np.mean(GammaCKL(gamma).prob(X, T, n_jobs=n_jobs)))


def _closest_on_grid(
    f: Callable[[float], float], grid: np.ndarray, target: float
) -> tuple[int, float]:
    """Where on ``grid`` the non-decreasing ``f`` comes closest to ``target``, by bisection.

    The first closest index and its gap: what a scan of every point finds (the paper's
    grid search), from log2 of the grid's points, not all of them. ``f`` is the average
    probability of a correct answer, each term non-decreasing in gamma (and IEEE rounding
    monotone), so ``|f - target|`` falls, then rises: the closest point is the last below
    ``target`` or the first at or above it.
    """
    lo, hi = 0, len(grid)  # the first index with f >= target lies in [lo, hi]
    values: dict[int, float] = {}

    def at(i: int) -> float:
        if i not in values:
            values[i] = f(float(grid[i]))
        return values[i]

    while lo < hi:
        mid = (lo + hi) // 2
        if at(mid) >= target:
            hi = mid
        else:
            lo = mid + 1
    near = [i for i in (lo - 1, lo) if 0 <= i < len(grid)]
    gaps = [abs(at(i) - target) for i in near]
    k = int(np.argmin(gaps))  # (a tie: the first, as a scan's argmin)
    return near[k], gaps[k]


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
    from .. import theory

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
                best, gap = _closest_on_grid(
                    lambda g: _empirical_p(X, T, g, n_jobs),  # noqa: B023 (used at once)
                    grid,
                    p_hat,
                )
                rows.append(
                    {
                        "setting": setting,
                        "d_hat": d_hat,
                        "gamma_hat": g_hat,
                        "p_hat": p_hat,
                        "p_exact": theory.p_correct(d_hat, g_hat),
                        "d": d,
                        "gamma": float(grid[best]),
                        "gap": float(gap),
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
    plt = pyplot()
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
