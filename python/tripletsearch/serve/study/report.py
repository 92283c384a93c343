"""``tripletsearch report``: a study's methods compared, as in the paper's Appendix.

As the Appendix reports its user study (mean +- standard error of the queries to find the
target, per method), with medians, the CDF of queries-to-find, paired per-target
differences, time per answer, and the people's own gamma and lapse rate fitted to their
recorded choices.

A search counts as found when it ended with ``found`` on its target
(:func:`tripletsearch.outcomes.found_target`). Queries (``n_queries``) are the answers that
count (undone ones excluded), the final "this is it" included, as in the paper's count.
The fit of gamma uses the answers that are comparisons
(:func:`tripletsearch.outcomes.is_comparison`).
"""

from __future__ import annotations

import csv
import json
import math
import os
import statistics
from pathlib import Path
from typing import Any

import numpy as np

from ...users import fit_choice_model
from ..catalogue import Catalogue
from ..service.recorded import RecordedSession, found_flags, recorded_sessions
from ..store import Store

# where the people's gamma and lapse rate are searched (fit_choice_model's defaults)
GAMMA_RANGE = (0.05, 60.0)
MAX_LAPSE = 0.5

__all__ = ["study_report", "write_report", "format_report"]


def _mean_se(x: list[float]) -> tuple[float, float]:
    if not x:
        return math.nan, math.nan
    m = float(np.mean(x))
    return m, (float(np.std(x, ddof=1) / math.sqrt(len(x))) if len(x) > 1 else math.nan)


def _search(rec: RecordedSession, found: bool) -> dict[str, Any]:
    """A study search's line of ``searches.csv``."""
    secs = [h["answered_at"] - h["shown_at"] for h in rec.answers]
    row = rec.row
    return {
        "session": row.id,
        "participant": row.participant,
        "slot": row.slot,
        "method": row.params.get("method"),
        "target": row.target,
        "done": row.done,
        "found": found,
        "n_queries": row.n_queries,
        "undos": row.undos,
        "seconds_per_answer": float(np.mean(secs)) if secs else math.nan,
    }


def _method_row(method: str, searches: list[dict[str, Any]]) -> dict[str, Any]:
    """A method's line of the table: searches, found, queries to find, time per answer."""
    mine = [s for s in searches if s["method"] == method]
    q = [s["n_queries"] for s in mine if s["found"]]
    mean, se = _mean_se(q)
    spa = [s["seconds_per_answer"] for s in mine if not math.isnan(s["seconds_per_answer"])]
    return {
        "method": method,
        "searches": len(mine),
        "finished": sum(s["done"] for s in mine),
        "found": len(q),
        "mean_queries": mean,
        "se_queries": se,
        "median_queries": float(statistics.median(q)) if q else math.nan,
        "seconds_per_answer_median": float(statistics.median(spa)) if spa else math.nan,
        "seconds_per_answer_mean": float(np.mean(spa)) if spa else math.nan,
    }


def _paired(searches: list[dict[str, Any]], a: str, b: str) -> dict[str, Any]:
    """Methods ``a`` and ``b`` per target: the mean difference of their queries to find."""
    per: dict[int, dict[str, list[int]]] = {}
    for s in searches:
        if s["found"] and s["method"] in (a, b):
            per.setdefault(s["target"], {}).setdefault(s["method"], []).append(s["n_queries"])
    diffs = {t: float(np.mean(v[a]) - np.mean(v[b])) for t, v in per.items() if a in v and b in v}
    mean, se = _mean_se(list(diffs.values()))
    return {
        "first": a,
        "second": b,
        "targets": len(diffs),
        "mean_difference": mean,
        "se_difference": se,
        "first_fewer": sum(d < 0 for d in diffs.values()),
        "second_fewer": sum(d > 0 for d in diffs.values()),
        "per_target": {str(t): d for t, d in sorted(diffs.items())},
    }


def _people(recorded: list[RecordedSession], catalogue: Catalogue) -> dict[str, Any] | None:
    """The people's gamma and lapse rate, fitted to their choices (comparisons only)."""
    heads, shown, picked = [], [], []
    for rec in recorded:
        for c in rec.choices:
            heads.append(rec.row.target)
            shown.append(c.shown)
            picked.append(c.item)
    if not heads:
        return None
    fit = fit_choice_model(
        catalogue.embedding,
        heads,
        np.array(shown),
        picked,
        gamma_range=GAMMA_RANGE,
        max_lapse=MAX_LAPSE,
    )
    return {
        "gamma": fit.gamma,
        "gamma_interval": list(fit.gamma_interval),
        "gamma_range": list(GAMMA_RANGE),
        "lapse": fit.lapse,
        "lapse_interval": list(fit.lapse_interval),
        "max_lapse": MAX_LAPSE,
        "choices": fit.n_answers,
        "level": fit.level,
    }


