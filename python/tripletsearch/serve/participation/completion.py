"""A file's completion codes and redirects per outcome (``[completion.finished]``, ...).

A study or collect file may give, per outcome of a participant's part (:data:`OUTCOMES`),
the code the end screen shows and the link back to the crowdsourcing platform::

    [completion.finished]
    code = "C0DE42"
    redirect = "https://app.prolific.com/submissions/complete?cc=C0DE42"
    [completion.withdrawn]
    code = "STOPPED7"
    redirect = "https://app.prolific.com/submissions/complete?cc=STOPPED7"

The top-level ``completion_code`` and ``redirect`` (before 0.4.0) are the finished
outcome's. Settings, not design: they may change between starts.

A redirect may name the participant's link parameters in braces, filled in (URL-encoded)
at the end of their part (:func:`fill_redirect`): SONA's credit URL takes the
participant's survey code (``...&survey_code={id}``), an MTurk external question's
submission its assignment (``...?assignmentId={assignmentId}``); ``{code}`` is the code.
The names must be the file's platform parameters (:func:`check_redirects`).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

from ..experiment import fail
from ..store.participants import ENDED

__all__ = ["completion", "check_redirects", "fill_redirect", "OUTCOMES", "MAX_CODE"]

_NAMED = re.compile(r"\{([A-Za-z_][A-Za-z0-9_.-]*)\}")

#: The outcomes of a participant's part a file gives a completion code and redirect for:
#: those that end a part (``store.participants.OUTCOMES``, declared once).
OUTCOMES = ENDED
MAX_CODE = 200  # characters of a completion code (the participants' ``code`` column)


def _code(name: str, key: str, code: Any, printable: bool = True) -> None:
    if code is None:
        return
    if not isinstance(code, str) or not 0 < len(code) <= MAX_CODE:
        raise fail(name, f"{key}: a string of 1 to {MAX_CODE} characters")
    if printable and not code.isprintable():
        raise fail(name, f"{key}: printable characters only (shown as text, typed back)")


def _redirect(name: str, key: str, redirect: Any) -> None:
    if redirect is not None and (
        not isinstance(redirect, str) or not redirect.startswith(("https://", "http://"))
    ):
        raise fail(name, f"{key}: an http:// or https:// URL")


def completion(name: str, cfg: dict) -> dict[str, dict[str, str | None]]:
    """The file's completion codes and redirects per outcome, checked.

    ``{outcome: {"code", "redirect"}}`` for the outcomes (:data:`OUTCOMES`) the file gives
    one of (None when absent): its ``[completion.finished]`` and ``[completion.withdrawn]``
    tables (``code``: 1 to 200 printable characters; ``redirect``: an http(s) URL, whose
    ``cc`` parameter, as in Prolific's completion URL, must be the code or ``{code}``, its
    placeholder, when both are given). The top-level ``completion_code`` and ``redirect``
    are the finished outcome's (as before 0.4.0); both spellings at once are refused. A
    ValueError names the file and the key.
    """
    code, redirect = cfg.get("completion_code"), cfg.get("redirect")
    _code(name, "completion_code", code, printable=False)  # (as before 0.4.0)
    _redirect(name, "redirect", redirect)
    out: dict[str, dict[str, str | None]] = {}
    if code is not None or redirect is not None:
        out["finished"] = {"code": code, "redirect": redirect}
    table = cfg.get("completion")
    if table is None:
        return out
    if not isinstance(table, dict):
        raise fail(name, f"completion: tables [completion.<outcome>], outcomes {list(OUTCOMES)}")
    for outcome, given in table.items():
        key = f"completion.{outcome}"
        if outcome not in OUTCOMES:
            raise fail(name, f"{key}: unknown outcome (known: {list(OUTCOMES)})")
        if not isinstance(given, dict) or set(given) - {"code", "redirect"}:
            raise fail(name, f'{key}: a table of code = "..." and redirect = "https://..."')
        if outcome == "finished" and "finished" in out:
            old = " and ".join(k for k in ("completion_code", "redirect") if cfg.get(k) is not None)
            raise fail(
                name,
                f"{old} and {key}: the finished outcome's code and redirect given twice; "
                f"give {key} only",
            )
        _code(name, f"{key}.code", given.get("code"))
        _redirect(name, f"{key}.redirect", given.get("redirect"))
        code, redirect = given.get("code"), given.get("redirect")
        cc = _query_cc(redirect)
        if code is not None and cc is not None and cc not in (code, "{code}"):
            raise fail(
                name, f"{key}: the redirect's cc={cc} is not the code {code!r} (give the same)"
            )
        out[outcome] = {"code": code, "redirect": redirect}
    return out


def _query_cc(url: str | None) -> str | None:
    """The ``cc`` parameter of a URL (Prolific's completion code), or None."""
    from urllib.parse import parse_qs, urlsplit

    if url is None:
        return None
    found = parse_qs(urlsplit(url).query).get("cc")
    return found[0] if found else None


def check_redirects(name: str, ends: dict, params: tuple[str, ...]) -> None:
    """Each redirect of ``ends`` (:func:`completion`'s) names only ``params`` or ``code``.

    ``params``: the file's platform parameters (none without a platform). A ValueError
    naming the file, the outcome and the unknown name.
    """
    for outcome, given in ends.items():
        for found in _NAMED.findall(given.get("redirect") or ""):
            if found != "code" and found not in params:
                known = ", ".join(["code", *params])
                raise fail(
                    name,
                    f"completion.{outcome}.redirect: {{{found}}} is not a parameter of the "
                    f"platform's link (known: {known})",
                )


def fill_redirect(url: str, params: dict[str, str], code: str | None) -> str:
    """``url`` with the participant's link parameters and code filled in, URL-encoded.

    Each ``{name}`` of ``params``' names, and ``{code}``; a parameter their link did not
    carry: empty.
    """

    def value(m: re.Match) -> str:
        got = code if m.group(1) == "code" else params.get(m.group(1))
        return quote(got or "", safe="")

    return _NAMED.sub(value, url)
