"""Catalogues: the items a search service lets people search, loaded and validated.

Names, an embedding, and optionally a colour or an image per item. NumPy only.

On disk a catalogue is either

* a **folder** holding ``items.csv`` (columns ``name``, optional ``hex`` and ``image``;
  one row per item, the row is the item's id) and an embedding: ``embedding.npy``,
  ``embedding.csv`` (one row of numbers per item, no header) or ``embedding.npz`` (a
  fitted :class:`tripletsearch.Embedding` saved with ``Embedding.save``); image paths are
  relative to the folder and are served from it only; or
* a single **CSV file** with a header: ``name``, optional ``hex`` / ``image`` and the
  embedding in every other column.

A catalogue whose embedding is still to be learned (the collect mode asks people for the
triplets it is learned from) may have none: ``load_catalogue(path, embedding=False)``
takes a folder without an embedding file or a CSV file with no embedding columns, of at
most :data:`MAX_ITEMS_WITHOUT_EMBEDDING` items; its ``embedding`` has shape ``(n, 0)``.

A name written after a ``'`` that protects a formula-like text (``'=x``: a name beginning
with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return, as an export writes it for
spreadsheets, :func:`~..export.cell`) is read without it, so an exported catalogue loads
with the names it was served with.

Every problem is reported as a ``ValueError`` naming the file and the row.
"""

from __future__ import annotations

import csv
import os
import re
import unicodedata
from pathlib import Path
from typing import Any

import numpy as np

from .items import Catalogue, _inside, raster_type

__all__ = ["load_catalogue", "load_embedding_file", "MAX_ITEMS_WITHOUT_EMBEDDING"]

_HEX = re.compile(r"^#[0-9a-fA-F]{6}$")
_RESERVED = {"name", "hex", "image"}
MAX_ITEMS = 10_000_000
# a catalogue without an embedding is one people are asked about item by item
MAX_ITEMS_WITHOUT_EMBEDDING = 10_000

MAX_NAME_LENGTH = 200
# control (Cc), format (Cf: bidirectional overrides, zero-width characters, soft hyphens),
# surrogate (Cs) and private-use (Co) characters, and line and paragraph separators
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Zl", "Zp"})


def _check_name(file: str, row: int, name: str) -> None:
    """A name people can read: at most MAX_NAME_LENGTH characters, nothing invisible."""
    if len(name) > MAX_NAME_LENGTH:
        raise ValueError(
            f"{file}: row {row}: name of {len(name)} characters (at most {MAX_NAME_LENGTH})"
        )
    if name.isprintable():  # the usual case, in C: none of those categories
        return
    for ch in name:
        if unicodedata.category(ch) in _HIDDEN_CATEGORIES:
            raise ValueError(
                f"{file}: row {row}: name {name!r} holds the invisible or control character "
                f"U+{ord(ch):04X} ({unicodedata.name(ch, 'unnamed')}); names are shown to "
                "people as they are"
            )


def _check_items(
    file: str,
    names: list[str],
    hexes: list[str] | None,
    images: list[str] | None,
    root: Path | None,
    first_row: int,
) -> None:
    """Check names present and unique, colours ``#rrggbb``, image files inside ``root``.

    The rows are named as in the file (``first_row``: the file line of item 0).
    """
    seen: dict[str, int] = {}
    for i, name in enumerate(names):
        row = first_row + i
        if not name.strip():
            raise ValueError(f"{file}: row {row}: missing name")
        _check_name(file, row, name)
        # (ASCII is its own NFKC form: the usual name skips the normalization)
        key = " ".join((name if name.isascii() else unicodedata.normalize("NFKC", name)).split())
        if key in seen:
            raise ValueError(
                f"{file}: row {row}: duplicate name {name!r} "
                f"(first at row {first_row + seen[key]}; names are compared in Unicode NFKC "
                "form with their spaces collapsed)"
            )
        seen[key] = i
        if hexes is not None and not _HEX.match(hexes[i]):
            raise ValueError(f"{file}: row {row}: bad colour {hexes[i]!r} (expected #rrggbb)")
        if images is not None:
            if root is None:
                raise ValueError(f"{file}: images need a catalogue folder")
            found = _inside(root, images[i])
            if found is None:
                raise ValueError(
                    f"{file}: row {row}: image {images[i]!r} is not a file inside {root}"
                )
            if raster_type(found) is None:
                raise ValueError(
                    f"{file}: row {row}: image {images[i]!r} is not a PNG, JPEG, GIF, WebP or "
                    "AVIF file (by its content; other types, SVG and HTML among them, are "
                    "not served)"
                )


