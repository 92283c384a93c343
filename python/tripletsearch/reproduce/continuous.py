"""Figure 4: the continuous search's exponential convergence (``reproduce continuous``)."""

from __future__ import annotations

import math
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from ._plots import median_ci, pyplot

FIGURE4_CONSTELLATIONS = ((3.0, 1), (3.0, 2), (5.0, 2), (3.0, 3), (6.0, 3), (10.0, 5))


def _figure4_row(gamma: float, d: int, errors: np.ndarray, max_q: int) -> dict:
    """Median distance^d with its 95% band and the fitted rate of one constellation."""
    dist_d = errors**d
    med = np.median(dist_d, axis=0)
    band = np.array([median_ci(dist_d[:, m]) for m in range(max_q + 1)])
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
    plt = pyplot()
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
    from ..continuous import simulate_continuous

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
