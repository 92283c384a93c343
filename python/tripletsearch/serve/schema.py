"""The JSON API's request schema: every field check of every request, in one place.

Each parser takes a request's decoded JSON body (or a query string's parameters) and
returns a typed request, or raises :class:`~.errors.Invalid` naming the field (the app
answers 400). A body must be a JSON object (or empty) with known fields only. What depends
on a session's state (is the choice a position of the stored screen? does the mode offer
that screen size?) is checked by the service and its modes, with the same error.

Renamed fields (docs/vocabulary.rst): a request using a field's old name
(:data:`RENAMED_FIELDS`) still works until tripletsearch 0.3.0; its reply carries
``"warnings"`` naming the new field and the header ``Deprecation: true``. Replies carry
the old keys of :data:`RENAMED_REPLY_KEYS` beside the new ones for as long
(:func:`with_old_keys`).
"""

from __future__ import annotations

import json
import numbers
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..utils import REMOVED_IN, RENAMED_IN
from .errors import Invalid

__all__ = [
    "FIELDS",
    "RENAMED_FIELDS",
    "RENAMED_REPLY_KEYS",
    "MAX_LIMIT",
    "DEFAULT_LIMIT",
    "NewSession",
    "Answer",
    "PartAnswer",
    "Undo",
    "CataloguePage",
    "parse_json",
    "json_object",
    "new_session",
    "answer",
    "part_answer",
    "undo",
    "consent",
    "enrolment_link",
    "resume_link",
    "empty",
    "catalogue_page",
    "with_old_keys",
    "PlatformError",
    "check_text",
    "MAX_TEXT",
    "MAX_COMBINING",
]

#: Characters of a platform id or parameter value at most (the participants' columns).
MAX_TEXT = 128
#: Combining marks allowed on one character (a run of them draws over the rows around it
#: where the id is shown).
MAX_COMBINING = 2


class PlatformError(ValueError):
    """A platform id or a link's parameter refused: the message names the parameter."""


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


# request fields renamed in 0.2.0: old name -> new name
RENAMED_FIELDS = {"k": "n_choices"}
# reply keys renamed in 0.2.0: new name -> the old name carried beside it until 0.3.0
RENAMED_REPLY_KEYS = {"n_choices": "k", "n_queries": "queries"}
# every request's fields (query parameters for the catalogue): the JSON API's names
FIELDS: dict[str, frozenset[str]] = {
    "new_session": frozenset({"mode", "n_choices", "guesses"}),
    "answer": frozenset({"screen", "choice", "found"}),
    "undo": frozenset({"screen"}),
    "consent": frozenset({"consent"}),
    "collect_consent": frozenset({"consent", "platform_id"}),
    "collect_answer": frozenset({"screen", "choice", "skip", "response_ms", "picks"}),
    "part_answer": frozenset({"screen", "choice", "found", "response_ms", "slot", "picks"}),
    "enrolment": frozenset({"consent", "platform_id", "platform"}),
    "resume": frozenset({"platform"}),
    "empty": frozenset(),
    "catalogue_page": frozenset({"offset", "limit", "q"}),
}
DEFAULT_LIMIT, MAX_LIMIT = 100, 1000  # catalogue items per page
MAX_QUERY_CHARS = 200  # the catalogue's name filter
_DIGITS = re.compile(r"[0-9]{1,12}")


@dataclass(frozen=True)
class NewSession:
    """``POST /api/sessions``: the mode, items per screen, guesses with each (None: defaults)."""

    mode: str | None
    n_choices: int | None
    warnings: tuple[str, ...] = ()
    guesses: int | None = None


