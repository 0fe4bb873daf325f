"""Association tables and data files on disk: CSV, Parquet, JSON Lines and JSON, with provenance kept.

:func:`write_table` writes atomically and stores the table's provenance with the file (Parquet
schema metadata, or a ``<file>.provenance.json`` sidecar for CSV, JSON Lines and JSON, which also
records what each extra column holds); :func:`read_table` restores both. :func:`read_data_file`
reads the other tables a plugin takes (norms, counts, choices) with one clear error per problem.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assoc.errors import TableError
from assoc.infra.io import atomic_path, atomic_write
from assoc.table.provenance import PROVENANCE_KEY, get_provenance, set_provenance
from assoc.table.schema import COLUMNS, TEXT_COLUMNS, text_as_object, validate_table

if TYPE_CHECKING:
    import pandas as pd

CSV_COLUMNS_KEY = "csv_columns"  # in a CSV file's sidecar, beside the provenance: what its extra columns hold
#: In a sidecar, beside the provenance: which data file it describes (sha256 of its bytes, rows, bytes).
DATA_FILE_KEY = "data_file"
_COLUMN_KINDS = ("text", "bool", "int", "float")
# .json is one JSON array of row objects; .jsonl (JSON Lines) is one object per line.
FORMATS = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet", ".jsonl": "jsonl", ".json": "json"}


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
        # Both files are written in full before either replaces its old version (the sidecar first, then the
        # data): a disk that fills up while writing either leaves the previous pair as it was.
        with atomic_path(path) as data_file:
            with open(data_file, "w", encoding="utf-8", newline="") as handle:
                if fmt == "csv":
                    table.to_csv(handle, index=False)  # pandas writes floats with repr: exact round trip
                elif fmt == "json":
                    _write_json(table, handle)
                else:
                    _write_jsonl(table, handle)
                handle.flush()
                os.fsync(handle.fileno())
            sidecar = dict(provenance)
            if fmt == "csv":
                schema = _column_schema(table)
                if schema:
                    sidecar[CSV_COLUMNS_KEY] = schema
            if sidecar:
                # The sidecar names the exact bytes it describes: a kill between the two renames, or a file
                # edited, sorted or truncated afterwards, is detected on reading (never old labels on new rows).
                sidecar[DATA_FILE_KEY] = _data_file_identity(data_file, len(table))
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
    text_as_object(frame)
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
