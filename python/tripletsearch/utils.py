"""Small helpers the library's parts share, public for the search service and extensions.

* :func:`derived_seed`: the seed of one item of a larger job (a fit of a grid, a search of
  a study, a participant of a collect), a function of integer words only.
* :func:`warn_renamed`, :data:`RENAMED_IN`, :data:`REMOVED_IN`: the deprecation of an old
  spelling, kept working for one release (CONTRIBUTING.md, "Conventions").
"""

from __future__ import annotations

from ._deprecation import REMOVED_IN, RENAMED_IN, warn_renamed
from ._validation import derived_seed

__all__ = ["derived_seed", "warn_renamed", "RENAMED_IN", "REMOVED_IN"]

for _obj in (derived_seed, warn_renamed):
    _obj.__module__ = __name__
del _obj
