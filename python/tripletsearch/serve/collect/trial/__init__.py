"""A collect's trial: what its screens ask and what an answer implies.

:mod:`.form`: the screens' forms (ranked picks, odd-one-out) and their answers;
:mod:`.gold`: gold rows of the trial's form, given by the file or drawn from the
catalogue's embedding (the collect file imports it from there).
"""

from .form import (
    NO_HEAD,
    ODD,
    TRIALS,
    CollectTrial,
    answer_picks,
    first_pick_probs,
    implied,
    pick_steps,
    query_key,
    trial_row,
)

__all__ = [
    "CollectTrial",
    "TRIALS",
    "ODD",
    "NO_HEAD",
    "answer_picks",
    "implied",
    "trial_row",
    "pick_steps",
    "first_pick_probs",
    "query_key",
]
