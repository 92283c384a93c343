"""A platform's submitted completion codes checked against the records.

The rules of ``tripletsearch codes`` (the command: :mod:`~..commands.codes`).

A crowdsourcing platform exports its submissions as a CSV (one row per submission: the
participant's platform id and the code they typed or their redirect carried).
:func:`check_codes` reads it and compares each code with the one recorded for that platform
id (the participants' table, :mod:`.roster`: the code the server showed them, whatever
their checks), and tells the owner whom to pay, reject or look at::

    tripletsearch codes --database URL --check submissions.csv [--platform prolific]
        [--id-column NAME] [--code-column NAME] [--status-column NAME] [--experiment NAME]

The id, code and status columns default by ``--platform`` (:data:`PLATFORM_COLUMNS`,
:data:`STATUS_COLUMNS`):

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

A header that lacks a column is bad input (exit 2, naming the columns it has); a default
status column the file lacks reads every row as a submission, said in the summary.

The status column tells a submission from a row that is none (:data:`NOT_SUBMITTED`):
Prolific's ``Status`` of ``RETURNED``, ``TIMED-OUT``, ``REJECTED`` or ``SCREENED OUT``
(https://researcher-help.prolific.com, "submission statuses") and MTurk's
``AssignmentStatus`` of ``Rejected`` are no submission; ``ACTIVE`` (Prolific: still taking
part) is not one yet. Such rows are counted by status in the summary, never checked. One id
submitted twice is checked once and said as such: ``TWICE <id>: submitted <n> times
(<codes>)``, a finding (exit 1) since a platform would pay each submission.

The report, one line each, in four parts: ``MISMATCH <id>: submitted <code>, recorded
<code> (<outcome>)`` (an id with no record says ``no participant with this id``), ``FLAGGED
<id>: <rules>: <why>`` (a collect's checks: their code is not the issue, the owner decides),
``NOT SUBMITTED <id> (<outcome>, code <code>)`` (took part, submitted nothing) and then a
summary line ``<n> submitted: <m> match, <k> do not; <f> flagged; <s> took part without
submitting; <u> never took part``, followed where there are any by ``; <d> submitted more
than once`` and ``; not submissions: <c> RETURNED, <c> TIMED-OUT, ...`` (each status's
count, ``ACTIVE`` as ``not yet submitted``). Exit 0 when every submitted code matches
its record, 1 when any does not (a submitted id that never took part, an id submitted twice
included), 2 on bad input (a missing file or column, an unknown experiment: one line on stderr).
"""

from __future__ import annotations

import csv
import os
from typing import Any

from .platforms import canonical_id

__all__ = [
    "NOT_SUBMITTED",
    "PLATFORM_COLUMNS",
    "STATUS_COLUMNS",
    "check_codes",
    "describe_check",
    "read_submissions",
]

#: A platform's export of submissions: (id column, code column).
PLATFORM_COLUMNS = {
    "prolific": ("Participant id", "Completion code"),
    "mturk": ("WorkerId", "Answer.surveycode"),
    "cloudresearch": ("AmazonIdentifier", "Answer.surveycode"),
    "sona": ("Survey Code", "Completion code"),
}

#: A platform's status column in that export (none known for SONA).
STATUS_COLUMNS = {
    "prolific": "Status",
    "mturk": "AssignmentStatus",
    "cloudresearch": "AssignmentStatus",
}

#: Statuses (upper-cased) of rows that are no submission: returned, timed out, rejected or
#: screened out on Prolific, rejected on MTurk; ``ACTIVE``: still taking part, none yet.
NOT_SUBMITTED = frozenset({"RETURNED", "TIMED-OUT", "REJECTED", "SCREENED OUT", "ACTIVE"})


def read_submissions(
    path: Any, id_column: str, code_column: str, status_column: str | None = None,
    status_required: bool = False,
) -> tuple[list[tuple[str, str, str | None]], bool]:  # fmt: skip
    """The (platform id, submitted code, status) rows of CSV file ``path``, in order.

    Values stripped; rows without an id skipped; a status upper-cased, None without a
    status column. Returns the rows and whether the status column was read. ValueError
    when the header lacks the id or code column, or the status column when
    ``status_required`` (naming the columns it has), or the file is not a CSV file it can
    read (malformed, a field over the csv module's limit, not UTF-8: naming ``--check`` and
    the file); FileNotFoundError when there is no such file.
    """
    name = os.fspath(path)
    if not os.path.isfile(name):
        raise FileNotFoundError(f"--check: no file {name}")
    try:
        with open(name, newline="", encoding="utf-8-sig") as fh:
            reader = csv.DictReader(fh)
            header = reader.fieldnames or []
            needed = [(id_column, "--id-column"), (code_column, "--code-column")]
            if status_column is not None and status_required:
                needed.append((status_column, "--status-column"))
            for column, option in needed:
                if column not in header:
                    raise ValueError(
                        f"{option}: {name} has no column {column!r} (its columns: "
                        f"{', '.join(repr(h) for h in header) or 'none'})"
                    )
            status = status_column if status_column in header else None
            rows = []
            for row in reader:
                pid = (row.get(id_column) or "").strip()
                if pid:
                    said = (row.get(status) or "").strip().upper() if status else None
                    rows.append((pid, (row.get(code_column) or "").strip(), said))
    except (csv.Error, UnicodeDecodeError) as exc:  # not a CSV file it can read
        what = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(f"--check: {name}: not a readable CSV file ({what})") from None
    return rows, status is not None


