"""A collect's trial: what its screens ask and what an answer implies.

:mod:`.form`: the screens' forms (ranked picks, odd-one-out) and their answers;
:mod:`.gold`: gold rows of the trial's form, given by the file or drawn from the
catalogue's embedding (the collect file imports it from there).
"""

from .form import *  # noqa: F403 (the package's face: form's names)
from .form import __all__ as __all__
