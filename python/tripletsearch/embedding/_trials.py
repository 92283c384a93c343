"""Fits and scores of :class:`~tripletsearch.Embedding` on ranked and odd-one-out trials.

The trials (:mod:`tripletsearch.trials`) are fitted by their own likelihoods
(``cpp/include/tripletsearch/oracle/trials.hpp``): one native L-BFGS call per fit, every
trial counting one row of the mean negative log-likelihood. A list of trial sets of
different types (triplet arrays among them) is one likelihood, summed.
"""

from __future__ import annotations

import warnings
from typing import Any, NamedTuple

import numpy as np

from .. import _core
from .._params import check_param
from .._validation import (
    caller_stacklevel,
    check_random_state,
    check_triplets,
    resolve_n_jobs,
    seed_from,
)
from ..oracles import Oracle
from ..trials import OddOneOut, RankedChoices, is_trials, native_sets
from ._train import (
    COUNT,
    TrainOutput,
    best_start,
    fit_options,
    initial_embedding,
    train_options,
    training_rows,
    valid_rows,
)

__all__ = ["TrialData", "TrialsFit", "as_trial_data", "train_trials"]

_Part = RankedChoices | OddOneOut


class _Set(NamedTuple):
    rows: np.ndarray
    kind: int  # 0 ranked, 1 odd-one-out
    k: int
    r: int
    ordered: bool
    lapse: float


def _triplets_as_choices(T: Any) -> RankedChoices:
    """Triplet rows as two-candidate choices (the uninformative rows dropped, with a warning)."""
    T = check_triplets(T, None)
    keep = valid_rows(T)
    if not keep.all():
        warnings.warn(
            f"triplets: ignoring {int((~keep).sum())} of {len(T)} rows that name the head or "
            "repeat an item",
            stacklevel=caller_stacklevel(),
        )
        T = T[keep]
    return RankedChoices(T[:, 0], T[:, 1:], T[:, 1])


class TrialData:
    """Trial sets as one sequence of trials (set after set): split, scored, fitted.

    ``lapse``: the lapse rate their likelihood assumes (:meth:`with_lapse`).
    """

    def __init__(self, parts: list[_Part], lapse: float = 0.0) -> None:
        self.parts = [p for p in parts if len(p)]
        if not self.parts:
            raise ValueError("triplets: no trials to fit (every set is empty)")
        self.starts = np.cumsum([0] + [len(p) for p in self.parts])
        self.lapse = lapse

    def with_lapse(self, lapse: float) -> TrialData:
        """The same trials, their likelihood with a lapse rate ``lapse``."""
        return TrialData(self.parts, lapse)

    @classmethod
    def from_input(cls, obj: Any) -> TrialData:
        if isinstance(obj, TrialData):
            return obj
        items = list(obj) if isinstance(obj, (list, tuple)) else [obj]
        parts: list[_Part] = []
        for item in items:
            if isinstance(item, (RankedChoices, OddOneOut)):
                parts.append(item)
            elif isinstance(item, TrialData):
                parts.extend(item.parts)
            else:  # triplet rows
                parts.append(_triplets_as_choices(item))
        return cls(parts)

    def __len__(self) -> int:
        return int(self.starts[-1])

    def __getitem__(self, index: Any) -> TrialData:
        idx = np.arange(len(self))[index]
        out = []
        for q, part in enumerate(self.parts):
            a, b = self.starts[q], self.starts[q + 1]
            mine = idx[(idx >= a) & (idx < b)] - a
            if len(mine):
                out.append(part[mine])
        return TrialData(out, self.lapse)

    def n_seen(self) -> int:
        return max(p.max_id() for p in self.parts) + 1

    def check_n_items(self, n_items: int) -> None:
        for p in self.parts:
            p.check_n_items(n_items)

    def all_pairs(self) -> bool:
        """Every trial a triplet (two candidates, one pick)."""
        return all(isinstance(p, RankedChoices) and p.n_choices == 2 for p in self.parts)

    def to_triplets(self) -> np.ndarray:
        return np.concatenate([p.to_triplets() for p in self.parts])

    def sets(self) -> list[_Set]:
        """The native core's description of the sets."""
        return [_Set(*t) for t in native_sets(self.parts, self.lapse)]

    def log_prob(self, oracle: Oracle, X: np.ndarray, n_jobs: Any = None) -> np.ndarray:
        """The log-probability of every trial under ``oracle`` at ``X``."""
        spec = oracle.spec(X.shape[1])
        return _core.trials_log_prob(spec, X, self.sets(), resolve_n_jobs(n_jobs))

    def accuracy(self, X: np.ndarray) -> float:
        """Share of trials whose first pick (or odd item) ``X`` makes likeliest.

        The first choice is the alternative at the smallest distance (every model's weight
        falls with distance); a tie at the smallest shares the credit.
        """
        hits = 0.0
        for s in self.sets():
            R = s.rows
            if s.kind == 1:
                u, v = R[:, [0, 0, 1]], R[:, [1, 2, 2]]
            else:
                u, v = np.repeat(R[:, :1], s.k, axis=1), R[:, 1:]
            Y = X[u] - X[v]
            D = np.einsum("mkd,mkd->mk", Y, Y)
            low = D == D.min(axis=1, keepdims=True)
            hits += float(np.sum(low[:, 0] / low.sum(axis=1)))
        return hits / len(self)


