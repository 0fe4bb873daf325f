"""Executors: where a study's work units run.

``local`` (the default) runs them in this process, one after another; ``ray`` runs
them on a Ray cluster (``pip install ray``). Both give the same table:
the driver (:mod:`assoc.executors.run`) caches and merges the rows, executors only
run units. Importing this package is cheap; Ray is imported only when its executor
is created.
"""

from __future__ import annotations

from typing import Any

from assoc.errors import OptionError
from assoc.executors.base import Executor

__all__ = ["EXECUTORS", "Executor", "get_executor"]

#: Executor names users can give (``assoc score --executor NAME``, ``assoc.score(..., executor=NAME)``).
EXECUTORS = ("local", "ray")


def get_executor(spec: str | Executor | None = None, **options: Any) -> Executor:
    """The executor for ``spec``: a name from :data:`EXECUTORS`, an :class:`Executor`, or None (local).

    ``options`` go to the executor's constructor (e.g. ``address=`` for Ray).
    """
    if isinstance(spec, Executor):
        if options:
            raise OptionError("executor options are given to the constructor of an Executor instance, not here")
        return spec
    name = "local" if spec is None else str(spec).strip().lower()
    if name == "local":
        from assoc.executors.local import LocalExecutor

        if options:
            raise OptionError(f"the local executor takes no options (got {', '.join(sorted(options))})")
        return LocalExecutor()
    if name == "ray":
        from assoc.executors.ray import RayExecutor

        return RayExecutor(**options)
    from assoc.errors import did_you_mean

    raise OptionError(
        f"unknown executor {spec!r}{did_you_mean(str(spec), EXECUTORS)}; use one of {', '.join(EXECUTORS)}"
    )
