"""The executor interface, and the worker that runs units of one scorer (shared by every executor)."""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, ClassVar

from assoc.components.options import Option
from assoc.errors import PluginError
from assoc.scoring.units import UnitOutcome, WorkUnit

if TYPE_CHECKING:
    from assoc.scoring.scorer import Scorer


class Executor(ABC):
    """Runs work units and yields each unit's outcome as soon as it is finished (in any order).

    An executor does not cache or merge: :func:`assoc.executors.driver.run_study` does, the same
    way for every executor. A unit that cannot be computed raises (the local executor: the
    unit's own exception; a remote executor: :class:`~assoc.scoring.units.UnitError` naming unit and model).
    """

    #: What users type: ``assoc score --executor NAME``, ``assoc.score(..., executor=NAME)``.
    name: ClassVar[str] = ""
    #: One line for ``--executor``'s help: where the units run.
    description: ClassVar[str] = ""
    #: The constructor's keywords offered on the command line: ``--NAME-OPTION`` (``ray``'s
    #: ``address`` is ``--ray-address``); the value given goes to the constructor, converted to the
    #: option's ``type`` and checked like a scorer's option.
    cli_options: ClassVar[tuple[Option, ...]] = ()

    @classmethod
    def takes_options(cls) -> bool:
        """Whether the constructor takes keyword options (``get_executor(name, **options)``)."""
        import inspect

        return bool(inspect.signature(cls).parameters)

    @abstractmethod
    def run(self, scorer: Scorer, units: Iterable[WorkUnit], *, threads: int | None = None) -> Iterator[UnitOutcome]:
        """Run ``units`` with ``scorer`` (whose ``load_worker``/``run_unit`` do the work).

        ``units`` may be a lazy iterable: the driver claims each unit as it is taken from it
        (:func:`assoc.executors.driver.run_study`), so an executor should take units when it is
        ready to run them. ``threads`` is torch's intra-op thread count for every unit, wherever
        it runs (``None``: the worker's default); give it to each :class:`Worker`, which sets it
        around each unit and reports the count used in :attr:`UnitOutcome.threads`.
        """

    def describe(self) -> dict[str, Any]:
        """What provenance records about this executor (its name and settings)."""
        return {"name": self.name}

    def close(self) -> None:
        """Release what the executor started (e.g. a local Ray). The default has nothing to release."""
        return None

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def category_name(category: type[Warning]) -> str:
    """``module:qualname`` of a warning class, so it can be sent between processes and found again."""
    return f"{category.__module__}:{category.__qualname__}"


def category_of(name: str) -> type[Warning]:
    """The warning class named by :func:`category_name` (``UserWarning`` if it cannot be imported)."""
    import importlib

    module, _, qualname = name.partition(":")
    try:
        found: Any = importlib.import_module(module)
        for part in qualname.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError):
        return UserWarning
    return found if isinstance(found, type) and issubclass(found, Warning) else UserWarning


class Worker:
    """Runs units of one scorer, keeping one model's worker state loaded between units.

    Units of the same model reuse the state ``scorer.load_worker(model)`` returned; a unit of
    another model first releases it (``scorer.release_worker``), so a worker holds at most one
    model in memory. Every executor runs units through this class (the local executor in
    this process, the Ray executor inside each Ray actor).

    ``threads`` (torch's intra-op threads, :mod:`assoc.infra.threads`) is set while a unit's model
    loads and the unit runs, and restored afterwards; ``None`` leaves torch's default.
    """

    def __init__(self, scorer: Scorer, threads: int | None = None):
        self.scorer = scorer
        self.threads = threads
        self.model: str | None = None
        self.state: Any = None

    def run(self, unit: WorkUnit) -> UnitOutcome:
        """Compute one unit: its rows, the warnings raised meanwhile (to be shown by the driver), the threads used.

        And the scorer's report of the unit (:meth:`~assoc.scoring.scorer.Scorer.unit_report`), asked right
        after the unit ran, with the same worker state.
        """
        from assoc.infra.threads import torch_threads

        with torch_threads(self.threads) as used:
            if self.model != unit.model:
                self.close()
                self.state = self.scorer.load_worker(unit.model)
                self.model = unit.model
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                rows = self.scorer.run_unit(self.state, unit)
                report = self.scorer.unit_report(self.state, unit)
        if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
            raise PluginError(
                f"scorer {self.scorer.name!r}: run_unit() must return a list of row dicts for unit "
                f"{unit.key!r}, got {type(rows).__name__}"
            )
        if report is not None and not isinstance(report, dict):
            raise PluginError(
                f"scorer {self.scorer.name!r}: unit_report() must return a dict or None for unit {unit.key!r}, "
                f"got {type(report).__name__}"
            )
        return UnitOutcome(
            unit.key,
            rows,
            [(category_name(w.category), str(w.message)) for w in caught],
            threads=used.value,
            report=report,
        )

    def close(self) -> None:
        """Release the loaded model's state, if any."""
        if self.model is not None:
            state, self.state, self.model = self.state, None, None
            self.scorer.release_worker(state)
