"""Collecting triplets: random, arr and active queries, simulated and replayed.

``reproduce collect``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .. import datasets
from ._plots import pyplot

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
    from ..collect import simulate_collection
    from ..colour import load_xkcd_colours
    from ..oracles import GammaCKL

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
    from ..collect import as_collected, next_eggs, replay_collection, salmon_eggs

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
    plt = pyplot()
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
    from ..collect import answers_to_match, at_least_as_accurate

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
    from ..collect import format_table

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
    from ..collect import response_times_by_sampler

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
    from ..colour import load_xkcd_colours

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
    from ..collect import answers_to_match, at_least_as_accurate

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
    from ..collect import simulate_collection
    from ..oracles import GammaCKL

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
    from ..collect import format_table

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
