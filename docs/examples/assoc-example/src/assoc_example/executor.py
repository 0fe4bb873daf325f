"""The example executor: work units on a pool of threads of this process.

A template for an executor plugin (a Dask, Slurm or cloud executor has the same shape): take
units from the driver's iterable only when a worker is free (the driver claims each unit as it
is taken, so concurrent runs split the work), run each through an ``assoc.Worker`` (one per
thread: it keeps one model's state loaded between units), and yield each unit's outcome as soon
as it is finished, in any order. The driver caches the outcomes and merges them in plan order,
so the table equals the ``local`` executor's.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import TYPE_CHECKING, Any

from assoc import Executor, Option, OptionError, UnitOutcome, Worker, WorkUnit, positive

if TYPE_CHECKING:
    from assoc import Scorer


class ThreadPoolUnits(Executor):
    """Run units on ``workers`` threads of this process (``--executor threadpool --threadpool-workers 4``)."""

    name = "threadpool"
    description = "threads of this process (an example executor)"
    cli_options = (Option("workers", int, 2, "threads that run units at the same time", check=positive),)

    def __init__(self, workers: int = 2):
        if not isinstance(workers, int) or workers < 1:
            raise OptionError(f"workers must be a positive integer, got {workers!r}")
        self.workers = workers

    def describe(self) -> dict[str, Any]:
        """What provenance records: the name and the number of threads."""
        return {"name": self.name, "workers": self.workers}

    def run(self, scorer: Scorer, units: Iterable[WorkUnit], *, threads: int | None = None) -> Iterator[UnitOutcome]:
        """Keep up to ``workers`` units running; yield each outcome when its unit finishes.

        A unit that raises ends the run with its exception (like the local executor), after the
        units already running have finished.
        """
        source = iter(units)
        mine = threading.local()
        started: list[Worker] = []

        def compute(unit: WorkUnit) -> UnitOutcome:
            worker = getattr(mine, "worker", None)
            if worker is None:  # one Worker per thread: a Worker is not shared between threads
                worker = mine.worker = Worker(scorer, threads)
                started.append(worker)
            return worker.run(unit)

        pending: set[Future[UnitOutcome]] = set()
        with ThreadPoolExecutor(self.workers, thread_name_prefix="assoc-unit") as pool:
            try:
                while True:
                    while len(pending) < self.workers:  # take a unit only when a thread is free
                        unit = next(source, None)
                        if unit is None:
                            break
                        pending.add(pool.submit(compute, unit))
                    if not pending:
                        return
                    done, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for future in done:
                        yield future.result()
            finally:
                for future in pending:
                    future.cancel()
                wait(pending)
                for worker in started:
                    worker.close()
