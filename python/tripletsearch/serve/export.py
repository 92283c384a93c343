"""Close the loop: every recorded answer as training data for :class:`~tripletsearch.Embedding`.

A find-mode screen answered with ``choice`` c by a person whose target t became known
(the session ended with ``found``) says "c is closer to t than every other item shown":
one triplet ``(t, c, other)`` per other item, in the library's row order (head, closer,
farther), and one k-item choice ``(t, c, shown)``. Skips, the screen that showed the target
and sessions whose target stayed unknown give no triplets (their answers are still
exported, with the mix-mode answers, in ``answers.csv``).

Files written by :func:`write_export` (format version :data:`EXPORT_VERSION`):

``triplets.csv``
    ``head,closer,farther`` item ids, ready for ``Embedding.fit`` (read with
    ``np.loadtxt(path, delimiter=",", skiprows=1, dtype=int)``).
``choices.csv``
    ``session,screen,target,chosen,shown`` (shown: space-separated ids).
``sessions.csv``
    One row per session: mode, k, study participant/slot/method, found, queries, target,
    undos, time per answer.
``answers.csv``
    Every answer and undo: session, screen, mode, kind, choice, found, undone, seconds,
    what was shown.
``export.json``
    Format and library versions, schema version, counts.
"""

from __future__ import annotations

import csv
import datetime as _dt
import json
import os
import statistics
from pathlib import Path
from typing import Any

from .. import __version__
from .catalogue import Catalogue
from .store import SCHEMA_VERSION, Store

__all__ = ["export_data", "write_export", "EXPORT_VERSION"]

EXPORT_VERSION = 2  # 2: undos (kind, undone), study columns


def _iso(t: float) -> str:
    return _dt.datetime.fromtimestamp(t, tz=_dt.timezone.utc).isoformat(timespec="seconds")


def export_data(store: Store, catalogue: Catalogue | None = None) -> dict[str, Any]:
    """Everything recorded in ``store``, as JSON-ready lists (see the module docstring).

    ``catalogue`` adds item names to the sessions.
    """
    by_session = store.all_answers()
    triplets: list[list[int]] = []
    choices: list[dict[str, Any]] = []
    sessions: list[dict[str, Any]] = []
    answers: list[dict[str, Any]] = []
    for row in store.iter_sessions():
        hist = by_session.get(row.id, [])
        target = row.target  # a study's target: known from the start
        if target is None and row.mode == "find" and isinstance(row.result, dict):
            target = row.result.get("target")
        found = any(h["found"] for h in hist) and (
            row.target is None or (row.result or {}).get("target") == row.target
        )
        secs = [h["answered_at"] - h["shown_at"] for h in hist]
        for h in hist:
            shown = h["query"].get("shown") if row.mode == "find" else None
            answers.append(
                {
                    "session": row.id,
                    "screen": h["number"],
                    "mode": row.mode,
                    "kind": h["kind"],
                    "choice": h["choice"],
                    "found": h["found"],
                    "undone": h["undone"],
                    "seconds": round(h["answered_at"] - h["shown_at"], 3),
                    "shown": shown if shown is not None else h["payload"].get("hex"),
                }
            )
            if h["kind"] != "answer" or h["undone"]:
                continue  # taken back: not an answer
            if target is None or h["found"] or h["choice"] is None or shown is None:
                continue
            chosen = int(shown[h["choice"]])
            others = [int(s) for s in shown if int(s) != chosen]
            if target == chosen or target in others:
                continue  # the target was on the screen: not a comparison
            triplets.extend([int(target), chosen, o] for o in others)
            choices.append(
                {
                    "session": row.id,
                    "screen": h["number"],
                    "target": int(target),
                    "chosen": chosen,
                    "shown": [int(s) for s in shown],
                }
            )
        name = None
        if target is not None and catalogue is not None and 0 <= target < catalogue.n_items:
            name = catalogue.names[target]
        sessions.append(
            {
                "session": row.id,
                "mode": row.mode,
                "k": row.k,
                "library": row.library,
                "created": _iso(row.created),
                "done": row.done,
                "participant": row.participant,
                "slot": row.slot,
                "method": row.params.get("method"),
                "found": found,
                "queries": row.n_answers,
                "queries_to_find": row.n_answers if found else None,
                "undos": row.undos,
                "target": target,
                "target_name": name,
                "seconds_total": round(sum(secs), 3),
                "seconds_per_answer_median": round(statistics.median(secs), 3) if secs else None,
            }
        )
    return {
        "format": "tripletsearch.export",
        "version": EXPORT_VERSION,
        "library": __version__,
        "schema_version": SCHEMA_VERSION,
        "exported_at": _iso(_dt.datetime.now(tz=_dt.timezone.utc).timestamp()),
        "counts": {
            "sessions": len(sessions),
            "answers": len(answers),
            "triplets": len(triplets),
            "choices": len(choices),
        },
        "triplets": triplets,
        "choices": choices,
        "sessions": sessions,
        "answers": answers,
    }


def _write_csv(path: Path, header: list[str], rows: list[list[Any]]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


def _cell(v: Any) -> Any:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return " ".join(str(x) for x in v)
    return v


def write_export(store: Store, out: Any, catalogue: Catalogue | None = None) -> dict[str, Any]:
    """Write the export files into the folder ``out`` (created); returns the counts."""
    data = export_data(store, catalogue)
    d = Path(os.fspath(out))
    d.mkdir(parents=True, exist_ok=True)
    _write_csv(d / "triplets.csv", ["head", "closer", "farther"], data["triplets"])
    _write_csv(
        d / "choices.csv",
        ["session", "screen", "target", "chosen", "shown"],
        [
            [_cell(c[k]) for k in ("session", "screen", "target", "chosen", "shown")]
            for c in data["choices"]
        ],
    )
    scols = list(data["sessions"][0]) if data["sessions"] else ["session"]
    _write_csv(d / "sessions.csv", scols, [[_cell(s[k]) for k in scols] for s in data["sessions"]])
    acols = ["session", "screen", "mode", "kind", "choice", "found", "undone", "seconds", "shown"]
    _write_csv(d / "answers.csv", acols, [[_cell(a[k]) for k in acols] for a in data["answers"]])
    meta = {
        k: data[k]
        for k in ("format", "version", "library", "schema_version", "exported_at", "counts")
    }
    (d / "export.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return data["counts"]
