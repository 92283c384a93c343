"""Real human triplet data: a validated CSV loader and the bundled data sets.

Bundled (see ``tripletsearch/data/README.md`` for origin, license and attribution):

* :func:`load_music`: the paper's Musical Artists set (van der Maaten & Weinberger 2012),
  9,107 triplets on 400 artists (ids 0..411), genre super-classes as ``truth``.
* :func:`load_alien_eggs`: crowd-sourced "alien eggs" with a known 1-D ground truth
  (n = 300 from salmon, n = 30 from NEXT).
"""

from __future__ import annotations

import csv
import gzip
import io
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ._validation import check_int, check_triplets
from .trials import OddOneOut

if TYPE_CHECKING:
    from importlib.abc import Traversable

__all__ = [
    "TripletDataset",
    "load_triplets_csv",
    "load_odd_one_out",
    "load_music",
    "load_alien_eggs",
]


@dataclass
class TripletDataset:
    """A triplet data set.

    Attributes
    ----------
    triplets : ndarray of int64, shape (m, 3)
        Rows ``(head, closer, farther)``.
    names : list of str
        One name per item (``n_items`` entries).
    truth : ndarray or None
        Ground truth per item (a 1-D parameter, or genre labels), None where unknown.
    participants : ndarray of int64 or None
        Participant id per triplet, when recorded.
    description : str
        Origin and license (the bundled ``SOURCE.md``).
    sampler : ndarray of str or None
        Per triplet, the name of the sampler that chose its query, when recorded (the
        alien eggs: which queries were random, adaptive, or a held-out ``"Test"`` set).
    response_time_s : ndarray of float or None
        Per triplet, the seconds the person took to answer, when recorded (as published:
        a few are negative or hours long).
    """

    triplets: np.ndarray
    names: list
    truth: np.ndarray | None = None
    participants: np.ndarray | None = None
    description: str = field(default="", repr=False)
    sampler: np.ndarray | None = field(default=None, repr=False)
    response_time_s: np.ndarray | None = field(default=None, repr=False)

    @property
    def n_items(self) -> int:
        """Number of items (``len(names)``)."""
        return len(self.names)