def _check_embedding(file: str, X: np.ndarray, n: int | None, first_row: int) -> np.ndarray:
    """A finite (n, d) embedding without duplicate rows, rows named as in the file."""
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2 or X.shape[1] == 0:
        raise ValueError(f"{file}: expected a 2-d embedding (items x dimensions), got {X.shape}")
    if n is not None and X.shape[0] != n:
        raise ValueError(f"{file}: {X.shape[0]} embedding rows for {n} items")
    if X.shape[0] < 2:
        raise ValueError(f"{file}: a catalogue needs at least 2 items, got {X.shape[0]}")
    bad = ~np.isfinite(X)
    if bad.any():
        r, c = (int(v) for v in np.argwhere(bad)[0])
        raise ValueError(f"{file}: row {first_row + r}, column {c}: not a finite number")
    X = np.ascontiguousarray(X, dtype=np.float64)
    dup = first_duplicate_row(X)
    if dup is not None:
        raise ValueError(
            f"{file}: row {first_row + dup[0]}: duplicate embedding row (the same as row "
            f"{first_row + dup[1]}); items must be distinguishable"
        )
    return X


def first_duplicate_row(X: np.ndarray) -> tuple[int, int] | None:
    """The first row equal to an earlier one and that earlier row's first index, or None.

    Rows compare as numbers (``-0.0 == 0.0``; no NaN here), as ``np.unique(X, axis=0)``
    does. Rows are hashed to 64 bits first and only the rows whose hash is shared compared
    exactly: a million rows of ten dimensions in about 0.2 s, where sorting the rows
    themselves took 3.3 s (a catalogue's start-up).
    """
    Y = np.ascontiguousarray(X, dtype=np.float64) + 0.0  # -0.0 as 0.0
    mult = np.arange(1, Y.shape[1] + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    h = (Y.view(np.uint64) * (mult | np.uint64(1))).sum(axis=1, dtype=np.uint64)
    h ^= h >> np.uint64(29)
    order = np.argsort(h, kind="stable")
    hs = h[order]
    shared = np.zeros(len(h), dtype=bool)
    same = hs[1:] == hs[:-1]
    shared[1:] |= same
    shared[:-1] |= same
    rows = np.sort(order[shared])  # the candidates, in their order in X
    if len(rows) == 0:
        return None
    _, first, inverse = np.unique(Y[rows], axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    dup = np.nonzero(first[inverse] != np.arange(len(rows)))[0]
    if len(dup) == 0:
        return None
    r = int(dup[0])
    return int(rows[r]), int(rows[first[inverse[r]]])


def _csv_rows(path: Path) -> list[list[str]]:
    """The rows of a CSV file (UTF-8, BOM tolerated; trailing blank lines ignored).

    Row numbers in messages are file lines, from 1.
    """
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            rows = list(csv.reader(fh))
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text ({exc.reason})") from None
    except csv.Error as exc:
        raise ValueError(f"{path}: malformed CSV ({exc})") from None
    while rows and not any(c.strip() for c in rows[-1]):
        rows.pop()
    if not rows:
        raise ValueError(f"{path}: empty file")
    return rows


def _read_csv(path: Path) -> tuple[list[str], list[list[str]]]:
    """Header and rows of a CSV file with a header (row 1)."""
    rows = _csv_rows(path)
    header = [h.strip().lower() for h in rows[0]]
    body = rows[1:]
    if len(body) > MAX_ITEMS:
        raise ValueError(f"{path}: more than {MAX_ITEMS} items")
    for i, r in enumerate(body):
        if len(r) != len(header):
            raise ValueError(f"{path}: row {i + 2}: {len(r)} fields, the header has {len(header)}")
    return header, body


# a spreadsheet-safe cell: a ' before a text a spreadsheet would run (export.FORMULA_STARTS)
_PROTECTED = re.compile(r"'(?=[=+\-@\t\r])")


def _column(header: list[str], body: list[list[str]], name: str) -> list[str] | None:
    if name not in header:
        return None
    j = header.index(name)
    if name == "name":  # as written (but a spreadsheet-safe cell's ')
        return [r[j][1:] if _PROTECTED.match(r[j]) else r[j] for r in body]
    return [r[j].strip() for r in body]


def _numbers(path: Path, rows: list[list[str]], first_row: int, first_col: int = 0) -> np.ndarray:
    """Rows of numbers, a clear error for the first that is not one."""
    out = np.empty((len(rows), len(rows[0]) if rows else 0))
    for i, r in enumerate(rows):
        if len(r) != out.shape[1]:
            raise ValueError(
                f"{path}: row {first_row + i}: {len(r)} values, row {first_row} has {out.shape[1]}"
            )
        for j, v in enumerate(r):
            try:
                out[i, j] = float(v)
            except ValueError:
                raise ValueError(
                    f"{path}: row {first_row + i}, column {first_col + j}: {v!r} is not a number"
                ) from None
    return out


def load_embedding_file(path: Path, n: int) -> np.ndarray:
    """The embedding of a catalogue folder: .npy, .csv or an ``Embedding.save`` .npz."""
    if path.suffix == ".npy":
        try:
            X = np.load(path, allow_pickle=False)
        except ValueError as exc:
            raise ValueError(f"{path}: not a NumPy array file ({exc})") from None
        if not np.issubdtype(X.dtype, np.number) or np.iscomplexobj(X) or X.dtype == bool:
            raise ValueError(f"{path}: expected real numbers, got dtype {X.dtype}")
        return _check_embedding(str(path), np.asarray(X, dtype=np.float64), n, 0)
    if path.suffix == ".npz":
        from ...embedding import Embedding  # start-up: the native core, for an .npz only

        return _check_embedding(str(path), Embedding.load(path).embedding_, n, 0)
    return _check_embedding(str(path), _numbers(path, _csv_rows(path), 1), n, 1)


def load_catalogue(path: Any, *, title: str | None = None, embedding: bool = True) -> Catalogue:
    """Load and validate a catalogue folder or CSV file (see the module docstring).

    ``embedding=False``: the embedding may be absent (then at most
    :data:`MAX_ITEMS_WITHOUT_EMBEDDING` items, ``embedding`` of shape ``(n, 0)``); one
    present is loaded and checked as always.
    """
    p = Path(os.fspath(path))
    if not p.exists():
        raise FileNotFoundError(f"catalogue: {p} does not exist")
    if p.is_dir():
        items = p / "items.csv"
        if not items.is_file():
            raise ValueError(f"catalogue: {p} has no items.csv")
        header, body = _read_csv(items)
        if "name" not in header:
            raise ValueError(f"{items}: no 'name' column (header: {header})")
        extra = [h for h in header if h not in _RESERVED]
        if extra:
            raise ValueError(
                f"{items}: unknown columns {extra} (items.csv holds name, hex, image; the "
                "embedding is a separate file)"
            )
        names = _column(header, body, "name") or []
        hexes, images = _column(header, body, "hex"), _column(header, body, "image")
        _check_items(str(items), names, hexes, images, p, 2)
        found = [p / f for f in ("embedding.npy", "embedding.csv", "embedding.npz")]
        present = [f for f in found if f.is_file()]
        if not present and not embedding:
            X = _no_embedding(str(items), len(names))
        elif len(present) != 1:
            raise ValueError(
                f"catalogue: {p} needs exactly one of embedding.npy, embedding.csv, "
                f"embedding.npz (found {[f.name for f in present]})"
            )
        else:
            X = load_embedding_file(present[0], len(names))
        return Catalogue(
            tuple(names),
            X,
            None if hexes is None else tuple(h.lower() for h in hexes),
            None if images is None else tuple(images),
            p,
            title or p.name,
            source=p,
        )
    header, body = _read_csv(p)
    if "name" not in header:
        raise ValueError(f"{p}: no 'name' column (header: {header})")
    names = _column(header, body, "name") or []
    hexes, images = _column(header, body, "hex"), _column(header, body, "image")
    cols = [j for j, h in enumerate(header) if h not in _RESERVED]
    if not cols and embedding:
        raise ValueError(f"{p}: no embedding columns (every column but name, hex, image)")
    _check_items(str(p), names, hexes, images, p.parent, 2)
    if cols:
        X = _numbers(p, [[r[j] for j in cols] for r in body], 2, cols[0])
        X = _check_embedding(str(p), X, len(names), 2)
    else:
        X = _no_embedding(str(p), len(names))
    return Catalogue(
        tuple(names),
        X,
        None if hexes is None else tuple(h.lower() for h in hexes),
        None if images is None else tuple(images),
        p.parent if images is not None else None,
        title or p.stem,
        source=p,
    )


def _no_embedding(file: str, n: int) -> np.ndarray:
    """The ``(n, 0)`` embedding of a catalogue without one (at most the bound's items)."""
    if n > MAX_ITEMS_WITHOUT_EMBEDDING:
        raise ValueError(
            f"{file}: {n} items without an embedding (at most "
            f"{MAX_ITEMS_WITHOUT_EMBEDDING:,}: people are asked about them one by one)"
        )
    return np.zeros((n, 0))
