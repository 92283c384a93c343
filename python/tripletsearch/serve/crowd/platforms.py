"""Crowdsourcing platforms: the URL parameters a participant's link brings.

A study or collect file may name the platform its participants come from::

    platform = "prolific"            # or "mturk", "cloudresearch", "sona", or a table:
    platform = { id = "pid", params = ["pid", "src"] }   # the link's parameter names,
                                     # the id's among them
    require_platform_id = true       # optional (default false): a link without the id
                                     # is told so on the first page, and refused

Without ``platform`` a file behaves as before (the page reads nothing from its link). With
it, the participants' page reads the platform's parameters from its link and sends them at
enrolment (``POST /api/participants`` ``{"consent": true, "platform": {name: value}}``);
the id parameter's value is the participant's ``platform_id``, every parameter given is
kept (``platform_params``). Parameters of the link the file does not name are ignored (a
platform may add its own: refusing them would lock people out), never stored.

The platforms' parameters, from their documentation:

==============  =============  ====================================================
platform        id parameter   other parameters
==============  =============  ====================================================
prolific        PROLIFIC_PID   STUDY_ID, SESSION_ID (Prolific's "URL parameters"
                               option of a study's link)
mturk           workerId       assignmentId, hitId, turkSubmitTo (the ExternalQuestion
                               URL; a preview brings
                               ``assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE``)
cloudresearch   participantId  assignmentId, projectId (Connect's
                               ``participantId={{%PARTICIPANT_ID%}}``,
                               ``assignmentId={{%ASSIGNMENT_ID%}}``,
                               ``projectId={{%PROJECT_ID%}}`` link placeholders)
sona            id             (Sona Systems' ``?id=%SURVEY_CODE%``: "the system will
                               replace %SURVEY_CODE% with a unique numeric value to
                               identify the participant", sona-systems.com/researcher/
                               using-the-survey-code-feature/; the ``id`` its
                               integration guides name, lower case)
==============  =============  ====================================================

A value is text (:func:`check_text`): no space at its start or end (refused, never
trimmed), kept in Unicode's NFC form (so one id typed two ways is one participant), 1 to 128
characters, printable, no run of more than :data:`MAX_COMBINING` combining marks (none
first). Ids are compared as they are otherwise (``ABC`` and ``abc`` are two participants),
but for a platform whose ids are known case-insensitive: Prolific's ids are 24 hexadecimal
digits (a MongoDB ObjectId), and one in that form is kept lower-case (:func:`canonical_id`;
any other form is kept as given). ``tripletsearch codes`` compares ids in the same form.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Platform",
    "file_platform",
    "PLATFORMS",
    "MAX_COMBINING",
    "MAX_TEXT",
    "canonical_id",
    "check_text",
    "from_file",
    "PlatformError",
]

#: Characters of a platform id or parameter value at most (the participants' columns).
MAX_TEXT = 128
#: Combining marks allowed on one character (a run of them draws over the rows around it
#: where the id is shown).
MAX_COMBINING = 2


class PlatformError(ValueError):
    """A link's parameters refused: the message names the parameter."""


def combining_run(text: str) -> int:
    """The longest run of combining marks in ``text`` (a leading one counts as too long)."""
    longest = run = 0
    for i, ch in enumerate(text):
        if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me"):
            if i == 0:
                return MAX_COMBINING + 1
            run += 1
            longest = max(longest, run)
        else:
            run = 0
    return longest


def check_text(name: str, value: Any) -> str:
    """``value`` as a platform id or parameter named ``name``; PlatformError if not.

    A string without space (any Unicode white space) at its start or end, returned in NFC
    form: 1 to :data:`MAX_TEXT` characters, printable (no NUL, control or format
    characters), with at most :data:`MAX_COMBINING` combining marks in a row as given and
    none first.
    """
    if isinstance(value, str) and value and value != value.strip():
        raise PlatformError(f"{name}: no space at its start or end")
    given = value
    if isinstance(value, str):
        value = unicodedata.normalize("NFC", value)  # one id typed two ways: one id
    if not isinstance(value, str) or not 0 < len(value) <= MAX_TEXT:
        raise PlatformError(f"{name}: a string of 1 to {MAX_TEXT} characters")
    if not value.isprintable():
        raise PlatformError(f"{name}: printable characters only")
    if combining_run(given) > MAX_COMBINING:  # as typed (NFC only ever shortens a run)
        raise PlatformError(
            f"{name}: at most {MAX_COMBINING} combining marks on a character, none first"
        )
    return value


_HEX_IDS = {"prolific": re.compile(r"[0-9a-fA-F]{24}")}  # ids known case-insensitive


def canonical_id(platform: str | None, value: str) -> str:
    """Platform id ``value`` (checked text) in the form kept and compared.

    NFC; on ``platform`` ``"prolific"`` an id of 24 hexadecimal digits (Prolific's form)
    lower-case. Other ids and platforms: as given (their case may matter).
    """
    value = unicodedata.normalize("NFC", value)
    form = _HEX_IDS.get(platform or "")
    return value.lower() if form is not None and form.fullmatch(value) else value