def _is_integer(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True


def _read_table(text: str) -> tuple[list[str], list[list[str]], int]:
    """(header, data rows, the line number of the first data row).

    A first line of integers only is data: the file has no header.
    """
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        raise ValueError("path: empty file")
    if rows[0] and all(_is_integer(v) for v in rows[0]):
        return [], rows, 1
    return rows[0], rows[1:], 2


def load_triplets_csv(
    path: str | os.PathLike[str],
    *,
    n_items: int | None = None,
    columns: Sequence[Any] = (0, 1, 2),
) -> np.ndarray:
    """Load triplets from a CSV file (optionally gzipped).

    Parameters
    ----------
    path : str or Path
        File with rows ``head, closer, farther`` (0-based item indices), after a header row
        or without one (a first row of integers is data); ``.gz`` files are decompressed.
    n_items : int, optional
        When given, every index must be < n_items.
    columns : tuple of 3 int or 3 str
        Which columns hold head, closer and farther (positions or header names).

    Returns
    -------
    ndarray of int64, shape (m, 3)
    """
    path = Path(path)
    if not path.exists():
        raise ValueError(f"path: no such file {path}")
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", newline="") as f:
        header, rows, first_line = _read_table(f.read())
    if all(isinstance(c, str) for c in columns):
        if not header:
            raise ValueError(f"columns: {list(columns)} name columns, but the file has no header")
        missing = [c for c in columns if c not in header]
        if missing:
            raise ValueError(f"columns: {missing} not in the header {header}")
        columns = tuple(header.index(c) for c in columns)
    if len(columns) != 3:
        raise ValueError(f"columns: expected 3 columns, got {columns}")
    out = np.empty((len(rows), 3), dtype=np.int64)
    for r, row in enumerate(rows):
        try:
            vals = [row[c] for c in columns]
            out[r] = [int(v) for v in vals]
        except (IndexError, ValueError):
            raise ValueError(
                f"path: line {r + first_line} of {path.name} is not three integer indices: {row}"
            ) from None
    if n_items is not None:
        n_items = check_int(n_items, "n_items", minimum=1)
    T = check_triplets(out, n_items)
    if (T < 0).any():
        raise ValueError(f"path: negative index in {path.name}")
    return T


def _integral(text: str) -> int:
    """An integer id written as an integer or as an integral float ("1.000000e+00")."""
    try:
        return int(text)
    except ValueError:
        value = float(text)
        if not value.is_integer():
            raise ValueError(text) from None
        return int(value)


def _numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def load_odd_one_out(
    path: str | os.PathLike[str], *, n_items: int | None = None, one_based: bool = False
) -> OddOneOut:
    """Load odd-one-out trials from a THINGS-style file (optionally gzipped).

    Parameters
    ----------
    path : str or Path
        Rows of three item ids, the odd one last, separated by spaces, tabs or commas (the
        layout of THINGS' ``trainset.txt`` / ``testset.txt`` as SPoSE and VICE read them);
        an optional header line; blank lines are skipped.
    n_items : int, optional
        When given, every id must be < n_items.
    one_based : bool
        The ids count from 1 (they are shifted to 0-based).

    Returns
    -------
    OddOneOut
    """
    path = Path(path)
    if not path.exists():
        raise ValueError(f"path: no such file {path}")
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", newline="") as f:
        lines = f.read().splitlines()
    out: list[list[int]] = []
    for number, line in enumerate(lines, start=1):
        fields = line.replace(",", " ").split()
        if not fields:
            continue
        try:
            if len(fields) != 3:
                raise ValueError
            out.append([_integral(v) for v in fields])
        except ValueError:
            if not out and number == 1 and not all(map(_numeric, fields)):  # a header
                continue
            raise ValueError(
                f"path: line {number} of {path.name} is not three integer ids: {line!r}"
            ) from None
    if not out:
        raise ValueError(f"path: {path.name} holds no trials")
    rows = np.asarray(out, dtype=np.int64) - (1 if one_based else 0)
    if (rows < 0).any():
        hint = " (one_based=True with ids from 0?)" if one_based else ""
        raise ValueError(f"path: negative id in {path.name}{hint}")
    trials = OddOneOut.from_rows(rows)
    if n_items is not None:
        trials.check_n_items(check_int(n_items, "n_items", minimum=1))
    return trials


def _bundled(folder: str) -> Traversable:
    return resources.files("tripletsearch").joinpath("data").joinpath(folder)


def _load_bundled(
    folder: str,
) -> tuple[np.ndarray, np.ndarray | None, list[str], list[list[str]], str, dict[str, np.ndarray]]:
    """Triplets, participants, the items' header and rows, SOURCE.md and the other columns.

    The triplets file has ``head,closer,farther[,participant]`` and optionally more
    columns by name (``sampler``, ``response_time_s`` or ``response_time_ms``).
    """
    base = _bundled(folder)
    with gzip.open(io.BytesIO(base.joinpath("triplets.csv.gz").read_bytes()), "rt") as f:
        header, rows, _ = _read_table(f.read())
    n_int = 4 if "participant" in header else 3
    data = np.array([r[:n_int] for r in rows], dtype=np.int64)
    extra = {name: np.array([r[k] for r in rows]) for k, name in enumerate(header) if k >= n_int}
    items_header, items, _ = _read_table(base.joinpath("items.csv").read_text())
    description = base.joinpath("SOURCE.md").read_text()
    participants = data[:, 3].copy() if n_int > 3 else None
    T = np.ascontiguousarray(data[:, :3])
    return T, participants, items_header, items, description, extra


def load_music() -> TripletDataset:
    """The Musical Artists triplets of the paper (Section 4.1, Figure 5).

    9,107 triplets from the aset400 / MusicSeer survey as used by van der Maaten &
    Weinberger (2012): ids 0..411, of which 400 artists occur. Artist names are not
    available (``names`` are ``"artist <1-based id>"``); ``truth`` holds the 9 genre
    super-classes of van der Maaten's ``music_experiment.m``.

    Returns
    -------
    TripletDataset
    """
    T, participants, header, items, description, _ = _load_bundled("music")
    col = {name: k for k, name in enumerate(header)}
    names = [row[col["name"]] or f"artist {row[col['vdm_id_1based']]}" for row in items]
    truth = np.array([row[col["superclass"]] for row in items])
    return TripletDataset(T, names, truth, participants, description)


def load_alien_eggs(n: int = 300) -> TripletDataset:
    """Crowd-sourced "alien eggs" triplets with a known 1-D ground truth.

    Parameters
    ----------
    n : {300, 30}
        300: salmon's "strange fruit" study (17,611 triplets, 231 participants; samplers
        ``"Random"`` and ``"Uncertainty"`` for training, ``"Test"`` random queries kept
        apart); 30: the NEXT study (NIPS 2015), 20,086 answered triplets (samplers
        ``"RandomSampling"``, ``"CrowdKernel"``, ``"STE"``, ``"UncertaintySampling"`` and
        the random ``"Test"`` set).

    Returns
    -------
    TripletDataset
        ``truth`` is the egg's shape parameter (the integer in the image name); ``sampler``
        and ``response_time_s`` as published, in the published order of the answers.
    """
    n = check_int(n, "n")
    if n not in (300, 30):
        raise ValueError(f"n: the alien-eggs sets have n = 300 or n = 30 items, got {n}")
    T, participants, header, items, description, extra = _load_bundled(f"alien_eggs_n{n}")
    col = {name: k for k, name in enumerate(header)}
    names = [row[col["name"]] for row in items]
    truth = np.array([float(row[col["param"]]) for row in items])
    if "response_time_ms" in extra:
        seconds = extra["response_time_ms"].astype(np.float64) / 1000.0
    else:
        seconds = extra["response_time_s"].astype(np.float64)
    sampler = extra["sampler"].astype(str)
    return TripletDataset(T, names, truth, participants, description, sampler, seconds)
