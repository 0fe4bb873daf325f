"""Several tables of one study as one: ``assoc analyze X --table a --table b`` and :func:`concat_tables`.

Two runs of one scorer on two sets of models (or two halves of the stimuli) are one study's rows:
they are concatenated when they share a schema, and refused, in one line naming the two inputs and
what differs, when they do not:

* the same columns, the same scorers and the same measures;
* the same kind of table (score, comparison, analysis result, or none with no provenance), and,
  for score tables, the same scorer options: options that only say how the work ran
  (:data:`RUN_OPTIONS`: the cache, batch sizes, concurrency, retries) may differ, and so may the
  options that say how a model was run (:data:`MODEL_OPTIONS`: device, dtype, revision, backend,
  endpoint) when the two inputs hold different models, each of which ran one way; any other option
  changes the numbers (a ``reduction``, a ``bos`` policy, a prompt) and is refused;
* never one file twice (the same path, or the same bytes).

The result's provenance (``kind`` ``combined``) records every input's provenance under ``runs``
(the order of the inputs) and each input's file (path, sha256, rows) under ``files``; what an
analysis asks of the scorer runs behind a table (`assoc.table.provenance.scorer_runs`) sees all of them.
"""

from __future__ import annotations

import glob
import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assoc.errors import TableError
from assoc.table.provenance import get_provenance, make_provenance, set_provenance

if TYPE_CHECKING:
    import pandas as pd

#: Options that say how the work ran, not what was computed: they may differ between combined runs.
RUN_OPTIONS = frozenset(
    {
        "cache",
        "cache_dir",
        "progress",
        "batch_size",
        "batch_tokens",
        "unit_size",
        "max_block_mb",
        "concurrency",
        "connect_timeout",
        "timeout",
        "max_retries",
        "timeout_retries",
        "reply_retries",
        "backoff_base",
        "backoff_max",
        "requests_per_minute",
        "tokens_per_minute",
        "offline",
    }
)
#: Options that say how a model ran: they may differ between runs of different models.
MODEL_OPTIONS = frozenset({"device", "dtype", "revision", "backend", "base_url", "api_key_env", "provider"})

_GLOB = frozenset("*?[")


def expand_paths(given: Sequence[str]) -> list[str]:
    """The table files ``given`` names: each path as it is, a pattern (``runs/*.parquet``) as its sorted matches.

    A pattern that matches no file is an error naming it; a path that exists is never read as a
    pattern (a file may have ``[`` in its name).
    """
    paths: list[str] = []
    for text in given:
        if Path(text).exists() or not _GLOB & set(text):
            paths.append(text)
            continue
        found = sorted(p for p in glob.glob(text) if not p.endswith(".provenance.json"))
        if not found:
            raise TableError(f"--table {text!r} matches no file")
        paths.extend(found)
    return paths


def concat_tables(
    tables: Sequence[pd.DataFrame | str | Path], *, validate: bool = True, names: Sequence[str] | None = None
) -> pd.DataFrame:
    """Concatenate tables of one study (see the module docstring); refuse, in one line, tables that do not fit.

    Parameters
    ----------
    tables:
        DataFrames or table files (.csv, .parquet, .jsonl, .json), at least one.
    validate:
        Check each against the association-table contract (``False`` for analyses that read other tables).
    names:
        What to call each input in messages and provenance (default: its path, or ``table N``).

    Returns
    -------
    pandas.DataFrame
        The rows of every input in order, with the provenance of a concatenation (``kind`` ``combined``).
    """
    import pandas as pd

    from assoc.table.files import as_table

    if not tables:
        raise TableError("no table to combine")
    labels = (
        list(names)
        if names is not None
        else [str(t) if isinstance(t, (str, Path)) else f"table {i + 1}" for i, t in enumerate(tables)]
    )
    frames, files = [], []
    seen: dict[str, str] = {}
    for label, given in zip(labels, tables, strict=True):
        record: dict[str, Any] = {"path": label}
        if isinstance(given, (str, Path)):
            real = str(Path(given).expanduser().resolve())
            sha = _sha256(Path(given))
            for earlier, what in ((real, "path"), (sha, "content")):
                if earlier in seen:
                    same = "is given twice" if what == "path" else f"holds the same bytes as {seen[earlier]}"
                    raise TableError(f"--table {label} {same}: its rows would be counted twice; give each table once")
                seen[earlier] = label
            record["sha256"] = sha
        frame = as_table(given, validate=validate, where=f"table {label}")
        record["rows"] = len(frame)
        frames.append(frame)
        files.append(record)
    if len(frames) == 1:
        return frames[0]
    first, first_label = frames[0], labels[0]
    for frame, label in zip(frames[1:], labels[1:]):
        _check_same_schema(first, first_label, frame, label)
    _check_compatible_provenance(frames, labels)
    combined = pd.concat(frames, ignore_index=True, sort=False)[list(first.columns)]
    combined.attrs = {}
    return set_provenance(
        combined, make_provenance(kind="combined", runs=[get_provenance(f) for f in frames], files=files)
    )


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _values(frame: pd.DataFrame, column: str) -> set[str]:
    return set(frame[column].dropna().astype(str).unique()) if column in frame.columns else set()


