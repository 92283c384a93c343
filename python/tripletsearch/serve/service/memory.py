"""Memory of a serving process: sizes as people write them, what the process holds, the budget.

``serve --memory SIZE`` bounds each worker process: its live searchers get what the budget
leaves once the worker has loaded the catalogue and built its first searcher (the baseline,
measured as PSS: pages shared with other workers, such as a memory-mapped item store, count
once in total and a share in each). :class:`~.live.LiveSearchers` keeps their bytes within it.
"""

from __future__ import annotations

import ctypes
import os
import re

from ...discrete import GAMMA_GRID

__all__ = [
    "DEFAULT_SHARE",
    "parse_size",
    "format_size",
    "process_memory",
    "machine_memory",
    "default_memory",
    "session_estimate",
    "return_freed_memory",
]

#: The default budget of all workers together: this share of the machine's memory (or of
#: the container's limit when it has one), divided among the workers.
DEFAULT_SHARE = 0.5

_UNITS = {"b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(?:([kmgt])(?:i?b)?|(b))?\s*$", re.IGNORECASE)


def parse_size(text: str) -> int:
    """Bytes from a size such as ``2GB``, ``1.5G``, ``512MiB`` or ``2`` (GiB).

    Units are binary whatever their spelling (``2GB`` is 2 GiB, as ``free -g`` counts); a
    bare number is GiB; ``B`` alone is bytes. At least 1 MiB. ``ValueError`` naming
    ``--memory`` otherwise.
    """
    m = _SIZE.match(text) if isinstance(text, str) else None
    if m is None:
        raise ValueError(
            f"--memory: expected a size such as 2GB, 1.5G or 512MB (binary units), got {text!r}"
        )
    unit = (m.group(2) or m.group(3) or "g").lower()
    value = float(m.group(1)) * _UNITS[unit]
    if not value >= 1 << 20:
        raise ValueError(f"--memory: expected at least 1MB, got {text!r}")
    return int(value)


def format_size(n: float) -> str:
    """``n`` bytes as people read them (binary units, three significant digits)."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(n) >= size:
            return f"{n / size:.3g} {unit}"
    return f"{int(n)} B"


def process_memory(pid: int | None = None) -> int:
    """The memory of a process in bytes (default: this one): its PSS on Linux.

    PSS (proportional set size) counts a page shared by k processes as 1/k in each, so the
    workers' PSS add up to what the machine holds. Elsewhere the resident set (which counts
    shared pages in full); 0 for another process whose memory cannot be read.
    """
    proc = f"/proc/{'self' if pid is None else int(pid)}"
    try:
        with open(f"{proc}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        with open(f"{proc}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        if pid is not None:
            return 0
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return int(peak) * (1 if os.uname().sysname == "Darwin" else 1024)


def machine_memory() -> int:
    """The memory this process may use in bytes: the machine's, or its cgroup's limit."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path) as f:
                text = f.read().strip()
        except OSError:
            continue
        if text.isdigit():
            total = min(total, int(text))
    return int(total)


def default_memory(workers: int) -> int:
    """The default ``--memory`` of each of ``workers`` processes (:data:`DEFAULT_SHARE`)."""
    return int(machine_memory() * DEFAULT_SHARE / max(int(workers), 1))


def session_estimate(n_items: int, gamma: float | str) -> int:
    """The bytes a find session over ``n_items`` holds.

    4 per item for its posterior, 4 more per item and gamma of the grid with
    ``gamma="auto"`` (13), a bit per item shown: the native state's layout
    (``DiscreteSearch.state_bytes`` is the exact count).
    """
    padded = -(-int(n_items) // 64) * 64
    per_hypothesis = -(-padded // 512) * 512 + 72
    hypotheses = len(GAMMA_GRID) if gamma == "auto" else 0
    return 4 * padded + 4 * hypotheses * per_hypothesis + padded // 8


def return_freed_memory() -> bool:
    """Make large allocations come from the system and go back to it when freed (glibc).

    glibc's malloc raises its threshold for mapping an allocation of its own after one is
    freed (up to 32 MiB), after which searchers' arrays of a few MiB come from the heap,
    where freeing one need not return its pages: a process that evicts and rebuilds them
    would grow past its budget. A fixed threshold of 256 KiB (and trimming of free memory
    at the top of the heap above 1 MiB) keeps every searcher's arrays in mappings of their
    own. False where the C library has no ``mallopt`` (the budget then counts on the
    allocator's own behaviour).
    """
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (AttributeError, OSError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    m_trim_threshold, m_mmap_threshold = -1, -3
    return bool(mallopt(m_mmap_threshold, 256 << 10)) and bool(mallopt(m_trim_threshold, 1 << 20))