@dataclass(frozen=True)
class Answer:
    """``POST /api/sessions/{id}/answer``.

    The screen's number, the position picked on it (None: a skip) and whether the person
    says "this is it" (find) or accepts the estimate (mix).
    """

    screen: int
    choice: int | None
    found: bool
    response_ms: int | None = None  # the page's measure of the person's time (collect)
    # the positions picked in order, on a screen that asks several (a collect's ranked
    # picks; None: one pick, ``choice``); the first is ``choice``
    picks: tuple[int, ...] | None = None

    @property
    def key(self) -> tuple[int | None, bool, tuple[int, ...] | None]:
        """What makes it the same answer as another: (choice, found, picks)."""
        return self.choice, self.found, self.picks


@dataclass(frozen=True)
class PartAnswer:
    """``POST /api/participants/{id}/answer``: an :class:`Answer` of part ``slot``.

    The participant's part the screen is of (None: their current part).
    """

    answer: Answer
    slot: int | None = None


@dataclass(frozen=True)
class Undo:
    """``POST /api/sessions/{id}/undo``: the current screen's number."""

    screen: int


@dataclass(frozen=True)
class CataloguePage:
    """``GET /api/catalogue``: ``limit`` items from ``offset`` on, of the names holding ``q``."""

    offset: int
    limit: int
    q: str


def parse_json(raw: bytes) -> Any:
    """A request body's JSON (None when empty)."""
    if not raw:
        return None
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise Invalid("body: not valid JSON") from None
    except RecursionError:  # "[[[[...]]]]": within the size limit, deeper than the parser
        raise Invalid("body: JSON nested too deeply") from None


def _renamed_warning(old: str, new: str) -> str:
    return (
        f"{old}: renamed {new} in tripletsearch {RENAMED_IN}; the old name stops working in "
        f"tripletsearch {REMOVED_IN}"
    )


def json_object(body: Any, fields: frozenset[str]) -> tuple[dict, tuple[str, ...]]:
    """A JSON object body with only ``fields`` (None: empty), old field names moved to new.

    Returns the fields and the warnings about old names used.
    """
    if body is None:
        return {}, ()
    if not isinstance(body, dict):
        raise Invalid("body: expected a JSON object")
    body, warnings = dict(body), []
    for old, new in RENAMED_FIELDS.items():
        if old in body and new in fields:
            if new in body:
                raise Invalid(f"{old}: renamed {new}; give {new} only")
            body[new] = body.pop(old)
            warnings.append(_renamed_warning(old, new))
    unknown = set(body) - fields
    if unknown:
        raise Invalid(f"unknown field(s): {sorted(unknown)}")
    return body, tuple(warnings)


