"""Plugins: the hook specifications, the registry that loads entry points, and the core's own plugin.

* :mod:`assoc.plugins.hookspecs`: the hooks a plugin can implement (``register_scorers``, ...).
* :mod:`assoc.plugins.manager`: finding, loading and looking up plugins; re-exported here, so
  ``from assoc.plugins import get_scorer`` keeps working.
* :mod:`assoc.plugins.builtin`: the core's shared analyses, its executors (``local``, ``ray``) and its
  model kinds (``masked``, ``causal``, ``chat``),
  registered like any plugin.
"""

from __future__ import annotations

from assoc.infra.importhooks import public_face as _public_face
from assoc.plugins.hookspecs import RegisterAnalysis as RegisterAnalysis
from assoc.plugins.hookspecs import RegisterBenchmark as RegisterBenchmark
from assoc.plugins.hookspecs import RegisterExecutor as RegisterExecutor
from assoc.plugins.hookspecs import RegisterModelKind as RegisterModelKind
from assoc.plugins.hookspecs import RegisterScorer as RegisterScorer
from assoc.plugins.hookspecs import RegisterStimuli as RegisterStimuli
from assoc.plugins.hookspecs import hookimpl as hookimpl
from assoc.plugins.manager import BUILTIN_PLUGINS as BUILTIN_PLUGINS
from assoc.plugins.manager import ENTRY_POINT_GROUP as ENTRY_POINT_GROUP
from assoc.plugins.manager import ENV_ALLOWLIST as ENV_ALLOWLIST
from assoc.plugins.manager import PluginInfo as PluginInfo
from assoc.plugins.manager import PluginRegistry as PluginRegistry
from assoc.plugins.manager import Registered as Registered
from assoc.plugins.manager import benchmarks as benchmarks
from assoc.plugins.manager import executor_names as executor_names
from assoc.plugins.manager import failed_plugins as failed_plugins
from assoc.plugins.manager import get_analysis as get_analysis
from assoc.plugins.manager import get_benchmark as get_benchmark
from assoc.plugins.manager import get_executor as get_executor
from assoc.plugins.manager import get_executor_class as get_executor_class
from assoc.plugins.manager import get_model_kind as get_model_kind
from assoc.plugins.manager import get_scorer as get_scorer
from assoc.plugins.manager import get_stimuli_loader as get_stimuli_loader
from assoc.plugins.manager import model_kinds as model_kinds
from assoc.plugins.manager import plugin_version as plugin_version
from assoc.plugins.manager import register as register
from assoc.plugins.manager import registry as registry
from assoc.plugins.manager import reset as reset
from assoc.plugins.manager import unregister as unregister

__getattr__, __dir__ = _public_face(globals())
