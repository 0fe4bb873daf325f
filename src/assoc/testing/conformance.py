"""Conformance checks every scorer and analysis (ours and third-party) should pass.

Use them in a plugin's tests::

    from assoc.testing import check_scorer

    def test_my_scorer_conforms():
        check_scorer("my_scorer", stimuli={...}, models=["my-model"])

Each check raises ``AssertionError`` with a message that says which part of the
contract is broken.
"""

from __future__ import annotations

import math
import tempfile
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from assoc.errors import AssocError, OptionError, ScorerOutputWarning, TableError
from assoc.plugins import manager as plugins
from assoc.scoring.output import repeated_measurements, undocumented_columns
from assoc.table.files import read_table, write_table
from assoc.table.provenance import get_provenance
from assoc.table.schema import COLUMNS, TEXT_COLUMNS, validate_table


def _fail(message: str) -> None:
    raise AssertionError(message)


def check_metadata(component: type) -> None:
    """A scorer/analysis class documents itself: name, description, citation, option help."""
    for attribute in ("name", "description", "citation"):
        value = getattr(component, attribute, "")
        if not isinstance(value, str) or not value.strip():
            _fail(f"{component.__name__}.{attribute} must be a non-empty string")
    for option in getattr(component, "options", ()):
        if not option.help:
            _fail(f"{component.__name__}: option {option.name!r} has no help text")
    try:
        component(this_option_does_not_exist=1)
    except OptionError:
        pass
    else:
        _fail(f"{component.__name__} accepted an unknown option instead of raising OptionError")


def check_table(table: Any, *, scorer: str | None = None, expect_rows: int | None = None) -> None:
    """``table`` satisfies the association-table contract and round-trips through CSV and Parquet."""
    try:
        validate_table(table)
    except AssocError as exc:
        _fail(f"not a valid association table: {exc}")
    if list(table.columns[: len(COLUMNS)]) != list(COLUMNS):
        _fail(f"required columns must come first in this order: {COLUMNS}, got {list(table.columns)}")
    if scorer is not None and set(table["scorer"]) != {scorer}:
        _fail(f"column 'scorer' must be {scorer!r} on every row, got {sorted(set(table['scorer']))}")
    if expect_rows is not None and len(table) != expect_rows:
        _fail(f"expected {expect_rows} rows, got {len(table)}")
    if not len(table):
        _fail("the table has no rows")
    if table["value"].isna().all():
        _fail("every value is NaN")
    # Rows that agree on every column but value cannot be told apart by any analysis; the usual
    # cause is a role column the scorer forgot (the core fills an absent one with "").
    repeated = repeated_measurements(table)
    if repeated:
        _fail(repeated)
    with tempfile.TemporaryDirectory() as tmp:
        for suffix in (".csv", ".parquet"):
            path = Path(tmp) / f"table{suffix}"
            write_table(table, path)
            back = read_table(path)
            for column in TEXT_COLUMNS:
                if list(back[column]) != list(table[column]):
                    _fail(f"column {column!r} does not survive a {suffix} round trip")
            left, right = list(back["value"]), list(table["value"])
            for a, b in zip(left, right):
                if not ((math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)):
                    _fail(f"column 'value' does not survive a {suffix} round trip ({a!r} != {b!r})")
            if get_provenance(table) and get_provenance(back) != get_provenance(table):
                _fail(f"provenance does not survive a {suffix} round trip")


