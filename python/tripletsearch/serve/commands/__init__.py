"""What the commands do: one module per command, each with its ``main(args)``.

``serve`` (check the inputs, set up the database, run the workers), ``export`` (with
``export_folder``: the folder it writes), ``report``, ``prune``, ``codes`` and
``participants`` (``release``); ``common``: what several share (the database, the catalogue
and the experiment the arguments name). The parsers are :mod:`..cli`'s, which imports a
command's module when that command runs (the parsers stay light). Every start-up error (a
bad file, a database that cannot be reached or is not a URL, an experiment file that would
change what people took part in) is one line on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import os
import secrets

__all__ = ["admin_token", "DEFAULT_TOKEN_FILE"]

DEFAULT_TOKEN_FILE = "tripletsearch-admin-token"


def admin_token(token: str | None, path: str | None) -> tuple[str, str]:
    """The admin token, and what the log says of it (never the token itself).

    ``token`` (``--admin-token``, visible in ``ps``, or ``TRIPLETSEARCH_ADMIN_TOKEN``) wins;
    else the file ``path`` (default ``tripletsearch-admin-token`` in the working
    directory) is read when it exists, and must be owner-only; else a token is generated
    and written to it, created owner-only (0600).
    """
    if token:
        return token, "admin token (GET /api/admin/export): as given"
    file = os.path.abspath(path or DEFAULT_TOKEN_FILE)
    if os.path.exists(file):
        if os.name == "posix" and os.stat(file).st_mode & 0o077:
            raise ValueError(
                f"--admin-token-file: {file} can be read or written by others (chmod 600 it)"
            )
        with open(file, encoding="utf-8") as f:
            found = f.read().strip()
        if not found:
            raise ValueError(f"--admin-token-file: {file} is empty")
        return found, f"admin token (GET /api/admin/export): read from {file}"
    made = secrets.token_urlsafe(24)
    fd = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(made + "\n")
    return made, f"admin token (GET /api/admin/export): generated, in {file} (owner-only)"