def _submissions(submitted: list, platform: str | None) -> tuple[dict, dict, dict]:
    """The rows of a platform's export, sorted.

    Returns the rows that are submissions, by canonical id (first id as written, its codes
    in order); the rows that are none, counted by status; the statuses of those ids.
    """
    by_id: dict[str, tuple[str, list[str]]] = {}
    other: dict[str, int] = {}
    status_of: dict[str, str] = {}
    for row in submitted:
        pid, code = row[0], row[1]
        status = row[2] if len(row) > 2 else None
        key = canonical_id(platform, pid)
        if status in NOT_SUBMITTED:
            other[status] = other.get(status, 0) + 1
            status_of[key] = status
            continue
        by_id.setdefault(key, (pid, []))[1].append(code)
    return by_id, other, status_of


def check_codes(
    participants: list[dict], submitted: list, platform: str | None = None
) -> dict[str, Any]:
    """The submitted codes checked against the participants' table (:func:`~.roster.roster`).

    ``participants``: the roster's rows; ``submitted``: (platform id, code) or (platform id,
    code, status) rows (:func:`read_submissions`); a row whose status is in
    :data:`NOT_SUBMITTED` is no submission (counted by status, not checked). A code
    matches when it is the code recorded for a participant of that platform id (a kept
    duplicate: any of theirs); ids compared in the form the server keeps them
    (:func:`~.platforms.canonical_id` of ``platform``: NFC, a Prolific id lower-case); an
    id submitted more than once is checked once (every code it submitted must match) and
    listed in ``twice``. Returns ``{"matched", "mismatched", "unknown", "twice",
    "flagged", "not_submitted", "unmatchable", "n_submitted", "not_submissions"}``:
    mismatched and unknown as records ``{"platform_id", "submitted", "recorded",
    "outcome"}``, twice as ``{"platform_id", "codes"}``, flagged and not submitted as
    roster rows (a not submitted one with ``"status"``: its platform status, or None);
    ``unmatchable``: participants without a platform id (not checked);
    ``not_submissions``: the rows that are none, counted by status.
    """
    by_id: dict[str, list[dict]] = {}
    for p in participants:
        if p["platform_id"] is not None:
            by_id.setdefault(canonical_id(platform, p["platform_id"]), []).append(p)
    sent, other, status_of = _submissions(submitted, platform)
    matched, mismatched, unknown, twice = [], [], [], []
    for key, (pid, codes) in sent.items():
        if len(codes) > 1:
            twice.append({"platform_id": pid, "codes": codes})
        mine = by_id.get(key)
        wrong = [c for c in codes if not mine or not any(p["code"] == c for p in mine)]
        if not mine:
            unknown.append({"platform_id": pid, "submitted": codes[0], "recorded": None})
        elif not wrong:
            matched.append(pid)
        else:
            recorded = next((p["code"] for p in mine if p["code"] is not None), None)
            mismatched.append(
                {"platform_id": pid, "submitted": wrong[0], "recorded": recorded,
                 "outcome": mine[0]["outcome"]}
            )  # fmt: skip
    not_submitted = []
    for p in participants:
        key = None if p["platform_id"] is None else canonical_id(platform, p["platform_id"])
        if key is not None and key not in sent:
            not_submitted.append({**p, "status": status_of.get(key)})
    return {
        "n_submitted": len(sent),
        "matched": matched,
        "mismatched": mismatched,
        "unknown": unknown,
        "twice": twice,
        "flagged": [p for p in participants if p["flagged"]],
        "not_submitted": not_submitted,
        "unmatchable": [p for p in participants if p["platform_id"] is None],
        "not_submissions": other,
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
    for t in found.get("twice", []):
        said = ", ".join(c or "(empty)" for c in t["codes"])
        lines.append(f"TWICE {t['platform_id']}: submitted {len(t['codes'])} times ({said})")
    for p in found["flagged"]:
        lines.append(f"FLAGGED {_who(p)} ({p['participant']}): {p['flagged_by']}: {p['why']}")
    for p in found["not_submitted"]:
        code = p["code"] if p["code"] is not None else "none"
        status = f", {p['status']} on the platform" if p.get("status") else ""
        lines.append(f"NOT SUBMITTED {p['platform_id']} ({p['outcome']}, code {code}{status})")
    bad = len(found["mismatched"]) + len(found["unknown"])
    summary = (
        f"{found['n_submitted']} submitted: {len(found['matched'])} match, {bad} do not; "
        f"{len(found['flagged'])} flagged; {len(found['not_submitted'])} took part without "
        f"submitting; {len(found['unknown'])} never took part"
    )
    if found["unmatchable"]:
        summary += f"; {len(found['unmatchable'])} without a platform id (not checked)"
    if found.get("twice"):
        summary += f"; {len(found['twice'])} submitted more than once"
    other = found.get("not_submissions") or {}
    if other:
        said = [f"{n} {s}" for s, n in sorted(other.items()) if s != "ACTIVE"]
        if "ACTIVE" in other:
            said.append(f"{other['ACTIVE']} ACTIVE (not yet submitted)")
        summary += "; not submissions: " + ", ".join(said)
    if found.get("no_status"):
        summary += f"; no {found['no_status']} column: every row read as a submission"
    return [*lines, summary]
