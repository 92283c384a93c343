"""A study file's keys that take more than a line to check.

Gamma and sigma, guesses, and the methods' own embeddings (:func:`.file.load_study` reads
the file).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..catalogue import Catalogue, load_embedding_file
from ..config import GAMMA
from ..experiment import fail as _fail
from ..experiment import is_integer as _integer
from ..modes.find import check_guesses

__all__ = ["gamma_sigma", "check_guesses_key", "embeddings_key", "check_attention"]


def gamma_sigma(name: str, cfg: dict, X: np.ndarray) -> tuple[float | str, float]:
    """The gamma and sigma of the file; sigma "auto" from ``X`` (what gauss searches)."""
    gamma = cfg.get("gamma", GAMMA)
    if gamma != "auto" and (
        isinstance(gamma, bool) or not isinstance(gamma, (int, float)) or not gamma > 0
    ):
        raise _fail(name, "gamma: a number > 0 or 'auto'")
    sigma = cfg.get("sigma", "auto")
    if sigma == "auto":
        sigma = 0.1 * float(np.sqrt(np.mean(np.sum((X - X.mean(0)) ** 2, axis=1))))
    elif isinstance(sigma, bool) or not isinstance(sigma, (int, float)) or not sigma > 0:
        raise _fail(name, "sigma: a number > 0 or 'auto'")
    return (gamma if gamma == "auto" else float(gamma)), float(sigma)


def check_attention(name: str, given: Any, max_queries: int) -> tuple[int, ...]:
    """The file's ``attention``: distinct screen numbers 1 to ``max_queries``, in order."""
    what = f"attention: a list of distinct screen numbers from 1 to max_queries ({max_queries})"
    if not isinstance(given, list) or not all(_integer(n) for n in given):
        raise _fail(name, f"{what}, got {given!r}")
    if len(set(given)) != len(given):
        twice = sorted({n for n in given if given.count(n) > 1})
        raise _fail(name, f"{what}: {twice} given twice")
    wrong = [n for n in given if not 1 <= n <= max_queries]
    if wrong:
        raise _fail(name, f"{what}: {wrong} out of range")
    return tuple(sorted(int(n) for n in given))


def check_guesses_key(name: str, guesses: Any, methods: tuple, n_choices: int, n_items: int) -> int:
    """The file's ``guesses``: 0 to 8, for every method alike (random offers none)."""
    try:
        guesses = check_guesses(guesses, n_choices, n_items)
    except ValueError as exc:
        raise _fail(name, str(exc)) from None
    if guesses and "random" in methods:
        raise _fail(
            name,
            f"guesses: the random method offers no guesses, and every method of a study "
            f"offers the same strip: write guesses = 0 (the paper's protocol), or leave "
            f"random out of methods to offer {guesses}",
        )
    return guesses


def embeddings_key(
    name: str, given: Any, methods: tuple[str, ...], cat: Catalogue, new_id: np.ndarray
) -> dict[str, np.ndarray]:
    """The file's ``[embeddings]``: method -> its embedding, rows as the study's catalogue."""
    from pathlib import Path

    if not isinstance(given, dict):
        raise _fail(name, "embeddings: a table of method = embedding file")
    out: dict[str, np.ndarray] = {}
    for method, path in given.items():
        if method not in methods:
            raise _fail(name, f"embeddings: {method!r} is not one of the methods {list(methods)}")
        if not isinstance(path, str) or not path:
            raise _fail(name, f"embeddings.{method}: a file name")
        p = Path(path) if Path(path).is_absolute() else Path(name).parent / path
        if not p.is_file():
            raise _fail(name, f"embeddings.{method}: no file {p}")
        try:
            X = load_embedding_file(p, len(new_id))  # rows of the catalogue before exclude
        except ValueError as exc:
            raise _fail(name, f"embeddings.{method}: {exc}") from None
        out[method] = np.ascontiguousarray(X[new_id >= 0])
        assert len(out[method]) == cat.n_items
    return out
