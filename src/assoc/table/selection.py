"""Row selection: the rows of a table whose columns hold given values (``--where column=value``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from assoc.errors import TableError
from assoc.table.provenance import get_provenance, set_provenance

if TYPE_CHECKING:
    import pandas as pd


def select_rows(
    table: pd.DataFrame, conditions: Mapping[str, str | Sequence[str]], *, where: str = "table"
) -> pd.DataFrame:
    """The rows of ``table`` whose columns hold the given values: ``{"measure": "listed"}``.

    Several columns must all match; several values of one column (a list) are alternatives.
    Values are compared as text, so ``{"rank": "1"}`` matches the number 1. A column the table
    lacks, or conditions that leave no row, are a [`TableError`][assoc.TableError] naming the values present.
    The provenance is kept, with the conditions added under ``"where"`` (what ``--where`` of
    ``assoc analyze`` and ``assoc plot`` runs).
    """
    import pandas as pd

    keep = pd.Series(True, index=table.index)
    chosen: dict[str, list[str]] = {}
    for column, wanted in conditions.items():
        values = [wanted] if isinstance(wanted, str) else [str(v) for v in wanted]
        if column not in table.columns:
            raise TableError(
                f"{where} has no column {column!r} to select rows by "
                f"(its columns: {', '.join(map(str, table.columns))})"
            )
        text = table[column].map(_as_text)
        matched = text.isin(values)
        if not matched.any():
            present = sorted(text.unique())
            shown = ", ".join(present[:8]) + (f", ... ({len(present)} in all)" if len(present) > 8 else "")
            raise TableError(f"{where}: no row has {column}={'|'.join(values)} (values present: {shown})")
        keep &= matched
        chosen[column] = values
    if not keep.any():
        shown = " and ".join(f"{c}={'|'.join(v)}" for c, v in chosen.items())
        raise TableError(f"{where}: no row has {shown} (each matches some rows, but not together)")
    selected = table[keep].reset_index(drop=True)
    provenance = dict(get_provenance(table))
    provenance["where"] = {**dict(provenance.get("where", {})), **chosen}
    selected.attrs = dict(table.attrs)
    set_provenance(selected, provenance)
    return selected


def _as_text(value: Any) -> str:
    """A cell as ``--where`` compares it: integral floats without ``.0`` (``1.0`` -> ``"1"``), NaN as ``""``."""
    if isinstance(value, float):
        if value != value:  # NaN
            return ""
        if value.is_integer():
            return str(int(value))
    return str(value)


def parse_where(pairs: Iterable[str]) -> dict[str, list[str]]:
    """``["measure=listed", "model=a", "model=b"]`` -> ``{"measure": ["listed"], "model": ["a", "b"]}``.

    Repeating a column gives alternatives; a pair without ``=`` or column is an [`OptionError`][assoc.OptionError].
    """
    from assoc.errors import OptionError

    out: dict[str, list[str]] = {}
    for pair in pairs:
        column, sep, value = pair.partition("=")
        if not sep or not column.strip():
            raise OptionError(f"--where expects COLUMN=VALUE (e.g. measure=listed), got {pair!r}")
        out.setdefault(column.strip(), []).append(value)
    return out
