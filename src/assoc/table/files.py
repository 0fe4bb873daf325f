"""The association table: the one long-format table every scorer returns and every analysis reads.

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

import datetime as _dt
import json
import platform
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assoc.errors import TableError
from assoc.infra.io import atomic_path, atomic_write

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
PROVENANCE_KEY = "assoc"
CSV_COLUMNS_KEY = "csv_columns"  # in a CSV file's sidecar, beside the provenance: what its extra columns hold
#: In a sidecar, beside the provenance: which data file it describes (sha256 of its bytes, rows, bytes).
DATA_FILE_KEY = "data_file"
_COLUMN_KINDS = ("text", "bool", "int", "float")
# .json is one JSON array of row objects; .jsonl (JSON Lines) is one object per line.
FORMATS = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet", ".jsonl": "jsonl", ".json": "json"}


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
    _text_as_object(frame)
    return frame


def _text_as_object(frame: pd.DataFrame) -> None:
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


def _exact_floats() -> dict[str, str]:
    """``read_csv`` arguments that parse floats exactly.

    pandas 2's default parser can be one ulp off (``float_precision="round_trip"`` is exact);
    pandas 3 is exact by default and deprecates the argument.
    """
    import pandas as pd

    return {"float_precision": "round_trip"} if int(pd.__version__.split(".")[0]) < 3 else {}


DATA_FILE_SUFFIXES = (".csv", ".tsv", ".parquet", ".pq", ".jsonl", ".json")


def read_data_file(
    path: str | Path, *, what: str, text_columns: Sequence[str] = (), all_text: bool = False
) -> pd.DataFrame:
    """Read a user's data table (a criterion, a dictionary, ...) from .csv, .tsv, .parquet, .jsonl or .json.

    In CSV/TSV files ``text_columns`` are read as text; with ``all_text`` every column is
    text and nothing is missing (words such as 'NA' or 'null' stay words), otherwise
    empty cells and ``NA``/``NaN``/``nan`` are missing. ``what`` names the table in
    errors ([`DataError`][assoc.DataError]).
    """
    import pandas as pd

    from assoc.errors import DataError

    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in DATA_FILE_SUFFIXES:
        raise DataError(f"cannot read the {what} {str(path)!r}: use a .csv, .tsv, .parquet or .jsonl file")
    text = {column: str for column in text_columns}
    try:
        if suffix in {".csv", ".tsv"}:
            sep = "\t" if suffix == ".tsv" else ","
            if all_text:
                return pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False)
            return pd.read_csv(
                path, sep=sep, dtype=text, keep_default_na=False, na_values=["", "NA", "NaN", "nan"], **_exact_floats()
            )
        if suffix in {".parquet", ".pq"}:
            return pd.read_parquet(path)
        # .jsonl: one object per line; .json: one array of row objects
        return pd.read_json(path, orient="records", lines=suffix == ".jsonl", dtype=text)
    except (ValueError, OSError) as exc:
        raise DataError(f"cannot read the {what} {path}: {exc}") from None


# -- provenance ---------------------------------------------------------------------------------------

#: Libraries whose version changes the numbers (model code, tokenizers, embeddings, word frequencies,
#: statistics); :func:`library_versions` records those installed.
PROVENANCE_LIBRARIES = (
    "numpy",
    "pandas",
    "scipy",
    "statsmodels",
    "torch",
    "transformers",
    "tokenizers",
    "sentence-transformers",
    "gensim",
    "wordfreq",
)


def library_versions() -> dict[str, str]:
    """The installed versions of :data:`PROVENANCE_LIBRARIES` (read from metadata: nothing is imported)."""
    from importlib import metadata

    versions = {}
    for name in PROVENANCE_LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def make_provenance(**fields: Any) -> dict[str, Any]:
    """A provenance record: the given fields plus the assoc version, Python, platform and UTC time."""
    from assoc.version import __version__

    record = {
        "assoc_version": __version__,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "libraries": library_versions(),
    }
    record.update(fields)
    return _jsonable(record)


def get_provenance(table: pd.DataFrame) -> dict[str, Any]:
    """The provenance stored on ``table`` (empty dict when none)."""
    return dict(table.attrs.get(PROVENANCE_KEY, {}))


def set_provenance(table: pd.DataFrame, provenance: Mapping[str, Any]) -> pd.DataFrame:
    """Store ``provenance`` on ``table`` (in ``attrs``) and return the table."""
    table.attrs[PROVENANCE_KEY] = _jsonable(dict(provenance))
    return table


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=_json_default))


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, (set, tuple)):
        return list(value)
    if isinstance(value, Path):
        return str(value)
    return repr(value)


# -- files ---------------------------------------------------------------------------------------------


def table_format(path: str | Path) -> str:
    """``csv``, ``parquet``, ``jsonl`` or ``json`` from the file extension (clear error otherwise)."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise TableError(f"cannot tell the table format of {str(path)!r}: use .csv, .parquet, .jsonl or .json")
    return FORMATS[suffix]


