"""The core's own plugin: registers the shared analyses (ICC, alpha, effect sizes, ...)."""

from __future__ import annotations

from collections.abc import Callable

from .hookspecs import hookimpl


@hookimpl
def register_analyses(register: Callable[[type], None]) -> None:
    from .shared_analyses import ANALYSES

    for analysis in ANALYSES:
        register(analysis)
