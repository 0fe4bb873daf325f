"""Scoring: the Scorer base class, work units, the scorer-output contract (and models held in memory, re-exported).

* :mod:`assoc.scoring.scorer`: :class:`~assoc.scoring.scorer.Scorer`, the base class of every method
  (its options are declared with :class:`assoc.Option`, :mod:`assoc.components`).
* :mod:`assoc.scoring.units`: work units, what executors run.
* :mod:`assoc.scoring.output`: the contract a scorer's output must meet, and the run report.
* ``in_memory``: a model given as an object in memory (:mod:`assoc.models.memory`, below this layer).

The public names are re-exported here and at the top level of ``assoc``; nothing is imported
until a name is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assoc.infra.importhooks import public_face as _public_face

# The public names, each declared once by its import (`name as name`: what mypy and IDEs read),
# imported on first use; __all__ lists them (assoc.infra.importhooks.public_face).
if TYPE_CHECKING:  # pragma: no cover
    from assoc.models.memory import in_memory as in_memory
    from assoc.scoring.output import set_run_report as set_run_report
    from assoc.scoring.scorer import Scorer as Scorer
    from assoc.scoring.units import UnitError as UnitError
    from assoc.scoring.units import UnitOutcome as UnitOutcome
    from assoc.scoring.units import WorkUnit as WorkUnit

__getattr__, __dir__ = _public_face(globals())