def sidecar_path(path: str | Path) -> Path:
    """The ``<file>.provenance.json`` path next to a CSV or JSON Lines table."""
    path = Path(path)
    return path.with_name(path.name + ".provenance.json")


def write_table(table: pd.DataFrame, path: str | Path) -> Path:
    """Write ``table`` to ``path`` atomically, with its provenance.

    ``.csv``, ``.parquet``, ``.jsonl`` (JSON Lines: one object per row) or ``.json`` (one
    JSON array of row objects). Parquet keeps the provenance in its metadata, the others
    in a ``<file>.provenance.json`` sidecar; a table without provenance removes an older
    sidecar, so it is never attached to the new data.
    """
    path = Path(path)
    fmt = table_format(path)
    provenance = get_provenance(table)
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        arrow = pa.Table.from_pandas(table, preserve_index=False)
        metadata = dict(arrow.schema.metadata or {})
        metadata[PROVENANCE_KEY.encode()] = json.dumps(provenance).encode()
        arrow = arrow.replace_schema_metadata(metadata)
        with atomic_path(path) as tmp:
            pq.write_table(arrow, tmp)
    else:
        with atomic_write(path, "w", encoding="utf-8", newline="") as handle:
            if fmt == "csv":
                table.to_csv(handle, index=False)  # pandas writes floats with repr: exact round trip
            elif fmt == "json":
                _write_json(table, handle)
            else:
                _write_jsonl(table, handle)
        sidecar = dict(provenance)
        if fmt == "csv":
            schema = _column_schema(table)
            if schema:
                sidecar[CSV_COLUMNS_KEY] = schema
        if sidecar:
            # The sidecar names the exact bytes it describes: a kill between the two writes, or a file
            # edited, sorted or truncated afterwards, is detected on reading (never old labels on new rows).
            sidecar[DATA_FILE_KEY] = _data_file_identity(path, len(table))
            with atomic_write(sidecar_path(path), "w", encoding="utf-8") as handle:
                json.dump(sidecar, handle, indent=2, ensure_ascii=False)
        else:
            sidecar_path(path).unlink(missing_ok=True)
    return path