def _check_same_schema(first: pd.DataFrame, first_label: str, frame: pd.DataFrame, label: str) -> None:
    """Refuse ``frame`` unless it has ``first``'s columns, scorers and measures."""

    def refuse(what: str) -> None:
        raise TableError(f"{label} does not fit {first_label}: {what}; analyse them apart (or score them together)")

    extra = [str(c) for c in frame.columns if c not in first.columns]
    lacking = [str(c) for c in first.columns if c not in frame.columns]
    if extra or lacking:
        parts = ([f"it lacks column(s) {', '.join(lacking[:4])}"] if lacking else []) + (
            [f"it has column(s) {', '.join(extra[:4])} the other lacks"] if extra else []
        )
        refuse("; ".join(parts))
    for column in ("scorer", "measure"):
        mine, theirs = _values(frame, column), _values(first, column)
        if mine != theirs:
            refuse(f"its {column} is {', '.join(sorted(mine)) or 'none'}, not {', '.join(sorted(theirs)) or 'none'}")


def _check_compatible_provenance(frames: Sequence[pd.DataFrame], labels: Sequence[str]) -> None:
    """Refuse inputs made in ways that do not combine (see the module docstring)."""
    records = [get_provenance(f) for f in frames]
    kinds = [str(r.get("kind", "")) or "no provenance" for r in records]
    for label, kind in zip(labels[1:], kinds[1:]):
        if kind != kinds[0]:
            raise TableError(
                f"{label} does not fit {labels[0]}: it is a table of kind {kind}, the other of kind {kinds[0]}; "
                "combine tables of one kind (score tables with score tables)"
            )
    if kinds[0] == "analysis":
        for label, record in zip(labels[1:], records[1:]):
            for key in ("analysis", "options"):
                if record.get(key) != records[0].get(key):
                    raise TableError(
                        f"{label} does not fit {labels[0]}: they are results of other analyses or options "
                        f"({key}: {_short(record.get(key))} vs {_short(records[0].get(key))})"
                    )
        return
    runs = [_runs_by_scorer(r) for r in records]
    models = [_models_of(r, f) for r, f in zip(records, frames)]
    for label, theirs, their_models in zip(labels[1:], runs[1:], models[1:]):
        disjoint = not (their_models & models[0])
        for scorer, options in theirs.items():
            if scorer not in runs[0]:
                continue
            mine = runs[0][scorer]
            for name in sorted(set(options) | set(mine)):
                if name in RUN_OPTIONS or (disjoint and name in MODEL_OPTIONS):
                    continue
                if options.get(name) != mine.get(name):
                    shared = "" if disjoint else " (they share a model)"
                    raise TableError(
                        f"{label} does not fit {labels[0]}: scorer {scorer} ran with {name}={options.get(name)!r} "
                        f"there and {name}={mine.get(name)!r} here{shared}; their numbers are not of one kind "
                        "(analyse them apart)"
                    )


def _runs_by_scorer(record: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    from assoc.table.provenance import scorer_runs

    found: dict[str, Mapping[str, Any]] = {}
    for run in scorer_runs(record):
        options = run.get("options")
        if isinstance(options, Mapping):
            found.setdefault(str(run.get("scorer", "")), options)
    return found


def _models_of(record: Mapping[str, Any], frame: pd.DataFrame) -> set[str]:
    """Every name a table's models go by: the ``model`` column, and each model's label and spec in provenance."""
    names = _values(frame, "model") | {str(m) for m in record.get("models") or [] if isinstance(m, str)}
    for entry in record.get("model_names") or []:
        if isinstance(entry, Mapping):
            names |= {str(entry[k]) for k in ("label", "spec") if entry.get(k)}
    return names


def _short(value: Any, width: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."
