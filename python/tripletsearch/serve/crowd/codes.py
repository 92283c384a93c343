"""``tripletsearch codes``: a platform's submitted completion codes checked against the records.

A crowdsourcing platform exports its submissions as a CSV (one row per submission: the
participant's platform id and the code they typed or their redirect carried).
:func:`check_codes` reads it and compares each code with the one recorded for that platform
id (the participants' table, :mod:`.roster`: the code the server showed them, whatever
their checks), and tells the owner whom to pay, reject or look at::

    tripletsearch codes --database URL --check submissions.csv [--platform prolific]
        [--id-column NAME] [--code-column NAME] [--experiment NAME]

The id and code columns default by ``--platform`` (:data:`PLATFORM_COLUMNS`):

- ``prolific``: ``Participant id`` and ``Completion code``, the columns of the submissions
  export of Prolific's researcher app ("Download summary"), where a submission without a
  code reads ``NOCODE`` (Prolific's codebook, http://help.prolific.ac/general/prolifics-codebook);
- ``mturk``: ``WorkerId`` and ``Answer.surveycode``, the batch results CSV of the Requester
  site (its worker ids as in the Assignment structure,
  https://docs.aws.amazon.com/AWSMechTurk/latest/AWSMturkAPI/ApiReference_AssignmentDataStructureArticle.html;
  ``Answer.surveycode``: the survey-link project's code field);
- ``cloudresearch``: ``AmazonIdentifier`` and ``Answer.surveycode`` (its MTurk Toolkit's
  export; Connect's exports differ: give the columns);
- ``sona``: ``Survey Code`` and ``Completion code`` (SONA grants credit by its redirect and
  exports no codes of its own: give the columns of the file you made).

A header that lacks a column is bad input (exit 2, naming the columns it has).

The report, one line each, in four parts: ``MISMATCH <id>: submitted <code>, recorded
<code> (<outcome>)`` (an id with no record says ``no participant with this id``), ``FLAGGED
<id>: <rules>: <why>`` (a collect's checks: their code is not the issue, the owner decides),
``NOT SUBMITTED <id> (<outcome>, code <code>)`` (took part, submitted nothing) and then a
summary line ``<n> submitted: <m> match, <k> do not; <f> flagged; <s> took part without
submitting; <u> never took part``. Exit 0 when every submitted code matches its record, 1
when any does not (a submitted id that never took part included), 2 on bad input (a
missing file or column, an unknown experiment: one line on stderr).
"""

from __future__ import annotations

import csv
import os
from typing import Any

__all__ = [
    "PLATFORM_COLUMNS",
    "check_codes",
    "describe_check",
    "read_submissions",
    "run",
    "add_parser",
]

#: A platform's export of submissions: (id column, code column).
PLATFORM_COLUMNS = {
    "prolific": ("Participant id", "Completion code"),
    "mturk": ("WorkerId", "Answer.surveycode"),
    "cloudresearch": ("AmazonIdentifier", "Answer.surveycode"),
    "sona": ("Survey Code", "Completion code"),
}


def read_submissions(path: Any, id_column: str, code_column: str) -> list[tuple[str, str]]:
    """The (platform id, submitted code) rows of CSV file ``path``, in order.

    Values stripped; rows without an id skipped. ValueError when the header lacks a column
    (naming the columns it has) or the file is not a CSV file it can read (malformed, a
    field over the csv module's limit, not UTF-8: naming ``--check`` and the file);
    FileNotFoundError when there is no such file.
    """
    name = os.fspath(path)
    if not os.path.isfile(name):
        raise FileNotFoundError(f"--check: no file {name}")
    try:
        with open(name, newline="", encoding="utf-8-sig") as fh:
            reader = csv.DictReader(fh)
            header = reader.fieldnames or []
            for column, option in ((id_column, "--id-column"), (code_column, "--code-column")):
                if column not in header:
                    raise ValueError(
                        f"{option}: {name} has no column {column!r} (its columns: "
                        f"{', '.join(repr(h) for h in header) or 'none'})"
                    )
            rows = []
            for row in reader:
                pid = (row.get(id_column) or "").strip()
                if pid:
                    rows.append((pid, (row.get(code_column) or "").strip()))
    except (csv.Error, UnicodeDecodeError) as exc:  # not a CSV file it can read
        what = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(f"--check: {name}: not a readable CSV file ({what})") from None
    return rows