def _estimate(
    name: str, value: float, interval: list[float], bounds: list[float], digits: int
) -> str:
    """``name = value [low, high]``, or the one-sided statement the data support.

    Where the interval reaches an end of the range the fit searched, the estimate is that
    end, not a measurement.
    """
    lo, hi = interval
    at_lo = lo <= bounds[0] * (1 + 1e-9)
    at_hi = hi >= bounds[1] * (1 - 1e-9)
    if at_lo and at_hi:
        return f"{name}: not determined (the interval spans the whole searched range)"
    if at_hi:
        return (
            f"{name} >= {_f(lo, digits)} (the fit reaches the top of its range, "
            f"{_f(bounds[1], digits)}: the choices bound {name} from below only)"
        )
    if at_lo and bounds[0] > 0:
        return (
            f"{name} <= {_f(hi, digits)} (the fit reaches the bottom of its range, "
            f"{_f(bounds[0], digits)}: the choices bound {name} from above only)"
        )
    return f"{name} = {_f(value, digits)} [{_f(lo, digits)}, {_f(hi, digits)}]"


def study_report(store: Store, catalogue: Catalogue | None = None) -> dict[str, Any]:
    """The comparison of the study sessions in ``store``.

    ``catalogue``: for the fit of people's gamma and lapse rate, and item names.
    """
    # a study's searches: a participant's, with the target they were given (a collect
    # participant's session has none)
    recorded = [
        r
        for r in recorded_sessions(store)
        if r.row.participant is not None and r.row.target is not None
    ]
    searches = [_search(rec, bool(f)) for rec, f in zip(recorded, found_flags(recorded))]
    methods = sorted({s["method"] for s in searches})
    return {
        "participants": len({s["participant"] for s in searches}),
        "searches": searches,
        "methods": [_method_row(m, searches) for m in methods],
        "paired": _paired(searches, methods[0], methods[1]) if len(methods) >= 2 else None,
        "people": None if catalogue is None else _people(recorded, catalogue),
    }


def _f(x: float, nd: int = 2) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{nd}f}"


def format_report(rep: dict[str, Any]) -> str:
    """The comparison as text (the paper's table plus medians and timing)."""
    lines = [
        f"{rep['participants']} participants, {len(rep['searches'])} searches",
        f"{'method':<12}{'searches':>9}{'found':>7}{'mean +- se':>18}{'median':>8}{'s/answer':>10}",
    ]
    for r in rep["methods"]:
        ms = f"{_f(r['mean_queries'])} +- {_f(r['se_queries'])}"
        lines.append(
            f"{r['method']:<12}{r['searches']:>9}{r['found']:>7}{ms:>18}"
            f"{_f(r['median_queries'], 1):>8}{_f(r['seconds_per_answer_median'], 2):>10}"
        )
    p = rep["paired"]
    if p:
        lines.append(
            f"paired by target ({p['targets']} targets): {p['first']} - {p['second']} = "
            f"{_f(p['mean_difference'])} +- {_f(p['se_difference'])} queries; {p['first']} "
            f"needed fewer on {p['first_fewer']}, {p['second']} on {p['second_fewer']}"
        )
    u = rep["people"]
    if u:
        gamma = _estimate("gamma", u["gamma"], u["gamma_interval"], u["gamma_range"], 2)
        lapse = _estimate("lapse", u["lapse"], u["lapse_interval"], [0.0, u["max_lapse"]], 3)
        lines.append(
            f"people's choices: {gamma}, {lapse} "
            f"({u['level']:.0%} intervals, {u['choices']} choices)"
        )
    return "\n".join(lines)


def _plot_cdf(rep: dict[str, Any], path: Path) -> bool:
    """The CDF of queries-to-find per method (searches not found count as never)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(6, 4))
    for r in rep["methods"]:
        mine = [s for s in rep["searches"] if s["method"] == r["method"]]
        q = np.sort([s["n_queries"] for s in mine if s["found"]])
        if len(mine) == 0:
            continue
        y = np.arange(1, len(q) + 1) / len(mine)
        ax.step(np.concatenate([[0], q]), np.concatenate([[0], y]), where="post", label=r["method"])
    ax.set_xlabel("queries to find the target")
    ax.set_ylabel("fraction of searches")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def write_report(store: Store, out: Any, catalogue: Catalogue | None = None) -> dict[str, Any]:
    """Write the report's files into the folder ``out``; returns the report.

    The files: ``report.json``, ``methods.csv``, ``searches.csv`` and ``cdf.png`` (with
    matplotlib).
    """
    rep = study_report(store, catalogue)
    d = Path(os.fspath(out))
    d.mkdir(parents=True, exist_ok=True)
    (d / "report.json").write_text(json.dumps(rep, indent=2, default=str) + "\n")
    for name, rows in (("methods.csv", rep["methods"]), ("searches.csv", rep["searches"])):
        with open(d / name, "w", newline="") as fh:
            w = csv.writer(fh, lineterminator="\n")
            cols = list(rows[0]) if rows else ["method"]
            w.writerow(cols)
            w.writerows([[r[c] for c in cols] for r in rows])
    rep["plot"] = str(d / "cdf.png") if _plot_cdf(rep, d / "cdf.png") else None
    (d / "report.txt").write_text(format_report(rep) + "\n")
    return rep
