"""``tripletsearch report``: a study's methods compared, as in the paper's Appendix.

As the Appendix reports its user study (mean +- standard error of the queries to find the
target, per method), with medians, the CDF of queries-to-find, paired per-target
differences, time per answer, and the people's own gamma and lapse rate fitted to their
recorded choices.

Each search is **found** (it ended with ``found`` on its target:
:func:`tripletsearch.outcomes.found_target`), **not found** (it ended without the target:
its screens ran out) or **unfinished** (in progress, abandoned, or left by its person). The
rates and the CDF are over the finished searches (found or not found); the unfinished are
counted apart, never as failures. Queries (``n_queries``) are the answers that count (undone
ones excluded), the final "this is it" included, as in the paper's count.
The fit of gamma uses the answers that are comparisons
(:func:`tripletsearch.outcomes.is_comparison`).
"""

from __future__ import annotations

import json
import math
import os
import statistics
from pathlib import Path
from typing import Any

import numpy as np

from ...outcomes import proportion_interval as wilson
from ..catalogue import Catalogue
from ..export import TABLES, describe_folder, write_table
from ..service.recorded import RecordedSession, found_flags, recorded_sessions
from ..store import Store
from .checks import flagged_summary, flagged_text, study_flags
from .people import GAMMA_RANGE, MAX_LAPSE, people_fit

__all__ = ["study_report", "write_report", "format_report", "GAMMA_RANGE", "MAX_LAPSE"]


def _mean_se(x: list[float]) -> tuple[float, float]:
    if not x:
        return math.nan, math.nan
    m = float(np.mean(x))
    return m, (float(np.std(x, ddof=1) / math.sqrt(len(x))) if len(x) > 1 else math.nan)


OUTCOMES = ("found", "not found", "unfinished")


def outcome(rec: RecordedSession, found: bool) -> str:
    """A search's outcome: ``found``, ``not found`` or ``unfinished``.

    Not found: it ended without the target; unfinished: in progress, or ended by its person
    leaving.
    """
    if found:
        return "found"
    result = rec.row.result if isinstance(rec.row.result, dict) else {}
    if not rec.row.done or result.get("left"):
        return "unfinished"
    return "not found"


def _search(rec: RecordedSession, found: bool) -> dict[str, Any]:
    """A study search's line of ``searches.csv``."""
    secs = [h["answered_at"] - h["shown_at"] for h in rec.answers]
    row = rec.row
    return {
        "session": row.id,
        "participant": row.participant,
        "slot": row.slot,
        "method": row.params.get("method"),
        "guesses": int(row.params.get("guesses", 0)),  # the strip's size (0: the paper's)
        "target": row.target,
        "done": row.done,
        "outcome": outcome(rec, found),
        "found": found,
        "n_queries": row.n_queries,
        "undos": row.undos,
        "seconds_per_answer": float(np.mean(secs)) if secs else math.nan,
    }


