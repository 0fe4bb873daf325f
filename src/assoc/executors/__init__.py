"""Executors: where a study's work units run.

Executors are plugins: each is an :class:`Executor` subclass registered through the
``register_executors`` hook (:mod:`assoc.plugins.hookspecs`). The core's own plugin registers
``local`` (the default: this process, one unit after another, :mod:`assoc.executors.local`)
and ``ray`` (a Ray cluster, ``pip install ray``, :mod:`assoc.executors.ray`);
:func:`assoc.plugins.get_executor` makes one from its name. Every executor gives the same table:
the driver (:mod:`assoc.executors.driver`) caches and merges the rows, executors only run units,
each through a :class:`Worker`. Importing this package is cheap; Ray is imported only when its
executor is created.
"""

from __future__ import annotations

from assoc.executors.base import Executor as Executor
from assoc.executors.base import Worker as Worker
from assoc.infra.importhooks import public_face as _public_face

__getattr__, __dir__ = _public_face(globals())
