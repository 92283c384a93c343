"""HTTPS: ``serve``'s certificate, key and key password, checked before the server listens.

uvicorn serves TLS itself (every worker), from the files :func:`tls_options` checked by
loading them as uvicorn will: a bad file, a key that is not the certificate's or a wrong
password is one line and exit code 2 before anything listens, never a traceback or a
prompt for the password on the terminal, and so is a certificate that has expired or is not
yet valid (its dates read with ``cryptography``, of the ``serve`` extra): every browser
would refuse the page. One that expires within :data:`EXPIRES_SOON_DAYS` days is said at
the start and on the dashboards (:func:`expiry_notice`). A renewed certificate takes a
restart (uvicorn reads the files at its start). Over TLS every reply says
``Strict-Transport-Security`` (:class:`~.middleware.StrictTransport`).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import time
from typing import Any

__all__ = [
    "tls_options",
    "checked_tls",
    "certificate_dates",
    "expiry_notice",
    "PASSWORD_ENV",
    "EXPIRES_SOON_DAYS",
]

#: The environment variable that may hold the key's password (not visible in ``ps``).
PASSWORD_ENV = "TRIPLETSEARCH_SSL_KEYFILE_PASSWORD"
#: A certificate that expires within this many days is said at the start and on dashboards.
EXPIRES_SOON_DAYS = 14


def _day(ts: float) -> str:
    return _dt.datetime.fromtimestamp(ts, tz=_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def certificate_dates(path: str) -> dict[str, Any]:
    """When the certificates of the PEM file ``path`` are valid, all of them together.

    ``{"file": path, "not_before": t, "not_after": t}`` (Unix times: the latest start and
    the earliest end of the file's certificates, the server's and its chain's). ValueError
    naming ``--ssl-certfile`` when ``cryptography`` is missing or the file holds none.
    """
    try:
        from cryptography import x509
    except ImportError:
        raise ValueError(
            "--ssl-certfile: reading the certificate's dates needs cryptography: "
            "pip install 'tripletsearch[serve]'"
        ) from None
    try:
        certs = x509.load_pem_x509_certificates(_read("--ssl-certfile", path))
    except ValueError:
        raise ValueError(f"--ssl-certfile: {path} holds no PEM certificate") from None
    start = max(c.not_valid_before_utc.timestamp() for c in certs)
    end = min(c.not_valid_after_utc.timestamp() for c in certs)
    return {"file": path, "not_before": start, "not_after": end}


def _check_dates(path: str, now: float | None = None) -> None:
    """ValueError (one line, the dates) when the certificate is not valid at ``now``."""
    dates = certificate_dates(path)
    now = time.time() if now is None else now
    start, end = dates["not_before"], dates["not_after"]
    if not start <= now <= end:
        what = "has expired" if now > end else "is not valid yet"
        raise ValueError(
            f"--ssl-certfile: {path} {what}: valid from {_day(start)} until {_day(end)} "
            f"(now {_day(now)}); every browser would refuse the page"
        )


def expiry_notice(dates: dict[str, Any] | None, now: float | None = None) -> str | None:
    """What to say of a certificate (:func:`certificate_dates`) that expires soon, or None.

    Within :data:`EXPIRES_SOON_DAYS` days of its end (or past it, on a server that has run
    since): one line with its date, to renew it and restart the server.
    """
    if not dates:
        return None
    now = time.time() if now is None else now
    end = float(dates["not_after"])
    left = end - now
    if left > EXPIRES_SOON_DAYS * 86400:
        return None
    if left <= 0:
        when = f"expired on {_day(end)}: browsers now refuse the page"
    else:
        n, unit = (int(left // 86400), "day") if left >= 86400 else (int(left // 3600), "hour")
        when = f"expires on {_day(end)} (in {n} {unit}{'s' * (n != 1)})"
    return (
        f"the HTTPS certificate {dates['file']} {when}; renew it and restart the server "
        "(tripletsearch serve reads it at its start)"
    )


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
    password), the certificate valid now (:func:`certificate_dates`). ``--hsts-max-age``:
    an integer >= 0.
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
    _check_dates(cert)
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


def checked_tls(args: argparse.Namespace) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """``serve``'s :func:`tls_options` and its certificate's dates (None: plain HTTP).

    A certificate that expires within :data:`EXPIRES_SOON_DAYS` days is said on stderr
    (:func:`expiry_notice`); ValueError as :func:`tls_options`.
    """
    import sys

    tls = tls_options(args)
    dates = certificate_dates(tls["ssl_certfile"]) if tls else None
    said = expiry_notice(dates)
    if said:
        print(f"warning: {said}", file=sys.stderr, flush=True)
    return tls, dates
