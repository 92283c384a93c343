"""Input validation of the public API.

Every check raises ``TypeError`` (wrong kind of object or dtype) or ``ValueError`` (wrong
shape or value) with a message that starts with the name of the offending argument.

The parameters of the estimators and of the searches' settings are declared once with
their constraints (:mod:`tripletsearch._params`) and checked in one place; the native
configuration objects (``_core.*Config``, ``_core.OracleSpec``, ``_core.TrainOptions``)
check the same ranges when they are built (a test keeps the two in agreement), and the
rules that tie several values together. The functions here check data (embeddings, index
arrays, triplets), states, seeds and thread counts, and the arguments of the functions
outside those classes.
"""

from __future__ import annotations

import numbers
import os
import sys
from typing import Any

import numpy as np

__all__ = [
    "check_allocation",
    "check_X",
    "check_real",
    "check_int",
    "check_index_array",
    "check_triplets",
    "check_index_range",
    "check_positive",
    "check_random_state",
    "check_state",
    "seed_from",
    "derived_seed",
    "resolve_n_jobs",
    "caller_stacklevel",
]

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def caller_stacklevel() -> int:
    """The ``stacklevel`` that makes a warning point at the first line outside the package.

    Called by the function that warns: whatever path inside tripletsearch led there (``fit``
    directly, a trial set's reading, ``score``), the warning names the caller's line.
    """
    frame, level = sys._getframe(1), 1  # the warning function's own frame is level 1
    while frame.f_back is not None and os.path.abspath(frame.f_code.co_filename).startswith(
        _PACKAGE_DIR
    ):
        frame, level = frame.f_back, level + 1
    return level


