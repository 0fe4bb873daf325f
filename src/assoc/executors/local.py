"""The default executor: every unit in this process, one after another, in plan order."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from assoc.executors.base import Executor, Worker
from assoc.scoring.units import UnitOutcome, WorkUnit

if TYPE_CHECKING:
    from assoc.scoring.scorer import Scorer


class LocalExecutor(Executor):
    """Run units in this process. Plans list units model by model, so each model loads once.

    A failing unit raises its own exception (with a note naming the unit and its model),
    exactly as the scorer would have raised it without executors.
    """

    name = "local"
    description = "this process, one unit after another (the default)"

    def run(self, scorer: Scorer, units: Iterable[WorkUnit], *, threads: int | None = None) -> Iterator[UnitOutcome]:
        """Run ``units`` one after another with one :class:`Worker`, taking each when the previous one is done.

        ``threads`` applies in this process, unit by unit (torch's previous count is restored between units).
        """
        worker = Worker(scorer, threads)
        try:
            for unit in units:
                try:
                    outcome = worker.run(unit)
                except Exception as exc:
                    exc.add_note(f"in work unit {unit.key!r} of model {unit.model!r}")
                    raise
                yield outcome
        finally:
            worker.close()
