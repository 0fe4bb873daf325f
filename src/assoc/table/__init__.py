"""The association table: schema and validator, provenance, files (CSV, Parquet, JSONL), row selection, ``df.assoc``.

* `assoc.table.schema`: the columns, [`from_records`][assoc.from_records], [`normalise`][assoc.normalise],
[`validate_table`][assoc.validate_table].
* `assoc.table.provenance`: what produced a table, kept in ``DataFrame.attrs["assoc"]``.
* `assoc.table.files`: [`write_table`][assoc.write_table], [`read_table`][assoc.read_table],
[`read_data_file`][assoc.read_data_file], `as_table`.
* `assoc.table.selection`: [`select_rows`][assoc.table.select_rows] (``--where``).
* `assoc.table.combine`: [`concat_tables`][assoc.table.concat_tables] (``--table`` repeated: one study's tables as one).
* `assoc.table.accessor`: the ``DataFrame.assoc`` accessor.

This package re-exports their public names (``from assoc.table import read_table``).
"""

from __future__ import annotations

from assoc.table.combine import concat_tables, expand_paths
from assoc.table.files import (
    CSV_COLUMNS_KEY,
    DATA_FILE_SUFFIXES,
    FORMATS,
    as_table,
    read_data_file,
    read_table,
    sidecar_path,
    table_format,
    write_table,
)
from assoc.table.provenance import (
    PROVENANCE_KEY,
    PROVENANCE_LIBRARIES,
    get_provenance,
    library_versions,
    make_provenance,
    scorer_runs,
    set_provenance,
)
from assoc.table.schema import (
    COLUMNS,
    TEXT_COLUMNS,
    from_records,
    normalise,
    validate_table,
)
from assoc.table.selection import (
    parse_where,
    select_rows,
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
    "concat_tables",
    "expand_paths",
    "from_records",
    "get_provenance",
    "library_versions",
    "make_provenance",
    "normalise",
    "parse_where",
    "read_data_file",
    "read_table",
    "scorer_runs",
    "select_rows",
    "set_provenance",
    "sidecar_path",
    "table_format",
    "validate_table",
    "write_table",
]
