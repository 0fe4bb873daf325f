"""Scoring: the Scorer base class, work units and the scorer-output contract.

* :mod:`assoc.scoring.scorer`: :class:`~assoc.scoring.scorer.Scorer`, the base class of every method
  (its options are declared with :class:`assoc.Option`, :mod:`assoc.components`).
* :mod:`assoc.scoring.units`: work units, what executors run.
* :mod:`assoc.scoring.output`: the contract a scorer's output must meet, and the run report.

Models given as objects in memory live below this layer (:mod:`assoc.models.memory`; ``in_memory`` is
re-exported here). The public names are re-exported here and at the top level of ``assoc``; nothing
is imported until a name is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assoc.infra.importhooks import lazy_names as _lazy_names

#: public name -> the module that defines it
_LAZY = {
    "Scorer": "assoc.scoring.scorer",
    "UnitError": "assoc.scoring.units",
    "UnitOutcome": "assoc.scoring.units",
    "WorkUnit": "assoc.scoring.units",
    "in_memory": "assoc.models.memory",
    "set_run_report": "assoc.scoring.output",
}

__all__ = [
    "Scorer",
    "UnitError",
    "UnitOutcome",
    "WorkUnit",
    "in_memory",
    "set_run_report",
]


__getattr__, __dir__ = _lazy_names(__name__, _LAZY, globals())

if TYPE_CHECKING:  # pragma: no cover
    from assoc.models.memory import in_memory
    from assoc.scoring.output import set_run_report
    from assoc.scoring.scorer import Scorer
    from assoc.scoring.units import UnitError, UnitOutcome, WorkUnit
