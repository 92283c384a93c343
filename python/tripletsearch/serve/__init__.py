"""The search service: people search a catalogue in a browser.

Every screen and answer in a database, the answers exported as triplets for
:class:`~tripletsearch.Embedding`.

Needs the optional dependencies (``pip install 'tripletsearch[serve]'``); ``import
tripletsearch`` never imports this package. Run it with ``tripletsearch serve --demo
colours`` or build the ASGI app with :func:`create_app`.
"""

from __future__ import annotations

from typing import Any

from .catalogue import Catalogue, demo_catalogue, load_catalogue

__all__ = ["create_app", "Catalogue", "load_catalogue", "demo_catalogue"]


def create_app(catalogue: Any, database: str | None = None, **kwargs: Any) -> Any:
    """The service's ASGI app: ``create_app(catalogue, database, config=ServeConfig(...))``.

    Its settings are one :class:`~tripletsearch.serve.config.ServeConfig`; see
    :func:`tripletsearch.serve.web.app.create_app`.
    """
    try:
        from .web.app import create_app as _create_app  # optional: the serve extra
    except ImportError as exc:  # starlette / sqlalchemy missing
        raise ImportError(
            f"tripletsearch.serve needs the 'serve' extra: pip install 'tripletsearch[serve]' "
            f"({exc})"
        ) from exc
    return _create_app(catalogue, database, **kwargs)
