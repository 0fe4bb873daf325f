"""Plugins: the hook specifications, the registry that loads entry points, and the core's own plugin.

* :mod:`assoc.plugins.hookspecs`: the hooks a plugin can implement (``register_scorers``, ...).
* :mod:`assoc.plugins.manager`: finding, loading and looking up plugins; re-exported here, so
  ``from assoc.plugins import get_scorer`` keeps working.
* :mod:`assoc.plugins.builtin`: the core's shared analyses, its executors (``local``, ``ray``) and its
  model kinds (``masked``, ``causal``),
  registered like any plugin.
"""

from __future__ import annotations

from assoc.plugins.hookspecs import (
    RegisterAnalysis,
    RegisterExecutor,
    RegisterModelKind,
    RegisterScorer,
    RegisterStimuli,
    hookimpl,
)
from assoc.plugins.manager import (
    BUILTIN_PLUGINS,
    ENTRY_POINT_GROUP,
    ENV_ALLOWLIST,
    PluginInfo,
    PluginRegistry,
    Registered,
    executor_names,
    failed_plugins,
    get_analysis,
    get_executor,
    get_executor_class,
    get_model_kind,
    get_scorer,
    get_stimuli_loader,
    model_kinds,
    plugin_version,
    register,
    registry,
    reset,
    unregister,
)

__all__ = [
    "BUILTIN_PLUGINS",
    "ENTRY_POINT_GROUP",
    "ENV_ALLOWLIST",
    "PluginInfo",
    "PluginRegistry",
    "RegisterAnalysis",
    "RegisterExecutor",
    "RegisterModelKind",
    "RegisterScorer",
    "RegisterStimuli",
    "Registered",
    "executor_names",
    "failed_plugins",
    "get_analysis",
    "get_executor",
    "get_executor_class",
    "get_model_kind",
    "get_scorer",
    "get_stimuli_loader",
    "hookimpl",
    "model_kinds",
    "plugin_version",
    "registry",
    "register",
    "reset",
    "unregister",
]
