"""The association table's schema: its columns, building a table from rows, normalising and validating it.

The association table is the one long-format table every scorer returns and every analysis reads.

One row per raw measurement. Required columns, in this order:

========================  =====  ==========================================================
column                    type   meaning
========================  =====  ==========================================================
``scorer``                str    the scorer that produced the value (a derived table keeps its input's)
``model``                 str    the model identifier as the user gave it
``context``               str    the query/template/prompt as written ("" when none)
``target_group``          str    group of the target ("" when the method has none)
``target``                str    target word or phrase
``attribute_group``       str    group of the attribute
``attribute``             str    attribute word or phrase
``measure``               str    what ``value`` is: ``log_prob``, ``cosine``, ``pll``, ``lpr``, ...
``value``                 float  the measurement (NaN allowed, e.g. out of vocabulary)
========================  =====  ==========================================================

Text columns are never missing: a role a method does not have is the empty
string. Scorers may add documented extra columns after these.

Tables carry provenance in ``DataFrame.attrs["assoc"]`` (versions, models,
options, time); :func:`write_table` stores it with the file (Parquet schema
metadata, or a ``<file>.provenance.json`` sidecar for CSV, JSON Lines and JSON) and
:func:`read_table` restores it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from assoc.errors import TableError

if TYPE_CHECKING:
    import pandas as pd

TEXT_COLUMNS: tuple[str, ...] = (
    "scorer",
    "model",
    "context",
    "target_group",
    "target",
    "attribute_group",
    "attribute",
    "measure",
)
COLUMNS: tuple[str, ...] = TEXT_COLUMNS + ("value",)


def from_records(
    records: Iterable[Mapping[str, Any]], *, scorer: str, measure: str | None = None, extra_columns: Sequence[str] = ()
) -> pd.DataFrame:
    """Build an association table from row dicts.

    Missing role columns become ``""``; ``scorer`` (and ``measure`` when given)
    fill rows that lack them. Required columns come first, then
    ``extra_columns`` in the given order, then any other keys (extra keys are kept
    either way: ``extra_columns`` only fixes their order).
    """
    import pandas as pd

    rows = list(records)
    # No rows (e.g. a design with targets but no attributes) is still a table: an empty one with the
    # required columns, so the core's message about empty output is the one the user sees.
    frame = pd.DataFrame(rows) if rows else pd.DataFrame({c: pd.Series(dtype=object) for c in COLUMNS})
    return normalise(
        frame, scorer=scorer, measure=measure, extra_columns=extra_columns, where=f"records of scorer {scorer!r}"
    )


def normalise(
    frame: pd.DataFrame,
    *,
    scorer: str | None = None,
    measure: str | None = None,
    extra_columns: Sequence[str] = (),
    where: str = "table",
) -> pd.DataFrame:
    """Fill defaults, fix dtypes and order columns of a would-be association table.

    A role column that is absent, and a role cell that is ``None`` or NaN, become ``""``
    (a role the method does not have); ``scorer`` and ``measure`` fill rows where they
    are absent or empty. A ``value`` that is not a number is a [`TableError`][assoc.TableError]
    (``where`` names the table in it).
    """
    frame = frame.copy()
    for column in TEXT_COLUMNS:
        if column not in frame:
            frame[column] = ""
        frame[column] = frame[column].astype(object).where(frame[column].notna(), "").astype(str).astype(object)
    for column, default in (("scorer", scorer), ("measure", measure)):
        if default is not None:  # from_records without measure= leaves "", a CSV may leave NaN (now "")
            frame.loc[frame[column] == "", column] = default
    if "value" not in frame:
        raise TableError(f"{where} has no 'value' column")
    frame["value"] = _numeric_values(frame["value"], where)
    ordered = list(COLUMNS) + [c for c in extra_columns if c in frame and c not in COLUMNS]
    ordered += [c for c in frame.columns if c not in ordered]
    frame = frame[ordered].reset_index(drop=True)
    text_as_object(frame)
    return frame


def text_as_object(frame: pd.DataFrame) -> None:
    """One dtype for text in every column: ``object``, with NaN for a missing cell.

    ``object`` is what the required columns use; a missing cell is NaN, never ``None``.
    pandas 3 would otherwise infer its string dtype for extra text columns, and Parquet/JSON
    readers give ``None`` for missing cells.
    """
    import numpy as np
    from pandas.api import types as ptypes

    for column in frame.columns:
        series = frame[column]
        if ptypes.is_string_dtype(series) and not ptypes.is_object_dtype(series):
            frame[column] = series.astype(object).where(series.notna(), np.nan)
        elif ptypes.is_object_dtype(series) and column not in TEXT_COLUMNS and series.isna().any():
            # isna() is vectorised; only a column with missing cells is scanned for None
            frame[column] = series.where(series.notna(), np.nan)


def _numeric_values(values: pd.Series, where: str) -> pd.Series:
    """``values`` as float64; text (``"high"``), bools or objects are a :class:`TableError` naming one."""
    import pandas as pd
    from pandas.api import types as ptypes

    if ptypes.is_bool_dtype(values):
        raise TableError(f"{where}: column 'value' must hold numbers, found booleans")
    try:
        return pd.to_numeric(values, errors="raise").astype("float64")
    except (ValueError, TypeError):
        converted = pd.to_numeric(values, errors="coerce")
        bad = converted.isna() & values.notna()
        position = int(bad.to_numpy().argmax())
        raise TableError(
            f"{where}: column 'value' must hold numbers, found {values.iloc[position]!r} "
            f"(row {position}; {int(bad.sum())} row(s) in all). Use NaN for a missing "
            "measurement and an extra column for labels."
        ) from None


def validate_table(table: Any, *, where: str = "table") -> None:
    """Raise [`TableError`][assoc.TableError] naming the problem unless ``table`` satisfies the contract.

    Checks: it is a DataFrame; every required column exists; text columns hold
    text with no missing values; ``value`` is numeric and finite (NaN allowed,
    ``inf`` is not: an undefined measurement is NaN).
    """
    import numpy as np
    import pandas as pd
    from pandas.api import types as ptypes

    if not isinstance(table, pd.DataFrame):
        raise TableError(f"{where} must be a pandas DataFrame, got {type(table).__name__}")
    missing = [c for c in COLUMNS if c not in table.columns]
    if missing:
        raise TableError(
            f"{where} lacks required column(s): {', '.join(missing)} (an association table needs {', '.join(COLUMNS)})"
        )
    for column in TEXT_COLUMNS:
        series = table[column]
        if series.isna().any():
            bad = int(series.isna().sum())
            raise TableError(f"{where}: column {column!r} has {bad} missing value(s); use '' for an absent role")
        if not (ptypes.is_object_dtype(series) or ptypes.is_string_dtype(series)):
            raise TableError(f"{where}: column {column!r} must hold text, found dtype {series.dtype}")
        # infer_dtype scans in C; the per-element fallback runs only to name the offending value
        if len(series) and ptypes.infer_dtype(series, skipna=False) != "string":
            example = series[series.map(lambda v: not isinstance(v, str))].iloc[0]
            raise TableError(f"{where}: column {column!r} must hold text, found {example!r}")
    if not ptypes.is_numeric_dtype(table["value"]) or ptypes.is_bool_dtype(table["value"]):
        raise TableError(f"{where}: column 'value' must be numeric, found dtype {table['value'].dtype}")
    infinite = np.isinf(table["value"].to_numpy(dtype="float64", na_value=np.nan))
    if infinite.any():
        first = table[infinite].iloc[0]
        shown = ", ".join(f"{c}={first[c]!r}" for c in TEXT_COLUMNS if first[c] != "")
        raise TableError(
            f"{where}: column 'value' has {int(infinite.sum())} infinite value(s) (e.g. {shown}, "
            f"value={first['value']!r}); a measurement must be finite, or NaN when undefined"
        )
    empty_measure = table["measure"] == ""
    if len(table) and empty_measure.any():
        raise TableError(f"{where}: column 'measure' is empty in {int(empty_measure.sum())} row(s)")
