"""The core's own plugin: registers the shared analyses (ICC, alpha, effect sizes, ...)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from assoc.plugins.hookspecs import hookimpl

if TYPE_CHECKING:
    from assoc.plugins.hookspecs import RegisterAnalysis


@hookimpl
def register_analyses(register: RegisterAnalysis) -> None:
    """Register every analysis of :mod:`assoc.analysis.shared`."""
    from assoc.analysis.shared import ANALYSES

    for analysis in ANALYSES:
        register(analysis)
