"""Learn item embeddings from triplets by maximum likelihood (the paper's Section 4.1).

:class:`Embedding` is a scikit-learn style estimator; one ``fit`` is one native call per
fit of the trainer (epochs, shuffling, minibatches, the optimizer and L2 all run in C++,
OpenMP over triplets, GIL released). It works with
``sklearn.model_selection.cross_val_score``.

The package keeps one concept per module: the estimator (``_estimator``), one fit of the
native trainer (``_train``), the gamma path behind ``gamma="auto"`` (:func:`gamma_path`;
its walk in ``_path``, as scikit-learn keeps ``lasso_path`` beside ``LassoCV``), new items
placed in a fitted embedding (``_placement``), the ``.npz`` files (``_io``) and the fits on
ranked and odd-one-out trials (``_trials``). The path and the placement are functions of
arrays and parameters: they know no estimator; :class:`Embedding` calls them and sets its
own fitted attributes. The files (``Persistence``) and the fit on trials (``TrialsFit``)
are parts of the estimator, mixed into :class:`Embedding`.
"""

from __future__ import annotations

from ._estimator import Embedding, gamma_path
from ._estimator import checked_params as checked_params
from ._path import GammaAtEdgeWarning, GammaPath
from ._path import _parabola_vertex as _parabola_vertex
from ._train import MODEL_ALIASES, MODELS, OPTIMIZERS, DivergenceError, valid_rows
from ._train import TrainOutput as TrainOutput
from ._train import native_train as native_train
from ._trials import TrialData as TrialData
from ._trials import as_trial_data as as_trial_data

__all__ = [
    "Embedding",
    "DivergenceError",
    "MODELS",
    "MODEL_ALIASES",
    "OPTIMIZERS",
    "valid_rows",
    "gamma_path",
    "GammaPath",
    "GammaAtEdgeWarning",
]

# the public names live here (their pickles, their documentation): the modules are private
for _obj in (Embedding, DivergenceError, GammaPath, GammaAtEdgeWarning, gamma_path, valid_rows):
    _obj.__module__ = __name__
del _obj
