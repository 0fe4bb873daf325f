"""The driver: plan the units, reuse cached ones, run the rest on an executor, merge the rows.

Each finished unit's rows are written to the on-disk cache (:mod:`assoc.infra.cache`) the
moment they arrive, whichever executor computed them, so a driver that is killed and
started again recomputes only the units that had not arrived. Rows are merged in plan
order, so the table does not depend on the executor or on which units came from the cache.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from assoc.executors.base import Executor, category_of
from assoc.scoring.units import WorkUnit, check_plan

if TYPE_CHECKING:
    import pandas as pd

    from assoc.infra.cache import Namespace
    from assoc.scoring.scorer import Scorer
    from assoc.stimuli.model import Stimuli

UNIT_CACHE_VERSION = 1


def unit_namespaces(scorer: Scorer, units: Sequence[WorkUnit]) -> dict[str, Namespace]:
    """The unit-cache namespace of each model of ``units`` (empty when the scorer caches nothing).

    A namespace holds everything that changes a unit's rows: the scorer, its cache version,
    its options (except where the cache lives) and the model's fingerprint.
    """
    cache = scorer.unit_cache()
    if cache is None:
        return {}
    options = {k: v for k, v in scorer.params.items() if k not in ("cache", "cache_dir")}
    out = {}
    for model in dict.fromkeys(unit.model for unit in units):
        out[model] = cache.namespace(
            kind="units",
            version=UNIT_CACHE_VERSION,
            scorer=scorer.name,
            scorer_version=scorer.cache_version,
            options=options,
            model=model,
            fingerprint=scorer.model_fingerprint(model) if model else "",
        )
    return out


def run_study(
    scorer: Scorer, stimuli: Stimuli, models: Sequence[str], *, executor: Executor, progress: bool = False
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Run ``scorer`` on ``stimuli`` and ``models`` through ``executor``.

    Returns the merged table (``scorer.merge``) and the executor's provenance record: its
    name and settings, the number of units and how many came from the cache.
    """
    from assoc.infra.prefetch import import_in_background
    from assoc.infra.progress import bar

    import_in_background("pandas")  # needed by merge at the end; imported while the models are hashed and loaded
    units = check_plan(scorer.plan(stimuli, list(models)), models, scorer.name)
    namespaces = unit_namespaces(scorer, units)
    rows_of: dict[str, list[dict[str, Any]]] = {}
    for unit in units:
        namespace = namespaces.get(unit.model)
        if namespace is not None:
            found = namespace.get(unit.fingerprint())
            if isinstance(found, list):
                rows_of[unit.key] = found
    cached = len(rows_of)
    todo = [unit for unit in units if unit.key not in rows_of]
    by_key = {unit.key: unit for unit in todo}
    seen_warnings: dict[tuple[str, str], None] = {}
    meter = bar(total=sum(unit.size for unit in units), desc=scorer.name, enabled=progress, unit="item")
    meter.update(sum(unit.size for unit in units if unit.key in rows_of))
    try:
        for outcome in executor.run(scorer, todo):
            arrived = by_key.get(outcome.key)
            if arrived is None or arrived.key in rows_of:  # a retried unit that arrives twice counts once
                continue
            unit = arrived
            namespace = namespaces.get(unit.model)
            if namespace is not None:
                namespace.put_many({unit.fingerprint(): outcome.rows})
            rows_of[unit.key] = outcome.rows
            seen_warnings.update(dict.fromkeys(outcome.warnings))
            meter.update(unit.size)
    finally:
        meter.close()
        for category, message in seen_warnings:  # shown once each, even when several units raised them
            warnings.warn(message, category_of(category), stacklevel=3)
    missing = [unit.key for unit in units if unit.key not in rows_of]
    if missing:
        from assoc.errors import PluginError

        raise PluginError(
            f"executor {executor.name!r} finished without the rows of {len(missing)} unit(s) (first: {missing[0]!r})"
        )
    rows = [row for unit in units for row in rows_of[unit.key]]
    table = scorer.merge(rows, list(models))
    record = {**executor.describe(), "units": len(units), "units_from_cache": cached}
    return table, record