def as_trial_data(obj: Any) -> TrialData | None:
    """Trials as :class:`TrialData`, or None for triplet rows."""
    if isinstance(obj, TrialData) or is_trials(obj):
        return TrialData.from_input(obj)
    return None


def train_trials(
    oracle: Oracle,
    init: np.ndarray,
    data: TrialData,
    options: dict[str, Any],
    seed: int,
    threads: int,
    callback: Any = None,
    validation: Any = None,
) -> TrainOutput:
    """One fit of an embedding to trials by the native trainer (L-BFGS, full batch).

    The signature of :func:`~tripletsearch.embedding.native_train` (``seed`` and
    ``validation`` unused: trials are fitted full batch, without early stopping).
    :func:`tripletsearch._reference.trials.train` is the NumPy twin.
    """
    X, loss, gamma, epochs, status = _core.train_trials(
        oracle.spec(init.shape[1]),
        np.ascontiguousarray(init),
        data.sets(),
        train_options(options),
        threads,
        callback,
    )
    names = {"Converged": "converged", "MaxEpochs": "max_epochs", "Diverged": "diverged"}
    names.update({"Stopped": "stopped", "EarlyStopped": "early_stopped"})
    return TrainOutput(X, loss, gamma, int(epochs), names[status.name], np.empty(0), 0)


class TrialsFit:
    """An estimator's fit on trials (a part of :class:`~tripletsearch.Embedding`)."""

    def _gamma_on_triplets(self: Any, data: TrialData, n: int, p: dict, seed: int) -> Any:
        """``(oracle, start, gamma_path_)`` of the trials' fit, from their implied triplets.

        The triplet fit of the triplets ``data`` implies, with these settings, up to its
        final fit: it chooses (``gamma="auto"``) or learns (``learn_gamma``) gamma by the
        triplet fit's held-out likelihood, holding out implied triplets one by one; the
        path's fit at that gamma is where the trials' own fit starts. By Luce's choice
        axiom a ranked choice's pairs follow gamma-CKL at the same gamma. Held out screen
        by screen, the trials' own likelihood chose gamma 1.5 to 2 for people answering at
        3 after a few hundred 8-rank-2 screens, and the fit at it was up to a point less
        accurate than the implied triplets' (the guide's "Fitting and scoring").
        """
        T, _ = training_rows(data.to_triplets(), n)  # (valid: the trials' reading checked)
        c = self._before_final_fit(T, n, p, check_random_state(seed))
        return c.oracle, c.X0, c.path

    def _fit_trials(self: Any, trials: Any, n_items: Any) -> Any:
        """``fit`` on trials: their own likelihood on all of them, at a gamma.

        gamma chosen or learned on the triplets they imply (by their triplet fit, where
        the trials' fit starts), or fixed (the fit from the best of ``n_init`` starts).
        """
        p = self._validate_params()
        data = TrialData.from_input(trials).with_lapse(p["lapse"])
        if p["model"] == "probit":
            if not data.all_pairs():
                raise ValueError(
                    "model: Probit models pairs only (triplets); ranked and odd-one-out trials "
                    "need gamma-ckl, ckl, t-ste or ste"
                )
            return self.fit(data.to_triplets(), n_items=n_items)
        if p["optimizer"] != "lbfgs":
            raise ValueError("optimizer: trials are fitted by L-BFGS (optimizer='lbfgs')")
        if p["early_stopping"]:
            raise ValueError("early_stopping: not available for trials (fit to convergence)")
        count = p["n_items"] if n_items is None else n_items
        n = data.n_seen() if count is None else check_param(count, "n_items", [COUNT])
        data.check_n_items(n)
        options = fit_options(p)
        rng = check_random_state(self.random_state)
        d = p["dim"]
        init, X0 = initial_embedding(p["init"], rng, n, d)
        auto, vf = self._auto_gamma(), p["validation_fraction"]
        held_out = auto or (p["learn_gamma"] and vf > 0.0)
        seed = seed_from(rng)
        threads = resolve_n_jobs(self.n_jobs)
        oracle = self._make_oracle()  # "auto": replaced by the implied triplets' choice
        fixed = {**options, "learn_gamma": False}
        path = None
        if held_out:  # gamma chosen (or learned) on the triplets the trials imply
            oracle, X0, path = self._gamma_on_triplets(data, n, p, seed)
            options = fixed
        elif init == "lift" or p["n_init"] > 1:

            def fit_start(X: np.ndarray) -> TrainOutput:
                return train_trials(oracle, X, data, fixed, seed, threads)

            X0 = best_start(fit_start, X0, p["n_init"], seed, d)
        out = train_trials(oracle, X0, data, options, seed, threads)
        return self._fitted(out, oracle, n, p, path)