def _integer(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise Invalid(f"{name}: expected an integer, got {value!r}")
    return int(value)


def _screen_number(body: dict) -> int:
    if "screen" not in body:
        raise Invalid("screen: required")
    screen = body["screen"]
    if isinstance(screen, bool) or not isinstance(screen, int) or screen < 0:
        raise Invalid(f"screen: expected a screen number >= 0, got {screen!r}")
    return screen


def new_session(body: Any) -> NewSession:
    """``{"mode": name, "n_choices": int, "guesses": int}``, all optional (old: ``k``).

    ``guesses``: an integer >= 0 (its range is the mode's: find offers 0 to 8).
    """
    fields, warnings = json_object(body, FIELDS["new_session"])
    mode = fields.get("mode")
    if mode is not None and not isinstance(mode, str):
        raise Invalid(f"mode: expected a mode's name, got {mode!r}")
    n, g = fields.get("n_choices"), fields.get("guesses")
    if g is not None and _integer("guesses", g) < 0:
        raise Invalid(f"guesses: expected an integer >= 0, got {g!r}")
    return NewSession(
        mode, None if n is None else _integer("n_choices", n), warnings, None if g is None else g
    )


def answer(body: Any) -> Answer:
    """``{"screen": n, "choice": position or null, "found": bool}`` (found: default false).

    The position is on the screen, or after it on its strip of guesses (find: positions k..
    with found only; checked against the stored screen by its mode).
    """
    fields, _ = json_object(body, FIELDS["answer"])
    screen = _screen_number(fields)
    choice, found = fields.get("choice"), fields.get("found", False)
    if "choice" not in fields and found is not True:  # (a client's bug, not a skip)
        raise Invalid("choice: required: a position, or null for none (a skip)")
    if choice is not None and (isinstance(choice, bool) or not isinstance(choice, int)):
        raise Invalid(f"choice: expected an index or null, got {choice!r}")
    if not isinstance(found, bool):
        raise Invalid(f"found: expected true or false, got {found!r}")
    return Answer(screen, choice, found)


#: The longest time on a screen recorded as a response time (ms): an hour, longer is not
#: one. The page reads it from ``GET /api/experiment`` (``max_response_ms``).
MAX_RESPONSE_MS = 3_600_000


def _response_ms(fields: dict) -> int | None:
    ms = fields.get("response_ms")
    if ms is not None:
        ms = _integer("response_ms", ms)
        if not 0 <= ms <= MAX_RESPONSE_MS:
            raise Invalid(f"response_ms: expected 0 to {MAX_RESPONSE_MS}, got {ms}")
    return ms


def part_answer(body: Any) -> PartAnswer:
    """``{"screen", "choice", "found"}`` as :func:`answer`'s, ``response_ms``, ``slot``.

    ``response_ms`` and ``slot`` optional (``slot``: the part the screen is of, for a retry
    after the part ended).
    """
    fields, _ = json_object(body, FIELDS["part_answer"])
    plain = answer({k: v for k, v in fields.items() if k in FIELDS["answer"]})
    slot = fields.get("slot")
    if slot is not None and _integer("slot", slot) < 0:
        raise Invalid(f"slot: expected an integer >= 0, got {slot!r}")
    got = Answer(
        plain.screen, plain.choice, plain.found, _response_ms(fields), _picks(fields, plain.choice)
    )
    return PartAnswer(got, slot)


#: The most positions an answer's ``picks`` may hold (a collect's screens: 16 candidates).
MAX_PICKS = 16


def _picks(fields: dict, choice: int | None) -> tuple[int, ...] | None:
    """``picks``: distinct positions in the order picked, the first of them ``choice``.

    Absent or null: None (one pick, or a skip). Whether the screen asks so many is its
    mode's check (:meth:`~.modes.Mode.check_answer`).
    """
    picks = fields.get("picks")
    if picks is None:
        return None
    if not isinstance(picks, list) or not 1 <= len(picks) <= MAX_PICKS:
        raise Invalid(f"picks: expected a list of 1 to {MAX_PICKS} positions, got {picks!r}")
    got = tuple(_integer("picks", p) for p in picks)
    if len(set(got)) != len(got):
        raise Invalid(f"picks: a position picked twice in {list(got)}")
    if choice is None or got[0] != choice:
        raise Invalid(f"picks: the first pick is choice ({choice}), got {list(got)}")
    return got


def collect_answer(body: Any) -> Answer:
    """``{"screen", "choice"}`` or ``{"screen", "skip": true}``, optional ``response_ms``.

    The position of the candidate picked (a skip: None); never "found".
    """
    fields, _ = json_object(body, FIELDS["collect_answer"])
    screen = _screen_number(fields)
    skip, choice = fields.get("skip", False), fields.get("choice")
    if not isinstance(skip, bool):
        raise Invalid(f"skip: expected true or false, got {skip!r}")
    if skip == (choice is not None):
        raise Invalid("choice: give the position picked, or skip: true (not both)")
    if choice is not None:
        choice = _integer("choice", choice)
    return Answer(screen, choice, False, _response_ms(fields), _picks(fields, choice))


def collect_consent(body: Any) -> str | None:
    """``{"consent": true}`` with an optional ``platform_id``: that id (or None)."""
    fields, _ = json_object(body, FIELDS["collect_consent"])
    if fields.get("consent") is not True:
        raise Invalid("consent: the collection needs consent (true) before it starts")
    return _platform_id(fields)


def enrolment_link(body: Any) -> tuple[str | None, dict | None]:
    """``POST /api/participants``: ``{"consent": true}``, optional ``platform_id``, ``platform``.

    The ``platform_id`` given (checked as text) and the ``platform`` object of the link's
    parameters (``{name: value}``, None when absent; each kept value is checked against the
    experiment's platform by :meth:`.participation.platforms.Platform.read`).
    """
    fields, _ = json_object(body, FIELDS["enrolment"])
    if fields.get("consent") is not True:
        raise Invalid("consent: taking part needs consent (true) before anything is recorded")
    return _platform_id(fields), _link(fields)


def resume_link(body: Any) -> dict:
    """``POST /api/participants/resume``: ``{"platform": {name: value}}``, the link's parameters."""
    link = _link(json_object(body, FIELDS["resume"])[0])
    if link is None:
        raise Invalid("platform: the link's parameters are required")
    return link


def _link(fields: dict) -> dict | None:
    link = fields.get("platform")
    if link is not None and not (
        isinstance(link, dict) and len(link) <= 64 and all(isinstance(k, str) for k in link)
    ):
        raise Invalid("platform: an object of the link's parameters (name: value)")
    return link


def _platform_id(fields: dict) -> str | None:
    pid = fields.get("platform_id")
    if pid is None:
        return None
    try:
        return check_text("platform_id", pid)
    except PlatformError as exc:
        raise Invalid(str(exc)) from None


def undo(body: Any) -> Undo:
    """``{"screen": n}``: the current screen."""
    return Undo(_screen_number(json_object(body, FIELDS["undo"])[0]))


def consent(body: Any) -> None:
    """``{"consent": true}``: a participant's consent, required before anything is recorded."""
    if json_object(body, FIELDS["consent"])[0].get("consent") is not True:
        raise Invalid("consent: the study needs consent (true) before it starts")


def empty(body: Any) -> None:
    """An empty object (or no body)."""
    json_object(body, FIELDS["empty"])


def _parameter(params: Mapping[str, Sequence[str]], name: str) -> str | None:
    values = params.get(name) or []
    if len(values) > 1:
        raise Invalid(f"{name}: given {len(values)} times")
    return values[0] if values else None


def catalogue_page(params: Mapping[str, Sequence[str]]) -> CataloguePage:
    """``?offset=0&limit=100&q=text`` (every value a list: a query string may repeat one).

    ``offset`` >= 0, ``limit`` 0 to :data:`MAX_LIMIT` (0: the metadata only), ``q``: a
    case-insensitive part of the names (up to 200 characters).
    """
    unknown = set(params) - FIELDS["catalogue_page"]
    if unknown:
        raise Invalid(f"unknown parameter(s): {sorted(unknown)}")
    out: dict[str, int] = {}
    for name, default, most in (("offset", 0, None), ("limit", DEFAULT_LIMIT, MAX_LIMIT)):
        text = _parameter(params, name)
        if text is None:
            out[name] = default
            continue
        if not _DIGITS.fullmatch(text) or (most is not None and int(text) > most):
            bound = f"0 to {most}" if most is not None else ">= 0"
            raise Invalid(f"{name}: expected an integer {bound}, got {text!r}")
        out[name] = int(text)
    q = _parameter(params, "q") or ""
    if len(q) > MAX_QUERY_CHARS:
        raise Invalid(f"q: at most {MAX_QUERY_CHARS} characters, got {len(q)}")
    return CataloguePage(out["offset"], out["limit"], q)


def with_old_keys(reply: dict) -> dict:
    """``reply`` with the keys renamed in 0.2.0 also under their old names (until 0.3.0).

    Replies stored by an earlier version (old keys only) get the new keys too.
    """
    out = dict(reply)
    for new, old in RENAMED_REPLY_KEYS.items():
        if new in out:
            out[old] = out[new]
        elif old in out:
            out[new] = out[old]
    return out
