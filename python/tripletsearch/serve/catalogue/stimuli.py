"""Stimuli fixed by checksum: the catalogue's files recorded at an experiment's first start.

At a study's or a collect's first start (:func:`record_or_check`, from
:func:`~tripletsearch.serve.experiment.bind`) every file of its catalogue (each item's
picture, the items file, the embedding file) is recorded with its size in bytes and
SHA-256: the **manifest** (:func:`manifest`), ``{path relative to the catalogue's folder:
{"bytes", "sha256"}}``, kept in the experiment's stored settings
(``ts_experiments.settings``, key ``"stimuli"``: ``{"files": manifest}``; no column of its
own). A demo catalogue has no files: its manifest is empty (its names and colours are in
the experiment's design already).

A later start compares the files with it. Once people took part, a changed or missing file
refuses the start (:class:`StimuliChanged`, a ValueError: ``serve`` prints its one line and
exits 2, before anything listens); before anyone did, the files are recorded anew (as the
design is). An experiment started before this version records them at its next start and
says so once (a line on stderr).

While it runs, :class:`StimulusGuard` serves a picture only as the bytes that were checked:
each file is hashed once per process and then known by its (size, mtime_ns, inode); a file
whose stat changed is hashed again and served only when its SHA-256 is still the recorded
one (else an error and one log line, never another stimulus).
"""

from __future__ import annotations

import hashlib
import logging
import os
import sys
import threading
from pathlib import Path
from typing import Any

__all__ = [
    "StimuliChanged",
    "StimulusGuard",
    "catalogue_files",
    "check_recorded",
    "file_digest",
    "manifest",
    "record_or_check",
    "MANIFEST_KEY",
]

#: The key of the manifest in an experiment's stored settings.
MANIFEST_KEY = "stimuli"
_CHUNK = 1 << 20
log = logging.getLogger("tripletsearch.serve")


class StimuliChanged(ValueError):
    """A catalogue file differs from the one recorded at the experiment's first start."""


def file_digest(path: Any) -> tuple[int, str]:
    """``(bytes, sha256 hex)`` of the file at ``path``."""
    h, n = hashlib.sha256(), 0
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
            n += len(chunk)
    return n, h.hexdigest()


def _folder(cat: Any) -> Path | None:
    src = getattr(cat, "source", None)
    if src is None:
        return None
    src = Path(src)
    return src if src.is_dir() else src.parent


def catalogue_files(cat: Any) -> dict[str, tuple[Path, str | None]]:
    """The files of catalogue ``cat``: ``{path relative to its folder: (path, item or None)}``.

    The items file (``items.csv``, or the CSV file itself), the embedding file of a folder
    (``embedding.npy``/``.csv``/``.npz``, when present) and each item's picture (the item's
    name; a picture of several items: the first's). A demo catalogue has none.
    """
    folder = _folder(cat)
    if folder is None:
        return {}
    src = Path(cat.source)
    out: dict[str, tuple[Path, str | None]] = {}
    if src.is_dir():
        for f in ("items.csv", "embedding.npy", "embedding.csv", "embedding.npz"):
            if (src / f).is_file():
                out[f] = (src / f, None)
    else:
        out[src.name] = (src, None)
    for i, rel in enumerate(cat.images or ()):
        out.setdefault(rel, (folder / rel, cat.names[i]))
    return out


def manifest(cat: Any) -> dict[str, dict[str, Any]]:
    """``{path relative to the catalogue's folder: {"bytes", "sha256"}}`` of its files.

    FileNotFoundError naming a file that is missing.
    """
    return {
        rel: dict(zip(("bytes", "sha256"), file_digest(path)))
        for rel, (path, _) in sorted(catalogue_files(cat).items())
    }


def _differences(cat: Any, recorded: dict, path: str, kind: str, name: str) -> str | None:
    """The one line saying the first recorded file that is missing or changed, or None."""
    files = catalogue_files(cat)
    folder = _folder(cat)
    for rel, want in sorted(recorded.items()):
        where, item = files.get(rel, (None if folder is None else folder / rel, None))
        what = f"item {item!r}: " if item is not None else ""
        try:
            size, digest = file_digest(where) if where is not None else (None, None)
        except OSError:
            size = digest = None
        if digest is None:
            state = "is missing"
        elif (size, digest) != (want.get("bytes"), want.get("sha256")):
            state = (
                f"changed ({want.get('bytes')} bytes, SHA-256 {str(want.get('sha256'))[:12]}... "
                f"recorded; now {size} bytes, {digest[:12]}...)"
            )
        else:
            continue
        return (
            f"{path}: {what}file {where} {state} since {kind} {name!r} was first started; "
            f'put the recorded file back, or give the file a new name (name = "...") to start '
            f"a new {kind} with these files"
        )
    return None


