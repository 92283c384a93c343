"""Cross-validation of embeddings over parameter grids (the paper's Figure 5 sweep).

Fits run in parallel threads (the native trainer releases the GIL), through joblib when it
is installed, else ``concurrent.futures``; each fit uses one native thread.

The package keeps one concept per module: the folds and grids (``_folds``), the scores
(``_result``), the cross-validated fits (``_grid``) and the estimator (``_estimator``).
"""

from __future__ import annotations

from ._estimator import EmbeddingCV
from ._folds import ParameterGrid, kfold
from ._grid import cross_validate, grid_search_cv
from ._result import GridResult

__all__ = [
    "kfold",
    "cross_validate",
    "grid_search_cv",
    "GridResult",
    "ParameterGrid",
    "EmbeddingCV",
]

# the public names live here (their pickles, their documentation): the modules are private
for _obj in (kfold, cross_validate, grid_search_cv, GridResult, ParameterGrid, EmbeddingCV):
    _obj.__module__ = __name__
del _obj
