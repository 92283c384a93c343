"""Collecting triplets from people: the collect file and everything that serves it.

``file`` (the collect file, checked, and its identity in the database), ``service`` (its
participants' enrolment, queries and answers), ``rules`` (the rules every reader shares: the
answers that count, a collect's sessions, a participant's sampler, the response-time rule),
``quality`` (their checks and the sessions that count), ``refitter`` (the process that fits
the samplers and refills their buffers), ``export`` (the collected triplets, the embeddings
fitted to them and a study on them) and ``dashboard`` (what its owner sees). It imports the
service's sessions, modes and store and the library's samplers, never the web layer.
"""

from __future__ import annotations

from .file import DEFAULT_COLLECT_CONSENT, CollectConfig, load_collect

__all__ = ["CollectConfig", "load_collect", "DEFAULT_COLLECT_CONSENT"]
