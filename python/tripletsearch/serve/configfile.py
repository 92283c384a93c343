"""What the study and collect files share.

Reading the TOML, naming the file in every error, the catalogue they name, and the end of
a participant's part (the completion code or the link back to a crowdsourcing platform).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from .catalogue import DEMOS, Catalogue, demo_catalogue, load_catalogue

__all__ = ["fail", "is_integer", "read_toml", "file_catalogue", "ending"]


def fail(path: str, message: str) -> ValueError:
    """The error of file ``path``: ``"<path>: <message>"``."""
    return ValueError(f"{path}: {message}")


def is_integer(value: Any) -> bool:
    """An int that is not a bool (TOML's true is not 1)."""
    return isinstance(value, int) and not isinstance(value, bool)


def read_toml(name: str) -> dict:
    """The file's table; a ValueError naming it when it is not valid TOML."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - the serve extra installs tomli there
        import tomli as tomllib
    try:
        with open(name, "rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise fail(name, f"not valid TOML ({exc})") from None


def file_catalogue(name: str, source: Any, *, embedding: bool = True) -> Catalogue:
    """The catalogue the file names: a demo, or a path relative to the file."""
    if not isinstance(source, str) or not source:
        raise fail(name, "catalogue: give a demo name ('colours') or a catalogue path")
    if source in DEMOS:
        return demo_catalogue(source)
    p = Path(source)
    return load_catalogue(p if p.is_absolute() else Path(name).parent / p, embedding=embedding)


def ending(name: str, cfg: dict) -> tuple[str | None, str | None]:
    """The file's ``completion_code`` and ``redirect`` (None when absent), checked."""
    code, redirect = cfg.get("completion_code"), cfg.get("redirect")
    if code is not None and (not isinstance(code, str) or not 0 < len(code) <= 200):
        raise fail(name, "completion_code: a string of 1 to 200 characters")
    if redirect is not None and (
        not isinstance(redirect, str) or not redirect.startswith(("https://", "http://"))
    ):
        raise fail(name, "redirect: an http:// or https:// URL")
    return code, redirect
