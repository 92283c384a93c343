"""Old spellings of the public API, kept working for one release with a DeprecationWarning.

The vocabulary (docs/vocabulary.rst) renamed a few arguments in 0.2.0. Each old keyword is
listed once here, next to its new name; :func:`renamed` maps it at the call and warns.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from typing import Any, Callable, TypeVar

__all__ = ["renamed", "keyword_only", "move_keywords", "warn_renamed", "RENAMED_IN", "REMOVED_IN"]

RENAMED_IN = "0.2.0"
REMOVED_IN = "0.3.0"

F = TypeVar("F", bound=Callable[..., Any])


def warn_renamed(
    where: str,
    old: str,
    new: str,
    stacklevel: int = 3,
    renamed_in: str = RENAMED_IN,
    removed_in: str = REMOVED_IN,
) -> None:
    """Warn that ``where``'s argument or attribute ``old`` is now called ``new``.

    Renamed in version ``renamed_in`` (the vocabulary's 0.2.0 by default), the old name
    working until ``removed_in``.
    """
    warnings.warn(
        f"{where}: {old!r} was renamed {new!r} in tripletsearch {renamed_in}; the old name "
        f"stops working in tripletsearch {removed_in}",
        DeprecationWarning,
        stacklevel=stacklevel,
    )


def move_keywords(where: str, kwargs: dict[str, Any], names: dict[str, str]) -> None:
    """Rename, in place, the old keywords of ``kwargs``, warning once per old name.

    ``names``: old -> new. Both spellings at once is a TypeError, as for any argument given
    twice.
    """
    for old, new in names.items():
        if old in kwargs:
            if new in kwargs:
                raise TypeError(f"{where}: got {old!r} and its new name {new!r}; give {new!r}")
            warn_renamed(where, old, new, stacklevel=4)
            kwargs[new] = kwargs.pop(old)


def renamed(**names: str) -> Callable[[F], F]:
    """Decorator: accept the old keyword ``old=`` as the new ``names[old]``, warning.

    The wrapped function keeps its signature (``inspect.signature`` follows
    ``__wrapped__``), so scikit-learn's ``get_params`` sees the new names only.
    """

    def decorate(func: F) -> F:
        where = func.__qualname__.replace(".__init__", "")

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            move_keywords(where, kwargs, names)
            return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate


def keyword_only(*names: str) -> Callable[[F], F]:
    """Decorator: the trailing arguments ``names`` became keyword-only.

    A call that still passes them by position works, warning, for one release. The wrapped
    function declares them after ``*``; the positional arguments before them keep their
    places.
    """

    def decorate(func: F) -> F:
        where = func.__qualname__
        params = list(inspect.signature(func).parameters.values())
        n_positional = sum(p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD for p in params)

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            extra = args[n_positional:]
            if extra:
                if len(extra) > len(names):
                    raise TypeError(f"{where}: too many positional arguments")
                for name, value in zip(names, extra):
                    if name in kwargs:
                        raise TypeError(f"{where}: got {name!r} twice")
                    warnings.warn(
                        f"{where}: pass {name!r} by keyword ({name}=...); by position it "
                        f"stops working in tripletsearch {REMOVED_IN}",
                        DeprecationWarning,
                        stacklevel=2,
                    )
                    kwargs[name] = value
                args = args[:n_positional]
            return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate
