"""The people of a study as a choice model: their gamma and lapse rate.

:func:`people_fit`: fitted to their choices, what the report says of them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...users import fit_choice_model
from ..catalogue import Catalogue
from ..service.recorded import RecordedSession

__all__ = ["people_fit", "GAMMA_RANGE", "MAX_LAPSE"]

# where the people's gamma and lapse rate are searched (fit_choice_model's defaults)
GAMMA_RANGE = (0.05, 60.0)
MAX_LAPSE = 0.5


def people_fit(recorded: list[RecordedSession], catalogue: Catalogue) -> dict[str, Any] | None:
    """The people's gamma and lapse rate, fitted to their choices (comparisons only)."""
    heads, shown, picked = [], [], []
    for rec in recorded:
        for c in rec.choices:
            heads.append(rec.row.target)
            shown.append(c.shown)
            picked.append(c.item)
    if not heads:
        return None
    fit = fit_choice_model(
        catalogue.embedding,
        heads,
        np.array(shown),
        picked,
        gamma_range=GAMMA_RANGE,
        max_lapse=MAX_LAPSE,
    )
    return {
        "gamma": fit.gamma,
        "gamma_interval": list(fit.gamma_interval),
        "gamma_range": list(GAMMA_RANGE),
        "lapse": fit.lapse,
        "lapse_interval": list(fit.lapse_interval),
        "max_lapse": MAX_LAPSE,
        "choices": fit.n_answers,
        "level": fit.level,
    }
