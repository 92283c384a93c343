"""The server's clock bound on people: recorded with the experiment, read by every check.

A participant whose median time per screen by the server's own clock (shown to answered)
is under a bound clicks without looking, whatever the page claims. The bound is a server
setting (``tripletsearch serve --fast-server-ms``, :attr:`~.config.ServeConfig.fast_server_ms`;
default :data:`FAST_SERVER_MS`, 0: never): the server records it with its experiment when it
starts (:func:`record_fast_server_ms`, in the experiment's ``settings``), and every check of
that experiment (a collect's, a study's; the refitter, the dashboard, the export, ``codes
--check``) reads it from there: :func:`fast_server_ms`. An export or ``codes --check`` may
still give ``--fast-server-ms`` to judge by another bound.
"""

from __future__ import annotations

from typing import Any

__all__ = ["FAST_SERVER_MS", "fast_server_ms", "record_fast_server_ms"]

# the default bound (ms): a quarter second, the page's own bound (collect.rules.FAST_MS).
# People took seconds per triplet in NEXT's and salmon's studies.
FAST_SERVER_MS = 250.0
SETTING = "fast_server_ms"  # its key in the experiment's stored settings


def _row(store: Any, key: str) -> Any:
    return next((r for r in store.experiments() if r.key == key), None)


def record_fast_server_ms(store: Any, key: str, ms: float) -> None:
    """Record ``ms`` as the server's clock bound of the experiment of key ``key``.

    Done by the server at its start (after it registered the experiment); nothing when
    ``store`` holds no experiment of that key.
    """
    if not 0 <= float(ms) < float("inf"):
        raise ValueError(f"fast_server_ms: expected a number >= 0, got {ms!r}")
    row = _row(store, key)
    if row is None or row.settings.get(SETTING) == float(ms):
        return
    store.update_experiment(row.name, row.design, {**row.settings, SETTING: float(ms)})


def fast_server_ms(store: Any, key: str | None) -> float:
    """The server's clock bound (ms) of the experiment of key ``key``, as its server recorded.

    :data:`FAST_SERVER_MS` when none is recorded (an experiment whose server has not started
    since this was kept, or ``key`` None).
    """
    row = None if key is None else _row(store, key)
    got = None if row is None else row.settings.get(SETTING)
    return FAST_SERVER_MS if got is None else float(got)


def bound(store: Any, key: str | None, given: float | None = None) -> float:
    """``given`` when given (an export's or ``codes --check``'s own bound), else the recorded one.

    (:func:`fast_server_ms`.)
    """
    return fast_server_ms(store, key) if given is None else float(given)
