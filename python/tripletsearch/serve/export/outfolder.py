"""Where an export goes: ``--out`` checked, and the finished export put in its place.

``tripletsearch export`` writes into a new folder beside ``--out``
(:func:`~..commands.export_folder.fresh_folder`), then puts it in place whole (:func:`publish`).
``--out`` is never a symbolic link; it is a new or empty folder, or with ``--force`` an
earlier export: a folder holding the files its own manifest names (``datapackage.json``:
its resources, the description files, and every file the export wrote, listed there when
it was published) and nothing else. Anything else is refused in one line
(:func:`check_replaceable`), whatever the export's layout.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

__all__ = ["DESCRIPTIONS", "CONTENTS_KEY", "export_files", "check_replaceable", "publish"]

#: The files that describe an export, whatever its layout (beside the files they name).
DESCRIPTIONS = ("datapackage.json", "dataset_description.json", "export.json")
#: The key of ``datapackage.json`` that lists every file of the export (:func:`publish`).
CONTENTS_KEY = "tripletsearch:contents"


def _named(path: Any) -> str | None:
    """A path a manifest names, as a clean relative POSIX path (None: not one inside)."""
    if not isinstance(path, str) or not path or "\\" in path:
        return None
    parts = path.split("/")
    if path.startswith("/") or any(p in ("", ".", "..") for p in parts):
        return None
    return path


def export_files(folder: Path) -> set[str] | None:
    """The files an export in ``folder`` says are its own, from its own manifest.

    Its ``datapackage.json`` (a regular file): the resources' paths, the description
    files (:data:`DESCRIPTIONS`) and the export's contents as :func:`publish` recorded them
    (:data:`CONTENTS_KEY`; an export of an older release: none). None: no such manifest.
    """
    manifest = folder / DESCRIPTIONS[0]
    if manifest.is_symlink() or not manifest.is_file():
        return None
    try:
        pkg = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(pkg, dict) or not isinstance(pkg.get("resources"), list):
        return None
    named: list[Any] = [*DESCRIPTIONS, *pkg.get(CONTENTS_KEY, [])]
    for res in pkg["resources"]:
        path = res.get("path") if isinstance(res, dict) else None
        named += path if isinstance(path, list) else [path]
    return {p for p in map(_named, named) if p is not None}


def _not_an_export(folder: Path) -> str | None:
    """Why ``folder`` is not an earlier export, to be replaced whole (None: it is one).

    An export: a real folder holding what its manifest names (:func:`export_files`) and
    nothing else: no link, no other file, no folder but those the named files are in.
    """
    own = export_files(folder)
    if own is None:
        return "it holds no datapackage.json of an export"
    dirs = {"/".join(p.split("/")[:i]) for p in own for i in range(1, p.count("/") + 1)}
    for root, subdirs, files in os.walk(folder):
        for name in sorted(subdirs) + sorted(files):
            path = Path(root) / name
            rel = path.relative_to(folder).as_posix()
            if path.is_symlink():
                return f"{rel} is a link"
            if path.is_dir() and rel not in dirs:
                return f"{rel}/ is not a folder of the export"
            if not path.is_dir() and (rel not in own or not path.is_file()):
                return f"{rel} is not a file of the export"
    return None


def check_replaceable(out: Any, *, force: bool) -> Path:
    """The folder ``out`` names, where an export may go (one-line ValueError otherwise).

    Never a symbolic link (nothing is written or removed through one). A new or empty
    folder takes an export; with ``force``, an earlier export is replaced whole (a folder
    holding its own files and nothing else: :func:`export_files`); anything else is
    refused, with or without ``force``.
    """
    given = Path(os.fspath(out))
    if given.is_symlink():
        raise ValueError(
            f"--out: {given} is a symbolic link (to {os.readlink(given)}); an export never "
            "writes through one: give a folder"
        )
    target = given.resolve()
    if not target.exists() or (target.is_dir() and not any(target.iterdir())):
        return target
    if not force:
        raise ValueError(
            f"--out: {target} exists and is not empty; give another folder, or --force "
            "to replace an earlier export whole"
        )
    why = _not_an_export(target) if target.is_dir() else "it is a file"
    if why is not None:
        raise ValueError(
            f"--out: {target} is not an earlier export ({why}); --force replaces only a "
            "folder holding an export's own files and nothing else: give another folder"
        )
    return target


def _record_contents(folder: Path) -> None:
    """List every file of the finished export in its ``datapackage.json`` (its own)."""
    manifest = folder / DESCRIPTIONS[0]
    if not manifest.is_file():
        return
    pkg = json.loads(manifest.read_text(encoding="utf-8"))
    files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    pkg[CONTENTS_KEY] = files
    manifest.write_text(json.dumps(pkg, indent=2) + "\n", encoding="utf-8")


def publish(folder: Path, out: Any, *, force: bool) -> Path:
    """Put the finished export ``folder`` in the place of ``out``; the folder published.

    ``out`` must be new or empty, or with ``force`` an earlier export
    (:func:`check_replaceable`, checked again here), then replaced whole (renamed aside,
    the export renamed in, the old one removed), never mixed with the new. Every file of
    the export is listed in its ``datapackage.json`` first (:data:`CONTENTS_KEY`): what a
    later ``--force`` may replace. ValueError otherwise (``folder`` removed).
    """
    import shutil

    try:
        target = check_replaceable(out, force=force)
    except ValueError:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    _record_contents(folder)
    old = None
    if target.exists() and any(target.iterdir()):
        old = target.with_name(f".{target.name}.old-{os.getpid()}")
        os.replace(target, old)
    elif target.exists():
        target.rmdir()
    os.replace(folder, target)
    if old is not None:
        shutil.rmtree(old)
    return target