def _method_row(method: str, searches: list[dict[str, Any]]) -> dict[str, Any]:
    """A method's line of the table: its searches by outcome, found rate, queries, time.

    The found rate is the share of the finished searches (with a 95 % Wilson interval).
    """
    mine = [s for s in searches if s["method"] == method]
    q = [s["n_queries"] for s in mine if s["found"]]
    mean, se = _mean_se(q)
    spa = [s["seconds_per_answer"] for s in mine if not math.isnan(s["seconds_per_answer"])]
    counts = {o: sum(s["outcome"] == o for s in mine) for o in OUTCOMES}
    finished = counts["found"] + counts["not found"]
    return {
        "method": method,
        "searches": len(mine),
        "finished": finished,
        "unfinished": counts["unfinished"],
        "not_found": counts["not found"],
        "found_rate": counts["found"] / finished if finished else math.nan,
        "found_rate_interval": list(wilson(counts["found"], finished)),
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


def _welch(searches: list[dict[str, Any]], a: str, b: str) -> dict[str, Any]:
    """Methods ``a`` and ``b`` across people: the difference of their mean queries to find.

    For a between-subjects study (one target: each participant searched once, with one
    method), where no pairing exists; the standard error is Welch's.
    """
    qa = [s["n_queries"] for s in searches if s["found"] and s["method"] == a]
    qb = [s["n_queries"] for s in searches if s["found"] and s["method"] == b]
    (ma, sa), (mb, sb) = _mean_se(qa), _mean_se(qb)
    return {
        "first": a,
        "second": b,
        "between_subjects": True,
        "searches": [len(qa), len(qb)],
        "mean_difference": ma - mb,
        "se_difference": math.sqrt(sa**2 + sb**2),
    }


def _positions(searches: list[dict[str, Any]], methods: list[str]) -> list[dict[str, Any]]:
    """Each method's searches by position (slot) in the participants' plans.

    Per (method, position): the searches, found, and the mean queries to find with a 95 %
    interval (mean +- 1.96 standard errors, over the found searches). A practice or fatigue
    effect shows as a trend over positions; the realised counts show the design's balance.
    """
    positions = sorted({s["slot"] for s in searches})
    out = []
    for j in positions:
        for m in methods:
            mine = [s for s in searches if s["slot"] == j and s["method"] == m]
            q = [s["n_queries"] for s in mine if s["found"]]
            mean, se = _mean_se(q)
            out.append(
                {
                    "position": j,
                    "method": m,
                    "searches": len(mine),
                    "found": len(q),
                    "mean_queries": mean,
                    "interval": [mean - 1.96 * se, mean + 1.96 * se],
                }
            )
    return out


def _design(store: Store, study: str | None, searches: list[dict[str, Any]]) -> dict[str, Any]:
    """Who enrolled, who withdrew, and the holes they leave in the design.

    Plans go by enrolment number, so a participant who withdrew leaves their row of the
    design unfilled (a ``hole``: their enrolment number). ``block``: participants per
    balanced block of the study's plan (:meth:`~.file.Study.block`: M x W for plan 3, W
    for plan 2, with M methods and W Williams rows of its targets), and how many blocks
    are complete (every row filled by someone who did not withdraw).
    """
    groups = {study} if study is not None else None
    if groups is None:
        seen = {s["participant"] for s in searches}
        groups = {r.study for r in store.iter_participants() if r.id in seen}
    rows = [r for r in store.iter_participants() if r.study in groups]
    withdrawn = sorted(int(r.number) for r in rows if r.withdrawn is not None)
    plans = sorted({int(r.plan) for r in rows if r.plan is not None})
    n_targets = len({s["target"] for s in searches})
    n_methods = len({s["method"] for s in searches})
    rows_w = n_targets if n_targets % 2 == 0 or n_targets == 1 else 2 * n_targets
    block = {2: rows_w, 3: n_methods * rows_w}.get(plans[0]) if len(plans) == 1 else None
    filled = {int(r.number) for r in rows if r.withdrawn is None}
    n_blocks = (max(filled) // block + 1) if block and filled else 0
    complete = (
        sum(all(b * block + i in filled for i in range(block)) for b in range(n_blocks))
        if block
        else None
    )
    # every participant who did not withdraw: searched (some not to the end) or never began
    mine: dict[str, list[dict[str, Any]]] = {}
    for srch in searches:
        mine.setdefault(srch["participant"], []).append(srch)
    slots = max((len(v) for v in mine.values()), default=0)
    stayed = [r.id for r in rows if r.withdrawn is None]
    searched = [p for p in stayed if p in mine]
    return {
        "enrolled": len(rows),
        "searched": len(searched),
        "not_finished": sum(
            len(mine[p]) < slots or any(x["outcome"] == "unfinished" for x in mine[p])
            for p in searched
        ),
        "not_started": len(stayed) - len(searched),
        "withdrawn": len(withdrawn),
        "holes": withdrawn,
        "plans": plans,
        "between_subjects": n_targets == 1,
        "block": block,
        "complete_blocks": complete,
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


def study_report(
    store: Store,
    catalogue: Catalogue | None = None,
    study: str | None = None,
    *,
    fast_server_ms: float | None = None,
) -> dict[str, Any]:
    """The comparison of the study sessions in ``store``.

    ``catalogue``: for the fit of people's gamma and lapse rate, and item names. ``study``:
    the key of the study (its participants' group; None: every study's searches).
    With one target the study is between-subjects: the methods are
    compared across people (``paired`` holds Welch's difference), not paired by target.
    Flagged participants' searches (:mod:`.checks`, ``fast_server_ms``: the clock's bound)
    are reported apart (``flagged``; each search's), not in the methods' comparison.
    """
    members = None if study is None else store.participant_ids(study)
    # a study's searches: a participant's, with the target they were given (a collect
    # participant's session has none)
    recorded = [
        r
        for r in recorded_sessions(store)
        if r.row.participant is not None
        and r.row.target is not None
        and (members is None or r.row.participant in members)
    ]
    flags = study_flags(store, study, fast_server_ms)
    every = [
        {**_search(rec, bool(f)), "flagged": bool(flags.get(str(rec.row.participant)))}
        for rec, f in zip(recorded, found_flags(recorded))
    ]
    searches = [s for s in every if not s["flagged"]]  # (the comparison's)
    methods = sorted({s["method"] for s in searches})
    design = _design(store, study, every)
    compare = _welch if design["between_subjects"] else _paired
    kept = [r for r in recorded if not flags.get(str(r.row.participant))]
    return {
        "participants": len({s["participant"] for s in every}),
        "design": design,
        "searches": every,
        "methods": [_method_row(m, searches) for m in methods],
        "positions": _positions(searches, methods),
        "paired": compare(searches, methods[0], methods[1]) if len(methods) >= 2 else None,
        "people": None if catalogue is None else people_fit(kept, catalogue),
        "guesses": sorted({s["guesses"] for s in searches}),  # one, but for a mix of studies
        "flagged": flagged_summary(flags, every),
    }


def _numbers(xs: list[int]) -> str:
    """Enrolment numbers for a line of text: the first 10, and how many more."""
    shown = ", ".join(str(x) for x in xs[:10])
    return shown + (f" and {len(xs) - 10} more" if len(xs) > 10 else "")


def _f(x: float, nd: int = 2) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{nd}f}"


def protocol(guesses: list[int]) -> str:
    """The protocol line: the paper's (no guesses), or the strip's (``guesses``: its sizes)."""

    def one(m: int) -> str:
        return "the paper's (no guesses)" if m == 0 else f"with a strip of {m} guesses"

    if len(guesses) <= 1:
        return f"protocol: {one(guesses[0] if guesses else 0)}"
    return "protocols mixed (compare within one): " + "; ".join(one(m) for m in guesses)


def format_report(rep: dict[str, Any]) -> str:
    """The comparison as text (the paper's table plus medians, timing and outcomes).

    Found rates are over the finished searches, with their 95 % intervals; the unfinished
    (in progress, abandoned, left) are counted apart.
    """
    unfinished = sum(r["unfinished"] for r in rep["methods"])
    kept = [s for s in rep["searches"] if not s.get("flagged")]
    d = rep.get("design") or {}
    who = f"{rep['participants']} participants searched"
    if d:  # every participant enrolled said: withdrew, searched or never began
        searched = d.get("searched", rep["participants"])
        who = f"{d['enrolled']} participants enrolled, " + (
            f"{d['withdrawn']} withdrew (left out; holes in the design at enrolment numbers "
            f"{_numbers(d['holes'])}), "
            if d["withdrawn"]
            else ""
        )
        who += f"{searched} searched"
        if d.get("not_finished"):
            who += f" ({d['not_finished']} of them did not finish)"
        if d.get("not_started"):
            who += f", {d['not_started']} never began a search"
    lines = [
        f"{who}: {len(kept)} searches ({unfinished} unfinished, counted apart)",
        *flagged_text(rep.get("flagged")),
        f"{'method':<12}{'searches':>9}{'finished':>9}{'unfinished':>11}{'found':>7}"
        f"{'found % [95% CI]':>20}{'mean +- se':>16}{'median':>8}{'s/answer':>10}",
    ]
    for r in rep["methods"]:
        ms = f"{_f(r['mean_queries'])} +- {_f(r['se_queries'])}"
        lo, hi = r["found_rate_interval"]
        rate = (
            "-"
            if math.isnan(r["found_rate"])
            else (f"{100 * r['found_rate']:.0f} [{100 * lo:.0f}, {100 * hi:.0f}]")
        )
        lines.append(
            f"{r['method']:<12}{r['searches']:>9}{r['finished']:>9}{r['unfinished']:>11}"
            f"{r['found']:>7}{rate:>20}{ms:>16}"
            f"{_f(r['median_queries'], 1):>8}{_f(r['seconds_per_answer_median'], 2):>10}"
        )
    lines.append(protocol(rep.get("guesses", [])))
    p = rep["paired"]
    if p and p.get("between_subjects"):
        lines.append(
            f"between-subjects (one target: each participant searched once, with one "
            f"method; nothing to pair): {p['first']} - {p['second']} = "
            f"{_f(p['mean_difference'])} +- {_f(p['se_difference'])} queries (Welch), over "
            f"{p['searches'][0]} and {p['searches'][1]} found searches"
        )
    elif p:
        lines.append(
            f"paired by target ({p['targets']} targets): {p['first']} - {p['second']} = "
            f"{_f(p['mean_difference'])} +- {_f(p['se_difference'])} queries; {p['first']} "
            f"needed fewer on {p['first_fewer']}, {p['second']} on {p['second_fewer']}"
        )
    if d.get("block"):
        lines.append(
            f"design: plan {d['plans'][0]}, balanced over blocks of {d['block']} "
            f"participants; {d['complete_blocks']} complete"
        )
    if rep.get("positions") and not d.get("between_subjects"):
        lines.append("by position (searches; mean queries to find [95% interval] when found):")
        for j in sorted({r["position"] for r in rep["positions"]}):
            cells = [
                f"{r['method']} {r['searches']}: {_f(r['mean_queries'], 1)} "
                f"[{_f(r['interval'][0], 1)}, {_f(r['interval'][1], 1)}]"
                for r in rep["positions"]
                if r["position"] == j
            ]
            lines.append(f"  {j + 1:>3}  " + "; ".join(cells))
    u = rep["people"]
    if u:
        gamma = _estimate("gamma", u["gamma"], u["gamma_interval"], u["gamma_range"], 2)
        lapse = _estimate("lapse", u["lapse"], u["lapse_interval"], [0.0, u["max_lapse"]], 3)
        lines.append(
            f"people's choices: {gamma}, {lapse} "
            f"({u['level']:.0%} intervals, {u['choices']} choices)"
        )
    return "\n".join(lines)


def _plot_cdf(rep: dict[str, Any], path: Path) -> str | None:
    """The CDF of queries-to-find per method, over its finished searches.

    Those not found never reach it. None when drawn, else why not.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "no plot: matplotlib is not installed (pip install matplotlib)"
    fig, ax = plt.subplots(figsize=(6, 4))
    for r in rep["methods"]:
        mine = [s for s in rep["searches"] if s["method"] == r["method"] and not s.get("flagged")]
        finished = [s for s in mine if s["outcome"] != "unfinished"]
        q = np.sort([s["n_queries"] for s in finished if s["found"]])
        if not finished:
            continue
        y = np.arange(1, len(q) + 1) / len(finished)
        label = f"{r['method']} ({len(finished)} finished, {r['unfinished']} unfinished)"
        ax.step(np.concatenate([[0], q]), np.concatenate([[0], y]), where="post", label=label)
    ax.set_xlabel("queries to find the target")
    ax.set_ylabel("fraction of finished searches")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return None


def write_report(
    store: Store,
    out: Any,
    catalogue: Catalogue | None = None,
    study: str | None = None,
    *,
    fast_server_ms: float | None = None,
) -> dict[str, Any]:
    """Write the report's files into the folder ``out``; returns the report.

    The files: ``report.json``, ``methods.csv``, ``searches.csv``, ``report.txt``,
    ``datapackage.json`` and ``dataset_description.json`` (:mod:`~..export`) and
    ``cdf.png`` (where matplotlib is installed: the ``serve`` extra brings it; where it is
    not, ``report.txt`` and the returned ``plot_note`` say so). ``study``: the key of the
    study to report (None: every study search of the database); ``fast_server_ms``: as
    :func:`study_report`'s.
    """
    rep = study_report(store, catalogue, study, fast_server_ms=fast_server_ms)
    d = Path(os.fspath(out))
    d.mkdir(parents=True, exist_ok=True)
    written = {"methods.csv": rep["methods"], "searches.csv": rep["searches"]}
    for name, rows in written.items():  # each from its declaration (export.TABLES)
        write_table(d, TABLES[name], rows)
    note = _plot_cdf(rep, d / "cdf.png")
    rep["plot"] = None if note else str(d / "cdf.png")
    rep["plot_note"] = note
    (d / "report.json").write_text(json.dumps(rep, indent=2, default=str) + "\n")
    text = format_report(rep) + ("" if note is None else f"\n{note}")
    (d / "report.txt").write_text(text + "\n")
    describe_folder(d, title="tripletsearch study report", files=list(written))  # (only ours)
    return rep
