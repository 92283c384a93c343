"""HTTPS: ``serve``'s certificate, key and key password, checked before the server listens.

uvicorn serves TLS itself (every worker), from the files :func:`tls_options` checked by
loading them as uvicorn will: a bad file, a key that is not the certificate's or a wrong
password is one line and exit code 2 before anything listens, never a traceback or a
prompt for the password on the terminal. A renewed certificate takes a restart (uvicorn
reads the files at its start). Over TLS every reply says ``Strict-Transport-Security``
(:class:`~.middleware.StrictTransport`). The standard library only.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

__all__ = ["tls_options", "PASSWORD_ENV"]

#: The environment variable that may hold the key's password (not visible in ``ps``).
PASSWORD_ENV = "TRIPLETSEARCH_SSL_KEYFILE_PASSWORD"


def _read(option: str, path: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise ValueError(f"{option}: cannot read {path}: {exc.strerror or exc}") from None


def _key_password(args: argparse.Namespace) -> str | None:
    """The key's password: ``--ssl-keyfile-password``, its file, or the environment's."""
    given = getattr(args, "ssl_keyfile_password", None)
    path = getattr(args, "ssl_keyfile_password_file", None)
    if given is not None and path is not None:
        raise ValueError("--ssl-keyfile-password and --ssl-keyfile-password-file: give one")
    if path is not None:
        if os.name == "posix" and os.path.exists(path) and os.stat(path).st_mode & 0o077:
            raise ValueError(
                f"--ssl-keyfile-password-file: {path} can be read or written by others "
                "(chmod 600 it)"
            )
        lines = _read("--ssl-keyfile-password-file", path).decode("utf-8").splitlines()
        if not lines or not lines[0]:
            raise ValueError(f"--ssl-keyfile-password-file: {path} is empty")
        return lines[0]
    return given if given is not None else os.environ.get(PASSWORD_ENV) or None


def tls_options(args: argparse.Namespace) -> dict[str, Any]:
    """``serve``'s HTTPS options checked: uvicorn's ``ssl_*`` keywords ({}: plain HTTP).

    ``args``: the command line (``ssl_certfile``, ``ssl_keyfile``, ``ssl_keyfile_password``,
    ``ssl_keyfile_password_file``, ``hsts_max_age``; those missing: not given). Both
    ``--ssl-certfile`` and ``--ssl-keyfile`` or neither; each readable, the certificate a
    PEM certificate, the key a PEM private key that matches it, opened with its password
    when it has one (``--ssl-keyfile-password``, ``--ssl-keyfile-password-file`` or
    :data:`PASSWORD_ENV`). Checked by loading them as the server will, before it listens:
    a ValueError naming the option otherwise (never a prompt on the terminal for a key's
    password). ``--hsts-max-age``: an integer >= 0.
    """
    import ssl

    age = getattr(args, "hsts_max_age", 0)
    if isinstance(age, bool) or not isinstance(age, int) or age < 0:
        raise ValueError(f"--hsts-max-age: expected an integer >= 0 (seconds), got {age}")
    cert, key = getattr(args, "ssl_certfile", None), getattr(args, "ssl_keyfile", None)
    password = _key_password(args)
    if cert is None and key is None:
        named = ("ssl_keyfile_password", "ssl_keyfile_password_file")
        if any(getattr(args, n, None) is not None for n in named):
            raise ValueError("--ssl-keyfile-password: the password of --ssl-keyfile; give both")
        return {}
    if key is None:
        raise ValueError("--ssl-certfile: give its private key with --ssl-keyfile too")
    if cert is None:
        raise ValueError("--ssl-keyfile: give its certificate with --ssl-certfile too")
    cert, key = os.path.abspath(cert), os.path.abspath(key)
    _read("--ssl-certfile", cert)
    _read("--ssl-keyfile", key)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        ctx.load_verify_locations(cafile=cert)
    except ssl.SSLError:
        raise ValueError(f"--ssl-certfile: {cert} holds no PEM certificate") from None
    asked = []

    def secret() -> str:
        asked.append(True)
        if password is None:
            raise ValueError(
                f"--ssl-keyfile: {key} is encrypted: give its password (--ssl-keyfile-password"
                f"-file FILE or {PASSWORD_ENV})"
            )
        return password

    try:
        ctx.load_cert_chain(cert, key, password=secret)
    except ssl.SSLError as exc:
        if "KEY_VALUES_MISMATCH" in str(exc):
            raise ValueError(f"--ssl-keyfile: {key} is not the key of {cert}") from None
        if asked:
            raise ValueError(f"--ssl-keyfile-password: wrong password for {key}") from None
        raise ValueError(
            f"--ssl-keyfile: {key} holds no PEM private key (or --ssl-certfile {cert} "
            "begins with no certificate)"
        ) from None
    out = {"ssl_certfile": cert, "ssl_keyfile": key}
    if password is not None:
        out["ssl_keyfile_password"] = password
    return out
