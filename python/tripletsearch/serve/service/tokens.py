"""Bearer tokens of sessions and participants: drawn from ``secrets``, stored as hashes."""

from __future__ import annotations

import hashlib
import hmac
import secrets

__all__ = ["new_id", "new_token", "token_hash", "token_matches"]


def new_id() -> str:
    """A session id: 128 random bits, URL-safe, beginning with a letter or a digit.

    One in 32 URL-safe ids would begin with ``-`` or ``_``; the first kind reads as a
    formula in a spreadsheet, so the export writes it after a ``'`` and the id in the CSV
    no longer matches the id the server and the platform know. Drawn again (about 127.9
    bits remain).
    """
    while True:
        sid = secrets.token_urlsafe(16)
        if sid[0].isalnum():
            return sid


def new_token() -> str:
    """A bearer token: 256 random bits, URL-safe."""
    return secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    """The SHA-256 of ``token`` (hex): what the database keeps."""
    return hashlib.sha256(token.encode()).hexdigest()


def token_matches(token: str | None, stored_hash: str) -> bool:
    """Whether ``token`` is the one whose hash is ``stored_hash`` (constant time)."""
    return bool(token) and hmac.compare_digest(token_hash(token or ""), stored_hash)