def check_scorer(
    name: str,
    stimuli: Any,
    models: Sequence[str] | None = None,
    options: Mapping[str, Any] | None = None,
    *,
    expect_rows: int | None = None,
) -> Any:
    """Run the registered scorer ``name`` through the contract; return its table.

    Checks: it is registered through the plugin system; its class documents
    itself and rejects unknown options; ``assoc.score`` returns a valid table
    whose ``scorer`` column is ``name``, whose ``measure`` is set, with
    provenance naming the scorer, models and options; the table round-trips
    through CSV and Parquet.
    """
    from assoc.api import score

    registry = plugins.registry()
    if name not in registry.scorers:
        _fail(f"scorer {name!r} is not registered (registered: {sorted(registry.scorers)})")
    scorer_cls = registry.scorers[name].obj
    check_metadata(scorer_cls)
    if not scorer_cls.measure:
        _fail(f"{scorer_cls.__name__}.measure must name what the value column holds")
    for column, text in scorer_cls.extra_columns.items():
        if not text:
            _fail(f"{scorer_cls.__name__}: extra column {column!r} is undocumented")
    # The run-time rules (assoc.scoring.output) apply as they do for users, except that what a user
    # only sees as a warning (the table is still usable) fails here.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ScorerOutputWarning)
        try:
            table = score(name, stimuli, models, progress=False, **dict(options or {}))
        except TableError as exc:
            _fail(f"scorer {name!r} breaks the table contract: {exc}")
    for warning in caught:
        if issubclass(warning.category, ScorerOutputWarning):
            _fail(str(warning.message))
        warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    check_table(table, scorer=name, expect_rows=expect_rows)
    undocumented = undocumented_columns(table, scorer_cls.extra_columns)
    if undocumented:
        _fail(f"scorer {name!r} returns undocumented extra column(s) {undocumented}; list them in extra_columns")
    provenance = get_provenance(table)
    for key in ("scorer", "models", "options", "assoc_version", "created"):
        if key not in provenance:
            _fail(f"provenance lacks {key!r}")
    return table


def check_analysis(name: str, table: Any, options: Mapping[str, Any] | None = None) -> Any:
    """Run the registered analysis ``name`` through the contract; return its result."""
    import pandas as pd

    from assoc.api import analyze

    registry = plugins.registry()
    if name not in registry.analyses:
        _fail(f"analysis {name!r} is not registered (registered: {sorted(registry.analyses)})")
    check_metadata(registry.analyses[name].obj)
    result = analyze(name, table, **dict(options or {}))
    if not isinstance(result, pd.DataFrame) or not len(result):
        _fail(f"analysis {name!r} must return a non-empty DataFrame")
    if "analysis" not in get_provenance(result):
        _fail("analysis result lacks provenance")
    return result


def check_executor(
    name: str,
    scorer: str,
    stimuli: Any,
    models: Sequence[str] | None = None,
    options: Mapping[str, Any] | None = None,
    executor_options: Mapping[str, Any] | None = None,
) -> Any:
    """Run the registered scorer ``scorer`` (one with work units) on the registered executor ``name``.

    Checks: the executor is registered through the plugin system and documents itself (a
    ``description``, help for each of its ``cli_options``); it computes every unit (the scorer's
    result cache is turned off where the scorer has one); its table equals the ``local``
    executor's, row for row and value for value (the driver merges in plan order, whatever order
    the units finished in); provenance records it under its name with the number of units.
    Returns the executor's table.
    """
    import pandas as pd

    from assoc.api import score

    registry = plugins.registry()
    if name not in registry.executors:
        _fail(f"executor {name!r} is not registered (registered: {sorted(registry.executors)})")
    executor_cls = registry.executors[name].obj
    if not getattr(executor_cls, "description", ""):
        _fail(f"{executor_cls.__name__}.description is empty: it is the executor's line in --executor's help")
    for option in getattr(executor_cls, "cli_options", ()):
        if not option.help:
            _fail(f"{executor_cls.__name__}: option {option.name!r} has no help")
    if scorer not in registry.scorers or not registry.scorers[scorer].obj.supports_units():
        _fail(f"check_executor needs a registered scorer with work units (Scorer.plan/run_unit), got {scorer!r}")
    scorer_cls = registry.scorers[scorer].obj
    given = dict(options or {})
    if "cache" in {option.name for option in scorer_cls.options}:
        given["cache"] = False  # every unit computed by the executor, none read from an earlier run
    local = score(scorer, stimuli, models, progress=False, **given)
    executor = plugins.get_executor(name, **dict(executor_options or {}))
    try:
        table = score(scorer, stimuli, models, progress=False, executor=executor, **given)
    finally:
        executor.close()
    record = get_provenance(table).get("executor", {})
    if record.get("name") != name:
        _fail(f"provenance names executor {record.get('name')!r}, not {name!r} (Executor.describe)")
    if not record.get("units") or record.get("units_from_cache"):
        ran, cached = record.get("units"), record.get("units_from_cache")
        _fail(f"executor {name!r} ran {ran!r} units ({cached!r} from the cache)")
    try:
        pd.testing.assert_frame_equal(table.reset_index(drop=True), local.reset_index(drop=True), check_exact=True)
    except AssertionError as exc:
        _fail(f"executor {name!r} gives a different table than the local executor: {exc}")
    return table
