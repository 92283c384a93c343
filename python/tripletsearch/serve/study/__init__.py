"""Studies: the paper's user study as a ready experiment (blind, counterbalanced).

``file`` (the study file: its keys, the plan of targets and methods, its identity),
``service`` (its participants' searches) and ``report`` (the methods compared). It imports
the service's sessions, modes and store, never the web layer.
"""

from __future__ import annotations

from .file import PLAN_VERSION, PLAN_VERSIONS, Study, load_study, running_study, williams_orders
from .service import StudyService

__all__ = [
    "Study",
    "load_study",
    "running_study",
    "StudyService",
    "PLAN_VERSION",
    "PLAN_VERSIONS",
    "williams_orders",
]
