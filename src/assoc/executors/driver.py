"""The driver: the one place that decides how a scorer runs, and runs it.

:func:`run_scorer` is what :func:`assoc.score` (and so :func:`assoc.compare` and the CLI) calls:
a scorer that describes its work as units runs through :func:`run_study` on an executor; any
other scorer runs its own :meth:`~assoc.scoring.scorer.Scorer.score` in this process.

:func:`run_study` plans the units, reuses cached ones, runs the rest on an executor and merges the rows.

Each finished unit's rows are written to the on-disk cache (:mod:`assoc.infra.cache`) the
moment they arrive, whichever executor computed them, so a driver that is killed and
started again recomputes only the units that had not arrived. Each unit is claimed before
it is computed, so concurrent runs of one study on one cache split the work. Rows are
merged in plan order, so the table does not depend on the executor, on which units came
from the cache, or on which run computed them.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from assoc.errors import OptionError
from assoc.executors.base import Executor, category_of
from assoc.scoring.units import WorkUnit, check_plan

if TYPE_CHECKING:
    import pandas as pd

    from assoc.infra.cache import Claim, Namespace
    from assoc.infra.threads import ThreadSetting
    from assoc.scoring.scorer import Scorer
    from assoc.stimuli.sets import Stimuli


def unit_namespaces(scorer: Scorer, units: Sequence[WorkUnit]) -> dict[str, Namespace]:
    """The unit-cache namespace of each model of ``units`` (empty when the scorer caches nothing).

    See :meth:`assoc.scoring.scorer.Scorer.unit_namespace`.
    """
    out = {}
    for model in dict.fromkeys(unit.model for unit in units):
        namespace = scorer.unit_namespace(model)
        if namespace is None:
            return {}
        out[model] = namespace
    return out


def check_runs_on(scorer_cls: type[Scorer], executor: str | Executor | None, models: Sequence[str] = ()) -> None:
    """Refuse a non-local executor for work that can only run in this process, before anything runs.

    That is a scorer without work units, and a model given as an object in memory
    (:mod:`assoc.models.memory`: other processes cannot see it). A clear error beats a silent
    local run of a study meant for a cluster.
    """
    from assoc.models.memory import in_memory

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
    executor: Executor | None = None,
    progress: bool = False,
    threads: ThreadSetting | None = None,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Run ``scorer`` on ``stimuli`` and ``models``: the one place that chooses how.

    A scorer with work units (:meth:`~assoc.scoring.scorer.Scorer.supports_units`) runs through
    :func:`run_study` on ``executor`` (an :class:`~assoc.executors.base.Executor`, or ``None`` for
    local; :func:`assoc.plugins.get_executor` makes one from a registered name). Any other scorer
    runs its own ``score`` in this process, and a non-local ``executor`` is an
    :class:`~assoc.errors.OptionError`. ``threads`` is torch's intra-op thread count for the work
    (the :class:`~assoc.infra.threads.ThreadSetting` that :func:`assoc.score` parsed, or ``None``:
    ``$ASSOC_THREADS``, else torch's default), set around the work wherever it runs and restored
    afterwards. Returns the scorer's raw table (unchecked) and the executor's provenance record,
    which includes the threads
    (``"threads"``: requested, where from, and what torch used).
    """
    from assoc.infra.threads import resolve_threads, torch_threads

    setting = threads if threads is not None else resolve_threads()
    check_runs_on(type(scorer), executor, models)
    if not scorer.supports_units():
        with torch_threads(setting.requested) as used:
            table = scorer.score(stimuli, models, progress=progress)
        return table, {"name": "local", "units": None, "threads": setting.record([used.value])}
    from assoc.executors.local import LocalExecutor

    runner = executor if executor is not None else LocalExecutor()
    return run_study(scorer, stimuli, models, executor=runner, progress=progress, threads=setting)


