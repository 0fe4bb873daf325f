"""Helpers shared by the analyses: column-list options, grouping, and external criterion tables.

Kept free of heavy imports: ``assoc --help`` imports the analysis classes.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assoc.components.options import Option, column_list, confidence_level  # noqa: F401  (re-exported for the analyses)
from assoc.errors import DataError, TableError
from assoc.table.files import DATA_FILE_SUFFIXES, read_data_file

if TYPE_CHECKING:
    import pandas as pd


#: Columns that identify what a value measures (besides the model), in table order. Query-based
#: scorers add design and the [MASK] candidate; other tables lack them.
ROLE_COLUMNS: tuple[str, ...] = (
    "design",
    "context",
    "target_group",
    "target",
    "attribute_group",
    "attribute",
    "mask_group",
    "mask",
)
#: The column each role column is nested in (a query belongs to one design, a word to one group).
PARENT_COLUMN = {"context": "design", "target": "target_group", "attribute": "attribute_group", "mask": "mask_group"}


def role_columns(table: pd.DataFrame, *, exclude: Sequence[str] = ()) -> list[str]:
    """The :data:`ROLE_COLUMNS` present in ``table``, minus ``exclude``."""
    return [c for c in ROLE_COLUMNS if c in table.columns and c not in exclude]


#: The ``by`` option of the analyses that fit one model per group; resolved by :func:`by_columns`.
MODEL_BY_OPTION = Option(
    "by",
    list,
    None,
    "columns to fit separate models for (default: scorer and model, those present)",
    check=column_list,
)


def by_columns(by: Sequence[str] | None, frame: pd.DataFrame) -> list[str]:
    """The ``by`` columns as given, or by default ``scorer`` and ``model`` where ``frame`` has them."""
    return list(by) if by is not None else [c for c in ("scorer", "model") if c in frame.columns]


def require_columns(table: pd.DataFrame, columns: Sequence[str], *, what: str) -> None:
    """Raise :class:`TableError` naming the columns of ``what`` the table lacks."""
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise TableError(
            f"{what}: the table has no column(s) {', '.join(map(repr, missing))} "
            f"(its columns: {', '.join(map(str, table.columns))})"
        )


def groups(
    table: pd.DataFrame, by: Sequence[str], *, skip_missing: bool = False, what: str = ""
) -> Iterator[tuple[dict[str, Any], pd.DataFrame]]:
    """Yield ``({column: value}, rows)`` for each group of ``by`` (the whole table when ``by`` is empty).

    ``skip_missing``: leave out groups whose ``value`` is missing in every row (e.g. a model
    for which every option was out of vocabulary), with a warning naming them, so one such
    group does not stop the analysis of the others; it is a ``DataError`` when no group is left.
    """
    if not by:
        yield {}, table
        return
    skipped, kept = [], 0
    for key, part in table.groupby(list(by), sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        label = dict(zip(by, key))
        if skip_missing and "value" in part.columns and part["value"].isna().all():
            skipped.append(label)
            continue
        kept += 1
        yield label, part
    if skipped:
        import warnings

        shown = "; ".join(", ".join(f"{c}={v}" for c, v in label.items()) for label in skipped)
        if not kept:
            raise DataError(f"{what or 'analysis'}: every value is missing in every group ({shown})")
        warnings.warn(
            f"{what or 'analysis'}: left out {len(skipped)} group(s) whose values are all missing: {shown}",
            stacklevel=2,
        )


def drop_levels_without_values(part: pd.DataFrame, columns: Sequence[str]) -> tuple[pd.DataFrame, list[str]]:
    """Leave out the levels of ``columns`` (an item, a rater) whose ``value`` is missing in every row.

    Such a level (e.g. an out-of-vocabulary word, or a model for which every option was)
    would make every case or item incomplete. Returns the remaining rows and the names of
    the levels left out (several columns joined by spaces), for the caller to report.
    """
    has_value = part.groupby(list(columns), sort=False, dropna=False)["value"].transform(lambda v: v.notna().any())
    if bool(has_value.all()):
        return part, []
    empty = part.loc[~has_value.astype(bool), list(columns)].drop_duplicates()
    names = [" ".join(map(str, row)) for row in empty.itertuples(index=False, name=None)]
    return part[has_value.astype(bool)], names


def single_measure_check(table: pd.DataFrame, columns: Sequence[str], *, what: str) -> None:
    """Refuse to pool different measures (log_prob with cosine, ...) silently."""
    if "measure" in table.columns and "measure" not in columns:
        measures = sorted(table["measure"].astype(str).unique())
        if len(measures) > 1:
            raise DataError(
                f"{what}: the table holds several measures ({', '.join(measures)}); "
                f"add 'measure' to the grouping columns or keep one measure (--where measure={measures[0]}; "
                "assoc.table.select_rows in Python)"
            )


def table_source(value: Any, *, what: str = "criterion", mapping: str = "a mapping") -> Any:
    """Validate an option naming an external table: a non-empty DataFrame, a non-empty mapping, or a table file.

    ``what`` names the table in messages; ``mapping`` describes the accepted mapping shape.
    """
    import pandas as pd

    if isinstance(value, pd.DataFrame):
        if value.empty:
            raise ValueError(f"the {what} table has no rows")
        return value
    if isinstance(value, dict):
        if not value:
            raise ValueError(f"the {what} mapping is empty")
        return value
    if isinstance(value, (str, Path)):
        path = Path(value)
        if path.suffix.lower() not in DATA_FILE_SUFFIXES:
            raise ValueError(f"cannot read {str(path)!r}: use a .csv, .tsv, .parquet or .jsonl file")
        if not path.is_file():
            raise ValueError(f"file not found: {path}")
        return str(path)
    raise ValueError(f"must be a file path, a DataFrame or {mapping}, got {type(value).__name__}")


def criterion_source(value: Any) -> Any:
    """``check`` for a criterion option: a DataFrame, a mapping key -> value, or a table file path."""
    return table_source(value, what="criterion", mapping="a mapping key -> value")


def load_criterion(source: Any, *, key: str) -> pd.DataFrame:
    """Read an external criterion table (one row per key value) as a DataFrame.

    A mapping becomes a two-column table ``key``, ``criterion``. Key values are compared
    as text, so ``1850`` in a CSV matches the word ``"1850"`` in the association table.
    """
    import pandas as pd

    if isinstance(source, pd.DataFrame):
        frame = source.copy()
    elif isinstance(source, dict):
        frame = pd.DataFrame({key: list(source), "criterion": list(source.values())})
    else:
        frame = read_data_file(source, what="criterion table", text_columns=[key])
    if key not in frame.columns:
        raise DataError(
            f"the criterion table has no key column {key!r} (its columns: {', '.join(map(str, frame.columns))})"
        )
    frame[key] = frame[key].astype(str)
    duplicated = frame[key].duplicated(keep=False)
    if duplicated.any():
        example = frame.loc[duplicated, key].iloc[0]
        raise DataError(f"the criterion table lists key {example!r} more than once; keys must be unique")
    return frame


def numeric_columns(frame: pd.DataFrame, requested: Sequence[str] | None, *, exclude: Sequence[str]) -> list[str]:
    """The criterion columns to use: ``requested`` (checked numeric) or every numeric column."""
    from pandas.api import types as ptypes

    if requested:
        missing = [c for c in requested if c not in frame.columns]
        if missing:
            raise DataError(f"the criterion table has no column(s) {', '.join(map(repr, missing))}")
        bad = [c for c in requested if not ptypes.is_numeric_dtype(frame[c]) or ptypes.is_bool_dtype(frame[c])]
        if bad:
            raise DataError(f"criterion column(s) {', '.join(map(repr, bad))} are not numeric")
        return list(requested)
    chosen = [
        c
        for c in frame.columns
        if c not in exclude and ptypes.is_numeric_dtype(frame[c]) and not ptypes.is_bool_dtype(frame[c])
    ]
    if not chosen:
        raise DataError("the criterion table has no numeric column besides the key")
    return chosen


def join_criterion(
    table: pd.DataFrame,
    *,
    criterion: Any,
    key: str,
    criterion_key: str | None,
    aggregate_by: Sequence[str],
    criterion_columns: Sequence[str] | None,
) -> tuple[pd.DataFrame, list[str], int]:
    """Average ``value`` per ``aggregate_by + [key]``, then inner-join the criterion columns.

    Returns the joined frame (column ``value`` is the mean score, ``n_values`` the number
    of non-missing values averaged), the criterion columns used, and the number of key
    values of the association table that have no criterion (left out and reported).
    """
    ckey = criterion_key or key
    require_columns(table, [key, *aggregate_by], what="criterion join")
    frame = load_criterion(criterion, key=ckey)
    columns = numeric_columns(frame, criterion_columns, exclude=[ckey])
    clash = [c for c in columns if c in table.columns or c in aggregate_by or c in ("value", "n_values")]
    if clash:
        raise DataError(f"criterion column(s) {', '.join(map(repr, clash))} clash with table columns; rename them")
    scores = (
        table.assign(_key=table[key].astype(str))
        .groupby([*aggregate_by, "_key"], sort=True, dropna=False)["value"]
        .agg(value="mean", n_values="count")
        .reset_index()
    )
    right = frame[[ckey, *columns]].rename(columns={ckey: "_key"})
    joined = scores.merge(right, on="_key", how="inner").rename(columns={"_key": key})
    unmatched = int(len(set(scores["_key"]) - set(right["_key"])))
    if joined.empty:
        raise DataError(
            f"no value of column {key!r} matches the criterion key {ckey!r} "
            f"(e.g. table: {scores['_key'].iloc[0]!r}, criterion: {right['_key'].iloc[0]!r})"
        )
    return joined, columns, unmatched


def merge_criterion_rows(
    frame: pd.DataFrame, *, criterion: Any, key: str, criterion_key: str | None
) -> tuple[pd.DataFrame, list[str], int]:
    """Add the criterion table's numeric columns to every row of ``frame`` (inner join on ``key``).

    Returns the merged rows, the added columns, and the number of distinct key values of
    ``frame`` without a criterion row (their rows are left out; report the count).
    """
    ckey = criterion_key or key
    require_columns(frame, [key], what="criterion join")
    crit = load_criterion(criterion, key=ckey)
    columns = numeric_columns(crit, None, exclude=[ckey])
    clash = [c for c in columns if c in frame.columns]
    if clash:
        raise DataError(f"criterion column(s) {', '.join(map(repr, clash))} clash with table columns; rename them")
    right = crit[[ckey, *columns]].rename(columns={ckey: "_key"})
    left = frame.assign(_key=frame[key].astype(str))
    merged = left.merge(right, on="_key", how="inner").drop(columns="_key")
    unmatched = int(len(set(left["_key"]) - set(right["_key"])))
    if merged.empty:
        raise DataError(f"no value of column {key!r} matches the criterion key {ckey!r}")
    return merged, columns, unmatched


def _optional_criterion(value: Any) -> Any:
    return None if value is None else criterion_source(value)


#: Options of the model-fitting analyses (``lmm``, ``regress``) that join a table of predictors.
PREDICTOR_TABLE_OPTIONS = (
    Option(
        "criterion",
        object,
        None,
        "optional table of predictors joined on 'key' (path, DataFrame or mapping)",
        check=_optional_criterion,
    ),
    Option("key", str, "target", "column to join the criterion table on"),
    Option("criterion_key", str, None, "key column of the criterion table (default: same as key)"),
)
