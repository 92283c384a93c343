"""The service's modes: one class per kind of search, behind one interface (:class:`Mode`).

``find`` (:class:`FindMode`) finds a catalogue item; ``mix`` (:class:`MixMode`, colour
catalogues) mixes any colour; ``collect`` (:class:`CollectMode`) asks participants which
candidates look most like a head item (triplets to learn an embedding from). The
service, its views, the export and the report ask a session's mode object
(``MODES[row.mode]``) what to do and never compare a mode's name.

Adding a mode
-------------
Write a subclass of :class:`Mode` in its own module and add it to :data:`MODES` under its
``name`` (stored with each session, given in ``POST /api/sessions``). Nothing else in the
service changes. It implements:

Construction and shared state
    ``__init__(catalogue, settings, store)``: one object per process, built when the app
    starts. It may own what all its sessions share, guarded for threads: find keeps one
    template searcher per screen size whose item store is built once; a mode that collects
    triplets would own the sampler shared by every participant (its screens taken from a
    buffer of queries in its own tables of ``store``, its refits run in another process)
    and stop what it started in ``close()``. With several workers each process builds its
    own mode objects: what must exist once (a refit process) coordinates through the
    database, set up before the workers start as the tables are.
    ``offered_by(catalogue)`` says whether a catalogue can serve it (mix needs colours);
    ``space`` names what its sessions search (a session started on another is refused);
    ``screen_sizes`` the items per screen it offers (the page reads them from ``GET
    /api/catalogue``).
Per-session state, rebuilt from the database
    ``new_params(n_choices, guesses)`` checks a new session's fields and returns the parameters to
    store; ``searcher(n_choices, params, seed)`` builds the session's state from them
    (workers share nothing but the database, so everything it depends on is stored);
    ``started`` may add to the stored parameters what the searcher chose.
Screens and answers
    ``next_screen(searcher, number)`` returns a :class:`Screen` (the public payload and
    the stored query) or None when the search is over; ``check_answer(session, screen,
    answer)`` refuses an answer that does not fit the stored screen (positions, what
    "found" may name; a participant's session carries its target); ``apply(searcher,
    query, choice)`` replays one stored answer; ``found_result`` and ``end_result`` are the
    session's result when the person ends it or the screens run out.
Reading records
    ``shown_items``, ``shown_record`` and ``found_item`` (classmethods: the export and the
    report read stored sessions without a live catalogue) say what a stored screen showed
    and what a result found.

The service is given its modes (:func:`mode_registry`: the server's settings and what
its experiment gives the modes, :meth:`~tripletsearch.serve.experiment.Experiment.mode_settings`).
Participant-scoped sessions (a study's, or those of a mode that collects triplets) are
started by a wrapper such as :class:`~tripletsearch.serve.study.StudyService` through
:meth:`~tripletsearch.serve.service.search.SearchService.start_session` with an
:class:`~tripletsearch.serve.service.search.Owner` (participant, slot, target, token, seed);
their answers, undos and replays go through the same service.
"""

from __future__ import annotations

from typing import Any

from ..catalogue import Catalogue
from ..store import Store
from .base import Mode, Screen, ScreenSizes, SessionInfo, Settings
from .collect import CollectMode
from .find import FindMode
from .mix import MixMode

__all__ = [
    "MODES",
    "Mode",
    "Screen",
    "ScreenSizes",
    "SessionInfo",
    "Settings",
    "FindMode",
    "MixMode",
    "CollectMode",
    "build_modes",
    "mode_registry",
    "mode_class",
]

# the registry: a mode's name -> its class
MODES: dict[str, type[Mode]] = {cls.name: cls for cls in (FindMode, MixMode, CollectMode)}


def build_modes(catalogue: Catalogue, settings: Settings, store: Store) -> dict[str, Mode]:
    """One object per registered mode, for a service of ``catalogue`` over ``store``.

    Every registered mode continues its stored sessions; new sessions are offered by the
    modes whose ``offered_by(catalogue)`` is true.
    """
    return {name: cls(catalogue, settings, store) for name, cls in MODES.items()}


def mode_registry(
    catalogue: Catalogue, settings: Any, store: Store, experiment: Any = None
) -> dict[str, Mode]:
    """The modes of a server of ``catalogue``: its ``settings`` and its ``experiment``'s.

    ``settings``: the server's (a :class:`~..config.ServeConfig`: its ``gamma``,
    ``threads`` and ``guesses``); ``experiment``: the study or collect the server runs,
    bound, or None: what it gives the modes (its ``mode_settings()``: a collect its file,
    a study its methods' own embeddings) is decided there, never by the service.
    """
    extra = {} if experiment is None else experiment.mode_settings()
    values = Settings(
        gamma=settings.gamma,
        threads=int(settings.threads),
        guesses=int(settings.guesses),
        **extra,
    )
    return build_modes(catalogue, values, store)


def mode_class(name: str) -> type[Mode]:
    """The class that reads stored sessions of mode ``name`` (unknown: the base's defaults)."""
    return MODES.get(name, Mode)