def _is_real_scalar(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def check_real(value: Any, name: str) -> float:
    """Return ``value`` as a float after checking it is a real number (not a bool)."""
    if not _is_real_scalar(value):
        raise TypeError(f"{name}: expected a real number, got {type(value).__name__}")
    return float(value)


def check_positive(value: Any, name: str, *, allow_inf: bool = False) -> float:
    """Return ``value`` as a float after checking it is a finite real number > 0."""
    if not _is_real_scalar(value):
        raise TypeError(f"{name}: expected a real number, got {type(value).__name__}")
    value = float(value)
    if np.isnan(value) or (np.isinf(value) and not allow_inf):
        raise ValueError(f"{name}: must be finite, got {value}")
    if value <= 0:
        raise ValueError(f"{name}: must be > 0, got {value}")
    return value


def check_int(value: Any, name: str, *, minimum: int | None = None) -> int:
    """Return ``value`` as an int after checking it is an integer (not bool) >= minimum."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}: expected an integer, got {type(value).__name__}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name}: must be >= {minimum}, got {value}")
    if not -(2**63) <= value < 2**63:  # what the native core takes
        raise ValueError(f"{name}: {value} is out of the 64-bit integer range")
    return value


def check_allocation(n_bytes: float, name: str) -> None:
    """ValueError naming ``name`` before allocating ``n_bytes`` that this machine cannot hold.

    The native core's check, one limit for both languages.
    """
    from . import _core

    _core.require_allocation(float(n_bytes), name)


def _native_layout(arr: np.ndarray, dtype: Any) -> np.ndarray:
    """``arr`` as the core reads it: ``dtype``, C order and aligned.

    A buffer at an odd address (``np.frombuffer`` with an offset, an array unpickled from
    a Dask message) is copied: the core reads whole doubles and int64s.
    """
    return np.require(arr, dtype=dtype, requirements=["C_CONTIGUOUS", "ALIGNED"])


def check_X(X: Any, name: str = "X") -> np.ndarray:
    """Validate an embedding: real, 2-d (n, d) with n, d >= 1, finite. Returns float64, C order."""
    return _check_embedding(X, name, keep_float32=False)


def check_items(X: Any, name: str = "X") -> np.ndarray:
    """Validate a search's catalogue as :func:`check_X` does, float32 kept as float32.

    The item store is single precision: a float64 copy of a large catalogue would be the
    biggest allocation of the search. The finiteness check runs over blocks of rows.
    """
    return _check_embedding(X, name, keep_float32=True)


def row_blocks(X: np.ndarray) -> Any:
    """Slices of ``X``'s rows of about 2^17 entries each.

    The streaming checks and fingerprints hold one block's temporaries at a time.
    """
    step = max(1, (1 << 17) // max(1, X.shape[1] if X.ndim > 1 else 1))
    return (slice(start, start + step) for start in range(0, X.shape[0], step))


def _check_embedding(X: Any, name: str, keep_float32: bool) -> np.ndarray:
    if isinstance(X, np.ndarray):
        arr = X
    else:
        try:
            arr = np.asarray(X)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name}: cannot convert to an array ({exc})") from None
    if arr.dtype == np.bool_ or not (
        np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)
    ):
        raise TypeError(f"{name}: expected a real (float or int) array, got dtype {arr.dtype}")
    if arr.ndim != 2:
        raise ValueError(f"{name}: expected a 2-d array (n_items, n_dims), got shape {arr.shape}")
    if arr.shape[0] < 1 or arr.shape[1] < 1:
        raise ValueError(f"{name}: needs at least one item and one dimension, got {arr.shape}")
    arr = _native_layout(
        arr, np.float32 if keep_float32 and arr.dtype == np.float32 else np.float64
    )
    for rows in row_blocks(arr):
        if not np.isfinite(arr[rows]).all():
            raise ValueError(f"{name}: contains NaN or inf")
    return arr


def check_index_array(
    a: Any, name: str, ndim: int, n_items: int | None, cols: int | None = None
) -> np.ndarray:
    """Validate an integer index array of a given ndim (and column count).

    When ``n_items`` is given, also that all entries lie in [0, n_items).

    Float and bool arrays are rejected (a cast would silently truncate 0.7 to 0); any
    integer dtype is accepted and returned as C-contiguous int64.
    """
    if isinstance(a, np.ndarray):
        arr = a
    else:
        try:
            arr = np.asarray(a)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name}: cannot convert to an array ({exc})") from None
    if arr.size == 0:  # [] or an empty (0, cols) array: no rows, whatever the dtype
        if arr.ndim == ndim:
            if cols is not None and arr.shape[1] != cols:
                raise ValueError(f"{name}: expected {cols} columns, got shape {arr.shape}")
            return np.zeros(arr.shape, dtype=np.int64)
        return np.empty((0,) if ndim == 1 else (0, cols or 0), dtype=np.int64)
    if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"{name}: expected an integer array, got dtype {arr.dtype}")
    if arr.ndim != ndim:
        raise ValueError(f"{name}: expected a {ndim}-d array, got shape {arr.shape}")
    if cols is not None and arr.shape[1] != cols:
        raise ValueError(f"{name}: expected {cols} columns, got shape {arr.shape}")
    if arr.dtype.kind == "u" and arr.max() > np.iinfo(np.int64).max:
        raise ValueError(f"{name}: index too large for int64")
    arr = _native_layout(arr, np.int64)
    if n_items is not None:
        check_index_range(arr, n_items, name)
    return arr


def check_index_range(arr: np.ndarray, n_items: int, name: str) -> None:
    """Raise ValueError naming the first entry of ``arr`` outside [0, n_items).

    The native kernels make the same check inside their own pass over the rows (with the
    same message), so the public native path skips this NumPy scan.
    """
    bad = (arr < 0) | (arr >= n_items)
    if bad.any():
        pos = int(np.argmax(bad.reshape(-1)))
        where = ", ".join(str(int(w)) for w in np.unravel_index(pos, arr.shape))
        raise ValueError(
            f"{name}: index {arr.reshape(-1)[pos]} at position ({where}) "
            f"is out of range for {n_items} items (valid: 0..{n_items - 1})"
        )


def check_triplets(triplets: Any, n_items: int | None, name: str = "triplets") -> np.ndarray:
    """Validate triplet rows ``(t, i, j)``.

    Integer (m, 3), indices in [0, n_items) when ``n_items`` is given.
    """
    return check_index_array(triplets, name, 2, n_items, cols=3)


def check_triplet_rows(triplets: Any, name: str = "triplets") -> np.ndarray:
    """Triplet rows for the trainer: int32 or int64 (m, 3), C order and aligned.

    int32 and int64 arrays in that layout are returned as they are (memory-mapped and
    read-only arrays included: no copy); other integer types become int64.
    """
    if (
        isinstance(triplets, np.ndarray)
        and triplets.dtype in (np.dtype(np.int32), np.dtype(np.int64))
        and triplets.ndim == 2
        and triplets.shape[1] == 3
        and triplets.shape[0] > 0
    ):
        return np.require(triplets, requirements=["C_CONTIGUOUS", "ALIGNED"])
    return check_triplets(triplets, None, name=name)


_SCAN_ROWS = 1 << 20  # rows per block of scan_rows


def informative_rows(T: np.ndarray) -> np.ndarray:
    """Mask of the rows with three distinct items (``embedding.valid_rows``'s rule)."""
    t, i, j = T[:, 0], T[:, 1], T[:, 2]
    return (t != i) & (t != j) & (i != j)


def scan_rows(T: np.ndarray, name: str = "triplets") -> tuple[int, int]:
    """(largest index, number of uninformative rows) of triplet rows, in blocks of rows.

    Raises ValueError naming the first negative index. Uninformative rows name the head or
    repeat an item (see :func:`tripletsearch.embedding.valid_rows`). Temporaries stay at a
    few bytes per row of one block, whatever the size of ``T``.
    """
    top, bad = -1, 0
    for a in range(0, len(T), _SCAN_ROWS):
        block = T[a : a + _SCAN_ROWS]
        low = block.min()
        if low < 0:
            flat = int(np.argmax((block < 0).ravel()))
            row, col = divmod(flat, 3)
            raise ValueError(
                f"{name}: negative index {int(block[row, col])} at position {(a + row, col)}"
            )
        top = max(top, int(block.max()))
        bad += len(block) - int(np.count_nonzero(informative_rows(block)))
    return top, bad


_MAX_THREADS = 4096


def resolve_n_jobs(n_jobs: Any) -> int:
    """Thread count for ``n_jobs``.

    None means all cores (OpenMP default, which respects OMP_NUM_THREADS); a negative value -k
    means all cores but k - 1 (joblib convention).
    """
    if n_jobs is None:
        from . import _core

        return max(1, _core.max_threads())
    if isinstance(n_jobs, (bool, np.bool_)) or not isinstance(n_jobs, numbers.Integral):
        raise TypeError(f"n_jobs: expected None or an integer, got {type(n_jobs).__name__}")
    n_jobs = int(n_jobs)
    if n_jobs == 0:
        raise ValueError("n_jobs: must be nonzero (None or -1 for all cores)")
    if n_jobs > _MAX_THREADS:
        raise ValueError(f"n_jobs: at most {_MAX_THREADS} threads, got {n_jobs}")
    if n_jobs < 0:
        return max(1, (os.cpu_count() or 1) + 1 + n_jobs)
    return n_jobs


def check_state(state: Any, version: int | tuple[int, ...]) -> int:
    """Validate the envelope of a ``to_dict`` snapshot and return its seed.

    The envelope: a dict of the given version (or one of the given versions) with a 64-bit
    seed (stored as a string).
    """
    if not isinstance(state, dict):
        raise TypeError(f"state: expected a dict, got {type(state).__name__}")
    if "version" not in state or "seed" not in state:
        raise ValueError("state: malformed (no version or seed)")
    versions = version if isinstance(version, tuple) else (version,)
    if isinstance(state["version"], bool) or state["version"] not in versions:
        raise ValueError(f"state: unsupported version {state['version']!r}")
    raw = state["seed"]  # a decimal string (or an int), never a float or a bool
    if isinstance(raw, bool) or not isinstance(raw, (str, int)):
        raise ValueError(f"state: malformed seed {raw!r}")
    try:
        seed = int(raw)
    except ValueError:
        raise ValueError(f"state: malformed seed {raw!r}") from None
    if not 0 <= seed < 2**64:
        raise ValueError("state: seed out of range")
    return seed


def check_random_state(random_state: Any) -> np.random.Generator:
    """A numpy Generator from None, an int seed, or a Generator (used as is)."""
    if random_state is None or isinstance(random_state, (numbers.Integral, np.random.SeedSequence)):
        if isinstance(random_state, (bool, np.bool_)):
            raise TypeError("random_state: expected None, an int or a numpy Generator, got bool")
        if isinstance(random_state, numbers.Integral):
            if random_state < 0:
                raise ValueError(f"random_state: seed must be >= 0, got {random_state}")
            random_state = int(random_state)  # numpy's seeding takes int / numpy integers
        return np.random.default_rng(random_state)
    if isinstance(random_state, np.random.Generator):
        return random_state
    raise TypeError(
        "random_state: expected None, an int or a numpy Generator, "
        f"got {type(random_state).__name__}"
    )


def derived_seed(*words: int) -> int:
    """A 63-bit seed that is a function of ``words`` only (NumPy's SeedSequence).

    The seed of one item of a larger job (a fit of a grid, a search of a study), the same
    whatever runs before or beside it.
    """
    state = np.random.SeedSequence(list(words)).generate_state(2, np.uint64)
    return int(state[0] >> np.uint64(1))


def seed_from(random_state: Any) -> int:
    """A 64-bit seed for the native core, drawn from ``random_state``."""
    rng = check_random_state(random_state)
    return int(rng.integers(0, 2**64, dtype=np.uint64))
