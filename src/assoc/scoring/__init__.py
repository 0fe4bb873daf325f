"""Scoring: the Scorer base class, declared options, work units and the scorer-output contract.

* :mod:`assoc.scoring.scorer`: :class:`~assoc.scoring.scorer.Scorer`, the base class of every method.
* :mod:`assoc.scoring.options`, :mod:`assoc.scoring.component`: options declared with ``Option`` and
  validated on construction (shared with analyses).
* :mod:`assoc.scoring.units`: work units, what executors run.
* :mod:`assoc.scoring.output`: the contract a scorer's output must meet.
"""
