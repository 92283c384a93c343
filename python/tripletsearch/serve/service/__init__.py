"""Sessions without HTTP: the search service, live searchers, records.

``search`` (:class:`SearchService`: sessions created, answered, undone, replayed),
``live`` (the in-process cache of searchers), ``tokens``, ``recorded`` (stored sessions
read with the outcome rules) and ``memory`` (the process's memory and its budget: NumPy
and the standard library only, for the command line). It imports the modes, the store and
the catalogue, never the web layer, the participants (:mod:`..participation`) or an
experiment kind.
"""

from __future__ import annotations

from typing import Any

__all__ = ["SearchService", "Owner"]


def __getattr__(name: str) -> Any:
    """``SearchService`` and ``Owner``, imported when first used (``memory`` stays light)."""
    if name in __all__:
        from . import search  # start-up: the command line reads .memory without the store

        return getattr(search, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