@dataclass(frozen=True)
class Platform:
    """A platform's link: its ``name``, ``id`` parameter and every parameter (``params``).

    ``required``: whether a participant needs the id to enrol. ``preview``: the parameter
    and value of a link that shows the task without taking part (MTurk's
    ``assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE``), or None.
    """

    name: str
    id: str
    params: tuple[str, ...]
    required: bool = False
    preview: tuple[str, str] | None = field(default=None)

    def facts(self) -> dict:
        """``GET /api/experiment``'s ``platform``: name, id, params, required, preview."""
        preview = None
        if self.preview is not None:
            preview = {"param": self.preview[0], "value": self.preview[1]}
        return {
            "name": self.name,
            "id": self.id,
            "params": list(self.params),
            "required": self.required,
            "preview": preview,
        }

    def read(self, given: Any) -> tuple[str | None, dict[str, str]]:
        """The platform id and the kept parameters of a link's ``given`` ones.

        ``given``: ``{name: value}`` (None: none). Names the platform does not have are
        ignored; each kept value is checked (:func:`check_text`), the id in its
        :func:`canonical_id` form. PlatformError naming the
        parameter: a value refused, a required id missing, or a preview link (never
        enrolled).
        """
        if given is None:
            given = {}
        if not isinstance(given, dict):
            raise PlatformError("platform: an object of the link's parameters")
        kept = {k: check_text(k, given[k]) for k in self.params if given.get(k) is not None}
        if self.preview is not None and kept.get(self.preview[0]) == self.preview[1]:
            raise PlatformError(
                f"{self.preview[0]}: {self.preview[1]} is a preview: accept the task to take part"
            )
        if kept.get(self.id) is not None:
            kept[self.id] = canonical_id(self.name, kept[self.id])
        pid = kept.get(self.id)
        if pid is None and self.required:
            raise PlatformError(f"{self.id}: this experiment needs your {self.name} id")
        return pid, kept


#: The named platforms (``required`` false; a file's ``require_platform_id`` sets it).
PLATFORMS: dict[str, Platform] = {
    "prolific": Platform("prolific", "PROLIFIC_PID", ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID")),
    "mturk": Platform(
        "mturk",
        "workerId",
        ("workerId", "assignmentId", "hitId", "turkSubmitTo"),
        preview=("assignmentId", "ASSIGNMENT_ID_NOT_AVAILABLE"),
    ),
    "cloudresearch": Platform(
        "cloudresearch", "participantId", ("participantId", "assignmentId", "projectId")
    ),
    "sona": Platform("sona", "id", ("id",)),
}

_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")


def file_platform(path: str, cfg: dict) -> Platform | None:
    """:func:`from_file` of file ``path``'s table: a ValueError ``"<path>: <message>"``.

    The file's redirects may name only the platform's parameters (``check_redirects``).
    """
    try:
        found = from_file(cfg)
    except PlatformError as exc:
        raise ValueError(f"{path}: {exc}") from None
    from .completion import check_redirects, completion

    check_redirects(path, completion(path, cfg), () if found is None else found.params)
    return found


def from_file(cfg: dict) -> Platform | None:
    """The platform of a file's table ``cfg`` (``platform``, ``require_platform_id``).

    None without ``platform`` (then ``require_platform_id`` must be absent or false).
    PlatformError naming the key otherwise.
    """
    given, required = cfg.get("platform"), cfg.get("require_platform_id", False)
    if not isinstance(required, bool):
        raise PlatformError("require_platform_id: true or false")
    if given is None:
        if required:
            raise PlatformError("require_platform_id: name the platform (platform = ...)")
        return None
    if isinstance(given, str):
        if given not in PLATFORMS:
            raise PlatformError(f"platform: one of {sorted(PLATFORMS)}, or a table {{id, params}}")
        return _replace(PLATFORMS[given], required)
    if not isinstance(given, dict):
        raise PlatformError(f"platform: one of {sorted(PLATFORMS)}, or a table {{id, params}}")
    extra = set(given) - {"id", "params"}
    if extra:
        raise PlatformError(f"platform: unknown keys {sorted(extra)} (id, params)")
    params = given.get("params")
    if not isinstance(params, list) or not params or len(params) > 16:
        raise PlatformError("platform.params: a list of 1 to 16 URL parameter names")
    for p in params:
        if not isinstance(p, str) or not 0 < len(p) <= 64 or not set(p) <= _NAME_CHARS:
            raise PlatformError(
                f"platform.params: {p!r} is not a parameter name (letters, digits, _ - ., up to 64)"
            )
    if len(set(params)) != len(params):
        raise PlatformError("platform.params: a name given twice")
    pid = given.get("id")
    if pid not in params:
        raise PlatformError(f"platform.id: one of platform.params {params}")
    return Platform("custom", str(pid), tuple(params), required)


def _replace(p: Platform, required: bool) -> Platform:
    return Platform(p.name, p.id, p.params, required, p.preview)
