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
trimmed), 1 to 128 characters, printable, no run of more than :data:`MAX_COMBINING`
combining marks (none first). An id is kept and compared in one form
(:func:`canonical_id`): NFKC (full-width letters are letters), its combining marks and the
invisible fillers NFKC keeps (:data:`FILLERS`) removed, so ids that look the same are one
participant; case folded where the platform's ids are case-insensitive (Prolific's lower,
MTurk's upper). A known platform's id is checked to have its form (:data:`FORMS`: Prolific
24 hexadecimal digits, MTurk ``A`` and 11 to 20 upper-case letters or digits), refused
naming the parameter unless the file says ``strict_ids = false``. ``tripletsearch codes``
compares ids in the same form.

A participant's visit: the platform's value for one visit to the link (:attr:`Platform.visit`:
Prolific's ``SESSION_ID``, MTurk's and CloudResearch's ``assignmentId``; SONA's id is
already a per-person code, so its visit is the id itself, as a custom platform's without
``visit``). A participant resumes by their token, or by their id with the visit's value
they enrolled with; the same id with another visit's value is refused (a second session)
until the owner releases the participation (``tripletsearch participants release``). A
custom platform names it: ``platform = { id = "pid", visit = "sid", params = ["pid",
"sid"] }``.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field, replace
from typing import Any

from ..schema import MAX_COMBINING, MAX_TEXT, PlatformError, check_text

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
    "FILLERS",
    "FORMS",
]

#: Invisible characters that NFKC keeps (a grapheme joiner, the Hangul fillers, the blank
#: Braille pattern): removed from an id, with its combining marks.
FILLERS = frozenset("\u034f\u115f\u1160\u3164\uffa0\u2800")
#: The known platforms' ids: (their case fold, their form, what the form is).
FORMS: dict[str, tuple[str, re.Pattern, str]] = {
    "prolific": ("lower", re.compile(r"[0-9a-f]{24}"), "24 hexadecimal digits"),
    "mturk": ("upper", re.compile(r"A[A-Z0-9]{11,20}"), "A and 11 to 20 letters or digits"),
}
#: The platforms' names as people write them.
SPELLED = {"prolific": "Prolific", "mturk": "MTurk", "cloudresearch": "CloudResearch",
           "sona": "SONA"}  # fmt: skip


def spelled(platform: str) -> str:
    """Platform ``platform``'s name as people write it ("the platform" for a custom one)."""
    return SPELLED.get(platform, "the platform")


def compared_text(value: str) -> str:
    """``value`` without what does not show: NFKC, combining marks and fillers removed."""
    text = unicodedata.normalize("NFKD", value)
    kept = (ch for ch in text if unicodedata.category(ch) not in ("Mn", "Me") and ch not in FILLERS)
    return unicodedata.normalize("NFKC", "".join(kept))


def canonical_id(platform: str | None, value: str) -> str:
    """Platform id ``value`` (checked text) in the form kept and compared.

    :func:`compared_text` (NFKC, combining marks and :data:`FILLERS` removed), case folded
    on a platform whose ids are case-insensitive (:data:`FORMS`: Prolific's lower-case,
    MTurk's upper-case). Other platforms' ids keep their case.
    """
    value = compared_text(value)
    fold = FORMS.get(platform or "", ("", None, ""))[0]
    return value.lower() if fold == "lower" else value.upper() if fold == "upper" else value


