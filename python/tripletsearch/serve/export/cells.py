"""The one rule for a CSV cell, and the one writer of an exported CSV.

Every CSV the service writes (an export's, a study report's, an exported catalogue's) is
written by :func:`write_table`, row by row from its declaration (:class:`~.tables.Table`),
every value through :func:`cell`:

- ``None`` is an empty cell; so is a number that is not finite (NaN: nothing measured);
- a boolean is ``true`` or ``false``;
- an integer is its digits;
- a float is rounded to the decimals its column carries (:attr:`~.tables.Column.digits`),
  else to :data:`SIGNIFICANT_DIGITS` significant digits (what a double's arithmetic
  leaves of a measure: ``0.1 + 0.2`` is ``0.3``), then written in the shortest spelling
  that reads back as that value (Python's ``repr``: ``1.5``, ``0.001``, ``1e-07``);
- a record (a dict) is JSON (keys sorted, its numbers by the rule above); a list is JSON
  in a column of type ``array`` or ``object``, else its items space-separated;
- a text beginning with one of :data:`FORMULA_STARTS` (``=``, ``+``, ``-``, ``@``, a tab or
  a carriage return) is written after a ``'``: a spreadsheet opening the file shows it as
  text and never runs it as a formula (OWASP's advice on CSV injection); drop the ``'`` to
  get the text back.

Files are UTF-8, with newline (LF) line ends and the header line first (the declaration's
names in order).
"""

from __future__ import annotations

import csv
import json
import math
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .tables import Column, Table

__all__ = ["cell", "number", "write_table", "FORMULA_STARTS", "SIGNIFICANT_DIGITS"]

#: What a spreadsheet reads as the start of a formula (or hides one behind): a text cell
#: beginning with one of these is written after a ``'`` (:func:`cell`).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
#: The significant digits a float keeps where its column declares no decimals.
SIGNIFICANT_DIGITS = 12
_SIGNIFICANT = f".{SIGNIFICANT_DIGITS}g"


def _rounded(value: Any, digits: int | None) -> float | None:
    """``value`` as a cell keeps it (None: not finite)."""
    v = float(value)
    if not math.isfinite(v):
        return None
    if digits is not None:
        v = round(v, digits)
    return float(format(v, _SIGNIFICANT)) + 0.0  # (+ 0.0: -0.0 is 0.0)


def number(value: Any, digits: int | None = None) -> str:
    """A float's cell: rounded (``digits`` decimals, or significant digits), shortest."""
    v = _rounded(value, digits)
    return "" if v is None else repr(v)


def _json_ready(value: Any) -> Any:
    """``value`` for JSON: its floats as cells keep them (not finite: null)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return _rounded(value, None)
    if isinstance(value, Mapping):
        return {str(k): _json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_json_ready(v) for v in value]
    return value


def cell(value: Any, column: Column | None = None) -> str:
    """The text of one CSV cell holding ``value`` (see the module docstring).

    ``column``: its declaration (the decimals a number carries; whether a list is JSON).
    """
    kind = type(value)
    if kind is str:  # (the usual cells first)
        return "'" + value if value.startswith(FORMULA_STARTS) else value
    if kind is int:
        return str(value)
    if value is None:
        return ""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return number(value, None if column is None else column.digits)
    if isinstance(value, Mapping):
        return json.dumps(_json_ready(value), sort_keys=True, ensure_ascii=False)
    if isinstance(value, (list, tuple, np.ndarray)):
        if column is not None and column.type in ("array", "object"):
            return json.dumps(_json_ready(value), ensure_ascii=False)
        return " ".join(str(v) if type(v) is int else cell(v) for v in value)
    return cell(str(value))


def write_table(
    folder: Any,
    table: Table,
    rows: Iterable[Mapping[str, Any]],
    *,
    columns: Iterable[str] | None = None,
) -> int:
    """Write ``table``'s CSV into the export ``folder`` (at :attr:`~.tables.Table.path`).

    ``rows``: records holding every column's value by name (other keys are not written);
    ``columns``: the declared columns this file holds, in the declaration's order (None:
    every one; a catalogue without colours has no ``hex``). Every cell by :func:`cell`.
    Returns the rows written. ValueError naming the file and the column a row lacks, or a
    column that is not declared.
    """
    wanted = table.names if columns is None else list(columns)
    unknown = [n for n in wanted if n not in table.names]
    if unknown:
        raise ValueError(f"{table.name}: columns {unknown} are not declared")
    cols = [c for c in table.columns if c.name in wanted]
    path = Path(os.fspath(folder)) / table.path
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow([c.name for c in cols])
        for row in rows:
            try:
                w.writerow([cell(row[c.name], c) for c in cols])
            except KeyError as exc:
                raise ValueError(f"{table.name}: a row without column {exc.args[0]!r}") from None
            n += 1
    return n
