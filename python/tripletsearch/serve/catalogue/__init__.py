"""Catalogues: what a server lets people search, loaded and validated (NumPy only).

``items`` (the :class:`Catalogue` itself), ``files`` (a catalogue folder or CSV file read
and checked), ``demo`` (the bundled colours), ``shared`` (a catalogue's arrays written
once for a server's worker processes to map) and ``stimuli`` (its files' SHA-256, recorded
at an experiment's first start and checked after). It imports NumPy, the library and the
extension (the item store), nothing of the service.
"""

from __future__ import annotations

from .demo import DEMO_EXCLUDE, DEMOS, demo_catalogue
from .files import MAX_ITEMS_WITHOUT_EMBEDDING, load_catalogue, load_embedding_file
from .items import Catalogue, raster_type

__all__ = [
    "Catalogue",
    "load_catalogue",
    "load_embedding_file",
    "demo_catalogue",
    "raster_type",
    "DEMOS",
    "DEMO_EXCLUDE",
    "MAX_ITEMS_WITHOUT_EMBEDDING",
]