def _data_file_identity(path: Path, rows: int) -> dict[str, Any]:
    """What identifies a data file: the sha256 of its bytes, its size and its number of rows."""
    import hashlib

    from assoc.infra.io import write_target

    real = write_target(path)
    digest = hashlib.sha256()
    with open(real, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return {"sha256": digest.hexdigest(), "bytes": real.stat().st_size, "rows": int(rows)}


def _column_schema(table: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """What a CSV file cannot say about the extra columns.

    Their kind (text, bool, int, float) and, for text and bool columns, which cells are missing
    (an empty CSV cell could be ``""`` or missing). Missing cells are stored as ``[start, stop)``
    row ranges: in a table from :func:`assoc.compare` they are one block per scorer.
    """
    import numpy as np
    from pandas.api import types as ptypes

    schema: dict[str, dict[str, Any]] = {}
    for column in table.columns:
        if column in COLUMNS or not isinstance(column, str):
            continue
        series = table[column]
        if ptypes.is_bool_dtype(series):
            kind = "bool"
        elif ptypes.is_integer_dtype(series):
            kind = "int"
        elif ptypes.is_float_dtype(series):
            kind = "float"
        elif ptypes.is_object_dtype(series) or ptypes.is_string_dtype(series):
            inferred = ptypes.infer_dtype(series, skipna=True)
            kind = {"string": "text", "empty": "text", "boolean": "bool"}.get(inferred, "")
        else:
            kind = ""
        if not kind:
            continue
        entry: dict[str, Any] = {"kind": kind}
        missing = series.isna().to_numpy(dtype=bool)
        if kind in ("text", "bool", "int") and missing.any():
            edges = np.flatnonzero(np.diff(np.concatenate(([0], missing.astype(np.int8), [0]))))
            entry["missing"] = edges.reshape(-1, 2).tolist()
        schema[column] = entry
    return schema


def _check_column_schema(schema: Any, sidecar: Path) -> dict[str, dict[str, Any]]:
    """``csv_columns`` of a sidecar, or a one-line :class:`TableError` saying what is wrong with it."""

    def bad(problem: str) -> TableError:
        return TableError(
            f"{sidecar}: {CSV_COLUMNS_KEY!r} is malformed ({problem}); fix it, or delete the sidecar to read "
            "the table without provenance"
        )

    if not isinstance(schema, dict):
        raise bad(f"expected an object of column -> {{kind, missing}}, got {type(schema).__name__}")
    for column, entry in schema.items():
        if not isinstance(entry, dict):
            raise bad(f"column {column!r}: expected an object, got {entry!r}")
        if entry.get("kind") not in _COLUMN_KINDS:
            raise bad(f"column {column!r}: kind must be one of {', '.join(_COLUMN_KINDS)}, got {entry.get('kind')!r}")
        missing = entry.get("missing", [])
        if not isinstance(missing, list) or not all(
            isinstance(pair, list)
            and len(pair) == 2
            and all(isinstance(n, int) and not isinstance(n, bool) for n in pair)
            and 0 <= pair[0] <= pair[1]
            for pair in missing
        ):
            raise bad(f"column {column!r}: missing must be a list of [start, stop] row ranges, got {missing!r}")
    return schema


def _apply_column_schema(frame: pd.DataFrame, schema: Mapping[str, Mapping[str, Any]], sidecar: Path) -> None:
    """Restore the extra columns of a CSV file read as raw text, as :func:`_column_schema` described them."""
    try:
        _restore_columns(frame, schema)
    except (ValueError, TypeError) as exc:
        raise TableError(
            f"{sidecar}: {CSV_COLUMNS_KEY!r} does not fit the table ({' '.join(str(exc).split())}); fix it, or "
            "delete the sidecar to read the table without provenance"
        ) from None


def _restore_columns(frame: pd.DataFrame, schema: Mapping[str, Mapping[str, Any]]) -> None:
    import numpy as np
    import pandas as pd

    for column, entry in schema.items():
        if column not in frame or column in COLUMNS:
            continue
        raw = frame[column].astype(object).where(frame[column].notna(), "").astype(str)
        missing = np.zeros(len(frame), dtype=bool)
        for start, stop in entry.get("missing", []):
            missing[int(start) : int(stop)] = True
        kind = entry.get("kind")
        if kind == "text":
            frame[column] = raw.astype(object).where(~missing, np.nan)
        elif kind == "bool":
            values = raw.map({"True": True, "False": False})
            if values[~missing].isna().any():
                example = raw[~missing & values.isna()].iloc[0]
                raise ValueError(f"column {column!r} is recorded as bool but holds {example!r}")
            frame[column] = values.astype(bool) if not missing.any() else values.astype(object).where(~missing, np.nan)
        elif kind == "int":  # a nullable integer column (e.g. rank, missing on rows of another task) stays one
            numbers = pd.to_numeric(raw.where(~missing & (raw.str.strip() != "")))
            frame[column] = numbers.astype("Int64") if missing.any() else numbers.astype("int64")
        elif kind == "float":
            frame[column] = pd.to_numeric(raw.where(raw.str.strip() != "")).astype("float64")


def _write_jsonl(table: pd.DataFrame, handle: Any) -> None:
    """One JSON object per row; floats keep full precision (``repr``), NaN becomes ``null``.

    pandas' ``to_json`` rounds to 15 decimal places at most, which loses small values such as p < 1e-10.
    """
    for record in _json_records(table):
        handle.write(json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n")


def _write_json(table: pd.DataFrame, handle: Any) -> None:
    """One JSON array of row objects, encoded as :func:`_write_jsonl` encodes each row."""
    handle.write("[")
    for i, record in enumerate(_json_records(table)):
        handle.write(("," if i else "") + "\n" + json.dumps(record, ensure_ascii=False, allow_nan=False))
    handle.write("\n]\n")


def _json_records(table: pd.DataFrame) -> Iterable[dict[str, Any]]:
    import math

    columns = list(table.columns)
    for values in table.itertuples(index=False, name=None):
        record = {}
        for column, value in zip(columns, values):
            if hasattr(value, "item"):
                value = value.item()
            if isinstance(value, float) and math.isnan(value):
                value = None
            elif value is not None and not isinstance(value, (str, int, float, bool, list, dict)):
                value = None if _is_missing(value) else str(value)
            record[column] = value
        yield record


def _is_missing(value: Any) -> bool:
    import pandas as pd

    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _read_jsonl(path: Path) -> pd.DataFrame:
    records = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if line.strip():
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise TableError(f"cannot read table {path}: line {number}: {exc}") from None
    return _frame_of_records(records)


def _read_json(path: Path) -> pd.DataFrame:
    """A ``.json`` table: one JSON array of row objects (as :func:`_write_json` writes it)."""
    try:
        with open(path, encoding="utf-8") as handle:
            records = json.load(handle)
    except json.JSONDecodeError as exc:
        hint = (
            " (it looks like JSON Lines, one object per line: name the file .jsonl)" if "Extra data" in str(exc) else ""
        )
        raise TableError(f"cannot read table {path}: not a JSON array of rows: {exc}{hint}") from None
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise TableError(
            f"cannot read table {path}: a .json table is one JSON array of row objects "
            '([{"model": ..., "value": ...}, ...])'
        )
    return _frame_of_records(records)


def _frame_of_records(records: list[dict[str, Any]]) -> pd.DataFrame:
    import pandas as pd

    frame = pd.DataFrame.from_records(records)
    if "value" in frame:
        frame["value"] = pd.to_numeric(frame["value"], errors="coerce").astype("float64")
    return frame


def read_table(path: str | Path) -> pd.DataFrame:
    """Read a table written by [`write_table`][assoc.write_table] (or any CSV/Parquet/JSONL with the same columns).

    Text columns keep empty strings (CSV readers would otherwise turn them into NaN).
    """
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise TableError(f"table file not found: {path}")
    fmt = table_format(path)
    provenance: dict[str, Any] = {}
    schema: dict[str, Any] = {}
    try:
        if fmt == "parquet":
            import pyarrow.parquet as pq

            arrow = pq.read_table(path)
            raw = (arrow.schema.metadata or {}).get(PROVENANCE_KEY.encode())
            if raw:
                provenance = _parse_provenance(raw, f"the provenance in {path}", path)
            frame = arrow.to_pandas()
        elif fmt == "csv":
            provenance = _read_sidecar(path)
            schema = provenance.pop(CSV_COLUMNS_KEY, {})
            if provenance or schema:
                provenance, schema = _matching_sidecar(path, provenance, schema)
            text = {c: str for c in (*TEXT_COLUMNS, *schema)}
            frame = pd.read_csv(
                path,
                keep_default_na=False,
                na_values={"value": ["", "NaN", "nan", "NA"]},
                dtype=text,
                **_exact_floats(),
            )
        elif fmt == "json":
            frame = _read_json(path)
        else:
            frame = _read_jsonl(path)
    except (ValueError, OSError) as exc:
        raise TableError(f"cannot read table {path}: {exc}") from None
    for column in TEXT_COLUMNS:
        if column in frame:
            frame[column] = frame[column].astype(object).where(frame[column].notna(), "").astype(str).astype(object)
    if fmt == "csv":
        schema = _schema_within_rows(schema, len(frame), path)
        _apply_column_schema(frame, schema, sidecar_path(path))
        _restore_numeric_csv_columns(frame, skip=schema)
    if fmt in ("jsonl", "json"):
        provenance = _read_sidecar(path)
        if provenance:
            provenance, _ = _matching_sidecar(path, provenance, {})
    _text_as_object(frame)
    if provenance:
        set_provenance(frame, provenance)
    return frame


def _matching_sidecar(
    path: Path, provenance: dict[str, Any], schema: Any
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The provenance and column schema of ``path``'s sidecar, if the sidecar describes this very file.

    A sidecar records the sha256, size and row count of the file it was written with. When the
    file no longer matches (edited, sorted or truncated outside assoc, or a run killed between
    writing the file and its sidecar) the provenance and its column labels would describe other
    rows: warn (:class:`~assoc.errors.ProvenanceWarning`) and use neither. A file with fewer rows
    than recorded that ends in the middle of a line is truncated: a :class:`TableError`.
    A sidecar from before this record (no ``data_file``) is used as it is.
    """
    import warnings

    from assoc.errors import ProvenanceWarning

    sidecar = sidecar_path(path)
    recorded = provenance.pop(DATA_FILE_KEY, None)
    if schema:
        schema = _check_column_schema(schema, sidecar)
    if recorded is None:
        return provenance, schema or {}
    if not isinstance(recorded, dict) or not isinstance(recorded.get("sha256"), str):
        raise TableError(f"{sidecar}: {DATA_FILE_KEY!r} is malformed ({recorded!r}); fix or delete the sidecar")
    actual = _data_file_identity(path, 0)
    if actual["sha256"] == recorded["sha256"]:
        return provenance, schema or {}
    rows = recorded.get("rows")
    with open(path, "rb") as handle:
        handle.seek(max(0, actual["bytes"] - 1))
        ends_mid_line = actual["bytes"] > 0 and handle.read(1) != b"\n"
    if isinstance(rows, int) and isinstance(recorded.get("bytes"), int) and actual["bytes"] < recorded["bytes"]:
        if ends_mid_line:
            raise TableError(
                f"{path} is truncated: it ends in the middle of a line and has {actual['bytes']:,} of the "
                f"{recorded['bytes']:,} bytes ({rows:,} rows) assoc wrote (see {sidecar.name}); write it again"
            )
    warnings.warn(
        f"{path.name} is not the file its provenance sidecar {sidecar.name} describes (its content changed "
        f"after assoc wrote it{f', which had {rows:,} rows' if isinstance(rows, int) else ''}: edited, sorted or "
        "truncated, or a run stopped between writing the two files); reading it without provenance and "
        "without the sidecar's column types",
        ProvenanceWarning,
        stacklevel=4,
    )
    return {}, {}


def _schema_within_rows(schema: dict[str, dict[str, Any]], rows: int, path: Path) -> dict[str, dict[str, Any]]:
    """``schema`` if its missing-cell ranges fit a table of ``rows`` rows; else warn and drop it.

    Only sidecars without a ``data_file`` record (written before it existed) can disagree here.
    """
    import warnings

    from assoc.errors import ProvenanceWarning

    beyond = [c for c, e in schema.items() if any(stop > rows for _, stop in e.get("missing", []))]
    if beyond:
        warnings.warn(
            f"{sidecar_path(path).name} records missing cells of column {beyond[0]!r} beyond the {rows:,} rows "
            f"of {path.name} (the file changed after assoc wrote it); reading it without the sidecar's column types",
            ProvenanceWarning,
            stacklevel=4,
        )
        return {}
    return schema


def _read_sidecar(path: Path) -> dict[str, Any]:
    """The provenance sidecar of ``path`` ({} when there is none).

    One that is not valid JSON (a crash, a hand edit) must not cost the table: warn and read
    the table without provenance.
    """
    import warnings

    sidecar = sidecar_path(path)
    if not sidecar.is_file():
        return {}
    try:
        raw = sidecar.read_bytes()
    except OSError as exc:
        warnings.warn(
            f"cannot read {sidecar} ({exc}); reading {path.name} without provenance", UserWarning, stacklevel=3
        )
        return {}
    return _parse_provenance(raw, str(sidecar), path)


def _parse_provenance(raw: bytes, what: str, path: Path) -> dict[str, Any]:
    """A provenance record from JSON bytes; warn and return {} when it is not one."""
    import warnings

    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
        reason = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        warnings.warn(
            f"{what} is not valid JSON ({reason}); reading {path.name} without provenance", UserWarning, stacklevel=4
        )
        return {}
    if not isinstance(data, dict):
        warnings.warn(
            f"{what} does not hold a provenance record (a JSON object); reading {path.name} without provenance",
            UserWarning,
            stacklevel=4,
        )
        return {}
    return data


def _restore_numeric_csv_columns(frame: pd.DataFrame, skip: Iterable[str] = ()) -> None:
    """Make numeric the extra columns that CSV reading left as text.

    Columns other than the required ones that hold numbers and blanks (NaN written to CSV,
    e.g. in analysis results) are read as text because blanks are kept as text; make them
    numeric again, with blanks as NaN. (Files written by :func:`write_table` say what their
    extra columns hold in the sidecar; ``skip`` names those, restored exactly already.)
    """
    import pandas as pd
    from pandas.api import types as ptypes

    skip = set(skip)
    for column in frame.columns:
        if column in COLUMNS or column in skip:
            continue
        series = frame[column]
        if not (ptypes.is_object_dtype(series) or ptypes.is_string_dtype(series)):
            continue
        blank = series.isna() | (series.astype(str).str.strip() == "")
        converted = pd.to_numeric(series.where(~blank), errors="coerce")
        if int(converted.notna().sum()) == int((~blank).sum()):
            frame[column] = converted.astype("float64") if blank.any() else converted


def as_table(table: pd.DataFrame | str | Path, *, validate: bool = True, where: str = "table") -> pd.DataFrame:
    """Accept a DataFrame or a path; validate it as an association table when asked."""
    import pandas as pd

    if not isinstance(table, pd.DataFrame):
        if isinstance(table, (str, Path)):
            table = read_table(table)
        else:
            raise TableError(f"{where} must be a DataFrame or a file path, got {type(table).__name__}")
    if validate:
        validate_table(table, where=where)
    return table


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