def check_codes(
    participants: list[dict], submitted: list[tuple[str, str]], platform: str | None = None
) -> dict[str, Any]:
    """The submitted codes checked against the participants' table (:func:`~.roster.roster`).

    ``participants``: the roster's rows; ``submitted``: (platform id, code) pairs. A code
    matches when it is the code recorded for a participant of that platform id (a kept
    duplicate: any of theirs); ids compared in the form the server keeps them
    (:func:`~.platforms.canonical_id` of ``platform``: NFC, a Prolific id lower-case).
    Returns ``{"matched", "mismatched", "unknown", "flagged", "not_submitted",
    "unmatchable", "n_submitted"}``: mismatched and unknown as records
    ``{"platform_id", "submitted", "recorded", "outcome"}``, flagged and not submitted as
    roster rows; ``unmatchable``: participants without a platform id (not checked).
    """
    from .platforms import canonical_id

    by_id: dict[str, list[dict]] = {}
    for p in participants:
        if p["platform_id"] is not None:
            by_id.setdefault(canonical_id(platform, p["platform_id"]), []).append(p)
    matched, mismatched, unknown = [], [], []
    for pid, code in submitted:
        mine = by_id.get(canonical_id(platform, pid))
        if not mine:
            unknown.append({"platform_id": pid, "submitted": code, "recorded": None})
        elif any(p["code"] is not None and p["code"] == code for p in mine):
            matched.append(pid)
        else:
            recorded = next((p["code"] for p in mine if p["code"] is not None), None)
            outcome = mine[0]["outcome"]
            mismatched.append(
                {"platform_id": pid, "submitted": code, "recorded": recorded, "outcome": outcome}
            )
    ids = {canonical_id(platform, pid) for pid, _ in submitted}
    return {
        "n_submitted": len(submitted),
        "matched": matched,
        "mismatched": mismatched,
        "unknown": unknown,
        "flagged": [p for p in participants if p["flagged"]],
        "not_submitted": [
            p
            for p in participants
            if p["platform_id"] is not None and canonical_id(platform, p["platform_id"]) not in ids
        ],
        "unmatchable": [p for p in participants if p["platform_id"] is None],
    }


def _who(p: dict) -> str:
    return p["platform_id"] if p["platform_id"] is not None else p["participant"]


def describe_check(found: dict[str, Any]) -> list[str]:
    """:func:`check_codes`' result as the command prints it (see the module docstring)."""
    lines = []
    for m in found["mismatched"]:
        said = m["recorded"] if m["recorded"] is not None else "none (no code shown)"
        shown = m["submitted"] or "(empty)"
        lines.append(
            f"MISMATCH {m['platform_id']}: submitted {shown}, recorded {said} ({m['outcome']})"
        )
    for m in found["unknown"]:
        shown = m["submitted"] or "(empty)"
        lines.append(f"MISMATCH {m['platform_id']}: submitted {shown}, no participant with this id")
    for p in found["flagged"]:
        lines.append(f"FLAGGED {_who(p)} ({p['participant']}): {p['flagged_by']}: {p['why']}")
    for p in found["not_submitted"]:
        code = p["code"] if p["code"] is not None else "none"
        lines.append(f"NOT SUBMITTED {p['platform_id']} ({p['outcome']}, code {code})")
    bad = len(found["mismatched"]) + len(found["unknown"])
    summary = (
        f"{found['n_submitted']} submitted: {len(found['matched'])} match, {bad} do not; "
        f"{len(found['flagged'])} flagged; {len(found['not_submitted'])} took part without "
        f"submitting; {len(found['unknown'])} never took part"
    )
    if found["unmatchable"]:
        summary += f"; {len(found['unmatchable'])} without a platform id (not checked)"
    return [*lines, summary]


def run(args: Any) -> int:
    """``tripletsearch codes``: a platform's submitted codes checked (:mod:`.codes`).

    Exit 0 when every submitted code matches its record, 1 when any does not, 2 on bad
    input (one line on stderr).
    """
    from ..commands import _fast, _with_store

    id_column, code_column = PLATFORM_COLUMNS[args.platform]

    def work(store: Any, cat: Any) -> int:
        from ..experiment import listing, pick
        from ..roster import experiment_roster

        try:
            found = pick(listing(store), None, args.experiment)
        except ValueError as exc:
            raise ValueError(str(exc).replace("--name:", "--experiment:", 1)) from None
        if found is None:
            raise ValueError("--experiment: this database holds no study or collect")
        submitted = read_submissions(
            args.check, args.id_column or id_column, args.code_column or code_column
        )
        roster = experiment_roster(store, found["key"], **_fast(args))
        result = check_codes(roster, submitted, args.platform)
        print("\n".join(describe_check(result)))
        return 1 if result["mismatched"] or result["unknown"] else 0

    return _with_store(args, work)


def add_parser(sub: Any) -> None:
    """The ``codes`` subcommand's parser, added to ``tripletsearch``'s subparsers ``sub``."""
    k = sub.add_parser("codes", help="check a platform's submitted completion codes")
    k.add_argument("--database", metavar="URL", help="SQLAlchemy URL (default: the SQLite file)")
    k.add_argument("--check", required=True, metavar="FILE", help="the platform's CSV export")
    k.add_argument(
        "--platform",
        choices=["prolific", "mturk", "cloudresearch", "sona"],
        default="prolific",
        help="the export's default columns (default: prolific)",
    )
    k.add_argument("--id-column", metavar="NAME", help="the column of platform ids")
    k.add_argument("--code-column", metavar="NAME", help="the column of submitted codes")
    k.add_argument("--experiment", metavar="NAME", help="the study or collect, when several")
    k.add_argument(
        "--fast-server-ms",
        type=float,
        metavar="MS",
        help="the collect checks' server-clock bound, as the server ran with",
    )
    k.set_defaults(func=run, demo=None, catalogue=None)
