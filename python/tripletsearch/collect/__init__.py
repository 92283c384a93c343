"""Collect triplets from people: which queries to ask, and the embedding of the answers.

:class:`TripletSampler` proposes queries "which of a and b is more similar to head?"
(``ask``) and takes the answers (``tell``), refitting an :class:`~tripletsearch.Embedding`
as they grow. Its methods: ``"active"`` (each head's next pair by its information about the
head's position), ``"random"`` and ``"arr"`` (salmon's adaptive round robin, the peer
baseline), one class each behind one interface (``METHODS``: name -> class). The scoring of
candidate pairs runs in the native core (``collect/information.hpp``; its NumPy twin is
``tripletsearch._reference.collect``).

:func:`simulate_collection` runs a sampler against simulated people who answer from a
known truth, and measures what its answers give (:class:`CollectionResult`), against
answers and against the people's time (:class:`ResponseTimeModel`, fitted to NEXT's egg
answers); with a ``rate`` refits run on a virtual clock (:class:`RefitCostModel`).
:func:`replay_collection` replays recorded answers (NEXT's 30 eggs) through a sampler and
:func:`as_collected` reads what recorded samplers' answers gave.

What a service that collects uses besides the sampler: the models a sampler fits
(``SAMPLER_MODELS``), the refit rule (:func:`refit_due`, ``REFIT_MIN``) and a fitted
embedding as JSON-safe values and back (:func:`embedding_state`,
:func:`embedding_from_state`).
"""

from __future__ import annotations

from ._methods import METHODS, ActiveQueries, AdaptiveRoundRobin, QueryMethod, RandomQueries
from ._sampler import (
    REFIT_MIN,
    SAMPLER_MODELS,
    TripletSampler,
    embedding_from_state,
    embedding_state,
    refit_due,
)

__all__ = [
    "TripletSampler",
    "SAMPLER_MODELS",
    "REFIT_MIN",
    "refit_due",
    "embedding_state",
    "embedding_from_state",
    "METHODS",
    "QueryMethod",
    "ActiveQueries",
    "RandomQueries",
    "AdaptiveRoundRobin",
]

# ---- simulated and replayed collections, and what they cost in time (_simulate, _results,
# _timing, _replay)
from ._replay import RecordedAnswers, as_collected, next_eggs, replay_collection, salmon_eggs
from ._results import CollectionResult, answers_to_match, at_least_as_accurate, format_table
from ._simulate import DEFAULT_BUDGETS, simulate_collection
from ._timing import (
    MEASURED_REFIT_COST,
    NEXT_RESPONSE_TIMES,
    RefitCostModel,
    ResponseTimeModel,
    distance_ratio,
    response_times_by_sampler,
)

__all__ += [
    "simulate_collection",
    "CollectionResult",
    "answers_to_match",
    "at_least_as_accurate",
    "format_table",
    "DEFAULT_BUDGETS",
    "ResponseTimeModel",
    "NEXT_RESPONSE_TIMES",
    "RefitCostModel",
    "MEASURED_REFIT_COST",
    "distance_ratio",
    "response_times_by_sampler",
    "replay_collection",
    "as_collected",
    "RecordedAnswers",
    "next_eggs",
    "salmon_eggs",
]
