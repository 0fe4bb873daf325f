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

from assoc.infra.importhooks import public_face as _public_face
from assoc.table.combine import concat_tables as concat_tables
from assoc.table.combine import expand_paths as expand_paths
from assoc.table.files import CSV_COLUMNS_KEY as CSV_COLUMNS_KEY
from assoc.table.files import DATA_FILE_SUFFIXES as DATA_FILE_SUFFIXES
from assoc.table.files import FORMATS as FORMATS
from assoc.table.files import as_table as as_table
from assoc.table.files import read_data_file as read_data_file
from assoc.table.files import read_table as read_table
from assoc.table.files import sidecar_path as sidecar_path
from assoc.table.files import table_format as table_format
from assoc.table.files import write_table as write_table
from assoc.table.provenance import PROVENANCE_KEY as PROVENANCE_KEY
from assoc.table.provenance import PROVENANCE_LIBRARIES as PROVENANCE_LIBRARIES
from assoc.table.provenance import get_provenance as get_provenance
from assoc.table.provenance import library_versions as library_versions
from assoc.table.provenance import make_provenance as make_provenance
from assoc.table.provenance import scorer_runs as scorer_runs
from assoc.table.provenance import set_provenance as set_provenance
from assoc.table.schema import COLUMNS as COLUMNS
from assoc.table.schema import TEXT_COLUMNS as TEXT_COLUMNS
from assoc.table.schema import from_records as from_records
from assoc.table.schema import normalise as normalise
from assoc.table.schema import validate_table as validate_table
from assoc.table.selection import parse_where as parse_where
from assoc.table.selection import select_rows as select_rows

__getattr__, __dir__ = _public_face(globals())
