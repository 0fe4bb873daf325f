"""The driver: the one place that decides how a scorer runs, and runs it.

:func:`run_scorer` is what :func:`assoc.score` (and so :func:`assoc.compare` and the CLI) calls:
a scorer that describes its work as units runs through :func:`run_study` on an executor; any
other scorer runs its own :meth:`~assoc.scoring.scorer.Scorer.score` in this process.

:func:`run_study` plans the units, reuses cached ones, runs the rest on an executor and merges the rows.

Each finished unit's rows are written to the on-disk cache (:mod:`assoc.infra.cache`) the
moment they arrive, whichever executor computed them, so a driver that is killed and
started again recomputes only the units that had not arrived. Rows are merged in plan
order, so the table does not depend on the executor or on which units came from the cache.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from assoc.errors import OptionError
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
            fingerprint=scorer.identify_model(model) if model else "",
        )
    return out


def check_runs_on(scorer_cls: type[Scorer], executor: str | Executor | None, models: Sequence[str] = ()) -> None:
    """Refuse a non-local executor for work that can only run in this process, before anything runs.

    That is a scorer without work units, and a model given as an object in memory
    (:mod:`assoc.scoring.models`: other processes cannot see it). A clear error beats a silent
    local run of a study meant for a cluster.
    """
    from assoc.scoring.models import in_memory

    name = getattr(executor, "name", executor)
    if name in (None, "local"):
        return
    if not scorer_cls.supports_units():
        raise OptionError(
            f"scorer {scorer_cls.name!r} does not describe its work as units (Scorer.plan/run_unit), "
            f"so it runs only in this process: drop executor={name!r} (--executor)"
        )
    local = [model for model in models if in_memory(model) is not None]
    if local:
        raise OptionError(
            f"model {local[0]!r} is an object in this process's memory, which executor {name!r} cannot reach: "
            "give its name or directory instead, or drop executor="
        )


def run_scorer(
    scorer: Scorer,
    stimuli: Stimuli,
    models: Sequence[str],
    *,
    executor: str | Executor | None = None,
    progress: bool = False,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Run ``scorer`` on ``stimuli`` and ``models``: the one place that chooses how.

    A scorer with work units (:meth:`~assoc.scoring.scorer.Scorer.supports_units`) runs through
    :func:`run_study` on ``executor`` (a name from :data:`assoc.executors.EXECUTORS`, an
    :class:`~assoc.executors.base.Executor`, or ``None`` for local; one made here from a name is
    closed afterwards). Any other scorer runs its own ``score`` in this process, and a
    non-local ``executor`` is an :class:`~assoc.errors.OptionError`. Returns the scorer's raw
    table (unchecked) and the executor's provenance record.
    """
    check_runs_on(type(scorer), executor, models)
    if not scorer.supports_units():
        return scorer.score(stimuli, models, progress=progress), {"name": "local", "units": None}
    from assoc.executors import get_executor

    runner = get_executor(executor)
    try:
        return run_study(scorer, stimuli, models, executor=runner, progress=progress)
    finally:
        if runner is not executor:  # made here from a name: release what it started (a local Ray)
            runner.close()


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
