"""Parameters declared once with their constraints, and the estimators' parameter protocol.

A small version of scikit-learn's ``_parameter_constraints`` (scikit-learn stays optional).
A class declares, once, what each of its parameters accepts::

    _parameter_constraints = {
        "dim": [Interval(Integral, 1, None, closed="left")],
        "gamma": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "lr": [Interval(Real, 0, None, closed="neither"), None],
        "random_state": ["random_state"],
    }

and :func:`validate_params` checks a dict of values against it, in one place (``fit``, the
construction of a search's settings). A value is accepted when one of the listed forms
accepts it. Otherwise the error names the argument:

- ``TypeError`` when no form accepts its kind (``"dim: expected an integer, got float"``);
- ``ValueError`` when a form of its kind refuses its value (``"dim: must be >= 1, got 0"``,
  ``"optimizer: expected one of [...], got 'newton'"``);
- :class:`InvalidParameterError` (both) for a string that is none of the options where a
  number is accepted too (``"gamma: expected a real number or 'auto', got 'fast'"``).

The forms: an :class:`Interval` (a real number or an integer in a range; reals must be
finite, integers fit 64 bits), :class:`StrOptions` (strings), :class:`SequenceOf` (a non-empty
1-d sequence of values of one interval), ``None``, and the names ``"boolean"``,
``"verbose"`` (a bool or an int >= 0), ``"array-like"``, ``"dict"`` and ``"random_state"``
(None, an int >= 0, a numpy Generator or SeedSequence).

The native configurations (``_core.SearchConfig``, ``_core.TrainOptions``, ...) check the
same ranges again when they are built (they are reachable directly through ``_core``) and
the rules that tie several values together; the declared ranges agree with theirs (a test
checks it at the boundaries).
"""

from __future__ import annotations

import inspect
import math
import numbers
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ._deprecation import move_keywords

__all__ = [
    "Interval",
    "StrOptions",
    "SequenceOf",
    "InvalidParameterError",
    "check_param",
    "validate_params",
    "ParamsMixin",
    "renamed_params",
]


class InvalidParameterError(ValueError, TypeError):
    """A string that is none of a parameter's options where a number is accepted too.

    Both a ``ValueError`` (a string is one of the accepted kinds) and a ``TypeError`` (the
    other accepted kind is a number), as scikit-learn's error of the same name; callers
    catching either see it.
    """


class Constraint:
    """One accepted form of a parameter."""

    description = ""

    def kind_ok(self, value: Any) -> bool:
        """Whether ``value`` is of the kind this form describes."""
        raise NotImplementedError  # pragma: no cover - every form implements it

    def check(self, value: Any, name: str) -> Any:
        """``value`` normalized (a float, an int, the canonical option); raises when refused.

        Called only when :meth:`kind_ok`.
        """
        return value


