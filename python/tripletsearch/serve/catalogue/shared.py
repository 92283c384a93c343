"""A catalogue's arrays shared by a server's worker processes: written once, mapped by each.

``tripletsearch serve`` writes the catalogue's embedding (as the service holds it, float64)
and the searchers' item store (the kernels' blocked single-precision layout,
``ItemStore.save``) to files named by the catalogue's fingerprint before any worker starts;
each worker maps both read-only. Their pages are then in memory once for all workers (and
count a share in each worker's PSS) where each worker held a copy: 120 MB per worker at a
million items of ten dimensions.

Nothing is read from a place others can write: the files live in a private folder
(:func:`private_directory`: this user's, written by no one else, checked even when it
exists already), and each file is checked against the SHA-256 recorded when it was made
(``<fingerprint>.sha256.json``) before it is used: a server rebuilds a file that is not
the one recorded (and says so), a worker refuses one (:func:`attach_shared`). The
embedding's file is also checked against the catalogue's own embedding.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import stat
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ...discrete import ItemStore
from .items import Catalogue

__all__ = ["default_directory", "private_directory", "share_catalogue", "attach_shared"]


def default_directory() -> Path:
    """``tripletsearch-<user id>`` in the system's temporary directory (owner-only)."""
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return Path(tempfile.gettempdir()) / f"tripletsearch-{uid}"


def private_directory(directory: str | Path | None = None, *, create: bool = True) -> Path:
    """``directory`` (default :func:`default_directory`), made owner-only, checked private.

    Made with mode 0700 when missing (``create``). Whether new or there already, it must be
    a real folder (not a symlink) owned by this user that neither its group nor others can
    write to: ``ValueError`` (one line naming the folder, its owner or mode, and what to do)
    otherwise, since a file read from it (a catalogue's arrays, a server's design) could
    have been planted by another user.
    """
    root = Path(directory) if directory is not None else default_directory()
    if create:
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
    st = os.lstat(root)
    fix = "remove it or set TMPDIR to a folder of your own"
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise ValueError(f"{root}: not a folder but a link or a file; {fix}")
    uid = os.getuid() if hasattr(os, "getuid") else st.st_uid
    if st.st_uid != uid:
        raise ValueError(
            f"{root}: owned by user id {st.st_uid}, not by this user ({uid}): its files could "
            f"have been planted; {fix}"
        )
    if st.st_mode & 0o022:
        raise ValueError(
            f"{root}: its group or others can write to it (mode {stat.S_IMODE(st.st_mode):04o}):"
            f" its files could have been planted; chmod 700 it, or {fix}"
        )
    return root


def _write_atomically(path: Path, write: Callable[[str], None]) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(str(tmp))
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _sha256(path: Path) -> str | None:
    """The file's SHA-256 (hex), or None when it cannot be read."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            while block := fh.read(1 << 22):
                digest.update(block)
    except OSError:
        return None
    return digest.hexdigest()


def _array_sha256(X: Any) -> str:
    """The SHA-256 of an array's shape, type and values (C order)."""
    X = np.ascontiguousarray(X)
    digest = hashlib.sha256(f"{X.dtype.str}{X.shape}".encode())
    digest.update(X.data)
    return digest.hexdigest()


def _recorded(path: Path) -> dict[str, Any]:
    try:
        got = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return got if isinstance(got, dict) else {}


def _problem(X: np.ndarray, emb: Path, store: Path, record: Path) -> str | None:
    """Why the files of ``X`` there cannot be used as they are (None: they can)."""
    if not (emb.exists() or store.exists()):
        return "missing"
    rec = _recorded(record)
    if rec.get("source") != _array_sha256(X):
        return f"no hash recorded for them in {record.name}"
    try:
        there = np.load(emb, mmap_mode="r", allow_pickle=False)
        same = there.shape == X.shape and _array_sha256(there) == rec["source"]
    except (OSError, ValueError):
        same = False
    if not same or _sha256(emb) != rec.get("embedding"):
        return f"{emb.name} is not the catalogue's embedding"
    if _sha256(store) != rec.get("store"):
        return f"{store.name} is not the store recorded when it was made (its hash differs)"
    return None


def share_catalogue(catalogue: Catalogue, directory: str | Path | None = None) -> dict[str, str]:
    """Write ``catalogue``'s embedding and item store for the workers to map.

    Files ``<fingerprint>.embedding.npy`` and ``<fingerprint>.store`` in ``directory``
    (default :func:`default_directory`; checked by :func:`private_directory`: ValueError
    when another user could write to it), written once (atomically) with their SHA-256 in
    ``<fingerprint>.sha256.json``; files of the same fingerprint are reused when they are
    the ones recorded (the embedding: equal to the catalogue's), else written anew, said
    in one line on stderr. Returns ``{"embedding": path, "store": path,
    "embedding_sha256": hex, "store_sha256": hex}``.
    """
    root = private_directory(directory)
    X = catalogue.embedding
    emb = root / f"{catalogue.fingerprint}.embedding.npy"
    store = root / f"{catalogue.fingerprint}.store"
    record = root / f"{catalogue.fingerprint}.sha256.json"
    problem = _problem(X, emb, store, record)
    if problem is not None:
        if problem != "missing":
            print(f"note: the catalogue's shared arrays written anew: {problem}", file=sys.stderr)

        def write_embedding(p: str) -> None:
            with open(p, "wb") as f:
                np.save(f, np.ascontiguousarray(X), allow_pickle=False)

        _write_atomically(emb, write_embedding)
        _write_atomically(store, ItemStore(X, scaled=True, distinct=True).save)
        hashes = {"source": _array_sha256(X), "embedding": _sha256(emb), "store": _sha256(store)}
        text = json.dumps(hashes, indent=2) + "\n"

        def write_record(p: str) -> None:
            Path(p).write_text(text, encoding="utf-8")

        _write_atomically(record, write_record)
    rec = _recorded(record)
    return {
        "embedding": str(emb),
        "store": str(store),
        "embedding_sha256": rec["embedding"],
        "store_sha256": rec["store"],
    }


def attach_shared(catalogue: Catalogue, shared: dict[str, str]) -> Catalogue:
    """``catalogue`` with the embedding and item store that :func:`share_catalogue` wrote.

    ``ValueError`` when the files are not this catalogue's (another shape), when their
    folder is not private (:func:`private_directory`), or when a file's SHA-256 is not the
    one recorded when it was made (``shared``'s ``embedding_sha256`` and ``store_sha256``):
    a file changed since, never used.
    """
    for key in ("embedding", "store"):
        private_directory(Path(shared[key]).parent, create=False)
        if _sha256(Path(shared[key])) != shared.get(f"{key}_sha256"):
            raise ValueError(
                f"{shared[key]}: not the file recorded when the server wrote it (its SHA-256 "
                "differs): refused; restart the server to write it anew"
            )
    X = np.load(shared["embedding"], mmap_mode="r")
    if X.shape != catalogue.embedding.shape or X.dtype != np.float64:
        raise ValueError(f"{shared['embedding']}: not this catalogue's embedding")
    return dataclasses.replace(
        catalogue, embedding=X, fingerprint=catalogue.fingerprint, store_file=shared["store"]
    )