def run_study(
    scorer: Scorer,
    stimuli: Stimuli,
    models: Sequence[str],
    *,
    executor: Executor,
    progress: bool = False,
    threads: ThreadSetting | None = None,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Run ``scorer`` on ``stimuli`` and ``models`` through ``executor``.

    The reports of the units computed here (:meth:`~assoc.scoring.scorer.Scorer.unit_report`) go to
    :meth:`~assoc.scoring.scorer.Scorer.merge_units` with the rows (by default combined by
    :meth:`~assoc.scoring.scorer.Scorer.combine_unit_reports` into the table's run report); units from
    the cache report nothing. A unit whose rows are not complete
    (:meth:`~assoc.scoring.scorer.Scorer.unit_complete`) is not cached: the next run computes it again.

    Returns the merged table (``scorer.merge``) and the executor's provenance record: its
    name and settings, the number of units and how many came from the cache, and the threads
    (``threads`` as in :func:`run_scorer`; ``"torch"`` holds what the workers' units used, ``None``
    when none computed anything with torch, e.g. every unit came from the cache).

    Units are claimed (:meth:`assoc.infra.cache.Namespace.claim`) just before they are computed, so
    several runs of one study on one cache directory split the work: a unit another live run
    has claimed is left to it, and its rows are read from the cache once that run stored them;
    a unit claimed by a run that died is taken over.
    """
    from assoc.infra.cache import plain_rows
    from assoc.infra.prefetch import import_in_background
    from assoc.infra.progress import bar
    from assoc.infra.threads import resolve_threads

    setting = threads if threads is not None else resolve_threads()
    used: list[int | None] = []
    reports: dict[str, dict[str, Any]] = {}  # unit key -> what the scorer counted of it (units computed here)

    import_in_background("pandas")  # needed by merge at the end; imported while the models are hashed and loaded
    units = check_plan(scorer.plan(stimuli, list(models)), models, scorer.name)
    namespaces = unit_namespaces(scorer, units)
    rows_of: dict[str, list[dict[str, Any]]] = {}

    def from_cache(unit: WorkUnit) -> bool:
        namespace = namespaces.get(unit.model)
        if namespace is not None:
            found = namespace.get(unit.fingerprint())
            if isinstance(found, list):
                rows_of[unit.key] = found
                return True
        return False

    for unit in units:
        from_cache(unit)
    cached = len(rows_of)
    todo = [unit for unit in units if unit.key not in rows_of]
    by_key = {unit.key: unit for unit in todo}
    seen_warnings: dict[tuple[str, str], None] = {}
    claims: dict[str, Claim] = {}
    where = scorer.unit_cache()
    cache = where if todo else None
    meter = bar(
        total=sum(unit.size for unit in units),
        desc=scorer.name,
        enabled=progress,
        unit="item",
        initial=sum(unit.size for unit in units if unit.key in rows_of),
        note=f"{len(units)} work unit{'s' * (len(units) != 1)}, {cached} from the cache; "
        f"{len(models)} model{'s' * (len(models) != 1)}",
        # finished units are stored as they arrive: a re-run of the same study reads them back
        kept=f"the cache ({where.root})" if where is not None and namespaces else None,
    )
    if cache is not None:
        cache.sweep()  # what killed runs left behind: their temporary files and claims

    def claimed(pending: list[WorkUnit], deferred: list[WorkUnit]) -> Iterator[WorkUnit]:
        """The units of ``pending`` this run may compute, each claimed just before the executor takes it."""
        nonlocal cached
        for unit in pending:
            namespace = namespaces.get(unit.model)
            if namespace is None:
                yield unit
                continue
            claim = namespace.claim(unit.fingerprint())
            if claim is None:  # another live run computes it
                deferred.append(unit)
                continue
            namespace.refresh()
            if from_cache(unit):  # stored by another run since this one looked
                claim.release()
                cached += 1
                meter.update(unit.size)
                continue
            claims[unit.key] = claim
            yield unit

    try:
        delay = 0.05
        while todo:
            deferred: list[WorkUnit] = []
            for outcome in executor.run(scorer, claimed(todo, deferred), threads=setting.requested):
                arrived = by_key.get(outcome.key)
                if arrived is None or arrived.key in rows_of:  # a retried unit that arrives twice counts once
                    continue
                unit = arrived
                rows = plain_rows(outcome.rows)
                used.append(outcome.threads)
                namespace = namespaces.get(unit.model)
                if namespace is not None and scorer.unit_complete(rows):  # an incomplete unit runs again next time
                    namespace.put_many({unit.fingerprint(): rows})
                claim = claims.pop(unit.key, None)
                if claim is not None:
                    claim.release()
                rows_of[unit.key] = rows
                if outcome.report is not None:
                    reports[unit.key] = outcome.report
                seen_warnings.update(dict.fromkeys(outcome.warnings))
                meter.update(unit.size)
            if not deferred:
                break
            # Units other runs hold: wait for their rows (or for their claims to end), then try again.
            time.sleep(delay)
            delay = min(1.0, delay * 1.5)
            for namespace in {id(ns): ns for ns in (namespaces[u.model] for u in deferred)}.values():
                namespace.refresh()
            todo = []
            for unit in deferred:
                if from_cache(unit):
                    cached += 1
                    meter.update(unit.size)
                else:
                    todo.append(unit)
    finally:
        meter.close()
        for claim in claims.values():  # units that did not arrive (an error, Ctrl-C): free for other runs
            claim.release()
        for category, message in seen_warnings:  # shown once each, even when several units raised them
            warnings.warn(message, category_of(category), stacklevel=3)
    missing = [unit.key for unit in units if unit.key not in rows_of]
    if missing:
        from assoc.errors import PluginError

        raise PluginError(
            f"executor {executor.name!r} finished without the rows of {len(missing)} unit(s) (first: {missing[0]!r})"
        )
    rows = [row for unit in units for row in rows_of[unit.key]]
    table = scorer.merge_units(rows, list(models), [reports[unit.key] for unit in units if unit.key in reports])
    record = {**executor.describe(), "units": len(units), "units_from_cache": cached, "threads": setting.record(used)}
    return table, record
