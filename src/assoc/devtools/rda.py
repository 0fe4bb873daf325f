"""A minimal writer of R data files (``.rda``, as ``save()`` writes them), for tests and docs.

No R is needed to make a small SADCAT-layout ``Dictionaries.rda``: this writes R's XDR
serialisation format, version 2 (R Internals, sec. 1.8 "Serialization formats"), gzip
compressed, for the few object types a data frame of words and numbers needs: character,
double, integer and logical vectors (with ``NA``), factors (from a pandas categorical column),
and data frames (a list with the attributes ``names``, ``class`` and compact ``row.names``).
``rdata`` (the reader ``assoc`` uses) has its own writer, but as of rdata 1.1 it cannot write pandas' string columns; an
independent writer also keeps the reading tests from checking rdata against itself.

Reference: R Core Team. R Internals, sec. 1.8 (Serialization formats).
https://cran.r-project.org/doc/manuals/r-release/R-ints.html#Serialization-Formats
"""

from __future__ import annotations

import gzip
import math
import struct
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

# SEXP types and flag bits (R Internals 1.8 and serialize.c)
NILVALUE_SXP, SYMSXP, LISTSXP, CHARSXP, LGLSXP, INTSXP, REALSXP, STRSXP, VECSXP = 254, 1, 2, 9, 10, 13, 14, 16, 19
IS_OBJECT, HAS_ATTR, HAS_TAG = 1 << 8, 1 << 9, 1 << 10
ASCII_MASK, UTF8_MASK = 1 << 6, 1 << 3
NA_INTEGER = -(2**31)
#: R's NA_real_: a NaN whose low word is 1954
NA_REAL = struct.pack(">II", 0x7FF00000, 1954)


def _int(value: int) -> bytes:
    return struct.pack(">i", value)


def _charsxp(text: str | None) -> bytes:
    if text is None:
        return _int(CHARSXP) + _int(-1)
    raw = text.encode("utf-8")
    levels = ASCII_MASK if raw.isascii() else UTF8_MASK
    return _int(CHARSXP | (levels << 12)) + _int(len(raw)) + raw


def _symbol(name: str) -> bytes:
    return _int(SYMSXP) + _charsxp(name)


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA


def _vector(values: Sequence[Any] | pd.Series | np.ndarray) -> bytes:
    """One atomic vector; the R type follows the values (text, logical, integer or double)."""
    items = list(values)
    present = [v for v in items if not _is_missing(v)]
    if any(isinstance(v, str) for v in present):
        return _int(STRSXP) + _int(len(items)) + b"".join(_charsxp(None if _is_missing(v) else str(v)) for v in items)
    if present and all(isinstance(v, (bool, np.bool_)) for v in present):
        body = b"".join(_int(NA_INTEGER if _is_missing(v) else int(bool(v))) for v in items)
        return _int(LGLSXP) + _int(len(items)) + body
    if present and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in present):
        body = b"".join(_int(NA_INTEGER if _is_missing(v) else int(v)) for v in items)
        return _int(INTSXP) + _int(len(items)) + body
    body = b"".join(NA_REAL if _is_missing(v) else struct.pack(">d", float(v)) for v in items)
    return _int(REALSXP) + _int(len(items)) + body


def _pairlist(entries: Sequence[tuple[str, bytes]]) -> bytes:
    out = b""
    for name, value in entries:
        out += _int(LISTSXP | HAS_TAG) + _symbol(name) + value
    return out + _int(NILVALUE_SXP)


def _factor(values: pd.Categorical) -> bytes:
    """An R factor: 1-based integer codes (NA for missing) with ``levels`` and ``class`` attributes."""
    codes = [NA_INTEGER if c < 0 else int(c) + 1 for c in values.codes]
    attributes = _pairlist([("levels", _vector([str(v) for v in values.categories])), ("class", _vector(["factor"]))])
    return _int(INTSXP | IS_OBJECT | HAS_ATTR) + _int(len(codes)) + b"".join(_int(c) for c in codes) + attributes


def _column(series: pd.Series) -> bytes:
    if isinstance(series.dtype, pd.CategoricalDtype):
        return _factor(series.array)
    return _vector(series.astype(object).where(series.notna(), None).tolist())


def _data_frame(frame: pd.DataFrame) -> bytes:
    columns = [_column(frame[c]) for c in frame.columns]
    attributes = _pairlist(
        [
            ("names", _vector([str(c) for c in frame.columns])),
            ("class", _vector(["data.frame"])),
            ("row.names", _int(INTSXP) + _int(2) + _int(NA_INTEGER) + _int(-len(frame))),
        ]
    )
    return _int(VECSXP | IS_OBJECT | HAS_ATTR) + _int(len(columns)) + b"".join(columns) + attributes


def _object(value: Any) -> bytes:
    if isinstance(value, pd.DataFrame):
        return _data_frame(value)
    if isinstance(value, (list, tuple, np.ndarray, pd.Series)):
        return _vector(list(value))
    return _vector([value])


def write_rda(path: str | Path, objects: Mapping[str, Any]) -> Path:
    """Write ``objects`` (name -> DataFrame, vector or scalar) as an R ``.rda`` file, as ``save()`` would."""
    stream = b"X\n" + _int(2) + _int((4 << 16) | (3 << 8) | 0) + _int((2 << 16) | (3 << 8) | 0)
    stream += _pairlist([(str(name), _object(value)) for name, value in objects.items()])
    path = Path(path)
    path.write_bytes(gzip.compress(b"RDX2\n" + stream))
    return path
