"""Collect triplets from people: which queries to ask, and the embedding of the answers.

:class:`TripletSampler` proposes queries "which of a and b is more similar to head?"
(``ask``) and takes the answers (``tell``), refitting an :class:`~tripletsearch.Embedding`
as they grow. Its methods: ``"active"`` (each head's next pair by its information about the
head's position), ``"random"`` and ``"arr"`` (salmon's adaptive round robin, the peer
baseline), one class each behind one interface (``METHODS``: name -> class). The scoring of
candidate pairs runs in the native core (``collect/information.hpp``; its NumPy twin is
``tripletsearch._reference.collect``).
"""

from __future__ import annotations

from ._methods import METHODS, ActiveQueries, AdaptiveRoundRobin, QueryMethod, RandomQueries
from ._sampler import TripletSampler

__all__ = [
    "TripletSampler",
    "METHODS",
    "QueryMethod",
    "ActiveQueries",
    "RandomQueries",
    "AdaptiveRoundRobin",
]
