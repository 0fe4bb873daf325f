"""The core's own plugin: the shared analyses, the executors local and ray, the core's model kinds."""

from __future__ import annotations

from typing import TYPE_CHECKING

from assoc.plugins.hookspecs import hookimpl

if TYPE_CHECKING:
    from assoc.plugins.hookspecs import RegisterAnalysis, RegisterExecutor, RegisterModelKind


@hookimpl
def register_analyses(register: RegisterAnalysis) -> None:
    """Register every analysis of :mod:`assoc.analysis.catalog`."""
    from assoc.analysis.catalog import ANALYSES

    for analysis in ANALYSES:
        register(analysis)


@hookimpl
def register_executors(register: RegisterExecutor) -> None:
    """Register ``local`` (this process, the default) and ``ray`` (a Ray cluster; Ray is imported when one is made)."""
    from assoc.executors.local import LocalExecutor
    from assoc.executors.ray import RayExecutor

    register(LocalExecutor)
    register(RayExecutor)


@hookimpl
def register_model_kinds(register: RegisterModelKind) -> None:
    """Register the core's kinds masked, causal, chat, server (:data:`assoc.lm.kinds.CORE_KINDS`; no torch)."""
    from assoc.lm.kinds import CORE_KINDS, core_kind

    for name in CORE_KINDS:
        register(core_kind(name))
