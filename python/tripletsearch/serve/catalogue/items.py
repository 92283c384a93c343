"""A catalogue: the items a search service lets people search.

Names, an embedding, and optionally a colour or an image per item. NumPy only; loaded by
:mod:`.files`.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["Catalogue", "raster_type"]


@dataclass(frozen=True)
class Catalogue:
    """Items a search service serves.

    Attributes
    ----------
    names : tuple of str
        One per item; the item's id is its position.
    embedding : ndarray (n, d)
        The searcher's embedding (finite, no duplicate rows).
    hex : tuple of str or None
        ``#rrggbb`` per item (a colour catalogue), or None.
    images : tuple of str or None
        Image path per item, relative to ``root`` (None: no images).
    root : Path or None
        The folder images are served from.
    title : str
    fingerprint : str
        Of the embedding and the names (computed when not given).
    store_file : str or None
        The searcher's item store of this embedding in a file to map (:mod:`.shared`), or
        None: each searcher template builds its own.
    source : Path or None
        The folder or CSV file it was loaded from (None: a demo, or built in code): whose
        files :mod:`~tripletsearch.serve.catalogue.stimuli` records.
    """

    names: tuple[str, ...]
    embedding: np.ndarray
    hex: tuple[str, ...] | None = None
    images: tuple[str, ...] | None = None
    root: Path | None = None
    title: str = "catalogue"
    fingerprint: str = field(default="", compare=False)
    store_file: str | None = field(default=None, compare=False)
    source: Path | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        X = np.ascontiguousarray(self.embedding, dtype=np.float64)
        X.setflags(write=False)
        object.__setattr__(self, "embedding", X)
        if not self.fingerprint:
            h = hashlib.sha256(X.tobytes())
            h.update("\n".join(self.names).encode())
            object.__setattr__(self, "fingerprint", h.hexdigest()[:16])

    @property
    def n_items(self) -> int:
        """Number of items."""
        return len(self.names)

    @property
    def dim(self) -> int:
        """Dimension of the embedding."""
        return int(self.embedding.shape[1])

    @property
    def has_embedding(self) -> bool:
        """Whether the items have an embedding (a catalogue to collect triplets for may not)."""
        return self.dim > 0

    @property
    def has_colours(self) -> bool:
        """Whether the items have colours (``hex``)."""
        return self.hex is not None

    def item(self, i: int) -> dict[str, Any]:
        """The public record of item ``i``.

        ``id``, ``name``, ``hex`` (or None) and, with images, ``image`` (its URL path).
        """
        out: dict[str, Any] = {
            "id": int(i),
            "name": self.names[i],
            "hex": None if self.hex is None else self.hex[i],
        }
        if self.images is not None:
            out["image"] = f"/images/{int(i)}"
        return out

    def without(self, names: Any) -> tuple[Catalogue, np.ndarray]:
        """The catalogue less the items named in ``names``, and where its items went.

        Returns the new catalogue (its own fingerprint) and, per item of this one, its id
        there (-1: left out). ValueError naming the names that are not in it.
        """
        drop = set(names)
        unknown = sorted(drop - set(self.names))
        if unknown:
            raise ValueError(f"exclude: not in the catalogue: {', '.join(map(repr, unknown))}")
        keep = np.array([n not in drop for n in self.names])
        new_id = np.full(self.n_items, -1, dtype=np.int64)
        new_id[keep] = np.arange(int(keep.sum()))
        ids = np.flatnonzero(keep)
        part = Catalogue(
            names=tuple(self.names[i] for i in ids),
            embedding=self.embedding[keep],
            hex=None if self.hex is None else tuple(self.hex[i] for i in ids),
            images=None if self.images is None else tuple(self.images[i] for i in ids),
            root=self.root,
            title=self.title,
            source=self.source,
        )
        return part, new_id

    @cached_property
    def _folded_names(self) -> tuple[str, ...]:
        return tuple(n.casefold() for n in self.names)

    def page(self, offset: int, limit: int, q: str = "") -> tuple[int, list[int]]:
        """Up to ``limit`` item ids from ``offset`` on, of those whose names contain ``q``.

        ``q`` is matched case-insensitively ("" matches every item). Returns the number of
        matching items and the page's ids.
        """
        if not q:
            return self.n_items, list(
                range(min(offset, self.n_items), min(offset + limit, self.n_items))
            )
        needle = q.casefold()
        hits = [i for i, name in enumerate(self._folded_names) if needle in name]
        return len(hits), hits[offset : offset + limit]

    def image_path(self, i: int) -> Path | None:
        """The file of item ``i``'s image, resolved inside ``root`` (None: no image)."""
        if self.images is None or self.root is None or not 0 <= i < self.n_items:
            return None
        return _inside(self.root, self.images[i])


# ---------------------------------------------------------------------- validation


# The raster formats served as images, by their first bytes (never by the file's name: an
# ".svg" or ".html" "image" would run script in the service's origin).
_RASTER_MAGIC: tuple[tuple[str, bytes, int], ...] = (
    ("image/png", b"\x89PNG\r\n\x1a\n", 0),
    ("image/jpeg", b"\xff\xd8\xff", 0),
    ("image/gif", b"GIF87a", 0),
    ("image/gif", b"GIF89a", 0),
    ("image/webp", b"WEBP", 8),  # after "RIFF" and the size
    ("image/avif", b"ftypavif", 4),
)


def raster_type(path: Path) -> str | None:
    """The image's media type by its first bytes (PNG, JPEG, GIF, WebP, AVIF), else None."""
    try:
        with open(path, "rb") as f:
            head = f.read(16)
    except OSError:
        return None
    for kind, magic, at in _RASTER_MAGIC:
        if head[at : at + len(magic)] == magic and (at != 8 or head[:4] == b"RIFF"):
            return kind
    return None


def _inside(root: Path, rel: str) -> Path | None:
    """``root / rel`` when it resolves to a file inside ``root``, else None."""
    if not rel or os.path.isabs(rel) or "\\" in rel or "\x00" in rel:
        return None
    base = root.resolve()
    p = (base / rel).resolve()
    if base != p and base not in p.parents:
        return None
    return p if p.is_file() else None
