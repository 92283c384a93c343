"""Progress of a job made of steps (fits of a sweep, chunks on a cluster)."""

from __future__ import annotations

from typing import Any

__all__ = ["Progress"]


class Progress:
    """Count steps done: a tqdm bar when tqdm is installed, else a printed line per step.

    Nothing is shown without ``verbose``.
    """

    def __init__(self, total: int, desc: str, unit: str, verbose: bool) -> None:
        self.total, self.desc, self.unit, self.verbose = total, desc, unit, verbose
        self.done = 0
        self.bar: Any = None
        if verbose:
            try:
                from tqdm.auto import tqdm
            except ImportError:  # pragma: no cover - tqdm is optional
                return
            self.bar = tqdm(total=total, desc=desc, unit=unit)

    def step(self) -> None:
        """One more step done."""
        self.done += 1
        if self.bar is not None:
            self.bar.update(1)
        elif self.verbose:
            print(f"{self.desc}: {self.unit} {self.done}/{self.total}", flush=True)

    def close(self) -> None:
        """End the bar."""
        if self.bar is not None:
            self.bar.close()
