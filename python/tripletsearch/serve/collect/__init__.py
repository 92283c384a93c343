"""Collecting triplets from people: the collect's one home.

Its rules, below the modes that ask them: ``screens`` (the query mix: what each screen of
a participant asks, the checks among them), ``rules`` (what every reader shares: the
answers that count, a collect's sessions, a participant's sampler and the arms that balance
them, the response-time rule), ``quality`` (the checks on a participant and the sessions
that count) and ``agreement`` (the agreement rule, and every participant's flags). Above
the modes and the participants' part: ``file`` (the collect file, checked, and its identity
in the database), ``service`` (its participants' enrolment, queries and answers),
``refitter`` and ``supervisor`` (the process that fits the samplers and refills their
buffers), ``export`` (the collected triplets, the embeddings fitted to them and a study on
them) and ``dashboard`` (what its owner sees). The collect mode
(:class:`~..modes.collect.CollectMode`) is the service's adapter to ``screens``. Never the
web layer.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CollectConfig", "load_collect", "DEFAULT_COLLECT_CONSENT"]


def __getattr__(name: str) -> Any:
    """The collect file's names, imported when first asked for.

    (The package's low modules, ``screens`` and ``rules``, are imported by the modes: the
    file, which reads the experiment's base above the modes, is not imported with them.)
    """
    if name in __all__:
        from . import file  # a layer above the modes (see the module docstring)

        return getattr(file, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
