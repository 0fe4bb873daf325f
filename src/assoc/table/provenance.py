"""Provenance of a table: what produced it (versions, models, options, time), kept in ``DataFrame.attrs["assoc"]``.

:func:`assoc.table.files.write_table` stores it with the file (Parquet schema metadata, or a
``<file>.provenance.json`` sidecar) and :func:`assoc.table.files.read_table` restores it.
"""

from __future__ import annotations

import datetime as _dt
import json
import platform
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

PROVENANCE_KEY = "assoc"


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


def scorer_runs(provenance: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Every scorer run a provenance record describes, outermost first.

    A score table's record is one run; a comparison's (``kind`` ``compare``) and a
    concatenation's (``combined``) hold theirs under ``runs``; an analysis result's the record of
    its input under ``input``. Used to ask how the numbers behind a table were made (e.g. which
    ``reduction`` a ``clm`` run used), whatever was done to the table since.
    """
    found: list[Mapping[str, Any]] = []

    def walk(record: Any) -> None:
        if isinstance(record, list):
            for item in record:
                walk(item)
            return
        if not isinstance(record, Mapping):
            return
        if record.get("kind") == "score":
            found.append(record)
        for key in ("runs", "input"):
            if key in record:
                walk(record[key])

    walk(provenance)
    return found


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