def _real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _integer(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def _fmt(v: float) -> str:
    return f"{v:g}"


class Interval(Constraint):
    """A real number (``numbers.Real``) or an integer (``numbers.Integral``) in a range.

    ``left`` / ``right``: the bounds (None: unbounded); ``closed``: which bounds belong to
    the interval (``"left"``, ``"right"``, ``"both"``, ``"neither"``). Bools are not numbers
    here; reals must be finite; integers must fit the core's 64 bits.
    """

    def __init__(
        self,
        kind: type,
        left: float | None,
        right: float | None,
        *,
        closed: str,
    ) -> None:
        if kind not in (numbers.Real, numbers.Integral):
            raise TypeError("kind: expected numbers.Real or numbers.Integral")
        if closed not in ("left", "right", "both", "neither"):
            raise ValueError(f"closed: expected left, right, both or neither, got {closed!r}")
        self.kind, self.left, self.right, self.closed = kind, left, right, closed
        self.description = "an integer" if kind is numbers.Integral else "a real number"

    def kind_ok(self, value: Any) -> bool:
        return _integer(value) if self.kind is numbers.Integral else _real(value)

    def _closed_left(self) -> bool:
        return self.closed in ("left", "both")

    def _closed_right(self) -> bool:
        return self.closed in ("right", "both")

    def rule(self) -> str:
        """The range in words: ``"be > 0"``, ``"lie in [0, 1)"``."""
        lo, hi = self.left, self.right
        if lo is not None and hi is not None:
            return (
                f"lie in {'[' if self._closed_left() else '('}{_fmt(lo)}, "
                f"{_fmt(hi)}{']' if self._closed_right() else ')'}"
            )
        if lo is not None:
            return f"be {'>=' if self._closed_left() else '>'} {_fmt(lo)}"
        if hi is not None:
            return f"be {'<=' if self._closed_right() else '<'} {_fmt(hi)}"
        return ""

    def problem(self, value: Any) -> str | None:
        """Why ``value`` (of the right kind) is refused, or None."""
        if self.kind is numbers.Real and not math.isfinite(float(value)):
            return f"must be finite, got {float(value)}"
        v = value
        too_low = self.left is not None and (
            v < self.left if self._closed_left() else v <= self.left
        )
        too_high = self.right is not None and (
            v > self.right if self._closed_right() else v >= self.right
        )
        if too_low or too_high:
            return f"must {self.rule()}, got {v}"
        if self.kind is numbers.Integral and not -(2**63) <= int(v) < 2**63:
            return f"{int(v)} is out of the 64-bit integer range"
        return None

    def check(self, value: Any, name: str) -> Any:
        value = int(value) if self.kind is numbers.Integral else float(value)
        problem = self.problem(value)
        if problem is not None:
            raise ValueError(f"{name}: {problem}")
        return value


class StrOptions(Constraint):
    """One of a set of strings.

    ``aliases``: other spellings (alias -> option); ``ignore_case``: compared in lower case.
    :meth:`check` returns the canonical option.
    """

    def __init__(
        self,
        options: Iterable[str],
        *,
        aliases: Mapping[str, str] | None = None,
        ignore_case: bool = False,
    ) -> None:
        self.options = frozenset(options)
        self.aliases = dict(aliases or {})
        self.ignore_case = ignore_case
        shown = sorted(self.options)
        self.description = repr(shown[0]) if len(shown) == 1 else f"one of {shown}"

    def kind_ok(self, value: Any) -> bool:
        return isinstance(value, str)

    def canonical(self, value: str) -> str | None:
        """The option ``value`` names, or None."""
        key = value.lower() if self.ignore_case else value
        key = self.aliases.get(key, key)
        return key if key in self.options else None

    def check(self, value: Any, name: str) -> Any:
        option = self.canonical(value)
        if option is None:
            raise ValueError(f"{name}: expected {self.description}, got {value!r}")
        return option


class SequenceOf(Constraint):
    """A non-empty 1-d sequence (list, tuple, array) of values that ``of`` accepts.

    :meth:`check` returns a list of the normalized values.
    """

    def __init__(self, of: Interval) -> None:
        self.of = of
        self.description = "a sequence of " + (
            "integers" if of.kind is numbers.Integral else "real numbers"
        )

    def kind_ok(self, value: Any) -> bool:
        return not isinstance(value, (str, bytes, Mapping)) and hasattr(value, "__iter__")

    def check(self, value: Any, name: str) -> Any:
        if np.ndim(value) != 1:
            raise ValueError(f"{name}: expected a 1-d sequence, got {np.ndim(value)} dimensions")
        values = list(value)
        if not values:
            raise ValueError(f"{name}: expected at least one value")
        out = []
        for k, v in enumerate(values):
            if not self.of.kind_ok(v):
                raise TypeError(
                    f"{name}: expected {self.description}, got {type(v).__name__} (entry {k})"
                )
            v = int(v) if self.of.kind is numbers.Integral else float(v)
            problem = self.of.problem(v)
            if problem is not None:
                raise ValueError(f"{name}: entry {k} {problem}")
            out.append(v)
        return out


class _NoneForm(Constraint):
    description = "None"

    def kind_ok(self, value: Any) -> bool:
        return value is None


class _Boolean(Constraint):
    description = "a bool"

    def kind_ok(self, value: Any) -> bool:
        return isinstance(value, (bool, np.bool_))

    def check(self, value: Any, name: str) -> Any:
        return bool(value)


class _ArrayLike(Constraint):
    description = "an array"

    def kind_ok(self, value: Any) -> bool:
        return hasattr(value, "__array__") or isinstance(value, (list, tuple))


class _Mapping(Constraint):
    description = "a dict"

    def kind_ok(self, value: Any) -> bool:
        return isinstance(value, Mapping)


class _RandomState(Constraint):
    description = "None, an int or a numpy Generator"

    def kind_ok(self, value: Any) -> bool:
        return (
            value is None
            or _integer(value)
            or isinstance(value, (np.random.Generator, np.random.SeedSequence))
        )

    def check(self, value: Any, name: str) -> Any:
        if _integer(value) and value < 0:
            raise ValueError(f"{name}: seed must be >= 0, got {value}")
        return value


_NAMED: dict[str, list[Constraint]] = {
    "boolean": [_Boolean()],
    "verbose": [_Boolean(), Interval(numbers.Integral, 0, None, closed="left")],
    "array-like": [_ArrayLike()],
    "dict": [_Mapping()],
    "random_state": [_RandomState()],
}


_NONE = _NoneForm()


def _forms(constraints: Iterable[Any]) -> list[Constraint]:
    out: list[Constraint] = []
    for c in constraints:
        if c is None:
            out.append(_NONE)
        elif isinstance(c, str):
            out.extend(_NAMED[c])
        elif isinstance(c, Constraint):
            out.append(c)
        else:
            raise TypeError(f"constraints: unknown form {c!r}")
    return out


def _either(descriptions: list[str]) -> str:
    return (
        descriptions[0]
        if len(descriptions) == 1
        else (", ".join(descriptions[:-1]) + " or " + descriptions[-1])
    )


def check_param(value: Any, name: str, constraints: Iterable[Any]) -> Any:
    """``value`` normalized by the first of ``constraints`` that accepts it.

    Raises TypeError, ValueError or :class:`InvalidParameterError` naming ``name`` (see the
    module docstring).
    """
    forms = _forms(constraints)
    refusals: list[Exception] = []
    for form in forms:
        if form.kind_ok(value):
            try:
                return form.check(value, name)
            except (TypeError, ValueError) as exc:
                refusals.append(exc)
    kinds = _either([f.description for f in forms])
    if not refusals:
        raise TypeError(f"{name}: expected {kinds}, got {type(value).__name__}")
    if isinstance(value, str) and any(not isinstance(f, StrOptions) for f in forms):
        raise InvalidParameterError(f"{name}: expected {kinds}, got {value!r}")
    raise refusals[0]


def validate_params(params: Mapping[str, Any], constraints: Mapping[str, Any]) -> dict[str, Any]:
    """The declared parameters of ``params``, each checked and normalized (:func:`check_param`)."""
    return {name: check_param(params[name], name, forms) for name, forms in constraints.items()}


_PARAM_NAMES: dict[type, list[str]] = {}  # class -> its __init__'s parameters


def renamed_params(estimator: Any) -> dict[str, str]:
    """The old spellings of ``estimator``'s parameters, ``{old: new}``.

    ``{}`` for an estimator that declares none (one not of :class:`ParamsMixin` too).
    """
    return dict(getattr(estimator, "_renamed_params", {}))


class ParamsMixin:
    """get_params / set_params in the scikit-learn convention (no sklearn import).

    The parameters are ``__init__``'s arguments; subclasses declare their constraints in
    ``_parameter_constraints``.
    """

    _parameter_constraints: dict[str, list[Any]] = {}
    # old keyword spellings (old -> new), accepted for one release with a warning
    _renamed_params: dict[str, str] = {}

    @classmethod
    def _param_names(cls) -> list[str]:
        names = _PARAM_NAMES.get(cls)
        if names is None:  # inspect.signature costs tens of microseconds: once per class
            sig = inspect.signature(cls.__init__)
            names = _PARAM_NAMES[cls] = [p for p in sig.parameters if p != "self"]
        return list(names)

    def get_params(self, deep: bool = True) -> dict:
        """The parameters, by name (as given to ``__init__`` or ``set_params``)."""
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params: Any) -> Any:
        """Set parameters by name (checked at ``fit``); returns self."""
        move_keywords(f"{type(self).__name__}.set_params", params, self._renamed_params)
        valid = self._param_names()
        for key, value in params.items():
            if key not in valid:
                raise ValueError(f"{key}: not a parameter of {type(self).__name__} ({valid})")
            setattr(self, key, value)
        return self

    def _validate_params(self) -> dict[str, Any]:
        """The parameters checked against ``_parameter_constraints`` and normalized."""
        return validate_params(self.get_params(), self._parameter_constraints)

    def __sklearn_tags__(self) -> Any:
        """scikit-learn (>= 1.6) estimator tags, built lazily: sklearn stays optional."""
        from sklearn.utils import Tags, TargetTags

        return Tags(
            estimator_type=None,
            target_tags=TargetTags(required=False),
            transformer_tags=None,
            regressor_tags=None,
            classifier_tags=None,
        )

    def __repr__(self) -> str:
        defaults = {
            k: v.default for k, v in inspect.signature(type(self).__init__).parameters.items()
        }
        args = [
            f"{k}={v!r}"
            for k, v in self.get_params().items()
            if not (isinstance(v, (str, int, float, bool, type(None))) and v == defaults.get(k))
        ]
        return f"{type(self).__name__}({', '.join(args)})"
