"""Simulated people for the service's tests and load benchmark.

Each has a target in mind and answers screens like a gamma-CKL oracle in CIELAB (the
perceptual colour space).

A find-mode person picks among the shown items with the gamma-CKL choice model (Luce:
``P(c) ~ ||x_c - x_t||^-gamma``) and says ``found`` when the target is shown; a mix-mode
person picks the swatch closer to their colour with the pairwise gamma-CKL probability and
accepts the estimate after ``accept_after`` answers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..oracles import GammaCKL
from .catalogue import Catalogue
from .colour import srgb_to_lab

__all__ = ["FindPerson", "MixPerson"]


class FindPerson:
    """Looks for catalogue item ``target``; perceives items at ``catalogue.embedding``."""

    def __init__(self, catalogue: Catalogue, target: int, gamma: float, rng: np.random.Generator):
        self.X, self.target, self.rng = catalogue.embedding, int(target), rng
        self.oracle = GammaCKL(gamma)

    def answer(self, screen: dict[str, Any]) -> dict[str, Any]:
        """The answer to ``screen``: ``found`` when the target is shown, else a gamma-CKL pick."""
        ids = [int(it["id"]) for it in screen["items"]]
        if self.target in ids:
            return {"screen": screen["number"], "choice": ids.index(self.target), "found": True}
        rows = self.X[[self.target, *ids]]  # only the items involved: O(k), not O(n)
        p = self.oracle.choice_prob(rows, [0], [list(range(1, len(ids) + 1))], n_jobs=1)[0]
        c = int(self.rng.choice(len(ids), p=p / p.sum()))
        return {"screen": screen["number"], "choice": c, "found": False}


class MixPerson:
    """Has the sRGB colour ``target`` in mind; compares swatches by CIELAB distance."""

    def __init__(
        self, target_rgb: Any, gamma: float, rng: np.random.Generator, accept_after: int = 40
    ):
        self.target_lab = srgb_to_lab(np.asarray(target_rgb, dtype=float))
        self.oracle, self.rng, self.accept_after = GammaCKL(gamma), rng, accept_after

    def answer(self, screen: dict[str, Any]) -> dict[str, Any]:
        """The answer to ``screen``: the swatch picked by gamma-CKL, or ``found`` (accept).

        The estimate is accepted from screen number ``accept_after`` on.
        """
        if screen["number"] >= self.accept_after:
            return {"screen": screen["number"], "choice": None, "found": True}
        a, b = (np.asarray(p, dtype=float) for p in screen["points"])
        p_a = self.oracle.prob(np.vstack([self.target_lab, a, b]), [[0, 1, 2]], n_jobs=1)[0]
        return {
            "screen": screen["number"],
            "choice": 0 if self.rng.random() < p_a else 1,
            "found": False,
        }