def record_or_check(store: Any, experiment: Any) -> dict[str, dict[str, Any]] | None:
    """Record the catalogue's manifest with the bound ``experiment``, or check it.

    ``experiment``: a Study or CollectConfig bound in ``store``
    (:func:`~tripletsearch.serve.experiment.bind`).
    No manifest stored (a new experiment, or one started before this version: said once on
    stderr): the files are recorded. Stored: :class:`StimuliChanged` (its message one line:
    the item and the file) when one is missing or changed and people took part; before
    anyone did, the files are recorded anew. Returns the manifest in force (None: the
    experiment is not stored).
    """
    row = store.experiment(experiment.name)
    if row is None:
        return None
    cat = experiment.catalogue
    stored = row.settings.get(MANIFEST_KEY)
    people = store.participant_count(row.key)
    if isinstance(stored, dict) and isinstance(stored.get("files"), dict):
        problem = _differences(cat, stored["files"], experiment.path, row.kind, row.name)
        if problem is None:
            return stored["files"]
        if people:
            raise StimuliChanged(problem)
    try:
        files = manifest(cat)
    except OSError as exc:
        raise StimuliChanged(f"{experiment.path}: catalogue file unreadable ({exc})") from None
    store.update_experiment(row.name, row.design, {**row.settings, MANIFEST_KEY: {"files": files}})
    if stored is None and row.updated > row.created:  # stored before this version
        print(
            f"{row.kind} {row.name!r}: its catalogue's {len(files)} files recorded with their "
            "SHA-256 at this start (an experiment started before stimuli were recorded); "
            "later starts check them",
            file=sys.stderr,
            flush=True,
        )
    return files


def check_recorded(store: Any, experiment: Any) -> dict[str, dict[str, Any]] | None:
    """The manifest recorded for the bound ``experiment``, checked against its files now.

    What an export writes (``tripletsearch export --collect``): the files as recorded at
    the experiment's first start, never as they are on disk now. Nothing is written.
    :class:`StimuliChanged` (its message one line: the item and the file, as at a start)
    when a recorded file is missing or changed; None when no manifest is stored (an
    experiment not started since stimuli were recorded).
    """
    row = store.experiment(experiment.name)
    stored = None if row is None else row.settings.get(MANIFEST_KEY)
    if not (isinstance(stored, dict) and isinstance(stored.get("files"), dict)):
        return None
    problem = _differences(
        experiment.catalogue, stored["files"], experiment.path, row.kind, row.name
    )
    if problem is not None:
        raise StimuliChanged(problem)
    return dict(stored["files"])


class StimulusGuard:
    """Serves a catalogue's pictures only as the bytes recorded (``recorded``: a manifest).

    :meth:`read` opens the picture, reads it, and compares the open file's (size,
    mtime_ns, inode) with those of the bytes last checked against the manifest; only when
    they differ (the first read in this process, or a file replaced or touched) are the
    bytes hashed again. Thread-safe.
    """

    def __init__(self, cat: Any, recorded: dict[str, dict[str, Any]]):
        self.cat, self.recorded = cat, dict(recorded)
        self._checked: dict[str, tuple[int, int, int]] = {}
        self._said: set[tuple[str, tuple[int, int, int]]] = set()
        self._lock = threading.Lock()

    def read(self, i: int, path: Path | None = None) -> bytes | None:
        """Item ``i``'s picture as recorded, or None (no picture; or changed: logged once).

        ``path``: its file, when the caller resolved it already (``cat.image_path(i)``).
        """
        path = self.cat.image_path(i) if path is None else path
        if path is None:
            return None
        rel = self.cat.images[i]
        want = self.recorded.get(rel)
        try:
            with open(path, "rb") as fh:
                st = os.fstat(fh.fileno())
                data = fh.read()
        except OSError:
            return None
        stat = (st.st_size, st.st_mtime_ns, st.st_ino)
        with self._lock:
            if self._checked.get(rel) == stat and len(data) == st.st_size:
                return data
        ok = want is not None and (len(data), hashlib.sha256(data).hexdigest()) == (
            want.get("bytes"),
            want.get("sha256"),
        )
        with self._lock:
            if ok:
                self._checked[rel] = stat
                return data
            self._checked.pop(rel, None)
            if (rel, stat) not in self._said:
                self._said.add((rel, stat))
                log.error(
                    "item %r: picture %s is not the file recorded at the experiment's first "
                    "start (not served; put the recorded file back)",
                    self.cat.names[i],
                    path,
                )
        return None