@dataclass(frozen=True)
class Platform:
    """A platform's link: its ``name``, ``id`` parameter and every parameter (``params``).

    ``required``: whether a participant needs the id to enrol. ``preview``: the parameter
    and value of a link that shows the task without taking part (MTurk's
    ``assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE``, in any case), or None. ``visit``: the
    parameter whose value is the platform's for one visit (None: the id itself).
    ``strict``: whether a known platform's id must have its form (:data:`FORMS`).
    """

    name: str
    id: str
    params: tuple[str, ...]
    required: bool = False
    preview: tuple[str, str] | None = field(default=None)
    visit: str | None = None
    strict: bool = True

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
            "visit": self.visit or self.id,
        }

    def visit_of(self, kept: dict[str, str]) -> str | None:
        """The visit's value of a link's ``kept`` parameters (:meth:`read`'s); None: none."""
        return kept.get(self.visit or self.id)

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
        if self.preview is not None:
            seen = kept.get(self.preview[0])
            if seen is not None and compared_text(seen).upper() == self.preview[1].upper():
                raise PlatformError(
                    f"{self.preview[0]}: {self.preview[1]} is a preview: "
                    "accept the task to take part"
                )
        for k in {self.id, self.visit or self.id}:
            if kept.get(k) is not None:
                kept[k] = self._compared(k, kept[k])
        pid = kept.get(self.id)
        if pid is None and self.required:
            raise PlatformError(f"{self.id}: this experiment needs your {self.name} id")
        return pid, kept

    def _compared(self, name: str, value: str) -> str:
        """Parameter ``name``'s ``value`` in its compared form; the id's form checked."""
        if name != self.id:
            found = compared_text(value)
        else:
            found = canonical_id(self.name, value)
            form = FORMS.get(self.name)
            if self.strict and form is not None and not form[1].fullmatch(found):
                said = spelled(self.name)
                article = "an" if said[0] in "AEIMO" else "a"
                raise PlatformError(
                    f"{name}: not {article} {said} id ({form[2]}): open the task from your "
                    f"{said} account's link"
                )
        if not found:
            raise PlatformError(f"{name}: no visible characters")
        return found


#: The named platforms (``required`` false; a file's ``require_platform_id`` sets it).
PLATFORMS: dict[str, Platform] = {
    "prolific": Platform(
        "prolific",
        "PROLIFIC_PID",
        ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID"),
        visit="SESSION_ID",
    ),
    "mturk": Platform(
        "mturk",
        "workerId",
        ("workerId", "assignmentId", "hitId", "turkSubmitTo"),
        preview=("assignmentId", "ASSIGNMENT_ID_NOT_AVAILABLE"),
        visit="assignmentId",
    ),
    "cloudresearch": Platform(
        "cloudresearch",
        "participantId",
        ("participantId", "assignmentId", "projectId"),
        visit="assignmentId",
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

    # start-up: the command line's parser reads the platforms' names without the store
    from .completion import check_redirects, completion

    check_redirects(path, completion(path, cfg), () if found is None else found.params)
    return found


def from_file(cfg: dict) -> Platform | None:
    """The platform of a file's table ``cfg``.

    Its keys ``platform``, ``require_platform_id`` and ``strict_ids``. None without
    ``platform`` (then ``require_platform_id`` must be absent or false).
    PlatformError naming the key otherwise.
    """
    given, required = cfg.get("platform"), cfg.get("require_platform_id", False)
    strict = cfg.get("strict_ids", True)
    if not isinstance(required, bool):
        raise PlatformError("require_platform_id: true or false")
    if not isinstance(strict, bool):
        raise PlatformError("strict_ids: true or false")
    if given is None:
        if required:
            raise PlatformError("require_platform_id: name the platform (platform = ...)")
        return None
    if isinstance(given, str):
        if given not in PLATFORMS:
            raise PlatformError(f"platform: one of {sorted(PLATFORMS)}, or a table {{id, params}}")
        return replace(PLATFORMS[given], required=required, strict=strict)
    if not isinstance(given, dict):
        raise PlatformError(f"platform: one of {sorted(PLATFORMS)}, or a table {{id, params}}")
    extra = set(given) - {"id", "visit", "params"}
    if extra:
        raise PlatformError(f"platform: unknown keys {sorted(extra)} (id, visit, params)")
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
    visit = given.get("visit")
    if visit is not None and visit not in params:
        raise PlatformError(f"platform.visit: one of platform.params {params}")
    return Platform("custom", str(pid), tuple(params), required, None, visit, strict)
