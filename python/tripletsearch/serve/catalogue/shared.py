"""A catalogue's arrays shared by a server's worker processes: written once, mapped by each.

``tripletsearch serve`` writes the catalogue's embedding (as the service holds it, float64)
and the searchers' item store (the kernels' blocked single-precision layout,
``ItemStore.save``) to files named by the catalogue's fingerprint before any worker starts;
each worker maps both read-only. Their pages are then in memory once for all workers (and
count a share in each worker's PSS) where each worker held a copy: 120 MB per worker at a
million items of ten dimensions.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ...discrete import ItemStore
from .items import Catalogue

__all__ = ["default_directory", "share_catalogue", "attach_shared"]


def default_directory() -> Path:
    """``tripletsearch-<user id>`` in the system's temporary directory (owner-only)."""
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return Path(tempfile.gettempdir()) / f"tripletsearch-{uid}"


def _write_atomically(path: Path, write: Callable[[str], None]) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(str(tmp))
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def share_catalogue(catalogue: Catalogue, directory: str | Path | None = None) -> dict[str, str]:
    """Write ``catalogue``'s embedding and item store for the workers to map.

    Files ``<fingerprint>.embedding.npy`` and ``<fingerprint>.store`` in ``directory``
    (default :func:`default_directory`), written once (atomically; files of the same
    fingerprint are reused). Returns ``{"embedding": path, "store": path}``.
    """
    root = Path(directory) if directory is not None else default_directory()
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    X = catalogue.embedding
    emb = root / f"{catalogue.fingerprint}.embedding.npy"
    store = root / f"{catalogue.fingerprint}.store"
    try:
        ok = np.load(emb, mmap_mode="r").shape == X.shape
    except (OSError, ValueError):
        ok = False
    if not ok:

        def write_embedding(p: str) -> None:
            with open(p, "wb") as f:
                np.save(f, np.ascontiguousarray(X), allow_pickle=False)

        _write_atomically(emb, write_embedding)
    try:
        mapped = ItemStore.map(str(store))
        ok = (mapped.n, mapped.d) == X.shape
    except ValueError:
        ok = False
    if not ok:
        _write_atomically(store, ItemStore(X, scaled=True, distinct=True).save)
    return {"embedding": str(emb), "store": str(store)}


def attach_shared(catalogue: Catalogue, shared: dict[str, str]) -> Catalogue:
    """``catalogue`` with the embedding and item store that :func:`share_catalogue` wrote.

    ``ValueError`` when the files are not this catalogue's (another shape).
    """
    X = np.load(shared["embedding"], mmap_mode="r")
    if X.shape != catalogue.embedding.shape or X.dtype != np.float64:
        raise ValueError(f"{shared['embedding']}: not this catalogue's embedding")
    return dataclasses.replace(
        catalogue, embedding=X, fingerprint=catalogue.fingerprint, store_file=shared["store"]
    )
