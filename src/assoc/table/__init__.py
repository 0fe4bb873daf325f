"""The association table: its schema and validator, provenance, files (CSV, Parquet, JSONL) and ``df.assoc``.

The schema, provenance and file code live in `assoc.table.files`, the ``DataFrame.assoc`` accessor in
`assoc.table.accessor`; this package re-exports their public names, so
``from assoc.table import read_table`` keeps working.
"""

from __future__ import annotations

from assoc.table.files import (
    COLUMNS,
    CSV_COLUMNS_KEY,
    DATA_FILE_SUFFIXES,
    FORMATS,
    PROVENANCE_KEY,
    PROVENANCE_LIBRARIES,
    TEXT_COLUMNS,
    as_table,
    from_records,
    get_provenance,
    library_versions,
    make_provenance,
    normalise,
    parse_where,
    read_data_file,
    read_table,
    select_rows,
    set_provenance,
    sidecar_path,
    table_format,
    validate_table,
    write_table,
)

__all__ = [
    "COLUMNS",
    "CSV_COLUMNS_KEY",
    "DATA_FILE_SUFFIXES",
    "FORMATS",
    "PROVENANCE_KEY",
    "PROVENANCE_LIBRARIES",
    "TEXT_COLUMNS",
    "as_table",
    "from_records",
    "get_provenance",
    "library_versions",
    "make_provenance",
    "normalise",
    "parse_where",
    "read_data_file",
    "read_table",
    "select_rows",
    "set_provenance",
    "sidecar_path",
    "table_format",
    "validate_table",
    "write_table",
]
