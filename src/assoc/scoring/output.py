"""The scorer output contract, enforced on every run (``assoc.score``) and by ``assoc.testing.check_scorer``.

One set of rules, two strictnesses. What would make the numbers wrong or unusable is a
:class:`~assoc.errors.TableError` at run time:

* the output is not a DataFrame, has no rows, or has no ``value`` column;
* ``value`` holds something other than numbers (text such as ``"high"``, booleans);
* ``value`` holds ``inf`` or ``-inf`` (an undefined measurement is NaN);
* the ``scorer`` column names another scorer (an empty cell is filled with the scorer's name).

What leaves the numbers right but the table harder to use is a
:class:`~assoc.errors.ScorerOutputWarning` at run time (the computed table is kept), and a
failure of ``check_scorer``:

* extra columns the scorer class does not document in ``extra_columns``;
* rows that agree on every column except ``value`` (usually a forgotten role column).

A role cell that is ``None`` or NaN means the role is absent, exactly like ``""``.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from assoc.errors import PluginError, ScorerOutputWarning, TableError
from assoc.table.schema import COLUMNS, TEXT_COLUMNS, normalise, validate_table

if TYPE_CHECKING:
    import pandas as pd

    from assoc.stimuli.sets import Stimuli


#: ``table.attrs`` key where a scorer leaves a report of its run (kept in the provenance as ``"run"``).
RUN_REPORT_KEY = "assoc_run"


def set_run_report(table: pd.DataFrame, report: Mapping[str, Any]) -> pd.DataFrame:
    """Attach a report of how the run went to a scorer's output table, and return the table.

    ``report`` is a JSON-compatible dict (requests sent, retries, token usage, refusals, ...);
    :func:`assoc.score` moves it into the table's provenance under ``"run"``. A report that
    JSON cannot hold is a :class:`~assoc.errors.PluginError` here, in the scorer, rather than a
    ``repr`` in the provenance.
    """
    import json
    from pathlib import PurePath

    def plain(value: Any) -> Any:  # what provenance stores as text or lists anyway
        if isinstance(value, PurePath):
            return str(value)
        if isinstance(value, (set, frozenset, tuple)):
            return list(value)
        if hasattr(value, "item") and callable(value.item):  # numpy scalars
            return value.item()
        raise TypeError(f"{type(value).__name__} {value!r} is not JSON-compatible")

    try:
        json.dumps(report, default=plain)
    except (TypeError, ValueError) as exc:
        raise PluginError(f"a scorer's run report must be JSON-compatible: {exc}") from exc
    table.attrs[RUN_REPORT_KEY] = dict(report)
    return table


def pop_run_report(table: Any) -> dict[str, Any] | None:
    """Remove and return the run report that :func:`set_run_report` attached (``None`` when there is none)."""
    attrs = getattr(table, "attrs", None)
    return attrs.pop(RUN_REPORT_KEY, None) if isinstance(attrs, dict) else None


def check_output(table: Any, scorer_cls: Any, stimuli: Stimuli, models: Sequence[str]) -> pd.DataFrame:
    """Check the raw output of ``scorer_cls.score`` and return it normalised (see the module docstring)."""
    import pandas as pd

    name = scorer_cls.name
    where = f"output of scorer {name!r}"
    if not isinstance(table, pd.DataFrame):
        raise TableError(
            f"{where} must be a pandas DataFrame, got {type(table).__name__} (build it with assoc.table.from_records)"
        )
    if len(table) == 0:
        names = ", ".join(repr(d.name) for d in stimuli) or "none"
        raise TableError(
            f"{where} has no rows for stimuli {stimuli.name or '(unnamed)'} (designs: {names}) "
            f"and models {list(models) or '(none: a model-free scorer gets models=[])'}; "
            "does every design have the groups this scorer pairs?"
        )
    if "value" not in table.columns:
        raise TableError(f"{where} has no 'value' column (columns: {', '.join(map(str, table.columns))})")
    if "scorer" in table.columns:
        named = table["scorer"].where(table["scorer"].notna(), "").astype(str)
        others = sorted(set(named[(named != "") & (named != name)]))
        if others:
            raise TableError(
                f"{where}: column 'scorer' must be {name!r} (or empty) on every row, "
                f"found {', '.join(map(repr, others))}"
            )
    table = normalise(
        table,
        scorer=name,
        measure=scorer_cls.measure or None,
        extra_columns=tuple(scorer_cls.extra_columns),
        where=where,
    )
    validate_table(table, where=where)
    undocumented = undocumented_columns(table, scorer_cls.extra_columns)
    if undocumented:
        warnings.warn(
            f"scorer {name!r} returned undocumented extra column(s) {', '.join(map(repr, undocumented))} "
            "(kept; its author should list them in the class's extra_columns)",
            ScorerOutputWarning,
            stacklevel=3,
        )
    repeated = repeated_measurements(table)
    if repeated:
        warnings.warn(f"scorer {name!r}: {repeated}", ScorerOutputWarning, stacklevel=3)
    return table


def undocumented_columns(table: pd.DataFrame, documented: Mapping[str, str]) -> list[str]:
    """Columns beyond the required ones that ``documented`` (a scorer's ``extra_columns``) does not list."""
    return [str(c) for c in table.columns if c not in COLUMNS and c not in documented]


def repeated_measurements(table: pd.DataFrame) -> str:
    """A message when rows agree on every column except ``value`` (no analysis can tell them apart), else ``""``."""
    identity = [c for c in table.columns if c != "value"]
    try:
        repeated = table.duplicated(subset=identity, keep=False)
    except TypeError:  # unhashable cells (e.g. lists of token scores): compare their text
        repeated = table[identity].astype(str).duplicated(keep=False)
    if not repeated.any():
        return ""
    first = table[repeated].iloc[0]
    shown = ", ".join(f"{c}={first[c]!r}" for c in TEXT_COLUMNS)
    return (
        f"{int(repeated.sum())} rows agree on every column except 'value' (e.g. {shown}); each row "
        "must say what it measured: is a role column (target, attribute, context, model) missing, "
        "or should an extra column (e.g. a sample number) tell repeated measurements apart?"
    )
